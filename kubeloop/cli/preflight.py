"""Checks ``kubeloop run`` makes before it starts an operator, so that the usual first-run problems
(server unreachable, a CRD not installed, RBAC missing) end in one paragraph naming the fix instead of
a traceback or minutes of silent retries."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from kubeloop.builder import Operator
from kubeloop.client import Client
from kubeloop.client.api import ResourceRef
from kubeloop.client.errors import ApiError, Forbidden, NotFound
from kubeloop.client.resource import Resource
from kubeloop.client.wait import WaitTimeout, wait_for_crd
from kubeloop.controller import ControllerSpec
from kubeloop.resources.builtin import LEASE

log = logging.getLogger("kubeloop.run")

CONNECT_ATTEMPTS = 3
CONNECT_TIMEOUT = 3.0
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")


class StartupError(Exception):
    """A problem found before the operator starts; the message says what is wrong and how to fix it."""


async def check_reachable(client: Client) -> None:
    """A TCP connect to the API server, a few times: the transport would retry for half a minute."""
    server = client.config.server
    parts = urlsplit(server)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    error: OSError | None = None
    for attempt in range(CONNECT_ATTEMPTS):
        try:
            _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), CONNECT_TIMEOUT)
        except (OSError, TimeoutError) as exc:
            error = exc if isinstance(exc, OSError) else OSError(f"no answer within {CONNECT_TIMEOUT:g}s")
            await asyncio.sleep(0.5 * (attempt + 1))
            continue
        writer.close()
        return
    raise StartupError(unreachable_message(server, client.config.source, error))


def unreachable_message(server: str, source: str, error: OSError | None) -> str:
    if isinstance(error, ConnectionRefusedError):
        reason = "connection refused (nothing listens on that port)"
    else:
        reason = getattr(error, "strerror", None) or str(error)
    text = f"cannot reach the API server {server} (from {source}): {reason}. "
    if (urlsplit(server).hostname or "") in LOCAL_HOSTS:
        return text + ("It is a local address: is the cluster running? For a kubeloop cluster check "
                       "`kubeloop cluster status` and start it with `kubeloop cluster up`; after a restart "
                       "its port may have changed, so use the kubeconfig `kubeloop cluster kubeconfig` prints.")
    return text + ("Check that the server address in the kubeconfig is right, that it is reachable from "
                   "here (VPN, firewall, proxy) and that --context selects the cluster you mean.")


async def install_crds(client: Client, operator: Operator) -> None:
    """``--install-crds``: server-side apply the CRDs of the operator's models and wait until served."""
    from kubeloop.resources import crds_for  # the CRD generator: only with --install-crds

    crds = crds_for(operator.custom_resources())
    if not crds:
        log.warning("--install-crds: %s declares no CustomResource models, so there is no CRD to install",
                    operator.name)
        return
    for crd in crds:
        name = crd["metadata"]["name"]
        try:
            await client.apply(crd, field_manager="kubeloop-run", force=True)
        except Forbidden as exc:
            raise StartupError(f"--install-crds: not allowed to apply CustomResourceDefinition {name}: "
                               f"{exc.message}. Installing CRDs needs cluster-admin-like rights; have an "
                               f"administrator run `kubeloop generate crd TARGET | kubectl apply -f -`.") from exc
        try:
            await wait_for_crd(client, name)  # Established, and its kinds in discovery
        except WaitTimeout as exc:
            raise StartupError(f"--install-crds: CustomResourceDefinition {name} was applied but is not "
                               f"served yet ({exc}); see `kubectl describe crd {name}`") from None
        log.info("--install-crds: CustomResourceDefinition %s applied and established", name)


@dataclass(frozen=True)
class Watched:
    """One resource the controllers will list and watch; ``everywhere``: in all namespaces even when
    the manager is limited to some (``Watch(all_namespaces=True)``)."""

    ref: ResourceRef
    everywhere: bool = False


def watched(controllers: Sequence[ControllerSpec]) -> list[Watched]:
    """What the manager's controllers (as the operator built them for these settings) will watch."""
    out: list[Watched] = []
    for controller in controllers:
        items = [Watched(controller.resource), *(Watched(ref) for ref in controller.owns),
                 *(Watched(w.resource, w.all_namespaces) for w in controller.watches)]
        out += [item for item in items if item not in out]
    return out


async def check_served(client: Client, operator: Operator, items: Sequence[Watched], target: str,
                       install: bool) -> list[tuple[Resource, bool]]:
    """Resolves every watched resource against discovery; an unserved one is a StartupError."""
    out = []
    for item in items:
        try:
            out.append((await client.registry.resolve(_lookup_name(item.ref)), item.everywhere))
        except NotFound:
            raise StartupError(await _unserved_message(client, operator, target, item.ref, install)) from None
    return out


def _lookup_name(ref: ResourceRef) -> str:
    if isinstance(ref, str):
        return ref
    res = ref if isinstance(ref, Resource) else ref.resource()
    return f"{res.api_version}/{res.kind}"


async def _unserved_message(client: Client, operator: Operator, target: str, ref: ResourceRef,
                            install: bool) -> str:
    server = client.config.server
    if isinstance(ref, type) and hasattr(ref, "crd_info"):
        info = ref.crd_info()
        head = (f"the API server {server} does not serve {info.kind} ({info.crd_name}, version "
                f"{info.version}), which operator {operator.name!r} watches: ")
        other = await _other_version(client, f"{info.plural}.{info.group}")
        if other is not None:
            head += (f"its CRD is installed but serves version {other.version}, not {info.version}. "
                     "Update the CRD from the model: ")
        else:
            head += "its CustomResourceDefinition is not installed. Install it from the model: "
        return head + (f"`kubeloop generate crd {target} | kubectl apply --server-side -f -`, or, on a "
                       f"development cluster, run again with --install-crds.")
    name = _lookup_name(ref)
    head = (f"the API server {server} does not serve {name!r}, which operator {operator.name!r} watches: "
            "no installed CustomResourceDefinition (or API) provides it. ")
    if not isinstance(ref, str):  # a Resource constant: another project's kind (e.g. Argo Rollouts)
        return head + ("Install the CRDs of the project that defines it, or turn off the setting that "
                       "makes the operator watch it.")
    if install:
        head += ("--install-crds cannot help: the operator names it by a string, so kubeloop has no model "
                 "to build its CRD from. ")
    return head + ("Apply its CRD yourself (`kubectl apply -f <crd>.yaml`), check the spelling "
                   "(`kubectl api-resources` lists what the server serves), or declare it as a "
                   "kubeloop.resources.CustomResource model: then `kubeloop generate crd` and --install-crds "
                   "can install it.")


async def _other_version(client: Client, group_resource: str) -> Resource | None:
    try:
        return await client.registry.resolve(group_resource)
    except NotFound:
        return None


async def check_rbac(client: Client, operator: Operator, resources: Sequence[tuple[Resource, bool]],
                     namespaces: list[str] | None, target: str) -> None:
    """Asks the server (SelfSubjectAccessReview) whether this identity may list and watch every
    resource in the scope the cache will watch; a denial is a StartupError naming verb and resource."""
    for res, everywhere in resources:
        limited = bool(namespaces) and res.namespaced and not everywhere
        scopes: list[str | None] = list(namespaces or []) if limited else [None]
        for namespace in scopes:
            for verb in ("list", "watch"):
                allowed = await _can_i(client, verb, res, namespace)
                if allowed is False:
                    raise StartupError(await _forbidden_message(client, operator, verb, res, namespace,
                                                                target))


async def check_lease_rbac(client: Client, operator: Operator, namespace: str, target: str,
                           shards: bool = False) -> None:
    """``--leader-elect`` reads, creates and updates one Lease in ``namespace``; ``--shards auto`` also
    lists the replicas' Leases and deletes expired ones. A denial would stop the run at the first
    attempt, so it is named here with the fix, like list/watch."""
    for verb in ("get", "create", "update", *(("list", "delete") if shards else ())):
        if await _can_i(client, verb, LEASE, namespace) is False:
            raise StartupError(await _forbidden_message(client, operator, verb, LEASE, namespace, target,
                                                        why="for --leader-elect and --shards"))


async def _can_i(client: Client, verb: str, res: Resource, namespace: str | None) -> bool | None:
    """True/False as the server decides; None when it cannot be asked (then the run just goes on)."""
    attributes: dict[str, Any] = {"verb": verb, "group": res.group, "resource": res.plural}
    if namespace:
        attributes["namespace"] = namespace
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
              "spec": {"resourceAttributes": attributes}}
    try:
        answer = await client.create(review)
    except ApiError as exc:
        log.debug("cannot check permissions with a SelfSubjectAccessReview: %s", exc)
        return None
    return bool((answer.get("status") or {}).get("allowed"))


async def _forbidden_message(client: Client, operator: Operator, verb: str, res: Resource,
                             namespace: str | None, target: str, why: str = "to watch them") -> str:
    where = f"in namespace {namespace}" if namespace else "in all namespaces (cluster-wide)"
    who = await _whoami(client)
    return (f"{who} may not {verb} {res.group_resource} {where}, which the operator needs {why} "
            f"(API server {client.config.server}). Grant the operator's least-privilege RBAC: "
            f"`kubeloop generate rbac {target} | kubectl apply --server-side -f -` (it binds ServiceAccount "
            f"{operator.name}-system/{operator.name}; run as that account, or bind its ClusterRole to {who}); "
            f"`--namespace` limits what it must be allowed to watch.")


async def _whoami(client: Client) -> str:
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    try:
        answer = await client.create(review)
    except ApiError:
        return "this identity"
    name = ((answer.get("status") or {}).get("userInfo") or {}).get("username")
    return f"user {name!r}" if name else "this identity"

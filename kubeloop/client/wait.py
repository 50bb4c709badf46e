"""Wait for an object to reach a state, driven by a WATCH rather than a sleep loop.

A watch reacts within milliseconds of the change and does not hammer the API server; on timeout a
``WaitTimeout`` says what was expected and shows the last version of the object seen. It lives in the
client because deploying (CRDs Established, Deployments available) needs it as much as tests do;
``kubeloop.testing`` re-exports it.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable
from typing import Any

import orjson

from kubeloop.client.api import Client
from kubeloop.client.errors import Gone, NotFound, ServerError, TooManyRequests
from kubeloop.client.resource import Resource

Predicate = Callable[[dict[str, Any]], bool]
_MISSING = object()  # "no object seen / it does not exist", distinct from any dict


class WaitTimeout(TimeoutError, AssertionError):
    """A wait ran out of time. A ``TimeoutError`` for programs, and an ``AssertionError`` so that a test
    using ``wait_for`` reads as a failed expectation rather than an error."""


def abbreviate(obj: Any, limit: int = 1500) -> str:
    """A compact rendering for error messages: no managedFields, no last-applied, capped length."""
    if obj is _MISSING or obj is None:
        return "<object does not exist>"
    trimmed = copy.deepcopy(obj)
    meta = trimmed.get("metadata", {}) if isinstance(trimmed, dict) else {}
    meta.pop("managedFields", None)
    meta.get("annotations", {}).pop("kubectl.kubernetes.io/last-applied-configuration", None)
    text = orjson.dumps(trimmed, option=orjson.OPT_SORT_KEYS).decode()
    return text if len(text) <= limit else text[:limit] + f"... ({len(text) - limit} more chars)"


async def _scope(
    client: Client, resource: str | Resource, namespace: str | None
) -> tuple[Resource, str | None]:
    res = await client.resource(resource)
    if not res.namespaced:
        return res, None
    return res, namespace or client.default_namespace


async def _observe(
    client: Client, res: Resource, name: str, namespace: str | None, done: Callable[[Any], bool],
    seen: list[Any],
) -> Any:
    """LIST then WATCH the single object ``name``; return the first state for which ``done`` holds.

    ``seen[0]`` always holds the latest state (a dict, or _MISSING) for the timeout message.
    """
    selector = f"metadata.name={name}"
    while True:
        try:
            listing = await client.list(res, namespace, field_selector=selector)
            items = listing.get("items") or []
            seen[0] = items[0] if items else _MISSING
            if done(seen[0]):
                return seen[0]
            rv = listing.get("metadata", {}).get("resourceVersion")
            async for event in client.watch(res, namespace, field_selector=selector, resource_version=rv,
                                            timeout_seconds=300):
                kind, obj = event.get("type"), event.get("object") or {}
                if kind == "ERROR":
                    break  # usually 410 Gone: history expired; list again
                if kind == "BOOKMARK":
                    continue
                seen[0] = _MISSING if kind == "DELETED" else obj
                if done(seen[0]):
                    return seen[0]
        except Gone:
            pass
        except (TooManyRequests, ServerError) as exc:
            # A throttled server, or a custom resource's storage re-initialising after its CRD changed
            # (429 "storage is (re)initializing"): the object is still there to wait for.
            await asyncio.sleep(min(exc.retry_after or 1.0, 5.0))
        # The server ends watches after timeout_seconds (or on error): resume with a fresh list.


async def wait_for(
    client: Client,
    resource: str | Resource,
    name: str,
    namespace: str | None = None,
    predicate: Predicate = lambda obj: True,
    *,
    timeout: float = 30.0,
    description: str | None = None,
) -> dict[str, Any]:
    """Wait until object ``name`` exists and ``predicate(obj)`` is true; return that object.

    Raises ``WaitTimeout`` on timeout, naming the expectation and the last object seen.
    """
    res, ns = await _scope(client, resource, namespace)
    seen: list[Any] = [_MISSING]

    def done(obj: Any) -> bool:
        return obj is not _MISSING and bool(predicate(obj))

    try:
        async with asyncio.timeout(timeout):
            result: dict[str, Any] = await _observe(client, res, name, ns, done, seen)
            return result
    except TimeoutError:
        where = f"{ns}/{name}" if ns else name
        what = description or getattr(predicate, "__name__", "predicate")
        raise WaitTimeout(
            f"timed out after {timeout:g}s waiting for {res.group_resource} {where}: {what}\n"
            f"last seen: {abbreviate(seen[0])}"
        ) from None


async def wait_for_deletion(
    client: Client,
    resource: str | Resource,
    name: str,
    namespace: str | None = None,
    *,
    timeout: float = 30.0,
) -> None:
    """Wait until object ``name`` is gone (finalizers done); ``WaitTimeout`` on timeout."""
    res, ns = await _scope(client, resource, namespace)
    seen: list[Any] = [_MISSING]
    try:
        async with asyncio.timeout(timeout):
            await _observe(client, res, name, ns, lambda obj: obj is _MISSING, seen)
    except TimeoutError:
        where = f"{ns}/{name}" if ns else name
        raise WaitTimeout(
            f"timed out after {timeout:g}s waiting for {res.group_resource} {where} to be deleted\n"
            f"last seen: {abbreviate(seen[0])}"
        ) from None


async def wait_for_crd(client: Client, name: str, *, timeout: float = 30.0) -> dict[str, Any]:
    """Wait until CRD ``name`` is Established *and* its kinds appear in the client's discovery.

    The two are updated by different controllers in the API server, so a custom resource created
    right after "Established" can still get "the server doesn't have a resource type". Discovery
    cannot be watched, hence the short polling in the second half.
    """
    def established(obj: dict[str, Any]) -> bool:
        conditions = (obj.get("status") or {}).get("conditions") or []
        return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)

    deadline = asyncio.get_running_loop().time() + timeout
    crd = await wait_for(client, "customresourcedefinitions.apiextensions.k8s.io", name, None, established,
                         timeout=timeout, description="CRD Established")
    spec = crd["spec"]
    kind = spec["names"]["kind"]
    refs = [f"{spec['group']}/{v['name']}/{kind}" for v in spec["versions"] if v.get("served")]
    delay = 0.05
    for ref in refs:
        while True:
            try:
                await client.resource(ref)  # refreshes discovery once on a miss
                break
            except NotFound:
                if asyncio.get_running_loop().time() + delay > deadline:
                    raise WaitTimeout(f"CRD {name} is Established but {ref} never appeared in discovery "
                                         f"within {timeout:g}s") from None
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)
    return crd

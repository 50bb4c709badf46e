"""What one test session (one pytest process; each pytest-xdist worker is its own, on the cluster its
run's workers share) owns outside its namespaces, so that sessions sharing a cluster never take each
other's objects, and a cluster someone cares about keeps everything that is not the session's.

- Cluster-scoped objects the test kit makes (ClusterRoles, ClusterRoleBindings, webhook configurations)
  are named with the session's suffix (``<name>-t<id>``) and labelled ``kubeloop.dev/test-session=<id>``,
  with the host, pid and the pid's start time in an annotation.
- ``acquire``/``release`` count the runs using one such object: the last one out deletes it (nested runs
  of one operator in one test share it). What a crash or Ctrl-C left behind is deleted at the session's
  end (``finish``), and leftovers of sessions that died on this host are swept at the next start
  (``sweep``): their process is gone, or its pid now belongs to a process started at another time.
- CRDs are shared on purpose (labelled ``kubeloop.dev/test-crd=true`` when the test kit created them).
  At the session's end the ones it created are deleted, unless another session is running or a custom
  resource of them lives outside the test namespaces: so no CRD with the test kit's field ownership
  stays behind to make a user's own ``kubectl apply --server-side`` of it conflict with ``kubeloop-test``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import socket
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

SESSION_LABEL = "kubeloop.dev/test-session"
OWNER_ANNOTATION = "kubeloop.dev/test-session-owner"  # "<host> <pid> <pid's start time>"
CRD_LABEL = "kubeloop.dev/test-crd"
TEST_NAMESPACE_LABEL = "kubeloop.dev/test"  # on the namespaces the ``namespace`` fixture makes
FIELD_MANAGER = "kubeloop-test"

# (resource, kind) of every cluster-scoped kind the test kit names per session.
SESSION_KINDS = (("clusterrolebindings", "ClusterRoleBinding"), ("clusterroles", "ClusterRole"),
                 ("validatingwebhookconfigurations", "ValidatingWebhookConfiguration"),
                 ("mutatingwebhookconfigurations", "MutatingWebhookConfiguration"))
RESOURCE_OF = {kind: resource for resource, kind in SESSION_KINDS}
WEBHOOK_RESOURCES = ("validatingwebhookconfigurations", "mutatingwebhookconfigurations")


def _start_time(pid: int) -> str | None:
    """The kernel's start time of ``pid`` (clock ticks since boot), or None if there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2:].split()[19]


def _alive(pid: int, started: str) -> bool:
    if Path("/proc/self/stat").exists():
        return _start_time(pid) == started
    try:  # no /proc: the pid alone
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class TestSession:
    """This process's session: its id, and the objects its runs hold now."""

    __test__ = False  # not a test class, despite its name

    id: str = field(default_factory=lambda: "t" + secrets.token_hex(4))
    host: str = field(default_factory=socket.gethostname)
    pid: int = field(default_factory=os.getpid)
    _held: Counter[tuple[str, str]] = field(default_factory=Counter)  # (kind, name) → runs holding it
    crds: set[str] = field(default_factory=set)  # the CRDs this session created (none existed before)

    @property
    def suffix(self) -> str:
        return f"-{self.id}"

    def owner(self) -> str:
        return f"{self.host} {self.pid} {_start_time(self.pid) or '-'}"

    def mark(self, obj: dict[str, Any]) -> dict[str, Any]:
        """``obj`` (a cluster-scoped object the test kit makes) with this session's label and owner."""
        meta = obj.setdefault("metadata", {})
        meta.setdefault("labels", {})[SESSION_LABEL] = self.id
        meta.setdefault("annotations", {})[OWNER_ANNOTATION] = self.owner()
        return obj

    def rename(self, objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Generated RBAC for this session: ClusterRoles and ClusterRoleBindings get the session's suffix
        (and every reference to such a ClusterRole follows), and the label; namespaced objects stay."""
        renamed = {o["metadata"]["name"] for o in objects if o["kind"] == "ClusterRole"}
        out = []
        for obj in objects:
            obj = {**obj, "metadata": dict(obj["metadata"])}
            if "rules" in obj:  # patch by name of the webhook configurations, which are the session's too
                obj["rules"] = [self._rule(r) for r in obj["rules"]]
            ref = obj.get("roleRef")
            if ref and ref.get("kind") == "ClusterRole" and ref.get("name") in renamed:
                obj["roleRef"] = {**ref, "name": ref["name"] + self.suffix}
            if obj["kind"] in RESOURCE_OF:
                obj["metadata"]["name"] += self.suffix
                obj["metadata"]["labels"] = dict(obj["metadata"].get("labels") or {})
                obj["metadata"]["annotations"] = dict(obj["metadata"].get("annotations") or {})
                self.mark(obj)
            out.append(obj)
        return out

    def _rule(self, rule: dict[str, Any]) -> dict[str, Any]:
        if rule.get("resourceNames") and any(r in WEBHOOK_RESOURCES for r in rule.get("resources") or ()):
            return {**rule, "resourceNames": [n + self.suffix for n in rule["resourceNames"]]}
        return rule

    def acquire(self, obj: dict[str, Any]) -> None:
        if obj["kind"] in RESOURCE_OF:
            self._held[(obj["kind"], obj["metadata"]["name"])] += 1

    async def release(self, admin: Any, objects: list[dict[str, Any]]) -> None:
        """One run is done with ``objects``: the cluster-scoped ones no other run holds are deleted."""
        from kubeloop.client import NotFound

        for obj in objects:
            key = (obj["kind"], obj["metadata"]["name"])
            if obj["kind"] not in RESOURCE_OF or self._held[key] == 0:
                continue
            self._held[key] -= 1
            if self._held[key] == 0:
                del self._held[key]
                with contextlib.suppress(NotFound):
                    await admin.delete(RESOURCE_OF[obj["kind"]], key[1])

    async def finish(self, admin: Any) -> list[str]:
        """At the session's end, after a failure or Ctrl-C too: deletes whatever still carries this
        session's label, and clears the field ownership on the CRDs it wrote. Returns what it deleted."""
        from kubeloop.client import ApiError, NotFound

        deleted = []
        for resource, kind in SESSION_KINDS:
            try:
                items = (await admin.list(resource, label_selector=f"{SESSION_LABEL}={self.id}"))["items"]
            except ApiError as exc:
                log.warning("could not list %s to remove this session's: %s", resource, exc)
                continue
            for obj in items:
                with contextlib.suppress(NotFound):
                    await admin.delete(resource, obj["metadata"]["name"])
                    deleted.append(f"{kind} {obj['metadata']['name']}")
        self._held.clear()
        if self.crds and not await self._others_alive(admin):
            for name in sorted(self.crds):
                if await remove_crd(admin, name):
                    deleted.append(f"CustomResourceDefinition {name}")
        self.crds.clear()
        return deleted

    async def _others_alive(self, admin: Any) -> bool:
        """Whether another session that may use the shared CRDs is running (it holds labelled objects)."""
        from kubeloop.client import ApiError

        for resource, _ in SESSION_KINDS:
            try:
                items = (await admin.list(resource, label_selector=f"{SESSION_LABEL},{SESSION_LABEL}!={self.id}")
                         )["items"]
            except ApiError:
                return True  # cannot tell: keep them
            if any(not self._dead(o) for o in items):
                return True
        return False

    async def sweep(self, admin: Any) -> list[str]:
        """Deletes the labelled objects of sessions that died on this host (their process is gone).
        Objects of sessions on other hosts, or still running, are never touched."""
        from kubeloop.client import ApiError, NotFound

        deleted = []
        for resource, kind in SESSION_KINDS:
            try:
                items = (await admin.list(resource, label_selector=f"{SESSION_LABEL},{SESSION_LABEL}!={self.id}")
                         )["items"]
            except ApiError as exc:
                log.warning("could not list %s to sweep dead sessions' objects: %s", resource, exc)
                continue
            for obj in items:
                if self._dead(obj):
                    with contextlib.suppress(NotFound):
                        await admin.delete(resource, obj["metadata"]["name"])
                        deleted.append(f"{kind} {obj['metadata']['name']}")
        return deleted

    def _dead(self, obj: dict[str, Any]) -> bool:
        owner = ((obj["metadata"].get("annotations") or {}).get(OWNER_ANNOTATION) or "").split()
        if len(owner) != 3 or owner[0] != self.host or not owner[1].isdigit():
            return False  # another host's session, or not written by this kit: not ours to judge
        return not _alive(int(owner[1]), owner[2])


async def remove_crd(admin: Any, name: str) -> bool:
    """Deletes a CRD the test kit created, unless a custom resource of it lives outside the test
    namespaces (someone else's, which deleting the CRD would delete too). Returns whether it did."""
    from kubeloop.client import ApiError, NotFound

    try:
        crd = await admin.get("customresourcedefinitions", name)
        if (crd["metadata"].get("labels") or {}).get(CRD_LABEL) != "true":
            return False
        version = next(v["name"] for v in crd["spec"]["versions"] if v.get("served"))
        items = (await admin.list(f"{crd['spec']['group']}/{version}/{crd['spec']['names']['plural']}"))["items"]
        namespaces = {o["metadata"].get("namespace") for o in items}
        if None in namespaces:
            return False  # cluster-scoped objects: whose they are cannot be told
        for ns in namespaces:
            try:
                labels = (await admin.get("namespaces", ns))["metadata"].get("labels") or {}
            except NotFound:
                continue
            if labels.get(TEST_NAMESPACE_LABEL) != "true":
                return False
        await admin.delete("customresourcedefinitions", name)
        return True
    except (ApiError, StopIteration) as exc:
        log.warning("kept CRD %s the test session created: %s", name, exc)
        return False


_current: TestSession | None = None


def current() -> TestSession:
    """This process's session (made on first use)."""
    global _current
    if _current is None or _current.pid != os.getpid():  # a forked child is a session of its own
        _current = TestSession()
    return _current

"""The harness's own view of the cluster, independent of the operator under test: list+watch loops
(admin credentials, straight to the API server) that timestamp every change, plus final LISTs that
are the ground truth for "converged" and "duplicated".
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from harness.common.listwatch import Handler, ListWatch, key_of, rv
from harness.faults.env import now
from harness.faults.widget import LABEL, Widget, configmap_name, converged
from kubeloop.client import ApiError, Client

Obj = dict[str, Any]


def follow(client: Client, resource: Any, handler: Handler, *, namespace: str | None = None,
           label_selector: str | None = None) -> ListWatch:
    """The harness's view of one resource through the faults it causes: relists after any error."""
    return ListWatch(client, resource, handler, namespace=namespace, label_selector=label_selector, relist=True,
                     watch_seconds=240, read_timeout=30)


class WidgetObserver:
    """Follows Widgets and their ConfigMaps; knows, per widget, when it last converged, which ConfigMaps
    (by UID) it ever had, whether a value ever went backwards, and who wrote its status."""

    def __init__(self, client: Client, namespace: str | None = None) -> None:
        self.client = client
        self.widgets = follow(client, Widget.resource(), self._on_widget, namespace=namespace)
        self.configmaps = follow(client, "configmaps", self._on_configmap, namespace=namespace, label_selector=LABEL)
        self.expect_gone: set[str] = set()
        self.forgotten: set[str] = set()  # gone for a reason outside the operator: gone for good
        self.min_rv: dict[str, int] = {}  # the harness's last write of each widget (its resourceVersion)
        self.last_write: dict[str, float] = {}
        self.converged_at: dict[str, float | None] = {}
        self.cm_uids: dict[str, set[str]] = {}  # widget uid -> ConfigMap uids it ever had
        self.widget_uid: dict[str, str] = {}  # key -> uid of the current incarnation
        self.regressions = 0
        self._cm_value: dict[str, int] = {}  # ConfigMap uid -> last value seen
        self._observed: dict[str, int] = {}  # widget uid -> last status.observed seen
        self.writes: list[tuple[float, str, str]] = []  # (time, writer, widget key) of status writes

    async def start(self) -> None:
        self.widgets.start()
        self.configmaps.start()
        await asyncio.wait_for(asyncio.gather(self.widgets.synced.wait(), self.configmaps.synced.wait()), 60)

    async def stop(self) -> None:
        await self.widgets.stop()
        await self.configmaps.stop()

    # --- what the harness did -------------------------------------------------------------------

    def wrote(self, obj: Obj, t: float | None = None) -> None:
        """The harness wrote ``obj`` (the server's answer): it must converge again from now. A write to
        a forgotten key that lands after ``forget`` (a storm round still in flight when the scenario took
        the namespace away) changes nothing: the object is still expected to go."""
        key = key_of(obj)
        if key in self.forgotten:
            return
        self.min_rv[key] = max(self.min_rv.get(key, 0), rv(obj))
        self.last_write[key] = t if t is not None else now()
        self.converged_at[key] = None
        self.expect_gone.discard(key)

    def deleting(self, key: str, t: float | None = None) -> None:
        self.expect_gone.add(key)
        self.last_write[key] = t if t is not None else now()
        self.converged_at[key] = None
        self._check(key, self.last_write[key])

    def forget(self, keys: set[str]) -> None:
        """Objects that vanished for a reason outside the operator (their namespace or CRD went)."""
        for key in keys:
            self.forgotten.add(key)
            self.expect_gone.add(key)
            self.converged_at[key] = None

    # --- events ---------------------------------------------------------------------------------

    def _on_widget(self, etype: str, obj: Obj, t: float) -> None:
        key = key_of(obj)
        if etype != "DELETED":
            uid = obj["metadata"]["uid"]
            self.widget_uid[key] = uid
            status = obj.get("status") or {}
            observed = status.get("observed")
            if observed is not None:
                previous = self._observed.get(uid)
                if previous is not None and observed < previous:
                    self.regressions += 1
                if previous != observed and key in self.last_write:
                    self.writes.append((t, status.get("writer") or "", key))
                self._observed[uid] = observed
        self._check(key, t)

    def _on_configmap(self, etype: str, obj: Obj, t: float) -> None:
        meta = obj["metadata"]
        owner = next((r["uid"] for r in meta.get("ownerReferences") or [] if r.get("controller")), None)
        if etype != "DELETED":
            if owner:
                self.cm_uids.setdefault(owner, set()).add(meta["uid"])
            with contextlib.suppress(ValueError, TypeError):
                value = int((obj.get("data") or {}).get("value"))
                previous = self._cm_value.get(meta["uid"])
                if previous is not None and value < previous:
                    self.regressions += 1
                self._cm_value[meta["uid"]] = value
        widget = (meta.get("labels") or {}).get(LABEL)
        if widget:
            self._check(f"{meta.get('namespace')}/{widget}", t)

    def _check(self, key: str, t: float) -> None:
        if key not in self.last_write:
            return  # not one of the harness's widgets
        ok = self.is_converged(key)
        if ok and self.converged_at.get(key) is None:
            self.converged_at[key] = t
        elif not ok:
            self.converged_at[key] = None

    def is_converged(self, key: str) -> bool:
        ns, _, name = key.partition("/")
        widget = self.widgets.objects.get(key)
        cm = self.configmaps.objects.get(f"{ns}/{configmap_name(name)}")
        if key in self.expect_gone:
            return widget is None and cm is None
        if widget is None or rv(widget) < self.min_rv.get(key, 0):
            return False
        return converged(widget, cm)

    # --- results --------------------------------------------------------------------------------

    @property
    def keys(self) -> list[str]:
        return list(self.last_write)

    def pending(self) -> list[str]:
        return [k for k in self.last_write if self.converged_at.get(k) is None]

    def duplicates(self) -> int:
        """ConfigMaps made more than once for one widget incarnation (a delete+create the harness did
        not ask for)."""
        return sum(len(uids) - 1 for uids in self.cm_uids.values() if len(uids) > 1)

    def lags(self, fault_end: float) -> list[float]:
        """Per widget: seconds from max(fault end, its last write) until it (last) converged."""
        out = []
        for key, t_write in self.last_write.items():
            done = self.converged_at.get(key)
            if done is not None:
                out.append(max(0.0, done - max(fault_end, t_write)))
        return out

    async def wait_converged(self, timeout: float) -> bool:
        deadline = now() + timeout
        while now() < deadline:
            if not self.pending():
                return True
            await asyncio.sleep(0.1)
        return not self.pending()

    async def ground_truth(self, namespaces: list[str]) -> tuple[list[str], int]:
        """Fresh LISTs: the widgets that have not converged (or did not go when deleted), and orphan
        ConfigMaps (labelled for a widget that no longer exists)."""
        widgets: dict[str, Obj] = {}
        cms: dict[str, Obj] = {}
        for ns in namespaces:
            with contextlib.suppress(ApiError):
                for w in (await self.client.list(Widget.resource(), ns))["items"]:
                    widgets[key_of(w)] = w
            for cm in (await self.client.list("configmaps", ns, label_selector=LABEL))["items"]:
                cms[key_of(cm)] = cm
        bad = []
        for key in self.last_write:
            ns, _, name = key.partition("/")
            if ns not in namespaces:
                continue
            widget, cm = widgets.get(key), cms.get(f"{ns}/{configmap_name(name)}")
            if key in self.expect_gone:
                if widget is not None or cm is not None:
                    bad.append(key)
            elif widget is None or not converged(widget, cm):
                bad.append(key)
        orphans = sum(1 for cm in cms.values()
                      if f"{cm['metadata']['namespace']}/{cm['metadata']['labels'][LABEL]}" not in widgets)
        return bad, orphans

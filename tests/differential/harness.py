"""The differential harness: one scripted request sequence, run against a backend (the fake or the real
control plane), gives a list of normalised outcomes; two backends agree when the lists are equal.

Normalisation keeps what a client may rely on and drops what differs by nature:
- uids, timestamps and generated-name suffixes become placeholders (a uid keeps its identity: the first
  uid seen is ``uid#1`` wherever it appears again);
- resourceVersions become their rank among all RVs the sequence saw, so their order (monotonic, equal
  for a no-op) is compared but not their values; a list's own RV (moved by unrelated writes on a real
  cluster) becomes ``<list-rv>`` if it is not older than its items; continue tokens by presence;
- the sequence's namespace (unique per run) becomes ``NS``; the cluster CA in ``kube-root-ca.crt`` ``<ca>``;
- digits in the messages of Expired/Timeout errors (RV numbers) become ``N``, as do numbers in
  parentheses in Conflict messages (the RV of a failed precondition);
- the causes of Invalid and apply-Conflict errors are sorted (the real order varies from run to run);
- discovery entries lose ``storageVersionHash`` and ``categories``; ``serverAddress`` becomes ``<server>``;
- BOOKMARK events are dropped from watches except the ``k8s.io/initial-events-end`` one (the real server
  sends others when it likes); that one's RV, the watch cache's (moved by unrelated writes on a real
  cluster, as a list's), becomes ``<list-rv>`` if it is not older than the events before it.
"""

from __future__ import annotations

import asyncio
import re
import secrets
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import orjson

from kubeloop.client.config import Config

UA = "difftest/1.0"
MERGE, JSON, APPLY = "application/merge-patch+json", "application/json-patch+json", "application/apply-patch+yaml"
STRATEGIC = "application/strategic-merge-patch+json"


@dataclass
class Req:
    """One request; ``{ns}`` in path/body is the sequence's namespace, ``{rv:<mark>}`` a saved RV."""

    method: str
    path: str
    body: Any = None
    ct: str = "application/json"
    params: dict[str, str] = field(default_factory=dict)
    save: dict[str, str] = field(default_factory=dict)  # mark name → dotted path in the answer ({m:name})
    only: tuple[str, ...] = ()  # discovery: compare just these resources (the fake serves a subset)
    # Built-in kinds the real server defaults (a Deployment's strategy, a container's pull policy...):
    # compare just these dotted paths ("*" maps over a list) of a successful answer.
    pick: tuple[str, ...] = ()
    # An error's status, reason and causes (the set of (reason, field)) only: the real messages of some (a
    # pod update's) embed a dump of Go structs the fake does not reproduce, and the real server reports
    # some causes twice on update (its metadata validation runs twice).
    brief: bool = False


@dataclass
class Mark:
    """Lists ``path`` and saves its resourceVersion under ``name`` (a watch can start there)."""

    name: str
    path: str


@dataclass
class Watch:
    """Watches ``path`` from a mark (or with ``params``) and records the events until none come."""

    path: str
    since: str | None = None
    params: dict[str, str] = field(default_factory=dict)
    to_last_write: bool = False  # stop at the sequence's last write (no selector: it must come)


@dataclass
class WaitGone:
    """Polls until ``path`` answers 404 (asynchronous work: GC, namespace cleanup); records whether it did."""

    path: str
    timeout: float = 60.0


@dataclass
class WaitFor:
    """Polls ``path`` until ``jsonpath`` (dotted) has ``value``; records whether it did."""

    path: str
    dotted: str
    value: Any
    timeout: float = 30.0


Step = Req | Mark | Watch | WaitGone | WaitFor


class Backend:
    """An HTTP endpoint with credentials: the real cluster's admin kubeconfig or the fake's URL."""

    def __init__(self, name: str, config: Config, session: aiohttp.ClientSession) -> None:
        self.name, self.config, self.session = name, config, session
        self._ssl: Any = None

    async def _opts(self) -> dict[str, Any]:
        creds = await self.config.auth.credentials()
        if self._ssl is None:
            self._ssl = self.config.ssl_context(creds)
        headers = {"User-Agent": UA, "Accept": "application/json"}
        if creds.token:
            headers["Authorization"] = f"Bearer {creds.token}"
        return {"headers": headers, "ssl": self._ssl}

    async def request(self, method: str, path: str, body: Any = None, ct: str = "application/json",
                      params: dict[str, str] | None = None) -> tuple[int, Any]:
        opts = await self._opts()
        if body is not None:
            opts["headers"] = {**opts["headers"], "Content-Type": ct}
        data = orjson.dumps(body) if body is not None else None
        async with self.session.request(method, self.config.server + path, data=data, params=params or None,
                                        **opts) as resp:
            raw = await resp.read()
            try:
                return resp.status, orjson.loads(raw) if raw else None
            except orjson.JSONDecodeError:
                return resp.status, raw.decode(errors="replace")

    async def watch(self, path: str, params: dict[str, str], idle: float = 0.6, total: float = 8.0,
                    stop_at: int | None = None) -> tuple[int, list[dict[str, Any]]]:
        """Events of a watch until ``idle`` seconds pass without one (or the initial-events bookmark, or
        an event at resourceVersion ``stop_at``: the last write the sequence made)."""
        opts = await self._opts()
        events: list[dict[str, Any]] = []
        timeout = aiohttp.ClientTimeout(total=total)
        async with self.session.get(self.config.server + path, params={"watch": "1", **params},
                                    timeout=timeout, **opts) as resp:
            if resp.status >= 400:
                return resp.status, [orjson.loads(await resp.read())]
            buf = b""
            while True:
                try:
                    chunk = await asyncio.wait_for(resp.content.readany(), idle)
                except TimeoutError:
                    break
                if not chunk:
                    break
                *lines, buf = (buf + chunk).split(b"\n")
                for line in lines:
                    if line.strip():
                        events.append(orjson.loads(line))
                if any(_initial_end(e) for e in events) or (stop_at and events and _rv(events[-1]) >= stop_at):
                    break
        return resp.status, events


def _rv(event: dict[str, Any]) -> int:
    value = (event.get("object") or {}).get("metadata", {}).get("resourceVersion", "0")
    return int(value) if str(value).isdigit() else 0


def _initial_end(event: dict[str, Any]) -> bool:
    annotations = (event.get("object") or {}).get("metadata", {}).get("annotations") or {}
    return event.get("type") == "BOOKMARK" and annotations.get("k8s.io/initial-events-end") == "true"


async def run(backend: Backend, steps: list[Step], ns: str) -> list[Any]:
    """Runs ``steps`` in namespace ``ns`` (created first, with its defaults) and returns raw outcomes."""
    status, body = await backend.request("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
    assert status == 201, (backend.name, status, body)
    for path in (f"/api/v1/namespaces/{ns}/serviceaccounts/default", f"/api/v1/namespaces/{ns}/configmaps/"
                 "kube-root-ca.crt"):
        await _poll(backend, path, lambda s, b: s == 200, 30)
    marks: dict[str, Any] = {}
    out: list[Any] = []
    for step in steps:
        out.append(await _step(backend, step, ns, marks))
    return out


def _fill(value: Any, ns: str, marks: dict[str, Any]) -> Any:
    if isinstance(value, str):
        value = value.replace("{ns}", ns)
        value = re.sub(r"\{rv:(\w+)\}", lambda m: str(marks.get(m.group(1), "0")), value)
        return re.sub(r"\{m:(\w+)\}", lambda m: str(marks.get(m.group(1), "")), value)
    if isinstance(value, dict):
        return {_fill(k, ns, marks): _fill(v, ns, marks) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, ns, marks) for v in value]
    return value


async def _step(backend: Backend, step: Step, ns: str, marks: dict[str, Any]) -> Any:
    if isinstance(step, Req):
        status, body = await backend.request(step.method, _fill(step.path, ns, marks), _fill(step.body, ns, marks),
                                             step.ct, _fill(step.params, ns, marks))
        if step.method != "GET" and status < 300 and isinstance(body, dict):
            rv = (body.get("metadata") or {}).get("resourceVersion", "")
            if str(rv).isdigit():
                marks["_last"] = max(int(marks.get("_last", 0)), int(rv))
        for name, dotted in step.save.items():
            marks[name] = _dig(body, dotted)
        if step.brief and status >= 400 and isinstance(body, dict):
            causes = (body.get("details") or {}).get("causes") or []
            body = {"reason": body.get("reason"), "causes": sorted({(c.get("reason"), c.get("field")) for c in causes})}
        if step.pick and status < 300 and isinstance(body, dict):
            body = {path: _pick(body, path.split(".")) for path in step.pick}
        if step.only and isinstance(body, dict):
            body["resources"] = [r for r in body.get("resources", []) if r["name"] in step.only]
        return {"status": status, "body": body}
    if isinstance(step, Mark):
        status, body = await backend.request("GET", _fill(step.path, ns, marks))
        marks[step.name] = (body or {}).get("metadata", {}).get("resourceVersion", "0")
        return {"mark": status}
    if isinstance(step, Watch):
        params = _fill(step.params, ns, marks)
        if step.since:
            params["resourceVersion"] = marks[step.since]
        stop_at = int(marks.get("_last", 0)) if step.to_last_write else None
        status, events = await backend.watch(_fill(step.path, ns, marks), params, stop_at=stop_at)
        shown = [e for e in events if e.get("type") != "BOOKMARK" or _initial_end(e)]
        for i, event in enumerate(shown):  # the initial-events-end bookmark: the watch cache's RV, like a list's
            if _initial_end(event):
                rv, before = _rv(event), [_rv(e) for e in shown[:i]]
                event["object"]["metadata"]["resourceVersion"] = (
                    "<list-rv>" if all(rv >= b for b in before) else f"<list-rv older than events: {rv}>")
        return {"status": status, "events": shown}
    if isinstance(step, WaitGone):
        ok = await _poll(backend, _fill(step.path, ns, marks), lambda s, b: s == 404, step.timeout)
        return {"gone": ok}
    def reached(status: int, body: Any) -> bool:
        found = _dig(body, step.dotted)
        return found is not None if step.value == "<set>" else found == step.value

    ok = await _poll(backend, _fill(step.path, ns, marks), reached, step.timeout)
    return {"waited": ok}


def _pick(body: Any, parts: list[str]) -> Any:
    if not parts:
        return body
    if parts[0] == "*":
        return [_pick(item, parts[1:]) for item in body] if isinstance(body, list) else None
    return _pick(body.get(parts[0]) if isinstance(body, dict) else None, parts[1:])


def _dig(body: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        if isinstance(body, list) and part.isdigit():
            body = body[int(part)] if int(part) < len(body) else None
        else:
            body = body.get(part) if isinstance(body, dict) else None
    return body


async def _poll(backend: Backend, path: str, ok: Any, timeout: float) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        status, body = await backend.request("GET", path)
        if ok(status, body):
            return True
        if loop.time() > deadline:
            return False
        await asyncio.sleep(0.05)


def new_namespace() -> str:
    return f"d-{secrets.token_hex(4)}"


# --- normalisation ----------------------------------------------------------------------------------

_UID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
# Discovery: what differs by nature (hashes of the real storage version, kubectl's categories).
_DISCOVERY_DROP = ("storageVersionHash", "categories")
_TIME_KEYS = {"creationTimestamp", "deletionTimestamp", "time", "lastTransitionTime"}


class Normaliser:
    """Stateful across one sequence: uids and RVs are numbered in the order they are first seen."""

    def __init__(self, ns: str, outcomes: list[Any]) -> None:
        self.ns = ns
        self.uids: dict[str, str] = {}
        rvs: set[int] = set()
        _collect_rvs(outcomes, rvs)
        self.rv_rank = {str(v): f"rv#{i}" for i, v in enumerate(sorted(rvs), 1)}

    def text(self, value: str) -> str:
        value = _UID.sub(lambda m: self.uids.setdefault(m.group(0), f"uid#{len(self.uids) + 1}"), value)
        return _STAMP.sub("<time>", value).replace(self.ns, "NS")

    def __call__(self, value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            list_rv = _list_rv(value)
            out = {self.text(k): self(v, k) for k, v in value.items()}
            if list_rv is not None:  # its only promise: not older than any item it holds
                items = [int(i.get("metadata", {}).get("resourceVersion", 0)) for i in value["items"]
                         if isinstance(i, dict)]
                fresh = list_rv.isdigit() and all(int(list_rv) >= i for i in items)
                out["metadata"]["resourceVersion"] = "<list-rv>" if fresh else f"<list-rv older than items: {list_rv}>"
            if out.get("reason") in ("Expired", "Timeout", "Gone") and isinstance(out.get("message"), str):
                out["message"] = re.sub(r"\d+", "N", out["message"])
            if out.get("reason") == "Conflict" and isinstance(out.get("message"), str):
                out["message"] = re.sub(r"\((\d+)\)", "(N)", out["message"])
            conflicts = (out.get("details") or {}).get("causes") if out.get("reason") == "Conflict" else None
            if conflicts:  # apply conflicts: the real order of managers on one field varies too
                conflicts.sort(key=lambda c: (c.get("field", ""), c.get("message", "")))
            causes = (out.get("details") or {}).get("causes") if out.get("reason") == "Invalid" else None
            if causes and len(causes) > 1:  # the real validator's order varies from run to run
                causes.sort(key=lambda c: (c.get("field", ""), c.get("message", "")))
                head = out["message"].split(" is invalid: [")[0]
                out["message"] = head + " is invalid: [" + ", ".join(
                    f"{c.get('field')}: {c.get('message')}" for c in causes) + "]"
            if out.get("kind") == "APIResourceList":
                for r in out.get("resources", []):
                    for drop in _DISCOVERY_DROP:
                        r.pop(drop, None)
            if key == "metadata" and "generateName" in out and isinstance(out.get("name"), str):
                out["name"] = out["generateName"] + "<gen>"
            if key == "data" and "ca.crt" in out:
                out["ca.crt"] = "<ca>"
            return out
        if isinstance(value, list):
            return [self(v, key) for v in value]
        if isinstance(value, str):
            if key in _TIME_KEYS:
                return "<time>"
            if key == "continue":
                return "<continue>" if value else ""
            if key == "resourceVersion":
                return self.rv_rank.get(value, value)
            if key == "serverAddress":
                return "<server>"
            return self.text(value)
        return value


def _list_rv(value: dict[str, Any]) -> str | None:
    """A list's own resourceVersion (not an item's)."""
    if isinstance(value.get("items"), list) and isinstance(value.get("metadata"), dict):
        return value["metadata"].get("resourceVersion")
    return None


def _collect_rvs(value: Any, into: set[int], key: str = "") -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            if k == "metadata" and _list_rv(value) is not None:
                continue  # a list's RV is the whole store's: unrelated writes move it on a real cluster
            _collect_rvs(v, into, k)
    elif isinstance(value, list):
        for v in value:
            _collect_rvs(v, into, key)
    elif key == "resourceVersion" and isinstance(value, str) and value.isdigit():
        into.add(int(value))


def normalise(ns: str, outcomes: list[Any]) -> list[Any]:
    return Normaliser(ns, outcomes)(outcomes)


def differences(fake: list[Any], real: list[Any], steps: list[Step]) -> list[str]:
    """One line per step whose normalised outcomes differ."""
    out = []
    for i, (f, r) in enumerate(zip(fake, real, strict=True)):
        if f != r:
            out.append(f"step {i} {steps[i]}:\n  fake: {orjson.dumps(f).decode()[:1500]}\n"
                       f"  real: {orjson.dumps(r).decode()[:1500]}")
    return out

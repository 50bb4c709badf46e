"""The type a request body names (``apiVersion``, ``kind``) against the endpoint's, as kube-apiserver's
decoder judges it before anything else (400 BadRequest):

- a built-in endpoint decodes the body into its kind's internal type: a kind the scheme does not have
  at that version is "no kind ... is registered", one it has but of another internal type (a Secret
  sent to configmaps) "unknown conversion"; a body that converts but names another group/version (a
  core v1 Event sent to events.k8s.io) is "the API version in the data ... does not match";
- a custom resource endpoint takes any body, then refuses another group/version the same way (a
  wrong ``kind`` is its validator's 422, in ``verbs``).

Missing ``apiVersion`` or ``kind`` default to the endpoint's for a built-in; a custom resource without
them is a 400 (its unstructured decoder needs a kind; its handler then finds the empty group/version
does not match). Which kinds the real scheme registers is
approximated by the kinds the fake serves, the resources of real_resources.json and their lists.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from kubeloop.testing.apiserver import errors
from kubeloop.testing.apiserver.kinds import Kind

_SCHEME = 'in scheme "pkg/runtime/scheme.go:111"'
# The internal Go package a group's types decode into, where it is not the group's first label.
_INTERNAL = {"": "core", "events.k8s.io": "core"}


@functools.cache
def real_resources() -> dict[str, list[str]]:
    """What the real control plane serves, by group/version (captured from its discovery by
    tests/differential/capture_discovery.py)."""
    path = Path(__file__).with_name("real_resources.json")
    return json.loads(path.read_text())["resources"] if path.exists() else {}


def _internal(group: str) -> str:
    return _INTERNAL.get(group, group.split(".")[0])


def _registered(gv: str, kind: str, served: list[Kind], target: Kind) -> bool:
    """Whether the scheme the endpoint decodes with has ``kind`` at ``gv``."""
    base = kind[:-4] if kind.endswith("List") else kind
    if target.group == "apiextensions.k8s.io":  # its own server, its own scheme
        return gv == "apiextensions.k8s.io/v1" and base == "CustomResourceDefinition"
    if gv == "v1" and kind == "Status":
        return True
    if any(k.api_version(v) == gv and k.kind == base for k in served if k.crd is None for v in k.versions):
        return True
    low = base.lower()
    plurals = {low, low + "s", low + "es", low[:-1] + "ies"}
    return any(r in plurals for r in real_resources().get(gv, []) if "/" not in r)


def check(kind: Kind, version: str, body: dict[str, Any], served: list[Kind]) -> None:
    """400 if the body names a type the endpoint of ``kind`` at ``version`` does not take."""
    expected = kind.api_version(version)
    if kind.crd is not None and not body.get("kind"):  # the unstructured decoder needs it
        raise errors.bad_request(f"the object provided is unrecognized (must be of type {kind.kind}): "
                                 f"{_missing_kind(body)}")
    gv = body.get("apiVersion") or ("" if kind.crd is not None else expected)
    sent = body.get("kind") or kind.kind
    if not isinstance(gv, str) or not isinstance(sent, str):
        return  # (a value of the wrong type is the typed decoder's own 400, elsewhere)
    if kind.crd is None and (gv, sent) != (expected, kind.kind):
        shown = gv.rpartition("/")[2]
        head = f'{sent} in version "{shown}" cannot be handled as a {kind.kind}: '
        if not _registered(gv, sent, served, kind):
            raise errors.bad_request(f'{head}no kind "{sent}" is registered for version "{gv}" {_SCHEME}')
        if sent != kind.kind or _internal(gv.rpartition("/")[0]) != _internal(kind.group):
            raise errors.bad_request(f"{head}converting ({shown}.{sent}) to ({_internal(kind.group)}.{kind.kind}): "
                                     "unknown conversion")
    if gv != expected:
        raise errors.bad_request(f"the API version in the data ({gv}) does not match the expected API version "
                                 f"({expected})")


def _missing_kind(body: dict[str, Any]) -> str:
    """runtime's missing-kind error and the handler's 30-byte summary of the body, both quoting the body
    as sent (here: encoded again compactly, as kubectl, client-go and kubeloop send it)."""
    import orjson

    data = orjson.dumps(body).decode()
    summary = data[:30] + " ..." if len(data.encode()) > 30 else data
    return f"Object 'Kind' is missing in '{data}' ({summary})"

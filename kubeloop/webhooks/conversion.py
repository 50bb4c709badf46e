"""ConversionReview v1 for CRDs with several versions: hub and spokes.

- One version is the *hub*; every other version (a *spoke*) registers a function to the hub and one
  from it. Converting A → B goes A → hub → B, so n versions need 2(n-1) functions, not n(n-1).
- Functions take and return the object as a dict. The framework keeps ``metadata`` from the input and
  sets ``apiVersion``/``kind`` itself: the API server refuses a conversion that changes metadata other
  than labels and annotations, and a function cannot get that wrong if it never owns it.
- Every object in the request is converted; the first failure fails the whole review with a message
  naming the object and the step (the API server then fails the client's request with it).
- :func:`round_trip_test` turns sample hub objects into a pytest test checking hub → spoke → hub
  gives the sample back, for every spoke: the property that keeps objects intact across versions.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kubeloop.client.api import Obj
from kubeloop.webhooks.admission import MalformedReview

API_VERSION = "apiextensions.k8s.io/v1"

Convert = Callable[[Obj], Obj]


class ConversionError(Exception):
    """A conversion that cannot be done; the message reaches the client through the API server."""


@dataclass(frozen=True)
class Spoke:
    """The two functions of a non-hub version."""

    to_hub: Convert
    from_hub: Convert


class Converter:
    """Conversions of one CRD (one group/kind) around ``hub`` (an apiVersion, ``group/version``)."""

    def __init__(self, hub: str) -> None:
        if "/" not in hub:
            raise ValueError(f"hub {hub!r} must be an apiVersion such as 'example.com/v1'")
        self.hub = hub
        self.spokes: dict[str, Spoke] = {}

    def spoke(self, api_version: str, *, to_hub: Convert, from_hub: Convert) -> None:
        """Registers a version with its conversion to and from the hub."""
        if api_version == self.hub:
            raise ValueError(f"{api_version} is the hub; it needs no conversion functions")
        if api_version.split("/")[0] != self.hub.split("/")[0]:
            raise ValueError(f"{api_version} is not in the hub's group ({self.hub})")
        self.spokes[api_version] = Spoke(to_hub, from_hub)

    @property
    def versions(self) -> list[str]:
        """Every apiVersion this converter can produce or read, hub first."""
        return [self.hub, *self.spokes]

    def convert(self, obj: Obj, desired: str) -> Obj:
        """``obj`` in ``desired``; raises :class:`ConversionError` if a version is unknown or a step fails."""
        source = str(obj.get("apiVersion"))
        if source == desired:
            return obj
        for version in (source, desired):
            if version != self.hub and version not in self.spokes:
                raise ConversionError(f"unknown version {version!r}; known: {', '.join(self.versions)}")
        hub = obj if source == self.hub else self._step(obj, source, "to the hub", self.spokes[source].to_hub)
        if desired == self.hub:
            return self._finish(hub, obj, desired)
        return self._step(self._finish(hub, obj, self.hub), desired, "from the hub",
                          self.spokes[desired].from_hub, desired)

    def _step(self, obj: Obj, version: str | None, what: str, fn: Convert, target: str | None = None) -> Obj:
        try:
            out = fn(copy.deepcopy(obj))
        except Exception as exc:  # a user function: whatever it raises is reported, not propagated
            raise ConversionError(f"converting {version} {what} failed: {type(exc).__name__}: {exc}") from exc
        if not isinstance(out, dict):
            raise ConversionError(f"converting {version} {what} returned {type(out).__name__}, not an object")
        return self._finish(out, obj, target or self.hub)

    @staticmethod
    def _finish(out: Obj, source: Obj, api_version: str) -> Obj:
        out = {**out, "apiVersion": api_version}
        if "kind" in source:
            out["kind"] = source["kind"]
        if "metadata" in source:
            out["metadata"] = source["metadata"]
        return out

    def review(self, body: Any) -> dict[str, Any]:
        """The ConversionReview response for a request body (raises :class:`MalformedReview`)."""
        request = _parse(body)
        desired, objects = request["desiredAPIVersion"], request["objects"]
        response: dict[str, Any] = {"uid": request["uid"]}
        try:
            response["convertedObjects"] = [self._one(o, desired) for o in objects]
            response["result"] = {"status": "Success"}
        except ConversionError as exc:
            response["result"] = {"status": "Failure", "message": str(exc)}
        return {"apiVersion": API_VERSION, "kind": "ConversionReview", "response": response}

    def _one(self, obj: Any, desired: str) -> Obj:
        if not isinstance(obj, dict):
            raise ConversionError(f"an object in the request is a {type(obj).__name__}, not an object")
        try:
            return self.convert(obj, desired)
        except ConversionError as exc:
            meta = obj.get("metadata") or {}
            key = "/".join(x for x in (meta.get("namespace"), meta.get("name")) if x)
            raise ConversionError(f"{obj.get('kind')} {key}: {exc}") from exc


def _parse(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict) or body.get("kind") != "ConversionReview":
        raise MalformedReview("body is not a ConversionReview (kind must be 'ConversionReview')")
    if body.get("apiVersion") != API_VERSION:
        raise MalformedReview(f"apiVersion {body.get('apiVersion')!r} is not supported; "
                              f"set conversionReviewVersions: [v1] in the CRD")
    request = body.get("request")
    if not isinstance(request, dict):
        raise MalformedReview("ConversionReview.request must be an object")
    for key, kind in (("uid", str), ("desiredAPIVersion", str), ("objects", list)):
        if not isinstance(request.get(key), kind):
            raise MalformedReview(f"request.{key} must be a {kind.__name__}")
    return request


def round_trip_failures(converter: Converter, samples: Iterable[Obj]) -> list[str]:
    """For every sample hub object and every spoke: what differs after hub → spoke → hub (empty: none)."""
    failures = []
    for sample in samples:
        for version in converter.spokes:
            name = (sample.get("metadata") or {}).get("name", "?")
            try:
                back = converter.convert(converter.convert(sample, version), converter.hub)
            except ConversionError as exc:
                failures.append(f"{name} via {version}: {exc}")
                continue
            if back != {**sample, "apiVersion": converter.hub}:
                failures.append(f"{name} via {version}: came back as {back!r}, expected {sample!r}")
    return failures


def round_trip_test(converter: Converter, samples: Iterable[Obj]) -> Callable[..., None]:
    """A pytest test (assign it to a ``test_*`` name) checking every spoke with every sample."""
    import pytest  # only a test suite calls this

    samples = list(samples)
    cases = [pytest.param(s, v, id=f"{(s.get('metadata') or {}).get('name', i)}-{v.rsplit('/', 1)[-1]}")
             for i, s in enumerate(samples) for v in converter.spokes]

    @pytest.mark.parametrize(("sample", "spoke"), cases)
    def test(sample: Obj, spoke: str) -> None:
        back = converter.convert(converter.convert(sample, spoke), converter.hub)
        assert back == {**sample, "apiVersion": converter.hub}, f"hub -> {spoke} -> hub changed the object"

    return test

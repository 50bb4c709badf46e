"""The Kopf contestant: ``kopf run --standalone harness/bench/contestants/kopf_widget.py``."""

import kopf


@kopf.on.create("bench.example.com", "v1", "widgets")
@kopf.on.update("bench.example.com", "v1", "widgets")
def set_observed(spec: kopf.Spec, patch: kopf.Patch, **_: object) -> None:
    patch.status["observed"] = spec.get("value")

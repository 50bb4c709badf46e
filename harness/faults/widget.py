"""The synthetic operator every fault scenario runs: a ``Widget`` (``faults.kubeloop.dev/v1``) asks for
one ConfigMap ``<name>-w`` holding ``spec.value``; the operator applies it (owned by the Widget) and
reports ``status.observed == spec.value``. A finalizer deletes the ConfigMap before the Widget goes.

Converged means: ``status.observed == spec.value``, ``status.observedGeneration == generation`` and the
ConfigMap's ``data.value == str(spec.value)``. ``status.writer`` names the replica that wrote the status
(``$FAULTS_REPLICA``), so the leader scenarios can tell who acted.

Run it like any operator: ``kubeloop run harness.faults.widget`` (from the repository root).
"""

from __future__ import annotations

import os

from pydantic import BaseModel, Field

from kubeloop import Context, Operator
from kubeloop.client import NotFound
from kubeloop.resources import CustomResource, printer_column
from kubeloop.resources.builtin import CONFIG_MAP

GROUP = "faults.kubeloop.dev"
LABEL = f"{GROUP}/widget"


class WidgetSpec(BaseModel):
    value: int = Field(0, ge=0, description="What the ConfigMap and status.observed must say.")
    payload: str | None = Field(None, description="Opaque bytes, copied into the ConfigMap (size tests).")


class WidgetStatus(BaseModel):
    observed: int | None = None
    observedGeneration: int | None = None
    writer: str | None = None


class Widget(CustomResource, group=GROUP, version="v1", kind="Widget", plural="widgets",
             printer_columns=[printer_column("Value", ".spec.value", type="integer"),
                              printer_column("Observed", ".status.observed", type="integer")]):
    """The synthetic custom resource of the fault scenarios."""

    spec: WidgetSpec
    status: WidgetStatus | None = None


def configmap_name(widget: str) -> str:
    return f"{widget}-w"


def desired_configmap(obj: dict) -> dict:
    spec = obj.get("spec") or {}
    data = {"value": str(spec.get("value", 0))}
    if spec.get("payload"):
        data["payload"] = spec["payload"]
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": configmap_name(obj["metadata"]["name"]),
                         "labels": {LABEL: obj["metadata"]["name"]}},
            "data": data}


def converged(widget: dict, configmap: dict | None) -> bool:
    """The operator's whole job, as the harness checks it."""
    spec, status = widget.get("spec") or {}, widget.get("status") or {}
    value = spec.get("value", 0)
    return (status.get("observed") == value
            and status.get("observedGeneration") == widget["metadata"].get("generation")
            and configmap is not None and (configmap.get("data") or {}).get("value") == str(value))


operator = Operator("widget", finalizer_domain=GROUP)
REPLICA = os.environ.get("FAULTS_REPLICA", "")


@operator.reconcile(Widget, owns=[CONFIG_MAP], resync=None)
async def reconcile(widget: Widget, ctx: Context) -> None:
    raw = ctx.raw
    await ctx.apply_children([desired_configmap(raw)])
    # Guarded: a status computed from a stale read must fail (409) rather than land.
    await ctx.patch_status({"observed": widget.spec.value, "observedGeneration": widget.metadata.generation,
                            "writer": REPLICA or None}, guarded=True)


@operator.finalize(Widget)
async def cleanup(widget: Widget, ctx: Context) -> None:
    try:
        await ctx.client.delete(CONFIG_MAP, configmap_name(ctx.name), ctx.namespace)
    except NotFound:
        pass

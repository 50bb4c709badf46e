"""A small operator with every kind of webhook, used by the unit and integration tests.

``Gadget`` (group ``gadgets.test.kubeloop.dev``) has two versions: ``v1alpha1`` with ``spec.size`` (a
string like "3") and the hub ``v1beta1`` with ``spec.count`` (an int). Rules:

- validate: ``count`` at most 10 (``spec.count``), ``owner`` never changes on UPDATE (``spec.owner``),
  a warning when ``legacy`` is set;
- mutate: ``spec.color`` defaults to ``"blue"`` and a label records the requesting user's name;
- convert: ``size`` ↔ ``count``.
"""

from __future__ import annotations

from pydantic import BaseModel

from kubeloop import AdmissionRequest, CustomResource, Denied, Operator

GROUP = "gadgets.test.kubeloop.dev"


class GadgetSpec(BaseModel):
    count: int = 1
    owner: str = ""
    color: str | None = None
    legacy: bool = False


class Gadget(CustomResource, group=GROUP, version="v1beta1", kind="Gadget"):
    spec: GadgetSpec = GadgetSpec()


class OldGadgetSpec(BaseModel):
    size: str = "1"
    owner: str = ""
    color: str | None = None
    legacy: bool = False


class GadgetV1alpha1(CustomResource, group=GROUP, version="v1alpha1", kind="Gadget", storage=False):
    spec: OldGadgetSpec = OldGadgetSpec()


op = Operator("gadgets")


@op.validate(Gadget)
async def check(obj: Gadget, req: AdmissionRequest) -> None:
    if obj.spec.count > 10:
        raise Denied(f"must be at most 10, got {obj.spec.count}", field="spec.count")
    if req.operation == "UPDATE" and req.old is not None and req.old.spec.owner != obj.spec.owner:
        raise Denied(f"cannot change (was {req.old.spec.owner!r})", field="spec.owner")
    if obj.spec.legacy:
        req.warn("spec.legacy is deprecated")


@op.mutate(Gadget)
async def default(obj: Gadget, req: AdmissionRequest) -> Gadget:
    if obj.spec.color is None:
        obj.spec.color = "blue"
    obj.metadata.labels = {**(obj.metadata.labels or {}), "gadgets/created-by": _label(req.user.username)}
    return obj


def _label(username: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in username)[-63:].strip("-_.") or "unknown"


def to_hub(old: GadgetV1alpha1) -> Gadget:
    spec = old.spec
    return Gadget(metadata=old.metadata, spec=GadgetSpec(count=int(spec.size), owner=spec.owner,
                                                         color=spec.color, legacy=spec.legacy))


def from_hub(new: Gadget) -> GadgetV1alpha1:
    spec = new.spec
    return GadgetV1alpha1(metadata=new.metadata, spec=OldGadgetSpec(size=str(spec.count), owner=spec.owner,
                                                                     color=spec.color, legacy=spec.legacy))


op.convert(Gadget, spokes={GadgetV1alpha1: (to_hub, from_hub)})

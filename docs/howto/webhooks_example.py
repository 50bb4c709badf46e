"""The webhooks how-to's example (run by tests/unit/test_webhooks_operator.py)."""

from pydantic import BaseModel

from kubeloop import AdmissionRequest, CustomResource, Denied, Operator


class WebsiteSpec(BaseModel):
    replicas: int = 1
    domain: str = ""
    tier: str | None = None


class Website(CustomResource, group="example.com", version="v1beta1", kind="Website"):
    spec: WebsiteSpec


op = Operator("website")


@op.validate(Website)
async def check(obj: Website, req: AdmissionRequest) -> None:
    if obj.spec.replicas > 10:
        raise Denied("must be at most 10", field="spec.replicas")  # kubectl: "spec.replicas: must be ..."
    if req.operation == "UPDATE" and req.old.spec.domain != obj.spec.domain:
        raise Denied("cannot be changed", field="spec.domain")


@op.mutate(Website)
async def default(obj: Website, req: AdmissionRequest) -> Website:
    obj.spec.tier = obj.spec.tier or "standard"
    return obj  # the framework sends the JSON patch


# An older version, with "size" where v1beta1 has "replicas", converted through the hub (v1beta1).
class OldWebsiteSpec(BaseModel):
    size: int = 1
    domain: str = ""
    tier: str | None = None


class WebsiteV1alpha1(CustomResource, group="example.com", version="v1alpha1", kind="Website", storage=False):
    spec: OldWebsiteSpec


def to_hub(old: WebsiteV1alpha1) -> Website:
    return Website(metadata=old.metadata,
                   spec=WebsiteSpec(replicas=old.spec.size, domain=old.spec.domain, tier=old.spec.tier))


def from_hub(new: Website) -> WebsiteV1alpha1:
    return WebsiteV1alpha1(metadata=new.metadata,
                           spec=OldWebsiteSpec(size=new.spec.replicas, domain=new.spec.domain, tier=new.spec.tier))


op.convert(Website, spokes={WebsiteV1alpha1: (to_hub, from_hub)})

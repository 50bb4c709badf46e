"""admission_kopf.py's webhooks on kubeloop (run by tests/unit/test_webhook_habits.py)."""

from pydantic import BaseModel

from kubeloop import AdmissionRequest, CustomResource, Denied, Operator


class AnnouncementSpec(BaseModel):
    text: str = ""  # Field(max_length=80) would let the API server check the length itself
    audience: str | None = None
    shout: bool | None = None


class Announcement(CustomResource, group="kopf-migration.kubeloop.dev", version="v1", kind="Announcement"):
    spec: AnnouncementSpec


operator = Operator("announcer")


@operator.validate(Announcement, operations=("CREATE", "UPDATE"))
async def check(obj: Announcement, req: AdmissionRequest) -> None:
    if len(obj.spec.text) > 80:
        raise Denied("at most 80 characters", field="spec.text")  # a 422 naming the field
    if req.operation == "UPDATE" and req.old.spec.audience != obj.spec.audience:
        raise Denied("cannot be changed", field="spec.audience")
    if obj.spec.shout:
        req.warn("spec.shout is deprecated")


@operator.mutate(Announcement, operations=("CREATE",), failure_policy="Ignore")
async def default_audience(obj: Announcement, req: AdmissionRequest) -> Announcement:
    obj.spec.audience = obj.spec.audience or "everyone"
    return obj  # the framework sends the JSON patch

"""A Kopf operator's admission webhooks: the original that admission_kubeloop.py ports."""

import kopf


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_):
    settings.admission.server = kopf.WebhookServer(addr="0.0.0.0", port=9443,
                                                   certfile="/certs/tls.crt", pkeyfile="/certs/tls.key")
    settings.admission.managed = "announcements.kopf-migration.kubeloop.dev"


@kopf.on.validate("kopf-migration.kubeloop.dev", "v1", "announcements", operations=["CREATE", "UPDATE"])
def check(spec, old, operation, warnings: list[str], **_):
    if len(spec.get("text", "")) > 80:
        raise kopf.AdmissionError("spec.text: at most 80 characters", code=422)
    if operation == "UPDATE" and old["spec"].get("audience") != spec.get("audience"):
        raise kopf.AdmissionError("spec.audience cannot be changed", code=422)
    if spec.get("shout"):
        warnings.append("spec.shout is deprecated")


@kopf.on.mutate("kopf-migration.kubeloop.dev", "v1", "announcements", operations=["CREATE"],
                ignore_failures=True)
def default_audience(spec, patch, **_):
    if not spec.get("audience"):
        patch.spec["audience"] = "everyone"

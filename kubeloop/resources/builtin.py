"""``Resource`` constants for the built-in kinds operators touch most, so no discovery call is needed."""

from __future__ import annotations

from kubeloop.client.resource import Resource

_VERBS = frozenset({"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"})


def _r(group: str, version: str, plural: str, kind: str, *, namespaced: bool = True,
       short_names: tuple[str, ...] = (), subresources: tuple[str, ...] = ()) -> Resource:
    return Resource(group, version, plural, kind, namespaced=namespaced, verbs=_VERBS,
                    subresources=frozenset(subresources), short_names=short_names, singular=kind.lower())


POD = _r("", "v1", "pods", "Pod", short_names=("po",),
         subresources=("status", "log", "exec", "eviction", "binding", "ephemeralcontainers"))
CONFIG_MAP = _r("", "v1", "configmaps", "ConfigMap", short_names=("cm",))
SECRET = _r("", "v1", "secrets", "Secret")
NAMESPACE = _r("", "v1", "namespaces", "Namespace", namespaced=False, short_names=("ns",),
               subresources=("status", "finalize"))
SERVICE = _r("", "v1", "services", "Service", short_names=("svc",), subresources=("status", "proxy"))
SERVICE_ACCOUNT = _r("", "v1", "serviceaccounts", "ServiceAccount", short_names=("sa",),
                     subresources=("token",))
PERSISTENT_VOLUME_CLAIM = _r("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim",
                             short_names=("pvc",), subresources=("status",))
NODE = _r("", "v1", "nodes", "Node", namespaced=False, short_names=("no",), subresources=("status", "proxy"))
EVENT = _r("events.k8s.io", "v1", "events", "Event", short_names=("ev",))
CORE_EVENT = _r("", "v1", "events", "Event", short_names=("ev",))
LEASE = _r("coordination.k8s.io", "v1", "leases", "Lease")
DEPLOYMENT = _r("apps", "v1", "deployments", "Deployment", short_names=("deploy",),
                subresources=("status", "scale"))
REPLICA_SET = _r("apps", "v1", "replicasets", "ReplicaSet", short_names=("rs",),
                 subresources=("status", "scale"))
STATEFUL_SET = _r("apps", "v1", "statefulsets", "StatefulSet", short_names=("sts",),
                  subresources=("status", "scale"))
DAEMON_SET = _r("apps", "v1", "daemonsets", "DaemonSet", short_names=("ds",), subresources=("status",))
JOB = _r("batch", "v1", "jobs", "Job", subresources=("status",))
CRON_JOB = _r("batch", "v1", "cronjobs", "CronJob", short_names=("cj",), subresources=("status",))
HORIZONTAL_POD_AUTOSCALER = _r("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler",
                               short_names=("hpa",), subresources=("status",))
POD_DISRUPTION_BUDGET = _r("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget",
                           short_names=("pdb",), subresources=("status",))
INGRESS = _r("networking.k8s.io", "v1", "ingresses", "Ingress", short_names=("ing",),
             subresources=("status",))
CUSTOM_RESOURCE_DEFINITION = _r("apiextensions.k8s.io", "v1", "customresourcedefinitions",
                                "CustomResourceDefinition", namespaced=False, short_names=("crd", "crds"),
                                subresources=("status",))

ALL: tuple[Resource, ...] = (
    POD, CONFIG_MAP, SECRET, NAMESPACE, SERVICE, SERVICE_ACCOUNT, PERSISTENT_VOLUME_CLAIM, NODE, EVENT,
    CORE_EVENT, LEASE, DEPLOYMENT, REPLICA_SET, STATEFUL_SET, DAEMON_SET, JOB, CRON_JOB,
    HORIZONTAL_POD_AUTOSCALER, POD_DISRUPTION_BUDGET, INGRESS, CUSTOM_RESOURCE_DEFINITION,
)


def by_kind(kind: str, group: str | None = None) -> Resource:
    """The constant for ``kind``; ``group`` picks the Event ("" or, by default, "events.k8s.io")."""
    matches = [r for r in ALL if r.kind == kind and (group is None or r.group == group)]
    if not matches:
        raise KeyError(f"no built-in resource for kind {kind!r}" + (f" in group {group!r}" if group else ""))
    return matches[0]

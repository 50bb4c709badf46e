"""The defaults kube-apiserver sets when it decodes a workload or a pod, so that they are stored, returned
and owned by the writer (an apply that changes one conflicts with the creator, as on the real server).

Read from kube-apiserver v1.35.4's defaulting functions (``pkg/apis/core/v1/defaults.go``
``SetDefaults_PodSpec`` and ``SetDefaults_Pod``, ``pkg/apis/apps/v1/defaults.go``,
``pkg/apis/batch/v1/defaults.go``, with 1.35's default feature gates) and checked against what that server
returns for a minimal object of each kind. Only what a value left empty gets. Not modelled: a container's
defaults (pull policy, termination message, port protocol: the fake owns lists whole, and a defaulted
member would make every later apply of the list conflict, where the real server merges containers by
name) and admission plugins' additions to a Pod (service account volume, tolerations, priority: ``admission``).

- ``apply(kind_key, obj)`` fills in place what is missing; a value of the wrong type is left to validation.
"""

from __future__ import annotations

from typing import Any

from kubeloop.testing.apiserver import autoscaling, limitranges

Obj = dict[str, Any]


def apply(key: tuple[str, str], obj: Obj) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    fill = _KINDS.get(key)
    if fill is not None:
        fill(spec)


def _put(obj: Obj, field: str, value: Any) -> Any:
    """Sets ``field`` unless it has a value (a JSON null or an empty string is none: Go decodes them as
    unset); returns it."""
    if obj.get(field) in (None, ""):
        obj[field] = value
    return obj[field]


def _pod(spec: Obj) -> None:
    grace = spec.get("terminationGracePeriodSeconds")
    if isinstance(grace, int) and not isinstance(grace, bool) and grace < 0:
        spec["terminationGracePeriodSeconds"] = 1  # (the v1 Pod's conversion: a negative grace period is 1 s)
    _pod_spec(spec)
    _put(spec, "enableServiceLinks", True)
    if spec.get("hostNetwork") is True:  # SetDefaults_Pod: on the host's network a port is the host's port
        for field in ("containers", "initContainers"):
            for container in spec.get(field) or [] if isinstance(spec.get(field), list) else []:
                for port in (container.get("ports") or []) if isinstance(container, dict) else []:
                    if isinstance(port, dict) and not port.get("hostPort"):
                        port["hostPort"] = port.get("containerPort")
    for field in ("initContainers", "containers"):  # SetDefaults_Pod: a limit without request is both
        for container in spec.get(field) or [] if isinstance(spec.get(field), list) else []:
            resources = container.get("resources") if isinstance(container, dict) else None
            limits = resources.get("limits") if isinstance(resources, dict) else None
            if isinstance(resources, dict) and isinstance(limits, dict) and limits:
                requests = resources.setdefault("requests", {})
                if isinstance(requests, dict):
                    for name, value in limits.items():
                        requests.setdefault(name, value)


def _pod_spec(spec: Any) -> None:
    if not isinstance(spec, dict):
        return
    for field, value in (("dnsPolicy", "ClusterFirst"), ("restartPolicy", "Always"),
                         ("schedulerName", "default-scheduler"), ("terminationGracePeriodSeconds", 30),
                         ("securityContext", {})):
        _put(spec, field, value)
    for field in ("initContainers", "containers", "ephemeralContainers"):
        for container in spec.get(field) or [] if isinstance(spec.get(field), list) else []:
            if isinstance(container, dict):
                _container(container)
                # an empty struct Go writes, so owned by the writer (not filled into an applied
                # configuration: the applier does not own what it did not send)
                container.setdefault("resources", {})
                _probes_and_env(container)
    for volume in spec.get("volumes") or [] if isinstance(spec.get("volumes"), list) else []:
        if isinstance(volume, dict):
            _volume(volume)


# A volume's sources that have a file mode (0644), and the one it is when it names none.
_MODED = ("secret", "configMap", "downwardAPI", "projected")
_SOURCELESS = {"name"}


def _volume(volume: Obj) -> None:
    """SetDefaults_Volume and its sources': an emptyDir when no source is named; file modes; a host
    path's type; a projected token's expiry."""
    if not set(volume) - _SOURCELESS:
        volume["emptyDir"] = {}
    for source in _MODED:
        if isinstance(volume.get(source), dict):
            _put(volume[source], "defaultMode", 420)
    if isinstance(volume.get("hostPath"), dict) and volume["hostPath"].get("type") is None:
        volume["hostPath"]["type"] = ""
    for item in (volume.get("projected") or {}).get("sources") or [] if isinstance(volume.get("projected"),
                                                                                   dict) else []:
        token = item.get("serviceAccountToken") if isinstance(item, dict) else None
        if isinstance(token, dict):
            _put(token, "expirationSeconds", 3600)


def _probes_and_env(container: Obj) -> None:
    """SetDefaults_Probe and SetDefaults_HTTPGetAction for each probe; a field reference's apiVersion."""
    for field in ("livenessProbe", "readinessProbe", "startupProbe"):
        probe = container.get(field)
        if not isinstance(probe, dict):
            continue
        for key, value in (("timeoutSeconds", 1), ("periodSeconds", 10), ("successThreshold", 1),
                           ("failureThreshold", 3)):
            if not probe.get(key):
                probe[key] = value
        if isinstance(probe.get("httpGet"), dict):
            _put(probe["httpGet"], "path", "/")
            _put(probe["httpGet"], "scheme", "HTTP")
    for env in container.get("env") or [] if isinstance(container.get("env"), list) else []:
        ref = (env.get("valueFrom") or {}).get("fieldRef") if isinstance(env, dict) else None
        if isinstance(ref, dict):
            _put(ref, "apiVersion", "v1")


def _container(container: Obj) -> None:
    """SetDefaults_Container: pull an image tagged ``latest`` (or not tagged) always, others if absent;
    the termination message read from the default file."""
    image = container.get("image")
    if isinstance(image, str):
        _put(container, "imagePullPolicy", "Always" if _tag(image) == "latest" else "IfNotPresent")
    _put(container, "terminationMessagePath", "/dev/termination-log")
    for port in container.get("ports") or [] if isinstance(container.get("ports"), list) else []:
        if isinstance(port, dict):
            _put(port, "protocol", "TCP")
    _put(container, "terminationMessagePolicy", "File")


def applied_containers(key: tuple[str, str], config: Obj) -> None:
    """Fills the container defaults into an applied configuration's pod spec (in place), so that an
    apply naming the containers as they were created does not conflict with their creator: the fake owns
    a list whole, where the real server merges containers by name and a defaulted field stays its
    creator's."""
    spec: Any = config
    for part in POD_SPECS.get(key, ()):
        spec = spec.get(part) if isinstance(spec, dict) else None
    if isinstance(spec, dict):
        for field in ("initContainers", "containers"):
            for container in spec.get(field) or [] if isinstance(spec.get(field), list) else []:
                if isinstance(container, dict):
                    _container(container)


# Where pod specs sit in each kind.
POD_SPECS: dict[tuple[str, str], tuple[str, ...]] = {
    ("", "pods"): ("spec",), ("apps", "deployments"): ("spec", "template", "spec"),
    ("apps", "replicasets"): ("spec", "template", "spec"),
    ("apps", "statefulsets"): ("spec", "template", "spec"), ("apps", "daemonsets"): ("spec", "template", "spec"),
    ("batch", "jobs"): ("spec", "template", "spec"),
    ("batch", "cronjobs"): ("spec", "jobTemplate", "spec", "template", "spec"),
}


def _tag(image: str) -> str:
    """An image reference's tag: after the last path component's ``:``; ``latest`` when there is neither
    a tag nor a digest (as the kubelet's image name parser says)."""
    name, digest = image.split("@", 1)[0], "@" in image
    last = name.rsplit("/", 1)[-1]
    tag = last.split(":", 1)[1] if ":" in last else ""
    return tag or ("" if digest else "latest")


def _template(holder: Obj) -> None:
    template = holder.get("template")
    if template is None:
        return
    if isinstance(template, dict):
        if template.get("metadata") is None:
            template["metadata"] = {}
        _pod_spec(template.get("spec"))


def _rolling(spec: Obj, field: str, max_unavailable: int | str, max_surge: int | str) -> None:
    """A Deployment's or DaemonSet's strategy: RollingUpdate, with its bounds when it is one."""
    strategy = _put(spec, field, {})
    if isinstance(strategy, dict):
        _put(strategy, "type", "RollingUpdate")
        rolling = _put(strategy, "rollingUpdate", {}) if strategy["type"] == "RollingUpdate" else None
        if isinstance(rolling, dict):
            _put(rolling, "maxUnavailable", max_unavailable)
            _put(rolling, "maxSurge", max_surge)


def _deployment(spec: Obj) -> None:
    _put(spec, "replicas", 1)
    _rolling(spec, "strategy", "25%", "25%")
    _put(spec, "revisionHistoryLimit", 10)
    _put(spec, "progressDeadlineSeconds", 600)
    _template(spec)


def _replicaset(spec: Obj) -> None:
    _put(spec, "replicas", 1)
    _template(spec)


def _statefulset(spec: Obj) -> None:
    _put(spec, "podManagementPolicy", "OrderedReady")
    _put(spec, "serviceName", "")  # a string without omitempty: written even when empty
    strategy = _put(spec, "updateStrategy", {})
    if isinstance(strategy, dict):
        if strategy.get("type") in (None, ""):
            strategy["type"] = "RollingUpdate"
            _put(strategy, "rollingUpdate", {})
        rolling = strategy.get("rollingUpdate")
        if strategy["type"] == "RollingUpdate" and isinstance(rolling, dict):
            _put(rolling, "partition", 0)  # (maxUnavailable only behind a gate that is off in 1.35)
    retention = _put(spec, "persistentVolumeClaimRetentionPolicy", {})
    if isinstance(retention, dict):
        for field in ("whenDeleted", "whenScaled"):
            _put(retention, field, "Retain")
    _put(spec, "replicas", 1)
    _put(spec, "revisionHistoryLimit", 10)
    _template(spec)
    for claim in spec.get("volumeClaimTemplates") or [] if isinstance(spec.get("volumeClaimTemplates"), list) else []:
        if isinstance(claim, dict):  # each a PersistentVolumeClaim, defaulted as one
            claim.setdefault("apiVersion", "v1")
            claim.setdefault("kind", "PersistentVolumeClaim")
            if isinstance(claim.get("spec"), dict):
                _put(claim["spec"], "volumeMode", "Filesystem")
            if isinstance(claim.setdefault("status", {}), dict):
                _put(claim["status"], "phase", "Pending")


def _daemonset(spec: Obj) -> None:
    _rolling(spec, "updateStrategy", 1, 0)
    _put(spec, "revisionHistoryLimit", 10)
    _template(spec)


def _job(spec: Obj) -> None:
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    _put(spec, "parallelism", 1)
    _put(spec, "backoffLimit", 2147483647 if spec.get("backoffLimitPerIndex") is not None else 6)
    _put(spec, "completionMode", "NonIndexed")
    _put(spec, "suspend", False)
    _put(spec, "podReplacementPolicy", "Failed" if spec.get("podFailurePolicy") is not None
         else "TerminatingOrFailed")
    _put(spec, "manualSelector", False)
    for rule in (spec.get("podFailurePolicy") or {}).get("rules") or [] if isinstance(
            spec.get("podFailurePolicy"), dict) else []:
        for pattern in (rule.get("onPodConditions") or []) if isinstance(rule, dict) else []:
            if isinstance(pattern, dict) and not pattern.get("status"):
                pattern["status"] = "True"
    _template(spec)


def _cronjob(spec: Obj) -> None:
    _put(spec, "concurrencyPolicy", "Allow")
    _put(spec, "suspend", False)
    _put(spec, "successfulJobsHistoryLimit", 3)
    _put(spec, "failedJobsHistoryLimit", 1)
    job = spec.get("jobTemplate")
    if isinstance(job, dict):
        if job.get("metadata") is None:
            job["metadata"] = {}
        if isinstance(job.get("spec"), dict):
            _template(job["spec"])  # (the Job's own defaults come when the CronJob creates it)


def _service(spec: Obj) -> None:
    """SetDefaults_Service: no session affinity, type ClusterIP, TCP ports aimed at themselves, cluster-wide
    traffic policies (external only for what is reachable from outside), node ports for a load balancer."""
    affinity = _put(spec, "sessionAffinity", "None")
    if affinity == "None":
        spec.pop("sessionAffinityConfig", None)
    elif affinity == "ClientIP":
        config = spec.get("sessionAffinityConfig")
        client = config.get("clientIP") if isinstance(config, dict) else None
        if not isinstance(client, dict) or client.get("timeoutSeconds") is None:
            spec["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": 10800}}
    kind = _put(spec, "type", "ClusterIP")
    for port in spec.get("ports") or [] if isinstance(spec.get("ports"), list) else []:
        if isinstance(port, dict):
            _put(port, "protocol", "TCP")
            if port.get("targetPort") in (None, 0, "") and isinstance(port.get("port"), int):
                port["targetPort"] = port["port"]
    if kind in ("NodePort", "LoadBalancer") or (kind == "ClusterIP" and spec.get("externalIPs")):
        _put(spec, "externalTrafficPolicy", "Cluster")
    if kind in ("NodePort", "LoadBalancer", "ClusterIP"):
        _put(spec, "internalTrafficPolicy", "Cluster")
    if kind == "LoadBalancer":
        _put(spec, "allocateLoadBalancerNodePorts", True)


_KINDS = {
    ("", "services"): _service,
    ("", "pods"): _pod, ("", "limitranges"): limitranges.apply_defaults,
    ("apps", "deployments"): _deployment, ("apps", "replicasets"): _replicaset,
    ("apps", "statefulsets"): _statefulset,
    ("apps", "daemonsets"): _daemonset,
    ("batch", "jobs"): _job,
    ("batch", "cronjobs"): _cronjob,
    ("autoscaling", "horizontalpodautoscalers"): autoscaling.defaults,
}

"""A generated Deployment's pod, run as the kubelet would run it but by podman, on a machine without a node.

What the pod template says becomes ``podman run`` flags: the user and group, the read-only root
filesystem (emptyDir volumes as tmpfs), dropped capabilities, no privilege escalation, the runtime's
default seccomp profile, the resource limits, the command and arguments, the environment (the
downward API's pod name and namespace filled in), the service-account token, CA and namespace mounted
where the kubelet mounts them, ``KUBERNETES_SERVICE_HOST``/``PORT`` pointing at the API server, and the
termination grace period as podman's stop timeout.

One difference: the container shares the host's network (the API server listens on 127.0.0.1 only),
where the ports a pod owns (metrics, probes) may be taken, so they are moved to the given loopback
ports with the manager's ``--metrics-bind-address``/``--health-probe-bind-address`` flags; and no
Service routes to the pod, so an operator's webhooks are served on a loopback port and its webhook
configurations and CRD conversions point there (``webhooks_on_loopback``).
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubeloop.packaging.baseimage import podman, ulimits

SERVICE_ACCOUNT_MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"


class PodSpecError(ValueError):
    """The pod template asks for something this runner does not do."""


@dataclass(frozen=True)
class PodRun:
    """One pod's container, as podman runs it."""

    name: str  # the container's (and the pod's) name
    namespace: str
    argv: list[str]  # the ``podman run`` command
    grace_seconds: int
    metrics_port: int
    health_port: int
    liveness_path: str
    readiness_path: str


def pod_run(deployment: Mapping[str, Any], *, name: str, service_account_dir: str | Path, api_host: str,
            api_port: int, metrics_port: int, health_port: int, image: str | None = None,
            extra_args: tuple[str, ...] = ()) -> PodRun:
    """``podman run`` for the Deployment's first container. ``service_account_dir`` holds ``token``,
    ``ca.crt`` and ``namespace`` (readable by the pod's user); ``extra_args`` follow the Deployment's
    (later flags win), e.g. a webhook server on a loopback port rather than behind a Service."""
    namespace = deployment["metadata"]["namespace"]
    pod = deployment["spec"]["template"]["spec"]
    container = pod["containers"][0]
    security = {**(pod.get("securityContext") or {}), **(container.get("securityContext") or {})}
    grace = int(pod.get("terminationGracePeriodSeconds", 30))
    argv = [*podman(), "run", "--detach", "--name", name, "--network", "host", *ulimits(),
            *_security(security), *_volumes(pod, container), *_limits(container.get("resources") or {}),
            "--stop-timeout", str(grace)]
    if pod.get("automountServiceAccountToken", True):
        argv += ["-v", f"{Path(service_account_dir).resolve()}:{SERVICE_ACCOUNT_MOUNT}:ro"]
    env = _env(container.get("env") or [], name, namespace)
    env += [("KUBERNETES_SERVICE_HOST", api_host), ("KUBERNETES_SERVICE_PORT", str(api_port))]
    for key, value in env:
        argv += ["-e", f"{key}={value}"]
    if container.get("command"):
        argv += ["--entrypoint", container["command"][0]]
    argv += [image or container["image"], *(container.get("command") or [])[1:], *container.get("args", []),
             f"--metrics-bind-address=127.0.0.1:{metrics_port}",
             f"--health-probe-bind-address=127.0.0.1:{health_port}", *extra_args]
    return PodRun(name, namespace, argv, grace, metrics_port, health_port,
                  container["livenessProbe"]["httpGet"]["path"], container["readinessProbe"]["httpGet"]["path"])


def webhooks_on_loopback(objs: list[dict[str, Any]], port: int) -> tuple[str, ...]:
    """An operator's webhooks called at https://127.0.0.1:PORT instead of through its Service, which
    no node routes here: the configurations and CRD conversions are rewritten to that URL, and the
    flags that make the process serve it there are returned."""
    def url(config: dict[str, Any]) -> dict[str, Any]:
        return {"url": f"https://127.0.0.1:{port}{config.get('service', {}).get('path', '')}",
                **({"caBundle": config["caBundle"]} if "caBundle" in config else {})}

    found = False
    for obj in objs:
        if obj["kind"] in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
            for hook in obj.get("webhooks") or []:
                hook["clientConfig"], found = url(hook["clientConfig"]), True
        conversion = obj.get("spec", {}).get("conversion", {}) if obj["kind"] == "CustomResourceDefinition" else {}
        if conversion.get("strategy") == "Webhook":
            conversion["webhook"]["clientConfig"], found = url(conversion["webhook"]["clientConfig"]), True
    if not found:
        return ()
    return ("--webhook-host=127.0.0.1", f"--webhook-port={port}", "--webhook-service=")


def _security(ctx: Mapping[str, Any]) -> list[str]:
    user, group = ctx.get("runAsUser"), ctx.get("runAsGroup")
    if ctx.get("runAsNonRoot") and (user is None or int(user) == 0):
        raise PodSpecError("runAsNonRoot needs a numeric non-zero runAsUser here (the kubelet would check "
                           "the image's USER)")
    flags = ["--user", f"{user}:{group}" if group is not None else str(user)] if user is not None else []
    if ctx.get("fsGroup") is not None:
        flags += ["--group-add", str(ctx["fsGroup"])]
    if ctx.get("readOnlyRootFilesystem"):
        flags += ["--read-only", "--read-only-tmpfs=false"]  # writable only where a volume says so
    if ctx.get("allowPrivilegeEscalation") is False:
        flags += ["--security-opt", "no-new-privileges"]
    caps = ctx.get("capabilities") or {}
    flags += [f"--cap-drop={cap}" for cap in caps.get("drop", [])]
    flags += [f"--cap-add={cap}" for cap in caps.get("add", [])]
    seccomp = (ctx.get("seccompProfile") or {}).get("type", "RuntimeDefault")
    if seccomp != "RuntimeDefault":  # podman's default profile is the runtime's default
        raise PodSpecError(f"seccompProfile {seccomp} is not supported here")
    return flags


def _volumes(pod: Mapping[str, Any], container: Mapping[str, Any]) -> list[str]:
    volumes = {v["name"]: v for v in pod.get("volumes") or []}
    flags: list[str] = []
    for mount in container.get("volumeMounts") or []:
        volume = volumes[mount["name"]]
        if "emptyDir" not in volume:
            raise PodSpecError(f"volume {mount['name']}: only emptyDir volumes are supported here")
        flags += ["--tmpfs", f"{mount['mountPath']}:rw,mode=1777"]
    return flags


def _limits(resources: Mapping[str, Any]) -> list[str]:
    limits = resources.get("limits") or {}
    flags = []
    if "memory" in limits:
        flags += ["--memory", _bytes(str(limits["memory"]))]
    if "cpu" in limits:
        cpu = str(limits["cpu"])
        flags += ["--cpus", str(int(cpu[:-1]) / 1000 if cpu.endswith("m") else float(cpu))]
    return flags


def _bytes(quantity: str) -> str:
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "K": 10**3, "M": 10**6, "G": 10**9}
    for suffix, factor in units.items():
        if quantity.endswith(suffix):
            return str(int(float(quantity[: -len(suffix)]) * factor))
    return quantity


def _env(items: list[Mapping[str, Any]], pod_name: str, namespace: str) -> list[tuple[str, str]]:
    fields = {"metadata.name": pod_name, "metadata.namespace": namespace}
    out = []
    for item in items:
        if "value" in item:
            out.append((item["name"], str(item["value"])))
            continue
        path = ((item.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath")
        if path not in fields:
            raise PodSpecError(f"env {item['name']}: only value and the pod's name/namespace are supported here")
        out.append((item["name"], fields[path]))
    return out


class ServiceAccountDir:
    """What the kubelet mounts at /var/run/secrets/kubernetes.io/serviceaccount; files are replaced
    whole (write, then rename), as the kubelet's atomic writer does, so a reader never sees half a token."""

    def __init__(self, path: Path, ca: bytes, namespace: str) -> None:
        self.path = path
        path.mkdir(mode=0o755)
        path.chmod(0o755)
        self.write("ca.crt", ca)
        self.write("namespace", namespace.encode())

    def write(self, name: str, data: bytes) -> None:
        tmp = self.path / f".{name}.tmp"
        tmp.write_bytes(data)
        tmp.chmod(0o644)
        os.replace(tmp, self.path / name)


def memory_bytes(container: str) -> tuple[int, int]:
    """A running container's cgroup memory in use (v1 memory.usage_in_bytes or v2 memory.current: page cache
    included) and the operator process's resident set; -1 where not found."""
    pid = subprocess.run([*podman(), "inspect", "--format", "{{.State.Pid}}", container], capture_output=True,
                         text=True, check=True).stdout.strip()
    status = Path(f"/proc/{pid}/status").read_text()
    rss = int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1)) * 1024  # type: ignore[union-attr]
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for base, name in ((f"/sys/fs/cgroup/memory{path}", "memory.usage_in_bytes"),
                           (f"/sys/fs/cgroup{path}", "memory.current")):
            if ("memory" in controllers.split(",") or controllers == "") and Path(base, name).is_file():
                return int(Path(base, name).read_text()), rss
    return -1, rss

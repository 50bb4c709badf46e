"""The PodSecurity admission plugin (k8s.io/pod-security-admission v0.35.4) for the ``enforce`` label of a
namespace, at its ``latest`` version:

- a namespace's ``pod-security.kubernetes.io/{enforce,audit,warn}[-version]`` labels must name a level
  (privileged, baseline, restricted) and a version (``latest`` or ``v1.x``): 422 otherwise;
- a new pod (and an update that changes a container's image, or adds an ephemeral container) in a
  namespace enforcing ``baseline`` or ``restricted`` is refused with the real 403, its violations in the
  real checks' order and words: host namespaces, host ports, privileged, capabilities, hostPath volumes
  and seccomp for baseline; for restricted also privilege escalation, dropped capabilities, volume types,
  runAsNonRoot, runAsUser=0 and the seccomp profile.

Not modelled, and refused with 501 in an enforcing namespace rather than judged half: a pinned
``enforce-version``, Windows pods, user namespaces (``hostUsers: false``), AppArmor, SELinux options, proc
mounts, sysctls, Windows host processes, probes or lifecycle hooks naming a host, seccomp annotations.
``audit`` and ``warn`` change no answer (audit annotations and warnings are not modelled).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from kubeloop.testing.apiserver import errors
from kubeloop.testing.apiserver.causes import Cause, invalid, listing, mapping

Obj = dict[str, Any]
PREFIX = "pod-security.kubernetes.io/"
LEVELS = ("privileged", "baseline", "restricted")
_VERSION = re.compile(r"v1\.([0-9]|[1-9][0-9]*)")
_BASELINE_CAPABILITIES = frozenset({"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
                                    "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"})
_ALLOWED_VOLUMES = ("configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "image", "persistentVolumeClaim",
                    "projected", "secret")
_VOLUME_TYPES = ("hostPath", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "nfs", "iscsi", "glusterfs", "rbd",
                 "flexVolume", "cinder", "cephfs", "flocker", "fc", "azureFile", "vsphereVolume", "quobyte",
                 "azureDisk", "photonPersistentDisk", "portworxVolume", "scaleIO", "storageos")


def label_causes(labels: dict[str, Any]) -> list[Cause]:
    """PolicyToEvaluate's errors for a namespace's labels (PodSecurity's namespace validation)."""
    out: list[Cause] = []
    for mode in ("enforce", "audit", "warn"):
        level, version = labels.get(PREFIX + mode), labels.get(f"{PREFIX}{mode}-version")
        if isinstance(level, str) and level not in LEVELS:
            out.append(invalid(f"metadata.labels[{PREFIX}{mode}]", level, "must be one of " + ", ".join(LEVELS)))
        if isinstance(version, str) and version != "latest" and not _VERSION.fullmatch(version):
            out.append(invalid(f"metadata.labels[{PREFIX}{mode}-version]", version, 'must be "latest" or "v1.x"'))
    return out


def _quote(items: list[str]) -> str:
    return '"' + '", "'.join(items) + '"' if items else ""


def _plural(singular: str, plural: str, count: int) -> str:
    return singular if count == 1 else plural


def _containers(spec: Obj) -> list[Obj]:
    """visitContainers: init containers, containers, ephemeral containers."""
    return [c for f in ("initContainers", "containers", "ephemeralContainers") for c in listing(spec.get(f))
            if isinstance(c, dict)]


def _sc(c: Obj) -> Obj:
    return mapping(c.get("securityContext"))


def _named(what: str, names: list[str]) -> str:
    return f"{_plural(what, what + 's', len(names))} {_quote(names)}"


def _unmodelled(pod: Obj) -> str | None:
    spec, meta = mapping(pod.get("spec")), mapping(pod.get("metadata"))
    psc = mapping(spec.get("securityContext"))
    if mapping(spec.get("os")).get("name") == "windows" or spec.get("hostUsers") is False:
        return "Windows pods and user namespaces"
    if any(k.startswith(("container.apparmor.security.beta.kubernetes.io/", "seccomp.security.alpha.kubernetes.io/",
                         "container.seccomp.security.alpha.kubernetes.io/")) for k in mapping(meta.get("annotations"))):
        return "AppArmor and seccomp annotations"
    scs = [psc] + [_sc(c) for c in _containers(spec)]
    for field in ("appArmorProfile", "seLinuxOptions", "procMount", "sysctls"):
        if any(sc.get(field) is not None for sc in scs):
            return f"securityContext.{field}"
    if any(mapping(sc.get("windowsOptions")).get("hostProcess") is not None for sc in scs):
        return "securityContext.windowsOptions.hostProcess"
    for c in _containers(spec):
        handlers = [c.get(p) for p in ("livenessProbe", "readinessProbe", "startupProbe")] + list(
            mapping(c.get("lifecycle")).values())
        if any(mapping(mapping(h).get(k)).get("host") for h in handlers for k in ("httpGet", "tcpSocket")):
            return "probes and lifecycle handlers that name a host"
    return None


# --- the checks, in the real registry's order (baseline IDs sorted, then restricted IDs sorted) ----------

def _capabilities_baseline(spec: Obj) -> tuple[str, str] | None:
    bad: list[str] = []
    added: set[str] = set()
    for c in _containers(spec):
        extra = [x for x in listing(mapping(_sc(c).get("capabilities")).get("add")) if x not in _BASELINE_CAPABILITIES]
        if extra:
            bad.append(c.get("name") or "")
            added.update(extra)
    return ("non-default capabilities", f"{_named('container', bad)} must not include {_quote(sorted(added))} in "
            "securityContext.capabilities.add") if bad else None


def _host_namespaces(spec: Obj) -> tuple[str, str] | None:
    used = [f"{f}=true" for f in ("hostNetwork", "hostPID", "hostIPC") if spec.get(f) is True]
    return ("host namespaces", ", ".join(used)) if used else None


def _host_path(spec: Obj) -> tuple[str, str] | None:
    bad = [v.get("name") or "" for v in listing(spec.get("volumes")) if isinstance(v, dict) and v.get("hostPath")]
    return ("hostPath volumes", _named("volume", bad)) if bad else None


def _host_ports(spec: Obj) -> tuple[str, str] | None:
    bad: list[str] = []
    ports: set[str] = set()
    for c in _containers(spec):
        used = [p.get("hostPort") for p in listing(c.get("ports")) if isinstance(p, dict) and p.get("hostPort")]
        if used:
            bad.append(c.get("name") or "")
            ports.update(str(p) for p in used)
    return ("hostPort", f"{_named('container', bad)} {_plural('uses', 'use', len(bad))} "
            f"{_plural('hostPort', 'hostPorts', len(ports))} {', '.join(sorted(ports))}") if bad else None


def _privileged(spec: Obj) -> tuple[str, str] | None:
    bad = [c.get("name") or "" for c in _containers(spec) if _sc(c).get("privileged") is True]
    return ("privileged", f"{_named('container', bad)} must not set securityContext.privileged=true") if bad else None


def _seccomp(spec: Obj, *, restricted: bool) -> tuple[str, str] | None:
    def fine(profile: Any) -> bool:
        return mapping(profile).get("type") in ("RuntimeDefault", "Localhost")

    setters: list[str] = []
    values: set[str] = set()
    pod_profile = mapping(spec.get("securityContext")).get("seccompProfile")
    if pod_profile is not None and not fine(pod_profile):
        setters.append("pod")
        values.add(mapping(pod_profile).get("type") or "")
    explicit: list[str] = []
    implicit: list[str] = []
    for c in _containers(spec):
        profile = _sc(c).get("seccompProfile")
        if profile is not None:
            if not fine(profile):
                explicit.append(c.get("name") or "")
                values.add(mapping(profile).get("type") or "")
        elif pod_profile is None or not fine(pod_profile):
            implicit.append(c.get("name") or "")
    if explicit:
        setters.append(_named("container", explicit))
    if setters:
        return ("seccompProfile", f"{' and '.join(setters)} must not set securityContext.seccompProfile.type to "
                f"{_quote(sorted(values))}")
    if restricted and implicit:
        return ("seccompProfile", f"pod or {_named('container', implicit)} must set securityContext.seccompProfile."
                'type to "RuntimeDefault" or "Localhost"')
    return None


def _privilege_escalation(spec: Obj) -> tuple[str, str] | None:
    bad = [c.get("name") or "" for c in _containers(spec) if _sc(c).get("allowPrivilegeEscalation") is not False]
    return ("allowPrivilegeEscalation != false", f"{_named('container', bad)} must set securityContext."
            "allowPrivilegeEscalation=false") if bad else None


def _capabilities_restricted(spec: Obj) -> tuple[str, str] | None:
    missing: list[str] = []
    adding: list[str] = []
    added: set[str] = set()
    for c in _containers(spec):
        caps = _sc(c).get("capabilities")
        if caps is None:
            missing.append(c.get("name") or "")
            continue
        if "ALL" not in listing(mapping(caps).get("drop")):
            missing.append(c.get("name") or "")
        extra = [x for x in listing(mapping(caps).get("add")) if x != "NET_BIND_SERVICE"]
        if extra:
            adding.append(c.get("name") or "")
            added.update(extra)
    details = [f'{_named("container", missing)} must set securityContext.capabilities.drop=["ALL"]'] if missing else []
    if adding:
        details.append(f"{_named('container', adding)} must not include {_quote(sorted(added))} in "
                       "securityContext.capabilities.add")
    return ("unrestricted capabilities", "; ".join(details)) if details else None


def _restricted_volumes(spec: Obj) -> tuple[str, str] | None:
    bad: list[str] = []
    kinds: set[str] = set()
    for v in listing(spec.get("volumes")):
        if not isinstance(v, dict) or any(v.get(k) is not None for k in _ALLOWED_VOLUMES):
            continue
        bad.append(v.get("name") or "")
        kinds.add(next((k for k in _VOLUME_TYPES if v.get(k) is not None), "unknown"))
    return ("restricted volume types", f"{_named('volume', bad)} {_plural('uses', 'use', len(bad))} "
            f"{_plural('restricted volume type', 'restricted volume types', len(kinds))} "
            f"{_quote(sorted(kinds))}") if bad else None


def _run_as_non_root(spec: Obj) -> tuple[str, str] | None:
    setters: list[str] = []
    pod_value = mapping(spec.get("securityContext")).get("runAsNonRoot")
    if pod_value is False:
        setters.append("pod")
    explicit: list[str] = []
    implicit: list[str] = []
    for c in _containers(spec):
        value = _sc(c).get("runAsNonRoot")
        if value is False:
            explicit.append(c.get("name") or "")
        elif value is None and pod_value is not True:
            implicit.append(c.get("name") or "")
    if explicit:
        setters.append(_named("container", explicit))
    if setters:
        return ("runAsNonRoot != true", f"{' and '.join(setters)} must not set securityContext.runAsNonRoot=false")
    if implicit:
        return ("runAsNonRoot != true", f"pod or {_named('container', implicit)} must set securityContext."
                "runAsNonRoot=true")
    return None


def _run_as_user(spec: Obj) -> tuple[str, str] | None:
    setters = ["pod"] if mapping(spec.get("securityContext")).get("runAsUser") == 0 else []
    bad = [c.get("name") or "" for c in _containers(spec) if _sc(c).get("runAsUser") == 0]
    if bad:
        setters.append(_named("container", bad))
    return ("runAsUser=0", f"{' and '.join(setters)} must not set runAsUser=0") if setters else None


def _seccomp_baseline(spec: Obj) -> tuple[str, str] | None:
    return _seccomp(spec, restricted=False)


def _seccomp_restricted(spec: Obj) -> tuple[str, str] | None:
    return _seccomp(spec, restricted=True)


def _violations(spec: Obj, level: str) -> list[tuple[str, str]]:
    checks: list[Callable[[Obj], tuple[str, str] | None]]
    if level == "baseline":
        checks = [_capabilities_baseline, _host_namespaces, _host_path, _host_ports, _privileged, _seccomp_baseline]
    else:
        checks = [_host_namespaces, _host_ports, _privileged, _privilege_escalation, _capabilities_restricted,
                  _restricted_volumes, _run_as_non_root, _run_as_user, _seccomp_restricted]
    return [found for check in checks if (found := check(spec)) is not None]


def enforce(pod: Obj, namespace: Obj | None) -> None:
    """The plugin's verdict on a pod in ``namespace`` (None: not found, nothing enforced)."""
    labels = mapping(mapping((namespace or {}).get("metadata")).get("labels"))
    level = labels.get(PREFIX + "enforce")
    if level not in ("baseline", "restricted"):
        return  # (privileged, none, or an invalid level the namespace could not have been given)
    if labels.get(PREFIX + "enforce-version") not in (None, "latest"):
        raise errors.not_served("PodSecurity enforcement at a pinned version (pod-security.kubernetes.io/"
                                "enforce-version)")
    missing = _unmodelled(pod)
    if missing:
        raise errors.not_served(f"PodSecurity enforcement for pods with {missing}")
    found = _violations(mapping(pod.get("spec")), str(level))
    if found:
        detail = ", ".join(f"{reason} ({why})" if why else reason for reason, why in found)
        raise errors.forbidden("pods", "", pod["metadata"].get("name") or "",
                               f'violates PodSecurity "{level}:latest": {detail}')


def significant_update(old: Obj, new: Obj) -> bool:
    """isSignificantPodUpdate, for the updates a pod allows: an image changed, an ephemeral container added
    or changed."""
    def images(pod: Obj) -> list[Any]:
        spec = mapping(pod.get("spec"))
        return [c.get("image") for f in ("initContainers", "containers") for c in listing(spec.get(f))
                if isinstance(c, dict)]

    ephemeral = [listing(mapping(p.get("spec")).get("ephemeralContainers")) for p in (old, new)]
    return images(old) != images(new) or any(c not in ephemeral[0] for c in ephemeral[1])

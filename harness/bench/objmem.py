"""``python -m harness.bench.objmem``: memory per cached object for realistic kinds, no cluster needed.

The harness writes the objects itself, as an API server serves them (compact JSON, managedFields as the
server records them): a scheduled Pod as kwok leaves it, a Deployment, a TLS Secret and ConfigMaps of 1, 4
and 32 KiB of data. Every copy has its own name, uid, timestamps, IPs and data, so no string is shared
between copies by accident. Each (kind, representation) is measured in a fresh interpreter, twice: once
under tracemalloc (the Python allocations the cache holds, after a full collection), once without it
(the process's RSS before and after, after a collection). Representations:

- ``dict``: today's cache: orjson-decoded dicts, managedFields dropped by the Cache's transform, held in
  kubeloop.cache.Store.
- ``dict+intern``: the same, every string value of at most 64 characters passed through sys.intern.
- ``msgspec``: msgspec.json.decode into the same plain Python objects (only where msgspec is installed).
- ``json``: the object (managedFields dropped) re-encoded by orjson and kept as bytes (copied to their
  exact size: the bytes orjson returns keep its writer's spare capacity); every read decodes.
- ``json+zlib``: those bytes compressed (zlib level 1); every read decompresses and decodes.

Also per representation: the ingest cost (decode, transform, store) and the cost of one read by key, in
µs per object, timed with timeit and given as a range (min..median of repeats): on a shared machine the
minimum is the nearer to the true cost.
"""

from __future__ import annotations

import argparse
import base64
import gc
import hashlib
import json
import os
import platform
import random
import subprocess
import sys
import time
import timeit
import uuid
import zlib
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from harness.common import provenance

RESULTS = Path(__file__).resolve().parent / "results" / "objmem.json"
KINDS = ("pod", "deployment", "secret", "configmap-1k", "configmap-4k", "configmap-32k")
REPRS = ("dict", "dict+intern", "msgspec", "json", "json+zlib")
BASE = datetime(2026, 11, 30, 8, 0, 0, tzinfo=UTC)


# The objects -----------------------------------------------------------------------------------------


def _ts(i: int, offset: int = 0) -> str:
    return (BASE + timedelta(seconds=i * 3 + offset)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _uid(i: int, salt: str) -> str:
    return str(uuid.UUID(bytes=hashlib.md5(f"{salt}{i}".encode()).digest()))


def _suffix(i: int, n: int = 5) -> str:
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    return "".join(alphabet[(i // len(alphabet) ** k + k * 7) % len(alphabet)] for k in range(n))


def _fields(*paths: str) -> dict[str, Any]:
    """fieldsV1 as the server writes it: nested ``f:`` sets, ``.`` for the element itself."""
    root: dict[str, Any] = {}
    for path in paths:
        node = root
        for part in path.split("/"):
            node = node.setdefault(part, {})
    return root


def _managed(manager: str, op: str, ts: str, fields: dict[str, Any], subresource: str | None = None,
             api_version: str = "v1") -> dict[str, Any]:
    entry: dict[str, Any] = {"manager": manager, "operation": op, "apiVersion": api_version, "time": ts,
                             "fieldsType": "FieldsV1", "fieldsV1": fields}
    if subresource:
        entry["subresource"] = subresource
    return entry


def pod(i: int) -> dict[str, Any]:
    """A ReplicaSet's Pod after the scheduler bound it and kwok (as the kubelet) reported it running."""
    rs_hash = "7d9f8b6c5d"
    name = f"web-{i // 50:04d}-{rs_hash}-{_suffix(i)}"
    ip = f"10.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255}"
    node = f"kwok-node-{i % 20}"
    host_ip = f"172.18.0.{2 + i % 20}"
    created, started = _ts(i), _ts(i, 2)
    cid = hashlib.sha256(f"c{i}".encode()).hexdigest()
    token_vol = f"kube-api-access-{_suffix(i * 7 + 3)}"
    owner_uid = _uid(i // 50, "rs")
    meta_fields = _fields(
        "f:metadata/f:generateName", "f:metadata/f:labels/./", "f:metadata/f:labels/f:app",
        "f:metadata/f:labels/f:pod-template-hash", "f:metadata/f:ownerReferences/./",
        f'f:metadata/f:ownerReferences/k:{{"uid":"{owner_uid}"}}',
        'f:spec/f:containers/k:{"name":"web"}/./', 'f:spec/f:containers/k:{"name":"web"}/f:env/./',
        'f:spec/f:containers/k:{"name":"web"}/f:env/k:{"name":"LOG_LEVEL"}/./',
        'f:spec/f:containers/k:{"name":"web"}/f:env/k:{"name":"LOG_LEVEL"}/f:name',
        'f:spec/f:containers/k:{"name":"web"}/f:env/k:{"name":"LOG_LEVEL"}/f:value',
        'f:spec/f:containers/k:{"name":"web"}/f:env/k:{"name":"POD_NAME"}/./',
        'f:spec/f:containers/k:{"name":"web"}/f:env/k:{"name":"POD_NAME"}/f:name',
        'f:spec/f:containers/k:{"name":"web"}/f:env/k:{"name":"POD_NAME"}/f:valueFrom/./',
        'f:spec/f:containers/k:{"name":"web"}/f:env/k:{"name":"POD_NAME"}/f:valueFrom/f:fieldRef',
        'f:spec/f:containers/k:{"name":"web"}/f:image', 'f:spec/f:containers/k:{"name":"web"}/f:imagePullPolicy',
        'f:spec/f:containers/k:{"name":"web"}/f:livenessProbe/./',
        'f:spec/f:containers/k:{"name":"web"}/f:livenessProbe/f:httpGet/./',
        'f:spec/f:containers/k:{"name":"web"}/f:livenessProbe/f:httpGet/f:path',
        'f:spec/f:containers/k:{"name":"web"}/f:livenessProbe/f:httpGet/f:port',
        'f:spec/f:containers/k:{"name":"web"}/f:name',
        'f:spec/f:containers/k:{"name":"web"}/f:ports/./',
        'f:spec/f:containers/k:{"name":"web"}/f:ports/k:{"containerPort":8080,"protocol":"TCP"}/./',
        'f:spec/f:containers/k:{"name":"web"}/f:readinessProbe/./',
        'f:spec/f:containers/k:{"name":"web"}/f:resources/./',
        'f:spec/f:containers/k:{"name":"web"}/f:resources/f:limits/./',
        'f:spec/f:containers/k:{"name":"web"}/f:resources/f:limits/f:memory',
        'f:spec/f:containers/k:{"name":"web"}/f:resources/f:requests/./',
        'f:spec/f:containers/k:{"name":"web"}/f:resources/f:requests/f:cpu',
        'f:spec/f:containers/k:{"name":"web"}/f:resources/f:requests/f:memory',
        'f:spec/f:containers/k:{"name":"web"}/f:terminationMessagePath',
        'f:spec/f:containers/k:{"name":"web"}/f:terminationMessagePolicy',
        'f:spec/f:containers/k:{"name":"web"}/f:volumeMounts/./',
        'f:spec/f:containers/k:{"name":"web"}/f:volumeMounts/k:{"mountPath":"/etc/web"}/./',
        "f:spec/f:dnsPolicy", "f:spec/f:enableServiceLinks", "f:spec/f:restartPolicy",
        "f:spec/f:schedulerName", "f:spec/f:securityContext", "f:spec/f:terminationGracePeriodSeconds",
        'f:spec/f:volumes/./', 'f:spec/f:volumes/k:{"name":"config"}/./',
        'f:spec/f:volumes/k:{"name":"config"}/f:configMap/./',
        'f:spec/f:volumes/k:{"name":"config"}/f:configMap/f:defaultMode',
        'f:spec/f:volumes/k:{"name":"config"}/f:configMap/f:name', 'f:spec/f:volumes/k:{"name":"config"}/f:name')
    status_fields = _fields(
        'f:status/f:conditions/k:{"type":"ContainersReady"}/./',
        'f:status/f:conditions/k:{"type":"ContainersReady"}/f:lastProbeTime',
        'f:status/f:conditions/k:{"type":"ContainersReady"}/f:lastTransitionTime',
        'f:status/f:conditions/k:{"type":"ContainersReady"}/f:status',
        'f:status/f:conditions/k:{"type":"ContainersReady"}/f:type',
        'f:status/f:conditions/k:{"type":"Initialized"}/./',
        'f:status/f:conditions/k:{"type":"Initialized"}/f:lastTransitionTime',
        'f:status/f:conditions/k:{"type":"PodReadyToStartContainers"}/./',
        'f:status/f:conditions/k:{"type":"PodReadyToStartContainers"}/f:lastTransitionTime',
        'f:status/f:conditions/k:{"type":"Ready"}/./',
        'f:status/f:conditions/k:{"type":"Ready"}/f:lastTransitionTime',
        'f:status/f:conditions/k:{"type":"Ready"}/f:status', 'f:status/f:containerStatuses',
        "f:status/f:hostIP", "f:status/f:hostIPs", "f:status/f:phase", "f:status/f:podIP",
        'f:status/f:podIPs/./', f'f:status/f:podIPs/k:{{"ip":"{ip}"}}/./',
        f'f:status/f:podIPs/k:{{"ip":"{ip}"}}/f:ip', "f:status/f:startTime")
    condition = [("PodReadyToStartContainers", started), ("Initialized", created), ("Ready", started),
                 ("ContainersReady", started), ("PodScheduled", created)]
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": name, "generateName": f"web-{i // 50:04d}-{rs_hash}-", "namespace": "shop",
            "uid": _uid(i, "pod"), "resourceVersion": str(100000 + i * 3), "creationTimestamp": created,
            "labels": {"app": f"web-{i // 50:04d}", "pod-template-hash": rs_hash},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"web-{i // 50:04d}-{rs_hash}",
                                 "uid": owner_uid, "controller": True, "blockOwnerDeletion": True}],
            "managedFields": [
                _managed("kube-controller-manager", "Update", created, meta_fields),
                _managed("kwok", "Update", started, status_fields, "status"),
            ],
        },
        "spec": {
            "volumes": [
                {"name": "config", "configMap": {"name": f"web-{i // 50:04d}-config", "defaultMode": 420}},
                {"name": token_vol, "projected": {"sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                    {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {
                        "apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}], "defaultMode": 420}},
            ],
            "containers": [{
                "name": "web", "image": "registry.example.com/shop/web:1.27.3",
                "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                "env": [{"name": "LOG_LEVEL", "value": "info"},
                        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1",
                                                                        "fieldPath": "metadata.name"}}}],
                "resources": {"limits": {"memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "128Mi"}},
                "volumeMounts": [{"name": "config", "readOnly": True, "mountPath": "/etc/web"},
                                 {"name": token_vol, "readOnly": True,
                                  "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}],
                "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http", "scheme": "HTTP"},
                                  "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1,
                                  "failureThreshold": 3},
                "readinessProbe": {"httpGet": {"path": "/ready", "port": "http", "scheme": "HTTP"},
                                   "timeoutSeconds": 1, "periodSeconds": 5, "successThreshold": 1,
                                   "failureThreshold": 3},
                "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
                "imagePullPolicy": "IfNotPresent",
            }],
            "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default", "serviceAccount": "default", "nodeName": node,
            "securityContext": {}, "schedulerName": "default-scheduler",
            "tolerations": [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                 "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
                 "tolerationSeconds": 300}],
            "priority": 0, "enableServiceLinks": True, "preemptionPolicy": "PreemptLowerPriority",
        },
        "status": {
            "phase": "Running",
            "conditions": [{"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": ts}
                           for t, ts in condition],
            "hostIP": host_ip, "hostIPs": [{"ip": host_ip}], "podIP": ip, "podIPs": [{"ip": ip}],
            "startTime": created,
            "containerStatuses": [{
                "name": "web", "state": {"running": {"startedAt": started}}, "lastState": {}, "ready": True,
                "restartCount": 0, "image": "registry.example.com/shop/web:1.27.3",
                "imageID": "registry.example.com/shop/web@sha256:" + hashlib.sha256(b"web1.27.3").hexdigest(),
                "containerID": f"containerd://{cid}", "started": True}],
            "qosClass": "Burstable",
        },
    }


def deployment(i: int) -> dict[str, Any]:
    """A Deployment applied server-side by kubectl, its status written by kube-controller-manager."""
    name = f"api-{i:05d}"
    created, done = _ts(i), _ts(i, 40)
    labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": "shop"}
    spec_fields = _fields(
        "f:metadata/f:labels/f:app.kubernetes.io/name", "f:metadata/f:labels/f:app.kubernetes.io/part-of",
        "f:spec/f:replicas", "f:spec/f:selector", "f:spec/f:template/f:metadata/f:labels/f:app.kubernetes.io/name",
        'f:spec/f:template/f:spec/f:containers/k:{"name":"api"}/.',
        'f:spec/f:template/f:spec/f:containers/k:{"name":"api"}/f:image',
        'f:spec/f:template/f:spec/f:containers/k:{"name":"api"}/f:name',
        'f:spec/f:template/f:spec/f:containers/k:{"name":"api"}/f:ports/k:{"containerPort":8443,"protocol":"TCP"}/.',
        'f:spec/f:template/f:spec/f:containers/k:{"name":"api"}/f:resources/f:requests/f:cpu',
        'f:spec/f:template/f:spec/f:containers/k:{"name":"api"}/f:resources/f:requests/f:memory',
        'f:spec/f:template/f:spec/f:containers/k:{"name":"api"}/f:readinessProbe/f:httpGet/f:path')
    status_fields = _fields(
        "f:metadata/f:annotations/./", "f:metadata/f:annotations/f:deployment.kubernetes.io/revision",
        "f:status/f:availableReplicas", 'f:status/f:conditions/./',
        'f:status/f:conditions/k:{"type":"Available"}/./',
        'f:status/f:conditions/k:{"type":"Available"}/f:lastTransitionTime',
        'f:status/f:conditions/k:{"type":"Available"}/f:lastUpdateTime',
        'f:status/f:conditions/k:{"type":"Available"}/f:message',
        'f:status/f:conditions/k:{"type":"Progressing"}/./',
        'f:status/f:conditions/k:{"type":"Progressing"}/f:message', "f:status/f:observedGeneration",
        "f:status/f:readyReplicas", "f:status/f:replicas", "f:status/f:updatedReplicas")
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {
            "name": name, "namespace": "shop", "uid": _uid(i, "deploy"), "resourceVersion": str(200000 + i),
            "generation": 1, "creationTimestamp": created, "labels": labels,
            "annotations": {"deployment.kubernetes.io/revision": "1"},
            "managedFields": [_managed("kubectl", "Apply", created, spec_fields, api_version="apps/v1"),
                              _managed("kube-controller-manager", "Update", done, status_fields, "status",
                                       "apps/v1")],
        },
        "spec": {
            "replicas": 3, "selector": {"matchLabels": {"app.kubernetes.io/name": name}},
            "template": {"metadata": {"labels": {"app.kubernetes.io/name": name}}, "spec": {
                "containers": [{
                    "name": "api", "image": f"registry.example.com/shop/api:2.{i % 9}.0",
                    "ports": [{"containerPort": 8443, "protocol": "TCP"}],
                    "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}},
                    "readinessProbe": {"httpGet": {"path": "/readyz", "port": 8443, "scheme": "HTTPS"},
                                       "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1,
                                       "failureThreshold": 3},
                    "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
                    "imagePullPolicy": "IfNotPresent"}],
                "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
                "securityContext": {}, "schedulerName": "default-scheduler"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
            "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600,
        },
        "status": {
            "observedGeneration": 1, "replicas": 3, "updatedReplicas": 3, "readyReplicas": 3,
            "availableReplicas": 3,
            "conditions": [
                {"type": "Available", "status": "True", "lastUpdateTime": done, "lastTransitionTime": done,
                 "reason": "MinimumReplicasAvailable", "message": "Deployment has minimum availability."},
                {"type": "Progressing", "status": "True", "lastUpdateTime": done, "lastTransitionTime": created,
                 "reason": "NewReplicaSetAvailable",
                 "message": f'ReplicaSet "{name}-5b8c9d7f4" has successfully progressed.'}],
        },
    }


def _b64(rng: random.Random, n: int) -> str:
    return base64.b64encode(rng.randbytes(n)).decode()


def secret(i: int) -> dict[str, Any]:
    """A kubernetes.io/tls Secret as cert-manager writes one (certificate chain, key, CA)."""
    rng = random.Random(i)
    name = f"tls-{i:05d}"
    created = _ts(i)
    return {
        "apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
        "metadata": {
            "name": name, "namespace": "shop", "uid": _uid(i, "secret"), "resourceVersion": str(300000 + i),
            "creationTimestamp": created,
            "labels": {"controller.cert-manager.io/fao": "true"},
            "annotations": {"cert-manager.io/certificate-name": name, "cert-manager.io/issuer-kind": "ClusterIssuer",
                            "cert-manager.io/issuer-name": "internal-ca", "cert-manager.io/common-name":
                            f"{name}.shop.svc"},
            "managedFields": [_managed("cert-manager-certificates-issuing", "Update", created, _fields(
                "f:data/./", "f:data/f:ca.crt", "f:data/f:tls.crt", "f:data/f:tls.key",
                "f:metadata/f:annotations/./", "f:metadata/f:annotations/f:cert-manager.io/certificate-name",
                "f:metadata/f:annotations/f:cert-manager.io/common-name",
                "f:metadata/f:annotations/f:cert-manager.io/issuer-kind",
                "f:metadata/f:annotations/f:cert-manager.io/issuer-name",
                "f:metadata/f:labels/./", "f:metadata/f:labels/f:controller.cert-manager.io/fao", "f:type"))],
        },
        # PEM sizes of a 2048-bit RSA certificate, its key and a CA certificate, base64 once more.
        "data": {"ca.crt": _b64(rng, 1100), "tls.crt": _b64(rng, 1250), "tls.key": _b64(rng, 1700)},
    }


def _text(rng: random.Random, size: int, style: str) -> str:
    lines, total = [], 0
    while total < size:
        if style == "yaml":
            line = f"  {rng.choice(('cache', 'http', 'db', 'feature', 'queue'))}_{rng.randrange(10000)}: " \
                   f"{rng.choice(('true', 'false', str(rng.randrange(100000)), 'https://svc.shop.svc:8443'))}\n"
        else:
            line = f"{rng.choice(('app', 'log', 'pool'))}.{rng.choice(('size', 'level', 'timeout'))}" \
                   f".{rng.randrange(1000)}={rng.randrange(10**6)}\n"
        lines.append(line)
        total += len(line)
    return "".join(lines)[:size]


def configmap(i: int, kib: int) -> dict[str, Any]:
    """A ConfigMap with ``kib`` KiB of data: an application.yaml and a properties file (3/4 and 1/4)."""
    rng = random.Random(i * 1000 + kib)
    size = kib * 1024
    name = f"app-config-{i:05d}"
    created = _ts(i)
    return {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {
            "name": name, "namespace": "shop", "uid": _uid(i, f"cm{kib}"), "resourceVersion": str(400000 + i),
            "creationTimestamp": created, "labels": {"app.kubernetes.io/name": f"app-{i:05d}"},
            "managedFields": [_managed("kubectl", "Apply", created, _fields(
                "f:data/f:application.yaml", "f:data/f:logging.properties",
                "f:metadata/f:labels/f:app.kubernetes.io/name"))],
        },
        "data": {"application.yaml": _text(rng, size * 3 // 4, "yaml"),
                 "logging.properties": _text(rng, size - size * 3 // 4, "properties")},
    }


MAKERS: dict[str, Callable[[int], dict[str, Any]]] = {
    "pod": pod, "deployment": deployment, "secret": secret,
    "configmap-1k": lambda i: configmap(i, 1), "configmap-4k": lambda i: configmap(i, 4),
    "configmap-32k": lambda i: configmap(i, 32),
}


def wire(kind: str, i: int) -> bytes:
    """Copy ``i`` of ``kind`` as the API server sends it."""
    return orjson.dumps(MAKERS[kind](i))


# The representations ---------------------------------------------------------------------------------


def _intern(value: Any, limit: int = 64) -> Any:
    if isinstance(value, dict):
        return {sys.intern(k): _intern(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [_intern(v, limit) for v in value]
    if isinstance(value, str) and len(value) <= limit:
        return sys.intern(value)
    return value


class Representation:
    """How one object is held: ``put`` takes the wire bytes, ``get`` returns the object as a dict."""

    def __init__(self, name: str) -> None:
        from kubeloop.cache.cache import _without_managed_fields
        from kubeloop.cache.store import Store, object_key

        self.name = name
        self.strip = _without_managed_fields(None)  # what Cache(strip_managed_fields=True) applies
        self.key = object_key
        self.store = Store()
        self.raw: dict[str, bytes] = {}
        if name == "msgspec":
            import msgspec

            self.decode = msgspec.json.decode
        else:
            self.decode = orjson.loads

    def put(self, data: bytes) -> None:
        obj = self.strip(self.decode(data))
        if self.name == "dict+intern":
            obj = _intern(obj)
        if self.name == "json":
            # Copied: orjson's result keeps its growth buffer (8,154 bytes held for a 3,588-byte Pod).
            self.raw[self.key(obj)] = bytes(memoryview(orjson.dumps(obj)))
        elif self.name == "json+zlib":
            self.raw[self.key(obj)] = zlib.compress(orjson.dumps(obj), 1)
        else:
            self.store.upsert(obj)

    def get(self, key: str) -> dict[str, Any] | None:
        if self.name == "json":
            return orjson.loads(self.raw[key])
        if self.name == "json+zlib":
            return orjson.loads(zlib.decompress(self.raw[key]))
        return self.store.get(key)


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _copies(kind: str, n: int, start: int = 0) -> Iterator[bytes]:
    for i in range(start, start + n):
        yield wire(kind, i)


def measure_one(kind: str, rep: str, n: int, mode: str) -> dict[str, Any]:
    """Run in a child interpreter: bytes held per object for ``n`` copies (``mode`` tracemalloc or rss)."""
    import tracemalloc

    holder = Representation(rep)
    warm = Representation(rep)  # the code paths run once before the baseline (imports, caches)
    warm.put(wire(kind, 10**7))
    gc.collect()
    if mode == "tracemalloc":
        tracemalloc.start()
        for data in _copies(kind, n):
            holder.put(data)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        return {"bytes_per_object": held / n}
    before = _rss_bytes()
    for data in _copies(kind, n):
        holder.put(data)
    gc.collect()
    return {"bytes_per_object": (_rss_bytes() - before) / n}


def timing(kind: str, rep: str, repeat: int = 5, number: int = 200) -> dict[str, Any]:
    """µs per ingest (decode + transform + store) and per read by key, min..median of ``repeat`` runs."""
    holder = Representation(rep)
    blobs = list(_copies(kind, number))
    keys = []
    for data in blobs:
        holder.put(data)
    keys = list(holder.raw) if holder.raw else holder.store.keys()

    def ingest() -> None:
        fresh = Representation(rep)
        for data in blobs:
            fresh.put(data)

    def read() -> None:
        for key in keys:
            holder.get(key)

    out = {}
    for label, fn in (("ingest_us", ingest), ("read_us", read)):
        runs = sorted(t / number * 1e6 for t in timeit.repeat(fn, repeat=repeat, number=1))
        out[label] = [round(runs[0], 3), round(runs[len(runs) // 2], 3)]
    return out


def _child(kind: str, rep: str, n: int, mode: str) -> dict[str, Any]:
    argv = [sys.executable, "-m", "harness.bench.objmem", "--child", kind, rep, mode, "--n", str(n)]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=provenance.REPO,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(
                              filter(None, (str(provenance.REPO), os.environ.get("PYTHONPATH"))))})
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout)


def _available(rep: str) -> bool:
    if rep != "msgspec":
        return True
    try:
        import msgspec  # noqa: F401
    except ImportError:
        return False
    return True


def study(kinds: list[str], reprs: list[str], n: int, log: Callable[[str], None]) -> list[dict[str, Any]]:
    rows = []
    for kind in kinds:
        sample = orjson.loads(wire(kind, 0))
        json_bytes = len(wire(kind, 0))
        sample["metadata"].pop("managedFields", None)
        stripped = len(orjson.dumps(sample))
        for rep in reprs:
            if not _available(rep):
                log(f"{kind} {rep}: skipped (msgspec is not installed in this interpreter)")
                continue
            traced = _child(kind, rep, n, "tracemalloc")["bytes_per_object"]
            rss = _child(kind, rep, n, "rss")["bytes_per_object"]
            row = {"kind": kind, "representation": rep, "n": n, "json_bytes": json_bytes,
                   "json_bytes_without_managed_fields": stripped, "tracemalloc_bytes_per_object": round(traced),
                   "rss_bytes_per_object": round(rss), "ratio_to_json": round(traced / json_bytes, 2),
                   **timing(kind, rep)}
            rows.append(row)
            log(f"{kind:14} {rep:12} json {json_bytes:6} B  traced {traced:8.0f} B  rss {rss:8.0f} B  "
                f"×{traced / json_bytes:4.2f}  ingest {row['ingest_us']} µs  read {row['read_us']} µs")
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| kind | JSON (B) / w/o managedFields | representation | tracemalloc B/obj | RSS B/obj | "
             "× JSON | ingest µs | read µs |", "|---|---|---|---:|---:|---:|---|---|"]
    for r in rows:
        lines.append(f"| {r['kind']} | {r['json_bytes']:,} / {r['json_bytes_without_managed_fields']:,} | "
                     f"{r['representation']} | {r['tracemalloc_bytes_per_object']:,} | "
                     f"{r['rss_bytes_per_object']:,} | {r['ratio_to_json']} | "
                     f"{r['ingest_us'][0]}–{r['ingest_us'][1]} | {r['read_us'][0]}–{r['read_us'][1]} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="copies of each kind (default 10,000)")
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"comma-separated, of {', '.join(KINDS)}")
    parser.add_argument("--representations", default=",".join(REPRS), help=f"comma-separated, of {', '.join(REPRS)}")
    parser.add_argument("--output", type=Path, default=RESULTS, help="where the JSON goes")
    parser.add_argument("--child", nargs=3, metavar=("KIND", "REPR", "MODE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        kind, rep, mode = args.child
        print(json.dumps(measure_one(kind, rep, args.n, mode)))
        return
    kinds, reprs = args.kinds.split(","), args.representations.split(",")
    for name in kinds:
        if name not in MAKERS:
            parser.error(f"unknown kind {name!r}")
    load_before = os.getloadavg()
    started = time.time()
    rows = study(kinds, reprs, args.n, lambda m: print(m, flush=True))
    print()
    print(table(rows))
    provenance.save_json({
        "invocation": provenance.invocation("python -m harness.bench.objmem", argv, {"--output": True}),
        "commit": provenance.git_revision(),
        "date": datetime.fromtimestamp(started, UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "loadavg_before": load_before, "loadavg_after": os.getloadavg()},
        "versions": {p: provenance.dist_version(p) for p in ("orjson", "msgspec")},
        "rows": rows,
    }, args.output)
    print(f"\nsaved {provenance.without_home(str(args.output))}")


if __name__ == "__main__":
    main()

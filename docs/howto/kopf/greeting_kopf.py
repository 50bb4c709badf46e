"""A small Kopf operator, before the move: a Greeting keeps a ConfigMap with its message.
(kubeloop's tests only parse this file; Kopf is not one of kubeloop's dependencies.)"""

import kopf
import kubernetes

GROUP, VERSION, PLURAL = "kopf-migration.kubeloop.dev", "v1", "greetings"


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_):
    settings.persistence.finalizer = "kopf-migration.kubeloop.dev/greeting"
    settings.posting.level = 30  # events for warnings and errors only
    try:
        kubernetes.config.load_incluster_config()
    except kubernetes.config.ConfigException:
        kubernetes.config.load_kube_config()


@kopf.on.create(GROUP, VERSION, PLURAL)
def create_fn(spec, name, namespace, body, **_):
    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{name}-greeting"},
                 "data": {"message": spec["message"]}}
    kopf.adopt(configmap, owner=body)  # owner reference, namespace and name
    kubernetes.client.CoreV1Api().create_namespaced_config_map(namespace, configmap)
    return {"configMap": configmap["metadata"]["name"]}  # stored in status.create_fn


@kopf.on.update(GROUP, VERSION, PLURAL, field="spec.message")
def update_fn(new, name, namespace, **_):
    kubernetes.client.CoreV1Api().patch_namespaced_config_map(
        f"{name}-greeting", namespace, {"data": {"message": new}})

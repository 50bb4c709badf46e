"""Switching a webhook's endpoint between a local run (``url``) and the in-cluster Service: server-side apply
would merge both forms (422 "exactly one of url or service"), so the other form is swapped out in one JSON
patch that keeps what else is there (a caBundle cert-manager injected)."""

from __future__ import annotations

from kubeloop.testing.podsecurity import CONTAINER_SECURITY_CONTEXT, restricted
from kubeloop.webhooks.manifests import Endpoint, conversion_stanza
from kubeloop.webhooks.runtime import _swap_client_configs, webhook_permissions


def crd(endpoint: Endpoint) -> dict:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "chaosagents.blackadder.io"},
            "spec": {"conversion": conversion_stanza(endpoint, "/convert/x", "Q0E=")}}


def test_a_local_run_swaps_the_service_for_its_url() -> None:
    ops = _swap_client_configs(crd(Endpoint(url="https://127.0.0.1:9443")))
    assert ops == [{"op": "remove", "path": "/spec/conversion/webhook/clientConfig/service"},
                   {"op": "add", "path": "/spec/conversion/webhook/clientConfig/url",
                    "value": "https://127.0.0.1:9443/convert/x"}]


def test_a_deployed_replica_swaps_the_url_for_its_service() -> None:
    ops = _swap_client_configs(crd(Endpoint(service="blackadder-webhook", namespace="blackadder-system")))
    assert ops[0] == {"op": "remove", "path": "/spec/conversion/webhook/clientConfig/url"}
    assert ops[1]["path"] == "/spec/conversion/webhook/clientConfig/service"
    assert ops[1]["value"]["name"] == "blackadder-webhook"


def test_webhook_configurations_are_addressed_by_index_and_guarded_by_name() -> None:
    config = {"kind": "ValidatingWebhookConfiguration", "metadata": {"name": "c"}, "webhooks": [
        {"name": "a.x.io", "clientConfig": {"url": "https://127.0.0.1:1/a"}},
        {"name": "b.x.io", "clientConfig": {"url": "https://127.0.0.1:1/b"}}]}
    ops = _swap_client_configs(config)
    assert ops[3] == {"op": "test", "path": "/webhooks/1/name", "value": "b.x.io"}
    assert ops[4] == {"op": "remove", "path": "/webhooks/1/clientConfig/service"}


def test_converted_crds_may_be_read_by_name_to_be_given_back() -> None:
    from kubeloop.operators.blackadder import build_operator

    (perm,) = [p for p in webhook_permissions("blackadder", build_operator().hooks)
               if p.resource == "customresourcedefinitions"]
    assert perm.verbs == {"get", "patch"} and perm.names == ("chaosagents.blackadder.io",)


def test_restricted_adds_what_the_standard_requires_and_keeps_the_rest() -> None:
    spec = {"containers": [{"name": "a", "image": "x", "securityContext": {"readOnlyRootFilesystem": True}}],
            "initContainers": [{"name": "i", "image": "x"}], "securityContext": {"fsGroup": 1}}
    assert restricted(spec) is spec
    assert spec["securityContext"]["runAsNonRoot"] is True and spec["securityContext"]["fsGroup"] == 1
    assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert spec["containers"][0]["securityContext"] == {**CONTAINER_SECURITY_CONTEXT, "readOnlyRootFilesystem": True}
    assert spec["initContainers"][0]["securityContext"] == CONTAINER_SECURITY_CONTEXT

"""Operators without webhooks generate exactly what they did before webhooks existed: the four bundled
operators' ``kubeloop generate all`` (CRDs, RBAC, Service, Deployment), byte for byte.

``data/generate_all_main/<name>.yaml`` was recorded on main before webhooks were wired into the
Operator (commit 2bc1dc7), with ``PYTHONPATH=<main checkout> python -m kubeloop.cli.main generate all
<name>``. A deliberate change to an operator's manifests re-records its file the same way, in the
same commit, saying why. Re-recorded: ``blackadder.yaml``, when blackadder got its conversion webhook
(a ``v1beta2`` hub, the CRD's ``conversion`` stanza, the webhook Service, port and CA Secret); its
``v1alpha1`` and ``v1beta1`` schemas are unchanged; ``reloader.yaml``, when the reloader began to read Jobs
(list, watch) to warn on those annotated for Reloader, which it did not recreate, and when it began to
recreate them as Reloader does (create, patch, delete on jobs); ``copyrator.yaml``, when
every list and string of its CRD got a maximum (``maxItems``, ``maxLength``, ``maxProperties``, CEL on keys
and general globs) and its status the ``declined`` and ``foreignAnnotations`` lists. All four, when the
generated Namespace got the label ``pod-security.kubernetes.io/enforce: restricted`` (the Deployment meets
that standard); blackadder's, when its conversion stanza got ``url: null`` beside the Service (kubectl apply
removes a local run's URL) and its RBAC ``get`` on its own CRD; blackadder's, when an operator serving a
conversion webhook got two replicas by default, a rolling update with ``maxUnavailable: 0``, a preferred
anti-affinity and a PodDisruptionBudget (a restart no longer makes the converted versions unreadable);
``immortal.yaml`` and ``blackadder.yaml``, when every list, string and map of their CRDs got a maximum
(``maxLength``, ``maxItems``, ``maxProperties``, CEL on map keys), the same in every blackadder version;
``immortal.yaml``, ``blackadder.yaml`` and ``copyrator.yaml``, when ``status.conditions`` got
metav1.Condition's bounds (``maxLength`` and ``pattern`` on type, reason, message) and ``maxItems: 64``."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kubeloop.cli.main import main

RECORDED = Path(__file__).parent / "data" / "generate_all_main"


@pytest.mark.parametrize("name", ["immortal", "blackadder", "copyrator", "reloader"])
def test_generate_all_is_as_recorded(name: str) -> None:
    result = CliRunner().invoke(main, ["generate", "all", name])
    assert result.exit_code == 0, result.output
    assert result.output == (RECORDED / f"{name}.yaml").read_text()

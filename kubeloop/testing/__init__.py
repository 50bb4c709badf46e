"""Test kit: a pytest plugin (fixtures ``kube_cluster``, ``kube_client``, ``namespace``) running tests
against a real local control plane; ``FakeClient``, an in-memory client for unit tests without a cluster;
``wait_for_events`` and ``events_of``, the Events an operator recorded; and, re-exported, the client's
watch-driven ``wait_for``, ``wait_for_deletion`` and ``wait_for_crd``.

The plugin module is loaded by pytest in every project that has kubeloop installed, so this
package imports nothing heavy up front.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubeloop.client.wait import abbreviate, wait_for, wait_for_crd, wait_for_deletion
    from kubeloop.testing.events import events_of, occurrences, wait_for_events
    from kubeloop.testing.fakeclient import FakeClient
    from kubeloop.testing.operator import install_crds, operator_running, run_operator

__all__ = ["FakeClient", "abbreviate", "events_of", "install_crds", "occurrences", "operator_running",
           "run_operator", "wait_for", "wait_for_crd", "wait_for_deletion", "wait_for_events"]


def __getattr__(name: str) -> Any:
    if name == "FakeClient":
        from kubeloop.testing.fakeclient import FakeClient

        return FakeClient
    if name in ("events_of", "occurrences", "wait_for_events"):
        from kubeloop.testing import events

        return getattr(events, name)
    if name in ("install_crds", "operator_running", "run_operator"):
        from kubeloop.testing import operator

        return getattr(operator, name)
    if name in __all__:
        from kubeloop.client import wait

        return getattr(wait, name)
    raise AttributeError(f"module 'kubeloop.testing' has no attribute {name!r}")

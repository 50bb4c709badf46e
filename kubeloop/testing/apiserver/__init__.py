"""An in-process fake of kube-apiserver for fast tests, checked against the real one.

``FakeApiServer`` serves kube-apiserver's HTTP/JSON on 127.0.0.1 from the test's own event loop, so
kubeloop's real client, informers and operators run against it unchanged. Modules, one concept each:
``store`` (MVCC storage, resourceVersions, compaction), ``kinds`` (served kinds, discovery), ``routes``
(HTTP), ``verbs`` (get/list/create/update/patch/delete), ``watch``, ``patches``, ``fields``
(managedFields and server-side apply), ``schema`` (CRD pruning, defaulting, validation), ``crds`` (the
validation of CRDs themselves), ``validation`` (built-in kinds' rules), ``controllers``
(GC, namespaces, CRD establishment), ``errors`` (Status bodies), ``clock``.
What it serves and how it differs from the real server: docs/reference/fake-api-server.md.
"""

from kubeloop.testing.apiserver.clock import Clock, FakeClock
from kubeloop.testing.apiserver.server import FakeApiServer

__all__ = ["Clock", "FakeApiServer", "FakeClock"]

"""The measurement harness: programs that run kubeloop against a local control plane and write the
figures in docs/, kept apart from the library (not installed with it).

- ``python -m harness.bench``: throughput, latency, CPU, memory and API requests of kubeloop against
  Kopf and a framework-free loop (docs/BENCHMARKS.md, docs/PERFORMANCE.md);
- ``python -m harness.faults``: seeded faults (restarts, cut and half-open connections, SIGKILLs,
  compaction, RBAC revoked...) and what the operators lose or duplicate under them (docs/RELIABILITY.md);
- ``harness.common``: what both need, once (operators as child processes, the Prometheus text format,
  percentiles, bounded concurrency, the cluster to run on, the provenance of saved results).

Tests: tests/harness (apart from the library's tests/unit and tests/integration).
"""

"""Benchmarks: reconciles per second of kubeloop, Kopf and a framework-free asyncio loop.

``python -m harness.bench`` starts its own local control plane (``LocalCluster("bench")``), runs every
contestant as a separate OS process against the same ``widgets.bench.example.com`` workload, and
writes ``docs/BENCHMARKS.md`` and ``docs/benchmarks.png``. ``python -m harness.bench --help`` lists the
flags.

Layout: ``workload`` (the CRD and the loader), ``tracker`` (the harness's own watch, which times
convergence), ``procs`` (RSS/CPU of a process tree from /proc), ``apimetrics`` (the API server's
``apiserver_request_total``), ``contestants`` (how each operator is started), ``scenarios``,
``operators`` (the bundled operators' own loads, ``--operators``), ``runner`` (cluster, interleaving,
repeats), ``report`` (markdown and chart), ``admission`` and ``scaleout`` (``--admission``, ``--scale-out``:
runs of their own, with their own results files). Starting processes, reading /metrics, percentiles and saving
results are ``harness.common``'s.
"""

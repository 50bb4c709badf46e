"""What ``harness.bench`` and ``harness.faults`` both need, written once:

- ``processes``: an operator as a child process (its ``kubeloop run`` command line on free loopback
  ports, output appended to a log, SIGTERM then SIGKILL);
- ``prometheus``: samples of the Prometheus text format (an operator's or the API server's /metrics);
- ``stats``: the nearest-rank percentile every figure uses;
- ``concurrency``: many requests with a bounded number in flight;
- ``listwatch``: the harness's own view of a resource (list, then watch; relisting through faults);
- ``cluster``: the cluster a run works on (a given kubeconfig, or its own LocalCluster);
- ``provenance``: what a saved result records about its run (the command, the commit, versions);
- ``flags``: the command-line flags both commands share (cluster, logs, results, report).
"""

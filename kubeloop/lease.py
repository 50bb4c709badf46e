"""How long a Lease holds, in seconds: client-go's ``LeaderElector`` defaults, which controller-runtime's
managers use too. One Lease means one claim: leader election's (``kubeloop.manager.leader``) and each
replica's share under sharding (``kubeloop.sharding.membership``) are timed alike, so the defaults live
here, below both.

- ``LEASE_DURATION``: how long a Lease that is not renewed stays held; others wait this long to take over.
- ``RENEW_DEADLINE``: how long its holder may fail to renew before it stops acting (less than the duration,
  so that it stops before anyone else may start).
- ``RETRY_PERIOD``: how often a holder renews and a candidate tries.
"""

LEASE_DURATION = 15.0
RENEW_DEADLINE = 10.0
RETRY_PERIOD = 2.0

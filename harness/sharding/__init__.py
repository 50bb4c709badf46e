"""``python -m harness.sharding``: the shard assignment at scale, simulated (no cluster).

- ``tiling``: an assignment as sorted ranges covering the 2^64 hash space, for the ring kubeloop uses
  (``kubeloop.sharding.ring``) and for the alternative it was measured against (consistent hashing with
  virtual nodes); keys per member and keys moved between two tilings, counted by binary search;
- ``cli``: the run (1,000,000 keys, membership 2 → 200 → 2), the printed table and docs/SHARDING.md.
"""

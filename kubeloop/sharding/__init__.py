"""Scale-out foundations: pure logic, no I/O.

- ``hashing``: FNV-1a 64 (the API server's shard hash, KEP-5866), shard selectors and their echo;
- ``ring``: which member owns which part of the 2^64 hash space, and an object's shard key;
- ``membership``: live members from their Leases, and the handoff of ranges between them.
"""

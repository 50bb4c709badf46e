"""``python -m harness.sharding``: see ``harness.sharding.cli``."""

from harness.sharding.cli import main

if __name__ == "__main__":
    raise SystemExit(main())

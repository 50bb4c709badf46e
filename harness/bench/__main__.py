"""``python -m harness.bench``: see ``harness.bench.cli``."""

from harness.bench.cli import main

if __name__ == "__main__":
    raise SystemExit(main())

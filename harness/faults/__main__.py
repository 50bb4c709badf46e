"""``python -m harness.faults``: see ``harness.faults.cli``."""

from harness.faults.cli import main

if __name__ == "__main__":
    raise SystemExit(main())

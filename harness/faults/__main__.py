"""``python -m faults``: see ``faults.cli``."""

from faults.cli import main

if __name__ == "__main__":
    raise SystemExit(main())

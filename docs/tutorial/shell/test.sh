python -m pytest -q

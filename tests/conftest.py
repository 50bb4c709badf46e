"""Fixtures and plugins for the whole suite: ``pytester`` runs a pytest session in a subprocess (the time
limit's tests, tests/unit/test_time_limit.py)."""

pytest_plugins = ["pytester"]

"""Tests of the measurement harness (harness/): its pure parts, and one small run of each command on
the test session's cluster."""

"""``python -m harness.faults``: scripted, seeded fault scenarios against a local control plane, proving with
numbers that kubeloop operators lose nothing and duplicate nothing. See docs/RELIABILITY.md."""

"""immortal: keeps a container running forever (the ImmortalContainer operator of the flugel.it article),
with the guarantees of Kubernetes' own workload controllers. See README.md."""

from kubeloop.operators.immortal.controller import build_operator, operator
from kubeloop.operators.immortal.models import ImmortalContainer

__all__ = ["ImmortalContainer", "build_operator", "operator"]

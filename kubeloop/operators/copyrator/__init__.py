"""copyrator — the copy operator of Flant's article "Writing Your First Kubernetes Operator with Python
and SDK", level-based: CopyratorRule objects copy labelled ConfigMaps and consenting Secrets into every
namespace in scope and keep the copies in sync. See README.md in this folder."""

from kubeloop.operators.copyrator.models import CopyratorRule
from kubeloop.operators.copyrator.operator import build_operator, operator

__all__ = ["CopyratorRule", "build_operator", "operator"]

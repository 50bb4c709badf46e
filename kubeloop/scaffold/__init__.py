"""Project scaffolding: ``kubeloop init`` (a new operator project laid out like the bundled operators)
and ``kubeloop create api`` (another kind and its reconciler in an existing project)."""

from kubeloop.scaffold.project import Names, ScaffoldError, create_api, init_project

__all__ = ["Names", "ScaffoldError", "create_api", "init_project"]

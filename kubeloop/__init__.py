"""kubeloop: level-based Kubernetes operators in Python.

This namespace is the public API: what an operator imports (the bundled ones import nothing else, a
test checks it). The folders are the architecture, layers pointing down: ``client`` → ``watch`` →
``cache`` → ``queue`` → ``reconcile`` → ``controller`` → ``manager``, with ``builder`` (the ``Operator``
decorators) on top; ``helpers`` (finalizers, owners, conditions, events, selectors), ``resources``
(models → CRD/RBAC), ``settings``, ``webhooks``, ``envtest`` (a local control plane), ``testing``
(pytest plugin, fakes), ``cli`` and the bundled ``operators``. See docs/ARCHITECTURE.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubeloop import clock, metrics
from kubeloop.builder import Operator
from kubeloop.cache import Cache, Event, Informer
from kubeloop.client import (
    AlreadyExists,
    ApiError,
    Client,
    Conflict,
    Forbidden,
    Gone,
    Invalid,
    NotFound,
    Obj,
    Resource,
    TooManyRequests,
    WaitTimeout,
    wait_for,
    wait_for_crd,
    wait_for_deletion,
)
from kubeloop.client.errors import BadRequest
from kubeloop.controller import Controller, ControllerSpec, Watch, predicates
from kubeloop.helpers import conditions, finalizers, ownership, selectors
from kubeloop.helpers.events import EventRecorder
from kubeloop.lazy_names import lazy_names
from kubeloop.manager import Manager, ManagerOptions
from kubeloop.reconcile import (
    GIVE_UP,
    Context,
    PermanentError,
    Request,
    Result,
    State,
    Steps,
    cooperatively,
    to_completion,
)

# Loaded on first use: typed models and settings (pydantic), webhooks and the tenancy guard. An operator
# on plain dicts imports none of them, which is a fifth of a run's start-up CPU.
_LAZY = {
    "Conditions": "kubeloop.resources", "CustomResource": "kubeloop.resources", "Int32": "kubeloop.resources",
    "Int64": "kubeloop.resources", "IntOrString": "kubeloop.resources", "builtin": "kubeloop.resources.builtin",
    "opaque": "kubeloop.resources", "printer_column": "kubeloop.resources", "validation": "kubeloop.resources",
    "LabelSelector": "kubeloop.resources.types", "BoundedLabelSelector": "kubeloop.resources.types",
    "Flag": "kubeloop.settings", "Settings": "kubeloop.settings", "setting": "kubeloop.settings",
    "AdmissionRequest": "kubeloop.webhooks", "Denied": "kubeloop.webhooks",
    "Author": "kubeloop.webhooks.author", "UnverifiedAuthor": "kubeloop.webhooks.author",
    "AuthorGuard": "kubeloop.webhooks.guard",
    "access": "kubeloop.helpers.access", "Access": "kubeloop.helpers.access",
    "AccessReviewer": "kubeloop.helpers.access",
}

if TYPE_CHECKING:
    from kubeloop.helpers import access
    from kubeloop.helpers.access import Access, AccessReviewer
    from kubeloop.resources import (
        Conditions,
        CustomResource,
        Int32,
        Int64,
        IntOrString,
        builtin,
        opaque,
        printer_column,
        validation,
    )
    from kubeloop.resources.types import BoundedLabelSelector, LabelSelector
    from kubeloop.settings import Flag, Settings, setting
    from kubeloop.webhooks import AdmissionRequest, Denied
    from kubeloop.webhooks.author import Author, UnverifiedAuthor
    from kubeloop.webhooks.guard import AuthorGuard


__getattr__, __dir__ = lazy_names(__name__, _LAZY)


__version__ = "0.1.0"
__all__ = [
    # building an operator
    "Operator", "Context", "Request", "Result", "State", "Settings", "setting", "Flag", "Watch", "predicates",
    "GIVE_UP", "PermanentError", "Steps", "cooperatively", "to_completion",
    "ControllerSpec", "Controller", "Manager", "ManagerOptions",
    # webhooks (@op.validate / @op.mutate handlers)
    "AdmissionRequest", "Denied",
    # the tenancy guard (op.record_author): who wrote an object, and what they may do
    "Author", "AuthorGuard", "UnverifiedAuthor", "Access", "AccessReviewer", "access",
    # custom resources and the built-in kinds
    "CustomResource", "Conditions", "Int32", "Int64", "IntOrString", "LabelSelector", "BoundedLabelSelector",
    "opaque", "printer_column", "validation", "builtin",
    # the client, its objects and errors
    "Client", "Resource", "Obj", "Cache", "Informer", "Event", "ApiError", "AlreadyExists", "BadRequest",
    "Conflict", "Forbidden", "Gone", "Invalid", "NotFound", "TooManyRequests", "WaitTimeout", "wait_for",
    "wait_for_crd", "wait_for_deletion",
    # helpers
    "conditions", "finalizers", "ownership", "selectors", "EventRecorder", "metrics",
    # monotonic and wall time, virtual under the test kit's fake_clock
    "clock",
]

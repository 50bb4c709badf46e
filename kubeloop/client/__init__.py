"""The Kubernetes client: configuration, transport, discovery, verbs, typed errors and watch-driven waits."""

from kubeloop.client import errors
from kubeloop.client.api import Client, Obj, UsedPermission
from kubeloop.client.config import Config, ConfigError
from kubeloop.client.errors import (
    AlreadyExists,
    ApiError,
    Conflict,
    Forbidden,
    Gone,
    Invalid,
    NotFound,
    TooManyRequests,
    is_transient,
)
from kubeloop.client.resource import Resource
from kubeloop.client.wait import WaitTimeout, wait_for, wait_for_crd, wait_for_deletion

__all__ = ["AlreadyExists", "ApiError", "Client", "Config", "ConfigError", "Conflict", "Forbidden", "Gone",
           "Invalid", "NotFound", "Obj", "Resource", "TooManyRequests", "UsedPermission", "WaitTimeout", "errors",
           "is_transient", "wait_for", "wait_for_crd", "wait_for_deletion"]

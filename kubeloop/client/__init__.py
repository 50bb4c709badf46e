"""The Kubernetes client: configuration, transport, discovery, verbs and typed errors."""

from kubeloop.client import errors
from kubeloop.client.api import Client, UsedPermission
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

__all__ = ["AlreadyExists", "ApiError", "Client", "Config", "ConfigError", "Conflict", "Forbidden", "Gone",
           "Invalid", "NotFound", "Resource", "TooManyRequests", "UsedPermission", "errors",
           "is_transient"]

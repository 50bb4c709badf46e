"""Typed custom resources (pydantic v2 models) → CRDs, RBAC and deployable manifests."""
from __future__ import annotations

from typing import TYPE_CHECKING

from kubeloop.lazy_names import lazy_names

# Each name loads its module on first use: ``builtin`` (Resource constants) must not pull in pydantic
# and the CRD generator for an operator on plain dicts (a run's start-up CPU).
_LAZY = {
    "crd_for": "kubeloop.resources.crd",
    "crds_for": "kubeloop.resources.crd",
    "version_priority": "kubeloop.resources.crd",
    "kustomization": "kubeloop.resources.manifests",
    "manager_deployment": "kubeloop.resources.manifests",
    "metrics_service": "kubeloop.resources.manifests",
    "operator_manifests": "kubeloop.resources.manifests",
    "render_yaml": "kubeloop.resources.manifests",
    "write_manifests": "kubeloop.resources.manifests",
    "Condition": "kubeloop.resources.model",
    "Conditions": "kubeloop.resources.model",
    "CRDInfo": "kubeloop.resources.model",
    "CustomResource": "kubeloop.resources.model",
    "ObjectMeta": "kubeloop.resources.model",
    "OwnerReference": "kubeloop.resources.model",
    "PrinterColumn": "kubeloop.resources.model",
    "Scale": "kubeloop.resources.model",
    "custom_resources_in": "kubeloop.resources.model",
    "default_plural": "kubeloop.resources.model",
    "printer_column": "kubeloop.resources.model",
    "scale_subresource": "kubeloop.resources.model",
    "AccessRequest": "kubeloop.resources.rbac",
    "AuditReport": "kubeloop.resources.rbac",
    "Permission": "kubeloop.resources.rbac",
    "RbacAudit": "kubeloop.resources.rbac",
    "reconcile_permissions": "kubeloop.resources.rbac",
    "render_rbac": "kubeloop.resources.rbac",
    "request_from_http": "kubeloop.resources.rbac",
    "rules_for": "kubeloop.resources.rbac",
    "status_permissions": "kubeloop.resources.rbac",
    "watch_permissions": "kubeloop.resources.rbac",
    "write_permissions": "kubeloop.resources.rbac",
    "Format": "kubeloop.resources.schema",
    "Int32": "kubeloop.resources.schema",
    "Int64": "kubeloop.resources.schema",
    "IntOrString": "kubeloop.resources.schema",
    "ListType": "kubeloop.resources.schema",
    "NotStructuralError": "kubeloop.resources.schema",
    "Validation": "kubeloop.resources.schema",
    "crd_root_schema": "kubeloop.resources.schema",
    "embedded_resource": "kubeloop.resources.schema",
    "list_type": "kubeloop.resources.schema",
    "map_type": "kubeloop.resources.schema",
    "nullable": "kubeloop.resources.schema",
    "opaque": "kubeloop.resources.schema",
    "openapi_schema": "kubeloop.resources.schema",
    "preserve_unknown_fields": "kubeloop.resources.schema",
    "structural_problems": "kubeloop.resources.schema",
    "validation": "kubeloop.resources.schema",
}

if TYPE_CHECKING:
    from kubeloop.resources.crd import crd_for, crds_for, version_priority
    from kubeloop.resources.manifests import (
        kustomization,
        manager_deployment,
        metrics_service,
        operator_manifests,
        render_yaml,
        write_manifests,
    )
    from kubeloop.resources.model import (
        Condition,
        Conditions,
        CRDInfo,
        CustomResource,
        ObjectMeta,
        OwnerReference,
        PrinterColumn,
        Scale,
        custom_resources_in,
        default_plural,
        printer_column,
        scale_subresource,
    )
    from kubeloop.resources.rbac import (
        AccessRequest,
        AuditReport,
        Permission,
        RbacAudit,
        reconcile_permissions,
        render_rbac,
        request_from_http,
        rules_for,
        status_permissions,
        watch_permissions,
        write_permissions,
    )
    from kubeloop.resources.schema import (
        Format,
        Int32,
        Int64,
        IntOrString,
        ListType,
        NotStructuralError,
        Validation,
        crd_root_schema,
        embedded_resource,
        list_type,
        map_type,
        nullable,
        opaque,
        openapi_schema,
        preserve_unknown_fields,
        structural_problems,
        validation,
    )


__getattr__, __dir__ = lazy_names(__name__, _LAZY)

__all__ = [
    "AccessRequest", "AuditReport", "CRDInfo", "Condition", "Conditions", "CustomResource", "Format", "Int32",
    "Int64", "IntOrString", "ListType", "NotStructuralError", "ObjectMeta", "OwnerReference", "Permission",
    "PrinterColumn", "RbacAudit", "Scale", "Validation", "crd_for", "crd_root_schema", "crds_for",
    "custom_resources_in", "default_plural", "embedded_resource", "kustomization", "list_type",
    "manager_deployment", "map_type", "metrics_service", "nullable", "opaque", "openapi_schema",
    "operator_manifests", "preserve_unknown_fields", "printer_column", "reconcile_permissions", "render_rbac",
    "render_yaml", "request_from_http", "rules_for", "scale_subresource", "status_permissions",
    "structural_problems", "validation", "version_priority", "watch_permissions", "write_manifests",
    "write_permissions",
]

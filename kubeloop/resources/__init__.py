"""Typed custom resources (pydantic v2 models) → CRDs, RBAC and deployable manifests."""

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

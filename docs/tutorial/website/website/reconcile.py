"""The operator object, its settings, and the reconciler of Website."""

from __future__ import annotations

import html
from typing import Any

from kubeloop import Context, Operator, Settings, setting
from kubeloop.resources.builtin import CONFIG_MAP, DEPLOYMENT

from website.models import Website


class OperatorSettings(Settings):
    image: str = setting("nginxinc/nginx-unprivileged:1.27", "The web servers' image (one that runs as non-root).")


operator = Operator("website", settings=OperatorSettings)

# One ConfigMap per namespace lists its Websites. No Website owns it, so garbage collection never
# cleans an entry up: that is what the finalizer below is for.
INDEX = "website-index"


def page(site: Website) -> dict[str, Any]:
    # The body is HTML by design; the title is text, so it is escaped.
    title = html.escape(site.spec.title)
    text = f"<html><head><title>{title}</title></head><body>{site.spec.body}</body></html>"
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{site.metadata.name}-page"},
            "data": {"index.html": text}}


def server(site: Website) -> dict[str, Any]:
    name, labels = site.metadata.name, {"app.kubernetes.io/instance": site.metadata.name}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": site.spec.replicas, "selector": {"matchLabels": labels}, "template": {
            "metadata": {"labels": labels},
            "spec": {
                # What the "restricted" Pod Security Standard asks, which hardened clusters enforce.
                "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
                "containers": [{
                    "name": "nginx", "image": operator.settings.image,
                    "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
                    "volumeMounts": [{"name": "page", "mountPath": "/usr/share/nginx/html"}]}],
                "volumes": [{"name": "page", "configMap": {"name": f"{name}-page"}}]}}},
    }


async def set_index_entry(site: Website, ctx: Context, *, listed: bool) -> None:
    # Server-side apply with a field manager per Website: each one owns only its own key, so
    # Websites never overwrite each other's entries, and applying no key removes this one's.
    entry = {site.metadata.name: site.spec.title} if listed else {}
    await ctx.client.apply({"apiVersion": "v1", "kind": "ConfigMap",
                            "metadata": {"name": INDEX, "namespace": ctx.namespace}, "data": entry},
                           field_manager=f"website-{site.metadata.name}")


# --8<-- [start:reconcile]
@operator.reconcile(Website, owns=[CONFIG_MAP, DEPLOYMENT])
async def reconcile_website(site: Website, ctx: Context) -> None:
    # Level-based: what should exist follows from the Website as it is now, whatever changed.
    await ctx.apply_children([page(site), server(site)])
    await set_index_entry(site, ctx, listed=True)
    # The Deployment's status comes from the cache. Owning it means each change of it reconciles
    # its Website again, so nothing here waits or polls for the servers to come up.
    deployment = next(iter(ctx.owned(DEPLOYMENT)), None)
    available = ((deployment or {}).get("status") or {}).get("availableReplicas") or 0
    ready = available >= site.spec.replicas
    await ctx.patch_status({
        "observedGeneration": site.metadata.generation,
        "availableReplicas": available,
        "conditions": ctx.condition("Ready", ready, "Available" if ready else "Progressing",
                                    f"{available} of {site.spec.replicas} web servers available"),
    })
# --8<-- [end:reconcile]


# --8<-- [start:finalizer]
@operator.finalize(Website)
async def unlist_website(site: Website, ctx: Context) -> None:
    # Runs once the Website is being deleted; the framework removes its finalizer after this returns.
    await set_index_entry(site, ctx, listed=False)
# --8<-- [end:finalizer]

"""The same operator on kubeloop: one level-based reconciler instead of create and update handlers."""

from __future__ import annotations

from kubeloop import Context, Operator
from kubeloop.resources import Conditions, CustomResource
from kubeloop.resources.builtin import CONFIG_MAP
from pydantic import BaseModel, Field


class GreetingSpec(BaseModel):
    message: str = Field(min_length=1)


class GreetingStatus(BaseModel):
    configMap: str | None = None
    conditions: Conditions | None = None


class Greeting(CustomResource, group="kopf-migration.kubeloop.dev", version="v1", kind="Greeting"):
    spec: GreetingSpec
    status: GreetingStatus | None = None


operator = Operator("greeting", finalizer_domain="kopf-migration.kubeloop.dev")


@operator.reconcile(Greeting, owns=[CONFIG_MAP])
async def reconcile(greeting: Greeting, ctx: Context) -> None:
    name = f"{greeting.metadata.name}-greeting"
    await ctx.apply_children([{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
                               "data": {"message": greeting.spec.message}}])
    await ctx.patch_status({"configMap": name,
                            "conditions": ctx.condition("Ready", True, "ConfigMapApplied", f"{name} is current")})

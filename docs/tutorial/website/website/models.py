"""The custom resources of website.

Each model is the schema of its CRD: `kubeloop generate crd website` prints them.
"""

from __future__ import annotations

from kubeloop.resources import Conditions, CustomResource, printer_column
from pydantic import BaseModel, Field


class WebsiteSpec(BaseModel):
    title: str = Field(min_length=1, max_length=200, description="The page's title.")
    body: str = Field("", description="The page's HTML body.")
    replicas: int = Field(1, ge=1, le=10, description="How many web servers serve the page.")


class WebsiteStatus(BaseModel):
    observedGeneration: int | None = Field(None, description="The generation the status describes.")
    availableReplicas: int | None = Field(None, description="Web servers ready to serve the page.")
    conditions: Conditions | None = None


class Website(CustomResource, group="tutorial.kubeloop.dev", version="v1", kind="Website",
              printer_columns=[printer_column("Ready", '.status.conditions[?(@.type=="Ready")].status'),
                               printer_column("Available", ".status.availableReplicas", type="integer")]):
    """A static web page, served by nginx."""

    spec: WebsiteSpec
    status: WebsiteStatus | None = None

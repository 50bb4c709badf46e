"""What the API server calls a resource: group/version/plural plus what discovery tells about it."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Resource:
    """One REST resource of the API, e.g. ``apps/v1 deployments``.

    ``group`` is "" for the core group. Instances are hashable and used as cache/informer keys.
    """

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool = True
    verbs: frozenset[str] = field(default=frozenset(), compare=False)
    subresources: frozenset[str] = field(default=frozenset(), compare=False)
    short_names: tuple[str, ...] = field(default=(), compare=False)
    singular: str = field(default="", compare=False)

    @property
    def api_version(self) -> str:
        """``group/version``, or ``version`` for the core group (``apps/v1``, ``v1``)."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_resource(self) -> str:
        """``plural.group`` as kubectl and RBAC spell it (``deployments.apps``, ``pods``)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def path(self, namespace: str | None = None, name: str | None = None, subresource: str | None = None) -> str:
        """The URL path of a collection or an object (without query)."""
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        base += f"/{self.plural}"
        if name:
            base += f"/{name}"
            if subresource:
                base += f"/{subresource}"
        return base

    def __str__(self) -> str:
        return f"{self.api_version}/{self.plural}"


def split_api_version(api_version: str) -> tuple[str, str]:
    """``apps/v1`` → ("apps", "v1"); ``v1`` → ("", "v1")."""
    group, _, version = api_version.rpartition("/")
    return group, version

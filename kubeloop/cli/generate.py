"""``kubeloop generate crd|rbac|manager|all TARGET``: kubectl-applyable YAML from an operator."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from kubeloop.builder import Operator
from kubeloop.cli.overrides import parse_sets, settings_applied
from kubeloop.cli.run import BUNDLED, load_operator
from kubeloop.resources import crds_for, operator_manifests, render_yaml, write_manifests
from kubeloop.webhooks.deploy import CONVERSION_REPLICAS, with_webhooks

KINDS = ("crd", "rbac", "manager", "all", "chart", "dockerfile")
_RBAC_KINDS = {"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}


def default_image(operator: Operator) -> str:
    return f"ghcr.io/kubeloop/{operator.name}:latest"


def run_args(target: str, operator: Operator, shards: bool = False) -> list[str]:
    """How the packaged image starts the operator: bundled operators by short name, modules by their
    import path (an operator's name need not be importable); a file's operator by its name. Its
    replicas either elect one leader or, with ``shards``, each act on their share (``--shards auto``)."""
    is_file = target.partition(":")[0].endswith(".py") or Path(target.partition(":")[0]).is_file()
    mode = ["--shards", "auto"] if shards else ["--leader-elect"]
    return ["run", operator.name if is_file and target not in BUNDLED else target, *mode]


def manifests(target: str, operator: Operator, namespace: str, image: str | None = None,
              replicas: int | None = None, cert_manager_certificate: str | None = None,
              cert_secret: str | None = None, settings_args: list[str] | None = None,
              shards: bool = False) -> list[dict[str, Any]]:
    """Everything ``generate all`` emits; with webhooks, their configurations, Service and port too.
    Follows ``operator.settings``; ``settings_args``: the flags that give the process those settings;
    ``shards``: the Deployment runs ``--shards auto`` and the Role lets it (Leases: list, delete too)."""
    objs = operator_manifests(operator.name, namespace, image or default_image(operator),
                              models=operator.custom_resources(), cluster_permissions=operator.permissions(),
                              namespaced_permissions=operator.namespaced_permissions(),
                              args=run_args(target, operator, shards) + list(settings_args or ()), events="cluster",
                              shards=shards)
    if replicas is None:  # a conversion webhook is served by two, so that a restart leaves the kind readable
        replicas = CONVERSION_REPLICAS if operator.hooks.conversions else 1
    for obj in objs:
        if obj["kind"] == "Deployment":
            obj["spec"]["replicas"] = replicas
    return with_webhooks(objs, operator.name, namespace, operator.hooks,
                         cert_manager_certificate=cert_manager_certificate, cert_secret=cert_secret)


def select(objs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    if kind == "crd":
        return [o for o in objs if o["kind"] == "CustomResourceDefinition"]
    if kind == "rbac":
        return [o for o in objs if o["kind"] in _RBAC_KINDS]
    if kind == "manager":
        return [o for o in objs if o["kind"] in ("Namespace", "Deployment", "Service",
                                                 "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")]
    return objs


@click.command()
@click.argument("kind", type=click.Choice(KINDS))
@click.argument("target")
@click.option("-o", "--output", type=click.Path(file_okay=False, path_type=Path),
              help="Write files (and a kustomization.yaml) into this directory instead of stdout.")
@click.option("--namespace", default=None, help="Namespace the operator runs in (default: <name>-system).")
@click.option("--image", default=None, help="Operator image (default: ghcr.io/kubeloop/<name>:latest).")
@click.option("--replicas", default=None, type=int,
              help="Replicas of the Deployment (default: 2 for an operator serving a CRD conversion webhook, else 1).")
@click.option("--shards", default="off", show_default=True, type=click.Choice(["off", "auto"]),
              help="How the replicas share the work: off = one leader acts (--leader-elect); auto = every "
                   "replica acts on its share (kubeloop run --shards auto), and the Role also lists and "
                   "deletes Leases in the operator's namespace. A chart gets it as sharding.enabled.")
@click.option("--cert-manager-certificate", default=None, metavar="NAMESPACE/NAME",
              help="Webhooks: let cert-manager's CA injector fill the caBundle from this Certificate "
                   "(adds cert-manager.io/inject-ca-from) instead of the process writing its own.")
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE",
              help="An operator setting to generate for (repeatable), as its `kubeloop run --NAME=VALUE` flag: "
                   "the RBAC, webhooks and Deployment arguments follow it (e.g. copyrator's check-author=true). "
                   "For a chart: the value's default.")
@click.option("--webhook-cert-secret", default=None, metavar="NAME",
              help="Webhooks: mount this kubernetes.io/tls Secret (e.g. cert-manager's) into the Deployment and "
                   "serve it (--webhook-cert-dir) instead of a certificate the process makes.")
def command(kind: str, target: str, output: Path | None, namespace: str | None, image: str | None,
            replicas: int | None, shards: str, cert_manager_certificate: str | None, webhook_cert_secret: str | None,
            sets: tuple[str, ...]) -> None:
    """Generate CRDs, least-privilege RBAC and the manager Deployment for TARGET (a bundled operator,
    a module or a file), in a stable order that `kubectl apply --server-side` accepts; or a Helm
    chart of the same (`chart`, needs -o) or a Dockerfile and .dockerignore (`dockerfile`)."""
    operator = load_operator(target)
    sharded = shards == "auto"
    if kind == "dockerfile" and sets:
        raise click.BadParameter("a Dockerfile does not depend on the operator's settings; give them to "
                                 "`generate all` or `generate chart`", param_hint="--set")
    if kind == "chart":
        from kubeloop.cli.chart_settings import write_operator_chart
        write_operator_chart(target, operator, output, image, replicas, sets, sharded)
        return
    settings, settings_args = parse_sets(operator, sets)
    with settings_applied(operator, settings):
        _generate(kind, target, operator, output, namespace, image, replicas, cert_manager_certificate,
                  webhook_cert_secret, settings_args, sharded)


def _generate(kind: str, target: str, operator: Operator, output: Path | None, namespace: str | None,
              image: str | None, replicas: int | None, cert_manager_certificate: str | None,
              webhook_cert_secret: str | None, settings_args: list[str], shards: bool) -> None:
    if kind == "dockerfile":
        _dockerfile(target, output)
        return
    if kind == "crd" and not operator.custom_resources():
        raise click.ClickException(f"{operator.name} declares no custom resources")
    if cert_manager_certificate is not None and cert_manager_certificate.count("/") != 1:
        raise click.BadParameter(f"{cert_manager_certificate!r} must be NAMESPACE/NAME of a cert-manager Certificate",
                                 param_hint="--cert-manager-certificate")
    if webhook_cert_secret is not None and not operator.hooks:
        raise click.BadParameter(f"{operator.name} declares no webhooks: there is no certificate to serve",
                                 param_hint="--webhook-cert-secret")
    try:
        objs = select(manifests(target, operator, namespace or f"{operator.name}-system", image, replicas,
                                cert_manager_certificate, webhook_cert_secret, settings_args, shards), kind)
    except ValueError as exc:  # a kind named by a string that is not built in: no cluster to ask
        raise click.ClickException(f"{target}: {exc}") from exc
    if kind == "crd" and not operator.hooks.conversions:
        objs = crds_for(operator.custom_resources())
    if output is None:
        click.echo(render_yaml(objs), nl=False)
        return
    for path in write_manifests(output, objs):
        click.echo(str(path))


def _dockerfile(target: str, output: Path | None) -> None:
    from kubeloop.packaging.dockerfile import dockerfile, write_dockerfile

    try:
        if output is None:
            click.echo(dockerfile(target), nl=False)
            return
        paths = write_dockerfile(output, target)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc
    for path in paths:
        click.echo(str(path))

"""``kubeloop deploy|undeploy TARGET``: install an operator into the current kubeconfig's cluster (what
``make deploy``/``make undeploy`` do in a kubebuilder project), with server-side apply."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import click

from kubeloop.cli.generate import manifests
from kubeloop.cli.run import load_operator


def _cluster_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    for opt in reversed([
        click.argument("target"),
        click.option("--kubeconfig", default=None, help="Kubeconfig path (default: $KUBECONFIG, "
                     "~/.kube/config, else in-cluster)."),
        click.option("--context", default=None, help="The kubeconfig context to use."),
        click.option("--namespace", default=None, help="The operator's namespace (default: <name>-system)."),
        click.option("--timeout", default=120.0, show_default=True, type=float,
                     help="Seconds to wait for CRDs, the Deployment and deletions."),
    ]):
        fn = opt(fn)
    return fn


def _run(kubeconfig: str | None, context: str | None, work: Callable[[Any], Awaitable[Any]]) -> Any:
    from kubeloop.client import Client
    from kubeloop.packaging.deploy import FIELD_MANAGER

    async def main() -> Any:
        async with await Client.load(kubeconfig, context, field_manager=FIELD_MANAGER) as client:
            return await work(client)

    try:
        return asyncio.run(main())
    except AssertionError as exc:  # a wait timed out
        raise click.ClickException(str(exc)) from exc


@click.command()
@_cluster_options
@click.option("--image", default=None, help="Operator image (default: ghcr.io/kubeloop/<name>:latest).")
@click.option("--replicas", default=1, show_default=True, type=int)
@click.option("--wait/--no-wait", default=False, help="Wait until the Deployment is Available.")
def command(target: str, kubeconfig: str | None, context: str | None, namespace: str | None, timeout: float,
            image: str | None, replicas: int, wait: bool) -> None:
    """Deploy TARGET: its Namespace, CRDs (waiting until Established), RBAC, metrics Service and
    Deployment, server-side applied with field manager kubeloop-deploy."""
    from kubeloop.packaging.deploy import deploy

    operator = load_operator(target)
    objs = manifests(target, operator, namespace or f"{operator.name}-system", image, replicas)
    _run(kubeconfig, context, lambda c: deploy(c, objs, part_of=operator.name, log=click.echo,
                                               timeout=timeout, wait=wait))


@click.command("undeploy")
@_cluster_options
@click.option("--delete-crds", is_flag=True, help="Also delete the CRDs, and so every custom resource of "
              "them (deleted first, while the operator can still run their finalizers).")
@click.option("--delete-namespace", is_flag=True, help="Also delete the namespace and all it holds.")
def undeploy(target: str, kubeconfig: str | None, context: str | None, namespace: str | None, timeout: float,
             delete_crds: bool, delete_namespace: bool) -> None:
    """Undeploy TARGET in reverse order. Deletes only objects `kubeloop deploy` applied; keeps the CRDs
    (and so all custom resources) and the namespace unless asked, and lists what remains."""
    from kubeloop.packaging.deploy import undeploy as run_undeploy

    operator = load_operator(target)
    objs = manifests(target, operator, namespace or f"{operator.name}-system")
    report = _run(kubeconfig, context, lambda c: run_undeploy(
        c, objs, log=click.echo, delete_crds=delete_crds, delete_namespace=delete_namespace, timeout=timeout))
    for line in report.kept:
        click.echo(f"kept {line}")
    if report.remaining:
        click.echo(f"{len(report.remaining)} custom resource(s) remain, with what they own:", err=True)
        for line in report.remaining:
            click.echo(f"  {line}", err=True)

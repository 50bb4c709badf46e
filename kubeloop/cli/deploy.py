"""``kubeloop deploy|undeploy TARGET``: install an operator into the current kubeconfig's cluster (what
``make deploy``/``make undeploy`` do in a kubebuilder project), with server-side apply."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import click

from kubeloop.cli.generate import manifests
from kubeloop.cli.overrides import on_off_variants, parse_sets, settings_applied
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
    from kubeloop.client import Client, WaitTimeout
    from kubeloop.packaging.deploy import FIELD_MANAGER

    async def main() -> Any:
        async with await Client.load(kubeconfig, context, field_manager=FIELD_MANAGER) as client:
            return await work(client)

    try:
        return asyncio.run(main())
    except WaitTimeout as exc:
        raise click.ClickException(str(exc)) from exc


@click.command()
@_cluster_options
@click.option("--image", default=None, help="Operator image (default: ghcr.io/kubeloop/<name>:latest).")
@click.option("--replicas", default=None, type=int,
              help="Replicas of the Deployment (default: 2 for an operator serving a CRD conversion webhook, else 1).")
@click.option("--wait/--no-wait", default=False, help="Wait until the Deployment is Available.")
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE",
              help="An operator setting to deploy with (repeatable), as in `kubeloop generate --set`.")
def command(target: str, kubeconfig: str | None, context: str | None, namespace: str | None, timeout: float,
            image: str | None, replicas: int | None, wait: bool, sets: tuple[str, ...]) -> None:
    """Deploy TARGET: its Namespace, CRDs (waiting until Established), RBAC, metrics Service and
    Deployment, server-side applied with field manager kubeloop-deploy."""
    from kubeloop.packaging.deploy import deploy

    operator = load_operator(target)
    settings, args = parse_sets(operator, sets)
    with settings_applied(operator, settings):
        objs = manifests(target, operator, namespace or f"{operator.name}-system", image, replicas,
                         settings_args=args)
    _run(kubeconfig, context, lambda c: deploy(c, objs, part_of=operator.name, log=click.echo,
                                               timeout=timeout, wait=wait))


@click.command("undeploy")
@_cluster_options
@click.option("--delete-crds", is_flag=True, help="Also delete the CRDs.")
@click.option("--delete-namespace", is_flag=True, help="Also delete the namespace and all it holds.")
@click.option("--keep-custom-resources", is_flag=True, help="Leave the operator's custom resources in place. "
              "They keep its finalizers: deleting one once the operator is gone hangs until the finalizer "
              "is removed by hand (see the operator's README).")
@click.option("--force-finalizers", is_flag=True, help="For an operator that is already gone: custom "
              "resources still terminating after --timeout get this operator's own finalizers removed "
              "(never another controller's). Its cleanup for them then never happens.")
def undeploy(target: str, kubeconfig: str | None, context: str | None, namespace: str | None, timeout: float,
             delete_crds: bool, delete_namespace: bool, keep_custom_resources: bool,
             force_finalizers: bool) -> None:
    """Undeploy TARGET. First deletes its custom resources and waits for the operator to release them
    (its finalizers); then, in reverse order, only the objects `kubeloop deploy` applied. Keeps the
    CRDs and the namespace unless asked. If the operator does not release its custom resources within
    --timeout, stops, leaves the operator in place and prints the command that releases each one."""
    from kubeloop.packaging.deploy import undeploy as run_undeploy

    if keep_custom_resources and (delete_crds or force_finalizers):
        other = "--delete-crds" if delete_crds else "--force-finalizers"
        why = ("deleting a CRD deletes all its custom resources" if delete_crds else
               "it only acts on the custom resources undeploy deletes")
        raise click.UsageError(f"--keep-custom-resources and {other} contradict: {why}; drop one of them")
    operator = load_operator(target)
    objs = _any_settings(target, operator, namespace or f"{operator.name}-system")
    finalizers = sorted({name for _, name in operator.finalizers()})
    report = _run(kubeconfig, context, lambda c: run_undeploy(
        c, objs, log=click.echo, finalizers=finalizers, keep_custom_resources=keep_custom_resources,
        force_finalizers=force_finalizers, delete_crds=delete_crds, delete_namespace=delete_namespace,
        timeout=timeout))
    _tell(report, finalizers, keep_custom_resources)
    if report.stopped:
        raise click.ClickException(
            f"custom resources still carry {operator.name}'s finalizers after {timeout:.0f}s, so "
            f"{operator.name} was left installed. If it is running, wait and run undeploy again (or "
            "raise --timeout); if it is gone, release them with the commands above or rerun with "
            "--force-finalizers (its cleanup for them then never happens).")


def _any_settings(target: str, operator: Any, namespace: str) -> list[dict[str, Any]]:
    """What deploy may have applied with any on/off setting (``deploy --set``), each object once: undeploy
    needs no ``--set``, and a webhook configuration left behind would outlive its Service. Only objects
    that ``kubeloop deploy`` applied are deleted, so looking for more is safe."""
    seen: dict[tuple[str, str | None, str], dict[str, Any]] = {}
    for settings in on_off_variants(operator):
        with settings_applied(operator, settings):
            for obj in manifests(target, operator, namespace):
                seen.setdefault((obj["kind"], obj["metadata"].get("namespace"), obj["metadata"]["name"]), obj)
    return list(seen.values())


def _tell(report: Any, finalizers: list[str], kept_custom_resources: bool) -> None:
    for line in report.kept:
        click.echo(f"kept {line}")
    for line in report.stuck:
        click.echo(f"still terminating: {line}", err=True)
    if report.remaining:
        click.echo(f"{len(report.remaining)} custom resource(s) remain, with what they own:", err=True)
        for line in report.remaining:
            click.echo(f"  {line}", err=True)
        if kept_custom_resources and finalizers and not report.stopped:
            click.echo(f"they may carry the finalizer(s) {', '.join(finalizers)}: with the operator gone, "
                       "deleting one hangs until that finalizer is removed by hand", err=True)

"""``kubeloop demo``: a local control plane, a Deployment on kwok nodes, then each bundled operator
running in-process against its article's example objects, narrated live."""

from __future__ import annotations

import asyncio
import importlib
import time
from collections.abc import Awaitable, Callable

import click

from kubeloop.cli.run import BUNDLED
from kubeloop.client import Client

Say = Callable[[str], None]
DEMO_NAMESPACE = "kubeloop-demo"


def _say_factory() -> Say:
    start = time.monotonic()

    def say(msg: str) -> None:
        click.echo(f"[{time.monotonic() - start:6.1f}s] {msg}")
    return say


async def _deployment_scenario(client: Client, say: Say) -> None:
    nodes = (await client.list("nodes"))["items"]
    ready = [n["metadata"]["name"] for n in nodes if any(
        c["type"] == "Ready" and c["status"] == "True" for c in n.get("status", {}).get("conditions", []))]
    say(f"nodes Ready (kwok): {', '.join(ready) or 'none yet'}")
    await client.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": DEMO_NAMESPACE}},
                       field_manager="kubeloop-demo")
    await client.apply({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": DEMO_NAMESPACE},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}}}}, field_manager="kubeloop-demo")
    say("applied Deployment web (nginx, 3 replicas)")
    from kubeloop.client.wait import wait_for
    await wait_for(client, "deployments.apps", "web", DEMO_NAMESPACE, timeout=120,
                   predicate=lambda d: d.get("status", {}).get("availableReplicas") == 3,
                   description="Deployment web to have 3 available replicas")
    pods = (await client.list("pods", DEMO_NAMESPACE, label_selector="app=web"))["items"]
    for pod in pods:
        say(f"  pod {pod['metadata']['name']} on {pod['spec'].get('nodeName')}: {pod['status'].get('phase')}")
    say("Deployment web is 3/3 available")


async def _operator_scenarios(client: Client, names: list[str], say: Say) -> None:
    for name in names:
        try:
            module = importlib.import_module(f"kubeloop.operators.{name}.demo")
        except ModuleNotFoundError:
            continue
        say(f"--- {name} ---")
        scenario: Callable[[Client, Say], Awaitable[None]] = module.scenario
        await scenario(client, say)


async def _demo(cluster_name: str, operators: list[str]) -> None:
    from kubeloop.envtest import LocalCluster
    say = _say_factory()
    say(f"starting the local control plane {cluster_name!r} (the first run builds Kubernetes from Go "
        "modules: several minutes)")
    cluster = await asyncio.to_thread(lambda: LocalCluster(cluster_name, log=say).up())
    say(f"API server ready; kubeconfig: {cluster.kubeconfig}")
    client = await Client.from_kubeconfig(str(cluster.kubeconfig))
    try:
        await _deployment_scenario(client, say)
        await _operator_scenarios(client, operators, say)
    finally:
        await client.close()
    say("done. Look around:")
    click.echo(f"  export KUBECONFIG={cluster.kubeconfig}\n  kubectl get all -n {DEMO_NAMESPACE}\n"
               f"  kubeloop cluster down --name {cluster_name} --wipe   # when finished")


@click.command()
@click.option("--name", default="demo", show_default=True, help="Name of the local cluster to use.")
@click.option("--operator", "operators", multiple=True, type=click.Choice(BUNDLED),
              help="Only these bundled operators (default: all).")
def command(name: str, operators: tuple[str, ...]) -> None:
    """Bring up a local cluster and show the bundled operators at work on their articles' examples."""
    asyncio.run(_demo(name, list(operators) or list(BUNDLED)))

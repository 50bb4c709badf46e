"""``kubeloop init NAME`` and ``kubeloop create api --kind KIND``: scaffold an operator project."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("init")
@click.argument("name")
@click.option("--group", default=None, help="API group of the first kind (default: NAME.example.com).")
@click.option("--kind", default=None, help="The first custom resource kind (default: NAME in CamelCase).")
@click.option("--version", "api_version", default="v1", show_default=True, help="Its API version.")
@click.option("-o", "--output", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Project directory (default: ./NAME); must be new or empty.")
def command(name: str, group: str | None, kind: str | None, api_version: str, output: Path | None) -> None:
    """Create an operator project NAME: a package with a custom resource and a reconciler that owns a
    ConfigMap, tests on a real control plane, a Dockerfile and a README."""
    from kubeloop.scaffold import ScaffoldError, init_project

    try:
        paths = init_project(name, output, group=group, kind=kind, version=api_version)
    except ScaffoldError as exc:
        raise click.ClickException(str(exc)) from exc
    for path in paths:
        click.echo(str(path))
    root = output or Path(name)
    click.echo(f"\nnext: cd {root} && pip install -e '.[dev]' && python -m pytest -q", err=True)


@click.group("create")
def create() -> None:
    """Add to a project made by `kubeloop init`."""


@create.command("api")
@click.option("--kind", required=True, help="The new custom resource kind (CamelCase).")
@click.option("--group", default=None, help="Its API group (default: the project's).")
@click.option("--version", "api_version", default="v1", show_default=True, help="Its API version.")
@click.option("-p", "--project-dir", type=click.Path(file_okay=False, exists=True, path_type=Path),
              default=".", show_default=True)
def api(kind: str, group: str | None, api_version: str, project_dir: Path) -> None:
    """Add KIND: a model in models.py, a reconciler module registered on the operator, and a test."""
    from kubeloop.scaffold import ScaffoldError, create_api

    try:
        paths = create_api(project_dir, kind, group=group, version=api_version)
    except ScaffoldError as exc:
        raise click.ClickException(str(exc)) from exc
    for path in paths:
        click.echo(str(path))

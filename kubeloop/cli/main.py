"""The ``kubeloop`` command: one entry point, one sub-module per command group."""

from __future__ import annotations

import importlib

import click

# Sub-command modules, each exposing a click command or group named ``command`` (or ``module:attr``).
_COMMANDS = {
    "cluster": "kubeloop.cli.cluster",
    "run": "kubeloop.cli.run",
    "demo": "kubeloop.cli.demo",
    "generate": "kubeloop.cli.generate",
    "deploy": "kubeloop.cli.deploy",
    "undeploy": "kubeloop.cli.deploy:undeploy",
    "init": "kubeloop.cli.init",
    "create": "kubeloop.cli.init:create",
}


class _LazyGroup(click.Group):
    """Imports a sub-command only when it is used, so ``kubeloop cluster up`` stays fast."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        module, _, attr = _COMMANDS.get(name, "").partition(":")
        if not module:
            return None
        try:
            command: click.Command = getattr(importlib.import_module(module), attr or "command")
            return command
        except ModuleNotFoundError as exc:
            if exc.name == module:
                return None
            raise


@click.group(cls=_LazyGroup)
@click.version_option(package_name="kubeloop")
def main() -> None:
    """kubeloop: level-based Kubernetes operators in Python."""


if __name__ == "__main__":
    main()

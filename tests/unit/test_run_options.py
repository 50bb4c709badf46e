"""``kubeloop run``'s framework flags are the fields of one typed value, ``RunOptions``
(kubeloop/cli/options.py): its flags, environment variables and help derive from the fields, its defaults
are the layers' own, and it is checked at construction, on the command line as a usage error."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest
from click.testing import CliRunner

import kubeloop.cli.runner as runner
from kubeloop import Operator
from kubeloop.cli.options import RunOptions, framework_options
from kubeloop.cli.run import build_command
from kubeloop.client.transport import BURST, QPS
from kubeloop.manager import ManagerOptions
from kubeloop.manager.leader import LeaderElector
from kubeloop.resources.manifests import HEALTH_PORT, METRICS_PORT
from kubeloop.webhooks.runtime import WebhookOptions


def test_every_field_is_a_flag_and_an_environment_variable() -> None:
    options = {o.name: o for o in framework_options(webhooks=True)}
    assert list(options) == [f.name for f in dataclasses.fields(RunOptions)]
    for f in dataclasses.fields(RunOptions):
        opt = options[f.name]
        assert f"--{f.name.replace('_', '-')}" in opt.opts and opt.envvar == f"KUBELOOP_{f.name.upper()}"
        assert (opt.help or "") == f.metadata["flag"].help
    assert [o.name for o in framework_options()] == [f.name for f in dataclasses.fields(RunOptions)
                                                     if not f.name.startswith("webhook_")]
    assert options["namespace"].opts == ["--namespace", "-n"] and options["namespace"].multiple


def test_the_defaults_are_the_layers_own() -> None:
    given = RunOptions().manager_options("op", "default")
    plain = ManagerOptions(leader_election_id="op-leader", identity=given.identity)
    assert given == plain
    assert (RunOptions().qps, RunOptions().burst) == (QPS, BURST)
    elector = LeaderElector(None, "x", "ns")  # type: ignore[arg-type]  # (its client is not used here)
    assert (elector.lease_duration, elector.renew_deadline, elector.retry_period) == (
        plain.lease_duration, plain.renew_deadline, plain.retry_period)
    # The generated manifests' container ports are the default addresses' (no layer edge links them).
    assert (plain.metrics_bind_address, plain.health_probe_bind_address) == (f":{METRICS_PORT}", f":{HEALTH_PORT}")


def test_the_webhook_flags_make_the_webhook_options() -> None:
    assert RunOptions().webhook_options("ns") == WebhookOptions()
    service = RunOptions(webhook_service="op-webhook", webhook_host="0.0.0.0").webhook_options("pods")
    assert (service.service, service.namespace, service.host) == ("op-webhook", "pods", "0.0.0.0")
    assert RunOptions(webhook_host="").webhook_options("ns").host == WebhookOptions.host


@pytest.mark.parametrize(("kw", "says"), [
    ({"leader_elect": True, "shards": "auto"}, "--leader-elect and --shards auto are exclusive"),
    ({"retry_period": 12.0}, "--retry-period < --renew-deadline < --lease-duration is required (got 12.0, 10.0, 15.0)"),
    ({"lease_duration": 0.5}, "--lease-duration: 0.5 is not >= 1"),
    ({"webhook_port": 70000}, "--webhook-port: 70000 is not >= 0 and <= 65535"),
    ({"renew_deadline": 0.0}, "--renew-deadline: 0.0 is not > 0"),
    ({"shards": "on"}, "--shards: 'on' is not one of off, auto"),
    ({"log_level": "trace"}, "--log-level: 'trace' is not one of debug, info, warning, error"),
])
def test_checked_at_construction(kw: dict[str, Any], says: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(says)):
        RunOptions(**kw)


def test_frozen_and_immutable_all_the_way_down() -> None:
    options = RunOptions(namespace=["a", "b,c"])  # type: ignore[arg-type]  # a caller's list
    assert options.namespace == ("a", "b,c") and options.namespaces == ["a", "b", "c"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.qps = 1.0  # type: ignore[misc]
    assert RunOptions().namespaces is None


def test_the_command_line_refuses_what_the_check_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[RunOptions] = []

    async def run_operator(operator: Operator, options: RunOptions, target: str | None = None) -> int:
        started.append(options)
        return 0
    monkeypatch.setattr(runner, "run_operator", run_operator)
    op = Operator("plain")
    result = CliRunner().invoke(build_command(op), ["--retry-period", "11"], env={})
    assert result.exit_code == 2 and "--retry-period < --renew-deadline < --lease-duration" in result.output
    assert not started
    result = CliRunner().invoke(build_command(op), ["--qps", "5", "-n", "a,b"], env={})
    assert result.exit_code == 0, result.output
    assert started == [RunOptions(qps=5.0, namespace=("a,b",))]

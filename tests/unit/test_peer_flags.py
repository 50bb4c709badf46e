"""Flags of Kopf and kubebuilder/controller-runtime given to ``kubeloop run``: accepted where they mean
kubeloop's default, otherwise refused naming kubeloop's spelling (kubeloop/cli/peer_flags.py)."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

import kubeloop.cli.runner as runner
from kubeloop import Operator, Settings, setting
from kubeloop.cli.options import RunOptions
from kubeloop.cli.peer_flags import PEER_FLAGS
from kubeloop.cli.run import build_command

Started = list[tuple[RunOptions, str | None]]


def plain() -> Operator:
    op = Operator("plain")

    @op.reconcile("configmaps")
    async def reconcile(obj: dict[str, Any], ctx: Any) -> None:
        return None
    return op


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> Started:
    """The options (and the target) ``kubeloop run`` would start the operator with (nothing is started)."""
    seen: Started = []

    async def run_operator(operator: Operator, options: RunOptions, target: str | None = None) -> int:
        seen.append((options, target))
        return 0
    monkeypatch.setattr(runner, "run_operator", run_operator)
    return seen


def invoke(op: Operator, *args: str) -> Any:
    return CliRunner().invoke(build_command(op), list(args), prog_name="kubeloop run plain")


@pytest.mark.parametrize("args", [["-A"], ["--all-namespaces"], ["--standalone"], ["--standalone", "-A"]])
def test_kopfs_spellings_of_the_defaults_are_accepted(started: Started, args: list[str]) -> None:
    result = invoke(plain(), *args)
    assert result.exit_code == 0, result.output
    options = started[0][0]
    assert options.namespace == () and not options.leader_elect and options.shards == "off"


def test_n_is_namespace(started: Started) -> None:
    assert invoke(plain(), "-n", "team-a").exit_code == 0
    assert started[0][0].namespace == ("team-a",)


@pytest.mark.parametrize(("args", "says"), [
    (["-A", "--namespace", "x"], "-A/--all-namespaces (Kopf's) and --namespace contradict"),
    (["--standalone", "--leader-elect"], "--standalone (Kopf's) contradicts --leader-elect"),
    (["--standalone", "--shards", "auto"], "--standalone (Kopf's) contradicts --leader-elect/--shards"),
])
def test_a_kopf_default_contradicted_is_refused(started: Started, args: list[str], says: str) -> None:
    result = invoke(plain(), *args)
    assert result.exit_code == 2 and says in result.output and not started


@pytest.mark.parametrize("flag", sorted(PEER_FLAGS))
def test_every_peer_flag_is_refused_with_ours(started: Started, flag: str) -> None:
    result = invoke(plain(), flag)
    whose, ours = PEER_FLAGS[flag]
    assert result.exit_code == 2 and not started
    assert f"{flag} is {whose}'s flag; {ours}" in " ".join(result.output.split())


@pytest.mark.parametrize("args", [["--verbose=true"], ["--zap-log-level=debug"], ["--liveness", "http://x/healthz"]])
def test_a_peer_flag_with_a_value_is_refused_the_same_way(started: Started, args: list[str]) -> None:
    result = invoke(plain(), *args)
    assert result.exit_code == 2 and "'s flag; use --" in result.output


def test_an_operators_own_setting_of_that_name_wins(started: Started) -> None:
    class Chatty(Settings):
        verbose: bool = setting(False, "Its own --verbose.")
        standalone: bool = setting(False, "Its own --standalone.")

    op = Operator("chatty", settings=Chatty)

    @op.reconcile("configmaps")
    async def reconcile(obj: dict[str, Any], ctx: Any) -> None:
        return None
    result = invoke(op, "--verbose", "--standalone", "--leader-elect")
    assert result.exit_code == 0, result.output
    assert op.settings == Chatty(verbose=True, standalone=True) and started[0][0].leader_elect


def test_an_unknown_flag_is_still_clicks_error(started: Started) -> None:
    result = invoke(plain(), "--no-such-flag")
    assert result.exit_code == 2 and "No such option" in result.output


@pytest.mark.parametrize("args", [
    ["-v"], ["-d"], ["-p", "100"], ["-L", "http://0.0.0.0:8080/healthz"], ["--no-log-prefix"], ["--log-prefix"],
    ["--log-refkey", "k8s"], ["--zap-stacktrace-level=error"], ["--zap-time-encoding", "iso8601"]])
def test_kopfs_and_zaps_short_and_logging_flags_are_refused_with_ours(
        started: Started, args: list[str]) -> None:
    result = invoke(plain(), *args)
    whose, ours = PEER_FLAGS[args[0].partition("=")[0]]
    assert result.exit_code == 2 and not started
    assert f"{args[0].partition('=')[0]} is {whose}'s flag; {ours}" in " ".join(result.output.split())


def run_command(*args: str) -> Any:
    """``kubeloop run ARGS`` as typed, TARGET anywhere among them."""
    from kubeloop.cli.run import command
    return CliRunner().invoke(command, list(args), prog_name="kubeloop run")


@pytest.fixture
def target(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.py").write_text(
        "from kubeloop import Operator\nop = Operator('x')\n\n@op.reconcile('configmaps')\n"
        "async def reconcile(obj, ctx):\n    return None\n")
    return "x.py"


@pytest.mark.parametrize("args", [
    ["--standalone", "{t}"], ["-A", "--log-level", "debug", "{t}"], ["--namespace", "a", "{t}", "-n", "b"],
    ["{t}", "--standalone"]])
def test_flags_go_before_or_after_the_target(started: Started, target: str, args: list[str]) -> None:
    result = run_command(*[a.format(t=target) for a in args])
    assert result.exit_code == 0, result.output
    assert started and started[0][1] == target


@pytest.mark.parametrize("args", [["-v", "{t}"], ["-p", "100", "{t}"], ["--zap-time-encoding", "epoch", "{t}"]])
def test_a_peer_flag_before_the_target_is_refused_with_ours(
        started: Started, target: str, args: list[str]) -> None:
    result = run_command(*[a.format(t=target) for a in args])
    assert result.exit_code == 2 and not started and f"{args[0]} is " in result.output
    assert "not a bundled operator" not in result.output


def test_kopfs_module_flag_without_a_target_names_target(started: Started) -> None:
    result = run_command("-m", "mypackage.handlers")
    assert result.exit_code == 2 and "-m is Kopf's flag; give the module as kubeloop run's TARGET" in result.output

"""The fault harness's bookkeeping: counters across restarts, verdicts, the report and the command line
(percentiles and metric parsing: test_common.py)."""

from __future__ import annotations

from pathlib import Path

from harness.faults import cli, report
from harness.faults.env import MetricsTotals, check_loopback
from harness.faults.results import CONVERGENCE_BOUND_S, Row


def test_counters_survive_restarts() -> None:
    totals = MetricsTotals()
    for value in (3, 5, 1, 4):  # the process restarted after 5: its counter began again
        totals.update("409", value)
    assert totals.totals["409"] == 9


def test_verdict_needs_zero_lost_duplicated_and_crashes() -> None:
    assert Row("s", "widget", "f", objects=10).ok
    assert not Row("s", "widget", "f", never_converged=1).ok
    assert not Row("s", "widget", "f", duplicates=1).ok
    assert not Row("s", "widget", "f", crashes=1).ok
    assert not Row("s", "widget", "f", error="boom").ok
    assert Row.from_dict({**Row("s", "w", "f").to_dict(), "unknown": 1}).scenario == "s"


def test_report_table_and_claim() -> None:
    good = Row("sigkill", "widget", "SIGKILL", objects=200, converge_p99_s=1.234, converge_max_s=2.0,
               recovery_s=2.0, restarts=10, details={"kill_points": 10, "takeover_s": [15.1, 16.0]})
    data = {"meta": {"date": "2026-01-01 00:00 UTC", "invocation": "python -m harness.faults",
                     "versions": {"kubernetes": "v1.35.4"}, "size": {"n": 200, "seed": 1}},
            "results": [good.to_dict()]}
    text = report.render(data)
    assert "**Nothing**" in text and "python -m harness.faults" in text and "v1.35.4" in text
    assert "| sigkill | widget | 200 | 0 | 0 | 1.23 | 2.00 | 2.00 | 10 | 0 | 1/1 | ok |" in text
    assert "takeover_s: 15.1, 16.0" in text
    bad = Row("conflicts", "widget", "409s", objects=5, duplicates=1)
    text = report.render({**data, "results": [good.to_dict(), bad.to_dict()]})
    assert "**Nothing**" not in text and "1 scenario run(s) below failed" in text and "**FAILED**" in text


def test_a_run_past_the_convergence_bound_fails() -> None:
    assert Row("s", "widget", "f", converge_max_s=CONVERGENCE_BOUND_S).ok
    late = Row("s", "widget", "f", converge_max_s=CONVERGENCE_BOUND_S + 0.1)
    assert not late.ok and not late.to_dict()["ok"]
    assert f"**FAILED** (over {CONVERGENCE_BOUND_S:g} s)" in report.render({"results": [late.to_dict()]})


def test_report_shows_each_seed_and_the_worst_case() -> None:
    runs = [Row("namespace-delete", "widget", "ns", objects=200, converge_max_s=4.0, seed=1),
            Row("namespace-delete", "widget", "ns", objects=200, never_converged=3, converge_max_s=9.5, seed=7),
            Row("conflicts", "widget", "409", objects=200, converge_max_s=0.5, seed=1),
            Row("conflicts", "widget", "409", objects=200, converge_max_s=0.4, seed=7)]
    text = report.render({"meta": {"seeds": [1, 7]}, "results": [r.to_dict() for r in runs]})
    assert "seeds 1, 7" in text and "1 scenario run(s) below failed" in text
    assert "| namespace-delete | widget | 200 | 3 | 0 | – | 9.50 | – | 0 | 0 | 1/2 | **FAILED** |" in text
    assert "| conflicts | widget | 200 | 0 | 0 | – | 0.50 | – | 0 | 0 | 2/2 | ok |" in text
    assert "| namespace-delete | widget | 7 | 3 | 0 | – | 9.50 | **FAILED** |" in text


def test_cli_sizes() -> None:
    args = cli.parser().parse_args([])
    size = cli.size_from(args)
    assert (size.n, size.kills, size.seed) == (200, 10, 1)
    assert cli.seeds_from(args) == [1, 7, 42, 1234, 99999]  # several seeds unless told otherwise
    assert cli.seeds_from(cli.parser().parse_args(["--seeds", "3,4"])) == [3, 4]
    assert cli.seeds_from(cli.parser().parse_args(["--seed", "9"])) == [9]
    full = cli.size_from(cli.parser().parse_args(["--full", "--seed", "7"]))
    assert (full.kills, full.seed) == (100, 7)
    assert cli.size_from(cli.parser().parse_args(["--n", "20", "--kills", "0"])).kills == 0


def test_the_recorded_invocation_names_no_output_paths(tmp_path: Path) -> None:
    # The report is committed: it must not carry this machine's paths.
    argv = ["--seeds", "1,7", "--log-dir", str(tmp_path / "x"), f"--results={tmp_path / 'r.json'}", "--no-report",
            "--output", str(tmp_path / "o.md"), "--cluster-name", "f"]
    assert cli.invocation(argv) == "python -m harness.faults --seeds 1,7 --cluster-name f"


def test_only_loopback_clusters() -> None:
    check_loopback("https://127.0.0.1:6443")
    try:
        check_loopback("https://10.1.2.3:6443")
    except SystemExit:
        return
    raise AssertionError("a non-loopback API server must be refused")


def test_rbac_surgery_takes_verbs_from_one_resource_only() -> None:
    from harness.faults.scenarios import _failure, _without

    rules = [{"apiGroups": [""], "resources": ["configmaps", "secrets"], "verbs": ["create", "list", "patch", "watch"]},
             {"apiGroups": ["apps"], "resources": ["configmaps"], "verbs": ["patch"]}]
    cut = _without(rules, "configmaps", {"create", "patch"})
    assert {"apiGroups": [""], "resources": ["secrets"], "verbs": ["create", "list", "patch", "watch"]} in cut
    assert {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list", "watch"]} in cut
    assert rules[1] in cut  # another group's resource of the same name is left alone
    assert _without(rules, "configmaps", {"create", "list", "patch", "watch"}) == [
        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["create", "list", "patch", "watch"]}, rules[1]]
    line = ('2026-01-01 ERROR kubeloop.controller: reconcile failed: configmaps "w" is forbidden: no; '
            'grant it [widget ns/w id=1]')
    assert _failure(line) == 'reconcile failed: configmaps "w" is forbidden: no; grant it'


def test_a_write_landing_after_forget_does_not_make_a_doomed_widget_expected() -> None:
    # namespace-delete: a storm round in flight when the namespace was deleted patched a few of
    # its widgets after forget(); wrote() made them "expected to converge" again, so the widgets that went
    # with their namespace counted as never converged (and the 180 s wait for them was reported as the
    # namespace's deletion time). The operator had released every one of them.
    from harness.faults.observe import WidgetObserver

    obs = WidgetObserver(client=None)  # type: ignore[arg-type]  # no cluster: bookkeeping only
    widget = {"metadata": {"namespace": "doomed", "name": "w-0021", "resourceVersion": "7", "uid": "u"},
              "spec": {"value": 2}}
    obs.wrote(widget)
    obs.forget({"doomed/w-0021"})
    obs.wrote({**widget, "metadata": {**widget["metadata"], "resourceVersion": "9"}})  # the late write
    assert "doomed/w-0021" in obs.expect_gone
    assert obs.is_converged("doomed/w-0021")  # gone (nothing in the caches) is what it should be

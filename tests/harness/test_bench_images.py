"""The image bench's logic that needs no cluster nor podman: reading a counter off a metrics page, the
figures' summary, the saved file keeping the comparisons not run again, and the catalogue's options."""

from __future__ import annotations

from harness.bench import images

METRICS = """\
# HELP blackadder_rounds_total Rounds played by ChaosAgents.
# TYPE blackadder_rounds_total counter
blackadder_rounds_total{agent="a"} 1.0
blackadder_rounds_total{agent="b"} 2.0
blackadder_rounds_created{agent="a"} 1.7e+09
chaoskube_intervals_total 3
chaoskube_intervals_total_other 9
"""


def test_a_counter_is_the_sum_of_its_samples_and_nothing_else() -> None:
    assert images.metric_total(METRICS, "blackadder_rounds_total") == 3.0
    assert images.metric_total(METRICS, "chaoskube_intervals_total") == 3.0  # not ..._other, not the comments
    assert images.metric_total(METRICS, "blackadder_rounds") == 0.0  # _total and _created are other names
    assert images.metric_total("", "chaoskube_intervals_total") == 0.0


def test_the_summary_has_median_and_worst_of_the_figures_measured() -> None:
    rows = [{"start_to_ready_s": 1.0, "cgroup_mib": 40.0, "victims_chosen": 1},
            {"start_to_ready_s": 3.0, "cgroup_mib": 42.0, "victims_chosen": 1},
            {"start_to_ready_s": 2.0, "cgroup_mib": 41.0, "victims_chosen": 1}]
    assert images.summary(rows) == {"start_to_ready_s": {"median": 2.0, "worst": 3.0},
                                    "cgroup_mib": {"median": 41.0, "worst": 42.0}}
    assert images.summary([]) == {}


def test_a_run_of_some_comparisons_keeps_the_others_and_drops_the_old_layout() -> None:
    before = {"comparisons": {"reloader": {"date": "old"}, "blackadder": {"date": "old"}}}
    assert images.merged(before, {"blackadder": {"date": "new"}}) == {
        "comparisons": {"reloader": {"date": "old"}, "blackadder": {"date": "new"}}}
    one_comparison_layout = {"objects": 1000, "runs": {}, "summary": {}}
    assert images.merged(one_comparison_layout, {"copyrator": {}}) == {"comparisons": {"copyrator": {}}}
    assert images.merged(None, {}) == {"comparisons": {}}


def test_every_peer_binary_has_its_option() -> None:
    parser_flags = {c.peer.flag for c in images.COMPARISONS.values()}
    assert parser_flags == {"--reloader-binary", "--chaoskube-binary", "--replicator-binary"}
    for comparison in images.COMPARISONS.values():
        assert set(comparison.phases) <= set(images.KEYS)
        assert comparison.peer.rules, comparison.name


def test_the_saved_command_names_each_peer_binary_by_its_file_name_only() -> None:
    argv = ["--repeats", "3", "--reloader-binary", "/opt/build/reloader", "--chaoskube-binary=/srv/x/chaoskube",
            "--pods", "100"]
    assert images.binaries_named(argv) == ["--repeats", "3", "--reloader-binary", "reloader",
                                           "--chaoskube-binary=chaoskube", "--pods", "100"]

"""Every flag of the four bundled operators keeps its spellings, environment variables, default, kind
and help across the move to typed settings: users' manifests and Helm values pass them.

``data/operator_flags_main.json`` was recorded on main before the move, by running this file there:
``PYTHONPATH=<main checkout> python tests/unit/test_operator_flags.py > tests/unit/data/operator_flags_main.json``
(the same ``describe`` as the test uses). One help text was changed in the data since, on purpose:
``--leader-election-id``'s, which said the Lease defaults to the operator's name while the runner names
it ``<name>-leader``; both now come from ``kubeloop.cli.flags.leader_lease``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
import pytest

BEFORE = Path(__file__).parent / "data" / "operator_flags_main.json"
OPERATORS = ("immortal", "blackadder", "copyrator", "reloader")
# Reloader's refused flags that take a value had a click type of their own, shown as UNSUPPORTED in
# --help; the refusal is now the model's, so their metavar is TEXT. Nothing else may differ.
REFUSED_WITH_A_VALUE = {"webhook_url", "pprof_addr", "pause_deployment_time_annotation"}
# blackadder serves a conversion webhook since its v1beta2, and so has the framework's --webhook-* flags
# (docs/howto/webhooks.md) on top of its recorded ones, which stay as they were.
# --webhook-url-port and --webhook-drain-seconds came with serving a conversion from two replicas,
# --webhook-isolation with serving webhooks from a process of their own.
WEBHOOK_FLAGS = {"webhook_host", "webhook_port", "webhook_url_host", "webhook_service", "webhook_namespace",
                 "webhook_cert_dir", "webhook_url_port", "webhook_drain_seconds", "webhook_isolation"}
# copyrator's --check-author records rules' authors with its own mutating webhook: the new flag and
# the webhook flags come with it.
WITH_WEBHOOKS = {"blackadder", "copyrator"}
ADDED = {"copyrator": {"check_author", "max_copies_per_namespace"}}  # the second: the copy limit
# Scale-out added the framework's --shards and the Lease timings to every operator.
SHARDING_FLAGS = {"shards", "lease_duration", "renew_deadline", "retry_period"}
# Kopf's spellings of kubeloop's defaults are accepted (kubeloop/cli/peer_flags.py): two hidden flags and
# -n for --namespace.
KOPF_FLAGS = {"all_namespaces", "standalone"}
ADDED_SPELLINGS = {"namespace": ["-n"]}


def describe(param: click.Parameter) -> dict[str, Any]:
    """What a user sees of one flag: its spellings, env vars, default, kind, choices and help."""
    assert isinstance(param, click.Option)
    kind = "boolean" if isinstance(param.type, click.types.BoolParamType) else param.type.name
    env = [param.envvar] if isinstance(param.envvar, str) else list(param.envvar or ())
    default = param.get_default(click.Context(click.Command("x")), call=False)
    default = None if type(default).__name__ == "Sentinel" else default  # click 8.2's "no default"
    return {"opts": [*param.opts, *param.secondary_opts], "env": env,
            "default": list(default) if isinstance(default, tuple) else default, "multiple": param.multiple,
            "type": kind, "choices": list(getattr(param.type, "choices", []) or []), "help": param.help or "",
            "required": param.required}


def current() -> dict[str, dict[str, dict[str, Any]]]:
    from kubeloop.cli.run import build_command, load_operator

    return {name: {p.name or "": describe(p) for p in build_command(load_operator(name)).params}
            for name in OPERATORS}


@pytest.mark.parametrize("operator", OPERATORS)
def test_every_flag_is_as_before(operator: str) -> None:
    before = json.loads(BEFORE.read_text())[operator]
    now = current()[operator]
    added = ((WEBHOOK_FLAGS if operator in WITH_WEBHOOKS else set()) | ADDED.get(operator, set()) | SHARDING_FLAGS
             | KOPF_FLAGS)
    assert sorted(now) == sorted({*before, *added}), "flags added or removed"
    for name, flag in before.items():
        if name in REFUSED_WITH_A_VALUE:
            assert (flag["type"], now[name]["type"]) == ("unsupported", "text")
            flag = {**flag, "type": "text"}
        if name in ADDED_SPELLINGS:
            flag = {**flag, "opts": sorted([*flag["opts"], *ADDED_SPELLINGS[name]])}
            now[name] = {**now[name], "opts": sorted(now[name]["opts"])}
        assert now[name] == flag, name


def test_the_recording_covers_every_operator_and_the_aliases() -> None:
    """The recording is of the real command lines (not an empty file that anything would match)."""
    before = json.loads(BEFORE.read_text())
    assert sorted(before) == sorted(OPERATORS)
    assert before["reloader"]["argo_rollouts"]["opts"] == ["--argo-rollouts", "--is-Argo-Rollouts"]
    assert before["reloader"]["namespace"]["env"] == ["KUBELOOP_NAMESPACE", "KUBERNETES_NAMESPACE"]
    assert before["copyrator"]["rule_name"]["env"] == ["KUBELOOP_RULE_NAME", "RULE_NAME"]
    assert sum(len(flags) for flags in before.values()) == 122


if __name__ == "__main__":
    json.dump(current(), sys.stdout, indent=1, sort_keys=True)

"""Chart values for the operator settings that change its manifests (``settings.<name>`` in values.yaml).

A setting such as copyrator's ``--check-author`` adds a webhook, its Service and port, and RBAC rules
(``op.record_author(..., when=...)``, ``op.permission(..., when=...)``). Passing the flag through
``extraArgs`` would start the process without them, so such a setting gets a value of its own:

- A *switch* is an on/off setting that is off by default and whose ``kubeloop generate all`` output
  with it on differs from the output with it off. ``kubeloop generate chart`` finds them by generating
  both (:class:`Switch` holds the "on" objects); a setting that changes nothing stays an ``extraArgs`` flag.
- ``settings.<camelCaseName>: false`` in values.yaml; when true, the Deployment gets ``--<flag>`` and the
  chart every object and RBAC rule the "on" output has and the "off" one lacks; a rule the "on" output
  drops goes when it is on. Several switches on at once get the union of what each needs alone: exact
  for switches that add rules (copyrator's), and for two that each drop part of one rule (reloader's
  ``ignoreConfigmaps`` and ``ignoreSecrets``) the parts each keeps, so never less than the process needs.
- Only differences a chart can switch are supported (RBAC rules, whole new objects, the webhook port and
  arguments); a setting that changes anything else (a CRD, an existing webhook configuration) is no
  switch: :func:`unsupported` says why, and ``generate chart`` prints it.
- The flag of a switch in ``extraArgs`` fails the render, naming the value to use instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]
_ROLES = ("ClusterRole", "Role")
# Kinds a switch may add whole (the webhook plumbing and the roles/bindings).
_ADDABLE = {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "Service", "Secret",
            "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}


@dataclass(frozen=True)
class Switch:
    """One switchable setting: its flag (``check-author``), help text and ``generate all`` objects when on."""

    flag: str
    help: str
    objs: list[Obj]
    default: bool = False  # the value values.yaml starts with (``generate chart --set flag=true``)
    aliases: tuple[str, ...] = ()  # more spellings of the flag (``--is-Argo-Rollouts``), refused in extraArgs too

    @property
    def key(self) -> str:
        """The values key: ``check-author`` → ``checkAuthor``."""
        head, *rest = self.flag.split("-")
        return head + "".join(w[:1].upper() + w[1:] for w in rest)

    @property
    def on(self) -> str:
        """The template expression that is true when the switch is on."""
        return f".Values.settings.{self.key}"


def ident(obj: Obj) -> tuple[str, str]:
    return obj["kind"], obj["metadata"]["name"]


def webhook_port(objs: Sequence[Obj]) -> bool:
    """Whether these objects' Deployment serves webhooks."""
    container = next(o for o in objs if o["kind"] == "Deployment")["spec"]["template"]["spec"]["containers"][0]
    return any(p.get("name") == "webhook" for p in container.get("ports", []))


def unsupported(base: Sequence[Obj], on: Sequence[Obj]) -> str | None:
    """Why the difference between ``base`` and ``on`` cannot be switched in a chart, or None."""
    before, after = {ident(o): o for o in base}, {ident(o): o for o in on}
    for key in sorted(before.keys() - after.keys()):
        return f"it removes {key[0]} {key[1]}"
    for key, obj in sorted(after.items()):
        old = before.get(key)
        if old is None and key[0] not in _ADDABLE:
            return f"it adds {key[0]} {key[1]}"
        if old is None or old == obj or key[0] in _ROLES:
            continue
        if key[0] == "Deployment" and not webhook_port(base) and _without_webhook(obj) == old:
            continue
        return f"it changes {key[0]} {key[1]}"
    return None


def _without_webhook(deployment: Obj) -> Obj:
    """``deployment`` without the webhook port and ``--webhook-*`` arguments (for comparison)."""
    import copy

    out = copy.deepcopy(deployment)
    container = out["spec"]["template"]["spec"]["containers"][0]
    container["args"] = [a for a in container["args"] if not a.startswith("--webhook-")]
    container["ports"] = [p for p in container.get("ports", []) if p.get("name") != "webhook"]
    return out


def any_of(conds: Sequence[str]) -> str:
    return conds[0] if len(conds) == 1 else f"(or {' '.join(conds)})"


def rules_with_conditions(kind: str, base: Sequence[Obj], switches: Sequence[Switch],
                          skip: Sequence[Obj] = ()) -> list[tuple[Obj, str | None]]:
    """The rules of ``kind`` (ClusterRole or Role) with the condition each needs (None: always)."""
    def rules(objs: Sequence[Obj]) -> list[Obj]:
        return [r for o in objs if o["kind"] == kind for r in o["rules"] if r not in skip]

    always = rules(base)
    out: list[tuple[Obj, str | None]] = []
    for rule in always:
        dropped = [s.on for s in switches if rule not in rules(s.objs)]
        out.append((rule, f"(not {any_of(dropped)})" if dropped else None))
    added: list[Obj] = []
    for switch in switches:
        added += [r for r in rules(switch.objs) if r not in always and r not in added]
    for rule in added:
        out.append((rule, any_of([s.on for s in switches if rule in rules(s.objs)])))
    return out


def values_block(switches: Sequence[Switch]) -> str:
    """values.yaml's ``settings:``, each switch with its help as a comment."""
    if not switches:
        return ""
    lines = ["", "# The operator's settings that change what the chart installs (webhooks, RBAC): set them here,",
             "# not in extraArgs. Each is the `kubeloop run` flag of the same name.", "settings:"]
    for switch in switches:
        text = _wrap(f"--{switch.flag}: {switch.help}")
        lines += [("  # " if i == 0 else "  #   ") + line for i, line in enumerate(text)]
        lines.append(f"  {switch.key}: {'true' if switch.default else 'false'}")
    return "\n".join(lines) + "\n"


def _wrap(text: str, width: int = 96) -> list[str]:
    words, lines, line = text.split(), [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return [*lines, line] if line else lines or [""]


def deployment_args(switches: Sequence[Switch]) -> str:
    """The container arguments of the switches that are on, and a failed render for a switch's flag in
    ``extraArgs`` (the process would run without the objects it needs)."""
    out = ""
    for s in switches:
        spelled = " ".join(f'(eq . "{f}") (hasPrefix "{f}=" .)' for f in (f"--{s.flag}", *s.aliases))
        out += (f"            {{{{- if {s.on} }}}}\n            - --{s.flag}\n            {{{{- end }}}}\n"
                f"            {{{{- range .Values.extraArgs }}}}\n"
                f"            {{{{- if or {spelled} }}}}\n"
                f"            {{{{- fail \"extraArgs: set settings.{s.key}=true instead of --{s.flag}, so that "
                f"the chart installs what it needs\" }}}}\n"
                "            {{- end }}\n            {{- end }}\n")
    return out

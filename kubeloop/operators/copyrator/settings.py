"""``kubeloop run copyrator``'s flags: the article's single-rule mode (with the spellings its Helm chart
and Deployment use), and the security boundary (``boundary.py``, README "Security model")."""

from __future__ import annotations

from typing import ClassVar

from pydantic import model_validator

from kubeloop import Flag, Settings, setting


class CopyratorSettings(Settings):
    # The article's Deployment passes the pod's namespace as NAMESPACE: rules are then read from it only.
    framework_flags: ClassVar = {"namespace": Flag(env=("NAMESPACE",))}

    rule_name: str | None = setting(None, "Only act on the CopyratorRule of this name (the article's single-rule "
                                    "mode); default: every rule.", env=["RULE_NAME"])
    # The article's Helm chart passes `args: ["--rule-type", "main-rule"]`, meaning the rule's name.
    rule_type: str | None = setting(None, "The article's spelling of --rule-name (its Helm chart passes "
                                    "--rule-type main-rule); give one or the other.")
    trusted_namespace: tuple[str, ...] = setting(
        (), "Rules in these namespaces (names or globs; repeat or comma-separate) read ConfigMaps from any "
        "namespace and take over objects (Adopt/Overwrite) without the owner's consent (with sources in trusted "
        "namespaces). Only for namespaces where only cluster admins create CopyratorRules. Default: the "
        "operator's own namespace unless it is default; \"\" trusts none.")
    allow_system_namespaces: bool = setting(False, "Let copies go to kube-system, kube-public, kube-node-lease "
                                            "and the operator's own namespace (default: never).")
    closed_namespace: tuple[str, ...] = setting(
        (), "More namespaces (names or globs; repeat or comma-separate) that never receive copies, whatever a "
        "rule says: e.g. those whose tools load labelled ConfigMaps (monitoring).")
    max_copies_per_namespace: int = setting(
        64, "At most this many copies (of each kind) in one namespace from the rules of any one namespace: "
        "they count against the receiving namespace's ResourceQuota. A namespace's own copyrator-policy "
        "ConfigMap can lower it (max-copies).")
    # Off by default: it needs the operator's webhook served (a Service and its certificate), which the
    # article's Deployment does not have, and the consent annotations already bound what a rule reaches.
    check_author: bool = setting(False, "Copy only what the rule's author may read (get) into namespaces the "
                                 "author may write (create, update), as recorded by the operator's own "
                                 "admission webhook and checked with SubjectAccessReviews (README \"Security "
                                 "model\"). Needs the webhook deployed; rules without a valid author record "
                                 "copy nothing new.")
    operator_namespace: str | None = setting(None, "The operator's own namespace, closed to copies like the "
                                             "system ones (default: the pod's namespace when run in a "
                                             "cluster).", env=["POD_NAMESPACE"])

    @model_validator(mode="after")
    def _one_rule(self) -> CopyratorSettings:
        if self.rule_name and self.rule_type and self.rule_name != self.rule_type:
            raise ValueError(f"--rule-name {self.rule_name!r} and --rule-type {self.rule_type!r} disagree: "
                             "--rule-type is the article's spelling of --rule-name; give one of them")
        return self

    @property
    def rule(self) -> str | None:
        """The one rule to act on (``--rule-name`` or ``--rule-type``), or None for every rule."""
        return self.rule_name or self.rule_type or None

"""``kubeloop generate chart``: a Helm chart built from the same objects as ``kubeloop generate all``.

CRDs go to ``crds/`` verbatim; the RBAC rules are the generated least-privilege ones; the Deployment's
defaults (probes, resources, security contexts) become ``values.yaml``. Namespaces come from
``.Release.Namespace`` (``helm install --create-namespace``), so the Namespace object is dropped.
Settings that change the objects (copyrator's ``--check-author``) become ``settings.<name>`` values
that switch them (:mod:`kubeloop.packaging.switches`).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from kubeloop.packaging.switches import (
    Switch,
    any_of,
    deployment_args,
    ident,
    rules_with_conditions,
    values_block,
    webhook_port,
)
from kubeloop.resources.manifests import render_yaml

CHART_API_VERSION = "v2"
# The exact rules render_rbac adds for leader election and for sharding (``--shards auto``: Leases are
# listed and deleted too); the chart grants the one its values enable (leaderElection / sharding).
LEASE_RULE = {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
              "verbs": ["get", "create", "update"]}
SHARDING_LEASE_RULE = {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                       "verbs": ["get", "list", "create", "update", "delete"]}
_TEMPLATE_FILES = ("templates/_helpers.tpl", "templates/deployment.yaml", "templates/serviceaccount.yaml",
                   "templates/service.yaml", "templates/servicemonitor.yaml", "templates/NOTES.txt")


def split_image(image: str) -> tuple[str, str, str]:
    """``repo[:tag][@digest]`` → (repository, tag, digest); a registry port is not a tag."""
    rest, _, digest = image.partition("@")
    head, sep, tag = rest.rpartition(":")
    if not sep or "/" in tag:
        return rest, "", digest
    return head, tag, digest


def _block(obj: Any, indent: int) -> str:
    text = yaml.safe_dump(obj, sort_keys=True, default_flow_style=False).rstrip("\n")
    return "\n".join(" " * indent + line for line in text.splitlines())


def _fill(text: str, values: Mapping[str, str]) -> str:
    for key, value in values.items():
        text = text.replace(f"@{key}@", value)
    return text


def _template(rel: str) -> str:
    return resources.files("kubeloop.packaging").joinpath("templates/chart", rel).read_text()


def _of(objs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objs if o["kind"] == kind]


def chart_yaml(name: str, version: str, app_version: str) -> str:
    meta = {"apiVersion": CHART_API_VERSION, "name": name, "version": version, "appVersion": app_version,
            "type": "application", "description": f"The {name} Kubernetes operator (built with kubeloop).",
            "keywords": ["kubernetes", "operator", "kubeloop"], "kubeVersion": ">=1.25.0-0"}
    return yaml.safe_dump(meta, sort_keys=False)


def _rules(rules: list[tuple[dict[str, Any], str | None]]) -> str:
    """Rules as a YAML list, each conditional one inside its ``if``."""
    out = ""
    for rule, cond in rules:
        text = _create_note(rule, [r for r, _ in rules]) + _block([rule], 0) + "\n"
        out += f"{{{{- if {cond} }}}}\n{text}{{{{- end }}}}\n" if cond else text
    return out


def _create_note(rule: dict[str, Any], rules: list[dict[str, Any]]) -> str:
    """A comment on a ``create`` rule of a kind whose other rules are limited to names."""
    named = any(r.get("resourceNames") and r["resources"] == rule["resources"] for r in rules)
    if "create" in rule["verbs"] and not rule.get("resourceNames") and named:
        return ("# create cannot be limited by resourceNames (Kubernetes RBAC: the new object's name is not\n"
                "# known when the request is authorized); the other verbs on these objects are by name.\n")
    return ""


def rbac_yaml(name: str, objs: list[dict[str, Any]], switches: Sequence[Switch] = ()) -> str:
    """ClusterRole/Role (+bindings) with the generated rules, named after the release and bound to the
    chart's ServiceAccount; the lease rule follows ``leaderElection.enabled`` or ``sharding.enabled``, a
    switch's rules its value."""
    cluster_rules = rules_with_conditions("ClusterRole", objs, switches)
    local_rules = rules_with_conditions("Role", objs, switches, skip=[LEASE_RULE, SHARDING_LEASE_RULE])
    full = f'{{{{ include "{name}.fullname" . }}}}'
    meta = f'metadata:\n  name: {full}\n  labels:\n    {{{{- include "{name}.labels" . | nindent 4 }}}}\n'
    ns_meta = meta + "  namespace: {{ .Release.Namespace }}\n"
    subjects = ("subjects:\n  - kind: ServiceAccount\n"
                f'    name: {{{{ include "{name}.serviceAccountName" . }}}}\n'
                "    namespace: {{ .Release.Namespace }}\n")

    def binding(kind: str, metadata: str) -> str:
        return (f"---\napiVersion: rbac.authorization.k8s.io/v1\nkind: {kind}Binding\n{metadata}"
                f"roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: {kind}\n  name: {full}\n"
                + subjects)

    lease = ("{{- if .Values.leaderElection.enabled }}\n" + _block([LEASE_RULE], 0) + "\n{{- end }}\n"
             "{{- if .Values.sharding.enabled }}\n" + _block([SHARDING_LEASE_RULE], 0) + "\n{{- end }}\n")
    role = ("---\napiVersion: rbac.authorization.k8s.io/v1\nkind: Role\n" + ns_meta + "rules:\n"
            + _rules(local_rules) + lease + binding("Role", ns_meta))
    if all(cond for _, cond in local_rules):  # a Role with only conditional rules exists only when needed
        role = _when([".Values.leaderElection.enabled", ".Values.sharding.enabled",
                      *(c for _, c in local_rules if c)], role)
    cluster = ""
    if cluster_rules:
        cluster = ("---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\n" + meta + "rules:\n"
                   + _rules(cluster_rules) + binding("ClusterRole", meta))
        if all(cond for _, cond in cluster_rules):
            cluster = _when([c for _, c in cluster_rules if c], cluster)
    return "{{- if .Values.rbac.create }}\n" + cluster + role + "{{- end }}\n"


def _when(conds: list[str], text: str) -> str:
    return f"{{{{- if {any_of(list(dict.fromkeys(conds)))} }}}}\n{text}{{{{- end }}}}\n"


def write_chart(out_dir: str | Path, name: str, objs: list[dict[str, Any]], *,
                chart_version: str = "0.1.0", switches: Sequence[Switch] = ()) -> list[Path]:
    """Write the chart for operator ``name`` from its ``kubeloop generate all`` objects; returns the files.
    ``switches``: settings that change those objects, as values (:mod:`kubeloop.packaging.switches`).
    An existing chart directory is replaced (its files are all generated)."""
    out = Path(out_dir)
    if (out / "Chart.yaml").exists():
        for sub in ("templates", "crds"):
            shutil.rmtree(out / sub, ignore_errors=True)
    (out / "templates").mkdir(parents=True, exist_ok=True)
    deployment = _of(objs, "Deployment")[0]
    pod = deployment["spec"]["template"]["spec"]
    container = pod["containers"][0]
    repository, tag, digest = split_image(container["image"])
    run_args = [a for a in _without_mode(container["args"]) if not a.startswith("--webhook-")]
    sharded = "--shards" in container["args"]
    files: dict[str, str] = {
        "Chart.yaml": chart_yaml(name, chart_version, tag or "latest"),
        "values.yaml": _fill(_template("values.yaml"), {
            "CHART": name, "IMAGE_REPOSITORY": repository, "PULL_POLICY": container["imagePullPolicy"],
            "REPLICAS": str(deployment["spec"]["replicas"]),
            "LEADER_ELECTION": str(not sharded).lower(), "SHARDING": str(sharded).lower(),
            "LIVENESS": _block(container["livenessProbe"], 2),
            "READINESS": _block(container["readinessProbe"], 2),
            "RESOURCES": _block(container["resources"], 2), "POD_SECURITY": _block(pod["securityContext"], 2),
            "SECURITY": _block(container["securityContext"], 2),
            "IMAGE_DIGEST": digest, "GRACE": str(pod.get("terminationGracePeriodSeconds", 10))})
        + values_block(switches),
        "templates/rbac.yaml": rbac_yaml(name, objs, switches),
        ".helmignore": ".git/\n*.swp\n*.bak\n*.tmp\n*~\n.DS_Store\n",
    }
    for rel in _TEMPLATE_FILES:
        files[rel] = _fill(_template(rel), {
            # JSON strings are YAML strings: each argument stays one quoted list item.
            "CHART": name, "RUN_ARGS": "\n".join(f"            - {json.dumps(a)}" for a in run_args),
            "ENV": _block(container.get("env", []), 12)})
    files["templates/deployment.yaml"] = files["templates/deployment.yaml"].replace(
        _LEADER_ARG, deployment_args(switches) + _LEADER_ARG, 1)
    _switched_webhooks(files, name, objs, switches)
    for crd in _of(objs, "CustomResourceDefinition"):
        if (crd["spec"].get("conversion") or {}).get("strategy") == "Webhook":
            continue  # templated by _add_webhooks: Helm never templates crds/
        files[f"crds/{crd['metadata']['name']}.yaml"] = render_yaml([crd])
    written = []
    for rel, text in sorted(files.items()):
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        written.append(path)
    return written


def _without_mode(args: list[str]) -> list[str]:
    """The run arguments without ``--leader-elect`` / ``--shards auto``: the chart's values choose."""
    out, skip = [], False
    for arg in args:
        if skip or arg == "--leader-elect" or arg.startswith("--shards="):
            skip = False
        elif arg == "--shards":
            skip = True
        else:
            out.append(arg)
    return out


# --- webhooks ------------------------------------------------------------------------------------------

_SERVICE, _NAMESPACE = "KUBELOOP_WEBHOOK_SERVICE", "KUBELOOP_RELEASE_NAMESPACE"
_LEADER_ARG = "            {{- if .Values.leaderElection.enabled }}\n"
# The path kubeloop.webhooks.deploy.CERT_DIR mounts too (packaging may not import webhooks; the chart
# test in tests/integration/test_webhooks_cert_secret.py renders it and compares).
CERT_DIR = "/var/run/kubeloop/webhook-certs"


def _switched_webhooks(files: dict[str, str], name: str, objs: list[dict[str, Any]],
                       switches: Sequence[Switch]) -> None:
    """The webhook plumbing: always when the operator serves webhooks with the chart's base settings,
    else while a switch that adds webhooks is on; each configuration a switch adds, while it is on."""
    serving = [s for s in switches if webhook_port(s.objs)]
    if not webhook_port(objs) and not serving:
        return
    when = None if webhook_port(objs) else any_of([s.on for s in serving])
    conds: dict[tuple[str, str], str | None] = {ident(o): None for o in objs}
    extra: list[dict[str, Any]] = []
    for switch in switches:
        for obj in switch.objs:
            if ident(obj) not in conds:
                conds[ident(obj)] = any_of([s.on for s in switches if ident(obj) in map(ident, s.objs)])
                extra.append(obj)
    _add_webhooks(files, name, [*objs, *extra], conds, when)


def _if(cond: str | None, text: str) -> str:
    return f"{{{{- if {cond} }}}}\n{text}{{{{- end }}}}\n" if cond else text


def _add_webhooks(files: dict[str, str], name: str, objs: list[dict[str, Any]],
                  conds: dict[tuple[str, str], str | None], when: str | None) -> None:
    """The webhook Service, configurations, container port and arguments, named after the release;
    ``when``: the condition of all of it, ``conds``: of each configuration (None: always).

    The configurations keep the operator's names (the process writes its caBundle into them by name, and
    its RBAC names them); their Service and the namespace their selector excludes are the release's."""
    full = f'{{{{ include "{name}.fullname" . }}}}'
    converted = [o for o in objs if o["kind"] == "CustomResourceDefinition"
                 and (o["spec"].get("conversion") or {}).get("strategy") == "Webhook"]
    configs = [o for o in objs if o["kind"].endswith("WebhookConfiguration")] + converted
    if any(conds.get(ident(c)) for c in configs):
        text = "".join(_if(conds.get(ident(c)), render_yaml([_placeholders(c)])) for c in configs)
    else:  # as before switches existed: one document stream
        text = render_yaml([_placeholders(c) for c in configs])
    files["templates/webhooks.yaml"] = _if(when, text.replace(_SERVICE, f"{full}-webhook")
                                           .replace(_NAMESPACE, "{{ .Release.Namespace }}"))
    for secret in _of(objs, "Secret"):  # the empty CA Secret the replicas fill (kubeloop.webhooks.shared_ca)
        files["templates/webhook-ca-secret.yaml"] = _if(when, render_yaml([{**secret, "metadata": {
            **secret["metadata"], "namespace": _NAMESPACE}}]).replace(_NAMESPACE, "{{ .Release.Namespace }}"))
    files["templates/webhook-service.yaml"] = _if(when, (
        f"apiVersion: v1\nkind: Service\nmetadata:\n  name: {full}-webhook\n"
        "  namespace: {{ .Release.Namespace }}\n"
        f"  labels:\n    {{{{- include \"{name}.labels\" . | nindent 4 }}}}\n"
        f"spec:\n  selector:\n    {{{{- include \"{name}.selectorLabels\" . | nindent 4 }}}}\n  ports:\n"
        "    - name: webhook\n      port: 443\n      targetPort: webhook\n      protocol: TCP\n"))
    files["values.yaml"] += ("\nwebhook:\n  # the container port the webhook Service (443) forwards to\n  port: 9443\n"
                             "  # a kubernetes.io/tls Secret (e.g. cert-manager's) to serve instead of a certificate\n"
                             "  # the process makes; pair it with cert-manager's cainjector annotation\n"
                             "  certSecret: \"\"\n")
    deployment = files["templates/deployment.yaml"]
    args = ("            - --webhook-host=0.0.0.0\n            - --webhook-port={{ .Values.webhook.port }}\n"
            f"            - --webhook-service={full}-webhook\n")
    port = ("            - name: webhook\n              containerPort: {{ .Values.webhook.port }}\n"
            "              protocol: TCP\n")
    deployment = deployment.replace(_LEADER_ARG, _indented_if(when, args) + _LEADER_ARG, 1)
    anchor = "              containerPort: {{ .Values.health.port }}\n              protocol: TCP\n"
    deployment = deployment.replace(anchor, anchor + _indented_if(when, port), 1)
    files["templates/deployment.yaml"] = _mount_cert_secret(deployment, when)
    if converted:
        _keep_converting(files, name)


def _keep_converting(files: dict[str, str], name: str) -> None:
    """An operator converting a CRD's versions: what ``kubeloop generate all`` gives its Deployment too
    (kubeloop.webhooks.deploy.keep_serving): a rolling update without an unready moment, a preference for
    different nodes (``affinity``, a value) and a PodDisruptionBudget taking one replica at a time."""
    anchor = "  replicas: {{ .Values.replicaCount }}\n"
    assert anchor in files["templates/deployment.yaml"], anchor  # the chart's own template
    files["templates/deployment.yaml"] = files["templates/deployment.yaml"].replace(anchor, anchor + (
        "  strategy:\n    type: RollingUpdate\n    rollingUpdate:\n      maxUnavailable: 0\n      maxSurge: 1\n"), 1)
    affinity = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100,
                "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                                    "labelSelector": {"matchLabels": {"app.kubernetes.io/name": name}}}}]}}
    assert "\naffinity: {}\n" in files["values.yaml"]
    files["values.yaml"] = files["values.yaml"].replace(
        "\naffinity: {}\n", "\n# replicas on different nodes where possible: each serves the conversion webhook\n"
        "affinity:\n" + _block(affinity, 2) + "\n", 1)
    full = f'{{{{ include "{name}.fullname" . }}}}'
    files["templates/webhook-pdb.yaml"] = (
        f"apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: {full}-webhook\n"
        "  namespace: {{ .Release.Namespace }}\n"
        f"  labels:\n    {{{{- include \"{name}.labels\" . | nindent 4 }}}}\n"
        f"spec:\n  maxUnavailable: 1\n  selector:\n    matchLabels:\n"
        f"      {{{{- include \"{name}.selectorLabels\" . | nindent 6 }}}}\n")


def _indented_if(cond: str | None, text: str) -> str:
    return f"            {{{{- if {cond} }}}}\n{text}            {{{{- end }}}}\n" if cond else text


def _mount_cert_secret(deployment: str, serving: str | None = None) -> str:
    """``webhook.certSecret``: mount it and pass ``--webhook-cert-dir`` (see kubeloop.webhooks.cert_dir);
    ``serving``: the condition under which the process serves webhooks at all."""
    cond = f"and {serving} .Values.webhook.certSecret" if serving else ".Values.webhook.certSecret"
    when, end = f"{{{{- if {cond} }}}}\n", "{{- end }}\n"
    arg = "            - --webhook-port={{ .Values.webhook.port }}\n"
    mount = "          volumeMounts:\n            - name: tmp\n              mountPath: /tmp\n"
    volume = "        - name: tmp\n          emptyDir: {}\n"
    for anchor, extra in (
            (arg, f"            {when}            - --webhook-cert-dir={CERT_DIR}\n            {end}"),
            (mount, f"            {when}            - name: webhook-cert\n              mountPath: {CERT_DIR}\n"
                    f"              readOnly: true\n            {end}"),
            (volume, f"        {when}        - name: webhook-cert\n          secret:\n"
                     f"            secretName: {{{{ .Values.webhook.certSecret }}}}\n        {end}")):
        assert anchor in deployment, anchor  # the chart's own template: a changed template must update this
        deployment = deployment.replace(anchor, anchor + extra, 1)
    return deployment


def _placeholders(obj: dict[str, Any]) -> dict[str, Any]:
    """A copy whose Service references and excluded namespace are placeholders for the release's. The
    chart's objects are generated in the namespace "default" (see ``kubeloop generate chart``)."""
    out: dict[str, Any] = json.loads(json.dumps(obj))
    conversion = (out.get("spec") or {}).get("conversion", {}).get("webhook")
    for config in [h["clientConfig"] for h in out.get("webhooks", [])] + ([conversion["clientConfig"]]
                                                                          if conversion else []):
        if "service" in config:
            config["service"].update(name=_SERVICE, namespace=_NAMESPACE)
    for hook in out.get("webhooks", []):
        for expr in (hook.get("namespaceSelector") or {}).get("matchExpressions", []):
            expr["values"] = [_NAMESPACE if v == "default" else v for v in expr["values"]]
    return out

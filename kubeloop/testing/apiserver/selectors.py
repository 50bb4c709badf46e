"""Label and field selectors as kube-apiserver parses them (the operators' subset of the grammar).

Labels: ``k=v``, ``k==v``, ``k!=v``, ``k in (a,b)``, ``k notin (a)``, ``k``, ``!k``, ``k>n``, ``k<n``,
comma-joined.
Fields: ``metadata.name`` and ``metadata.namespace``, or the kind's own field labels, with ``=``, ``==``, ``!=``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from kubeloop.testing.apiserver import names
from kubeloop.testing.apiserver.causes import Cause, forbidden, invalid, mapping, required
from kubeloop.testing.apiserver.errors import StatusError, bad_request

Match = Callable[[dict[str, Any]], bool]
_TOKEN = re.compile(r"\s*(!=|==|=|>|<|\(|\)|,|!|[^\s!=(),<>]+)")

# The field selectors of the kinds whose API registers its own field labels (kube-apiserver 1.35.4,
# pkg/apis/core/v1/conversion.go, pkg/apis/events/v1/conversion.go): any other label is refused with
# "field label not supported". Every other kind takes metadata.name and metadata.namespace (also a
# cluster-scoped one, where the namespace is empty) and names them when refusing another.
_META = ["metadata.name", "metadata.namespace"]
FIELD_LABELS: dict[tuple[str, str], list[str]] = {
    ("", "pods"): [*_META, "spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
                   "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName"],
    ("", "secrets"): [*_META, "type"],
    ("", "services"): [*_META, "spec.clusterIP", "spec.type"],
    ("", "namespaces"): ["metadata.name", "status.phase"],
    ("", "events"): [*_META, "involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                     "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
                     "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"],
    ("events.k8s.io", "events"): [*_META, "reason", "type", "reportingController", *(
        f"regarding.{f}" for f in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion",
                                   "fieldPath"))],
}

# Field labels a kind's conversion renames: old v1 clients send a pod's spec.host.
_ALIASES: dict[tuple[str, str], dict[str, str]] = {("", "pods"): {"spec.host": "spec.nodeName"}}


def _has(key: str, present: bool) -> Match:
    return lambda o: (key in _labels(o)) == present


def _equals(key: str, value: str, same: bool) -> Match:
    return lambda o: (_labels(o).get(key) == value) == same


def _compared(key: str, bound: int, greater: bool) -> Match:
    """A ``key>n`` or ``key<n`` requirement: the label is there and is an integer on that side of ``n``."""
    def match(obj: dict[str, Any]) -> bool:
        value = _labels(obj).get(key)
        if value is None or not re.fullmatch(r"[+-]?[0-9]+", value) or not -2**63 <= int(value) < 2**63:
            return False
        return int(value) > bound if greater else int(value) < bound
    return match


def _member(key: str, values: frozenset[str], inside: bool) -> Match:
    return lambda o: (_labels(o).get(key) in values) == inside


def _field_is(path: str, value: str, same: bool) -> Match:
    return lambda o: (_field(o, path) == value) == same


def _tokens(text: str) -> list[str]:
    return [m.group(1) for m in _TOKEN.finditer(text)]


def parse_labels(text: str | None) -> Match:
    """A predicate on an object's labels; BadRequest with the real server's wording on bad syntax."""
    if not text:
        return lambda obj: True
    toks = _tokens(text)
    reqs: list[Match] = []
    i = 0

    def need(expected: str) -> None:
        found = toks[i] if i < len(toks) else ""
        comma = "" if expected == "'('" else ","  # (the real parser's wording, one message without it)
        # (where a requirement should start, the parser's own error, not a requirement's)
        prefix = "" if expected.startswith("!,") else "unable to parse requirement: "
        raise bad_request(f"{prefix}found '{found}'{comma} expected: {expected}")

    while i < len(toks):
        if toks[i] in ("=", "==", "!=", "(", ")", ",", ">", "<"):
            need("!, identifier, or 'end of string'")
        if toks[i] == "!":
            key = toks[i + 1] if i + 1 < len(toks) else ""
            _check_key(key)
            reqs.append(_has(key, False))
            i += 2
        else:
            key = toks[i]
            _check_key(key)
            i += 1
            op = toks[i] if i < len(toks) else ","
            if op == ",":
                reqs.append(_has(key, True))
            elif op in ("=", "==", "!="):
                value = toks[i + 1] if i + 1 < len(toks) and toks[i + 1] != "," else ""
                if value and value in _SYMBOLS:  # (parseExactValue: a value is an identifier, or nothing)
                    raise bad_request(f"unable to parse requirement: found '{value}', expected: identifier")
                i += 2 if value else 1
                _check_values(key, [value])
                reqs.append(_equals(key, value, op != "!="))
            elif op in (">", "<"):  # (gt, lt: an integer the label's value is compared with)
                value = toks[i + 1] if i + 1 < len(toks) and toks[i + 1] != "," else ""
                i += 2 if value else 1
                if not re.fullmatch(r"[+-]?[0-9]+", value) or not -2**63 <= int(value) < 2**63:
                    raise bad_request(f'unable to parse requirement: values[0]: Invalid value: "{value}": for '
                                      "'Gt', 'Lt' operators, the value must be an integer")
                _check_values(key, [value])
                reqs.append(_compared(key, int(value), op == ">"))
            elif op in ("in", "notin"):
                i += 1
                if i >= len(toks) or toks[i] != "(":
                    need("'('")
                values, i = _values(toks, i + 1)
                _check_values(key, sorted(values))
                reqs.append(_member(key, frozenset(values), op == "in"))
            else:
                raise bad_request(f"unable to parse requirement: found '{op}', expected: in, notin, =, ==, "
                                  "!=, gt, lt")
        if i < len(toks):
            if toks[i] != ",":
                need("','")
            i += 1
            if i == len(toks) or toks[i] in ("=", "==", "!=", "(", ")", ",", ">", "<"):
                raise bad_request(f"found '{toks[i] if i < len(toks) else ''}', expected: identifier after ','")
    return lambda obj: all(r(obj) for r in reqs)


_SYMBOLS = ("(", ")", ",", "=", "==", "!=", "!", "")  # (what is not a value)


def _values(toks: list[str], i: int) -> tuple[set[str], int]:
    """The values of ``in (...)`` from just after ``(`` (the real parser's ``parseValues`` and
    ``parseIdentifiersList``, their errors worded alike); the index just after ``)``."""
    def at(j: int) -> str:
        return toks[j] if j < len(toks) else ""

    def fail(why: str) -> StatusError:
        return bad_request(f"unable to parse requirement: {why}")

    if at(i) == ")":
        return {""}, i + 1
    if at(i) != "," and at(i) in _SYMBOLS:
        raise fail(f"found '{at(i)}', expected: ',', ')' or identifier")
    values: set[str] = set()
    while True:
        token, i = at(i), i + 1
        if token not in _SYMBOLS:
            values.add(token)
            if at(i) == ")":
                return values, i + 1
            if at(i) != ",":
                raise fail(f"found '{at(i)}', expected: ',' or ')'")
        elif token == ",":
            if not values:
                values.add("")  # ("(," names the empty value)
            if at(i) == ")":
                values.add("")
                return values, i + 1
            if at(i) == ",":
                i += 1
                values.add("")
        else:
            raise fail(f"found '{token}', expected: ',', or identifier")


def _check_key(key: str) -> None:
    errs = names.qualified_name(key)
    if errs:
        raise bad_request(f'unable to parse requirement: key: Invalid value: "{key}": {"; ".join(errs)}')


def _check_values(key: str, values: list[str]) -> None:
    """The real parser validates every value as a label value: a bad one is a 400, not an empty list."""
    for i, value in enumerate(values):
        errs = names.label_value(value)
        if errs:
            raise bad_request(f'unable to parse requirement: values[{i}][{key}]: Invalid value: "{value}": '
                              f'{"; ".join(errs)}')


def _labels(obj: dict[str, Any]) -> dict[str, str]:
    return obj.get("metadata", {}).get("labels") or {}


def parse_fields(text: str | None, kind_key: tuple[str, str], custom: bool = False,
                 selectable: tuple[str, ...] = ()) -> Match:
    """A predicate on the selectable fields; an unknown field is a BadRequest naming the known ones (a
    custom resource's, ``custom``, as not supported; its CRD's ``selectable`` fields are known too)."""
    if not text:
        return lambda obj: True
    allowed = (*FIELD_LABELS.get(kind_key, _META), *selectable)
    reqs: list[Match] = []
    for part in text.split(","):
        m = re.fullmatch(r"\s*([^!=\s]+)\s*(!=|==|=)\s*(.*?)\s*", part)
        if not m:
            raise bad_request(f"invalid selector: '{text}'; can't understand '{part}'")
        field, op, value = m.groups()
        field = _ALIASES.get(kind_key, {}).get(field, field)
        if field not in allowed:
            if kind_key in FIELD_LABELS or custom:
                raise bad_request(f"field label not supported: {field}")
            known = ", ".join(f'"{f}"' for f in allowed)
            raise bad_request(f'"{field}" is not a known field selector: only {known}')
        computed = _COMPUTED.get((kind_key, field))
        reqs.append(_field_is(field, value, op != "!=") if computed is None else
                    _computed_is(computed, value, op != "!="))
    return lambda obj: all(r(obj) for r in reqs)


def _computed_is(read: Callable[[dict[str, Any]], str], value: str, same: bool) -> Match:
    return lambda o: (read(o) == value) == same


def _event_source(event: dict[str, Any]) -> str:
    """A core Event's ``source``: its source's component, else its reporting component."""
    return _field(event, "source.component") or _field(event, "reportingComponent")


# Selectable fields that are not a path of the object (the registries' ToSelectableFields).
_COMPUTED: dict[tuple[tuple[str, str], str], Callable[[dict[str, Any]], str]] = {
    (("", "events"), "source"): _event_source}


def exact_field(text: str, field: str) -> str | None:
    """The value ``text`` requires ``field`` to equal (``=`` or ``==``), as Go's ``RequiresExactMatch``."""
    for part in text.split(","):
        m = re.fullmatch(r"\s*([^!=\s]+)\s*(==|=)\s*(.*?)\s*", part)
        if m and m.group(1) == field:
            return m.group(3)
    return None


def _field(obj: dict[str, Any], path: str) -> str:
    cur: Any = obj
    for part in path.split("."):
        cur = cur.get(part) if isinstance(cur, dict) else None
    if cur is None:
        return ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return str(cur)


# --- a workload's spec.selector (metav1.LabelSelector) ------------------------------------------------------

_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def label_selector_causes(selector: Any, path: str) -> list[Cause]:
    """``ValidateLabelSelector``: its labels, and each expression's operator, values and key."""
    sel = mapping(selector)
    out: list[Cause] = []
    for key, value in mapping(sel.get("matchLabels")).items():
        out += [invalid(f"{path}.matchLabels", key, e) for e in names.qualified_name(key)]
        out += [invalid(f"{path}.matchLabels", value, e) for e in names.label_value(value)] if isinstance(
            value, str) else []
    for i, expr in enumerate(sel.get("matchExpressions") or []):
        expr, where = mapping(expr), f"{path}.matchExpressions[{i}]"
        op, values = expr.get("operator"), expr.get("values") or []
        if op in ("In", "NotIn") and not values:
            out.append(required(f"{where}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
        elif op in ("Exists", "DoesNotExist") and values:
            out.append(forbidden(f"{where}.values", "may not be specified when `operator` is 'Exists' or "
                                 "'DoesNotExist'"))
        elif op not in _OPERATORS:
            out.append(invalid(f"{where}.operator", op or "", "not a valid selector operator"))
        label = expr["key"] if isinstance(expr.get("key"), str) else ""
        out += [invalid(f"{where}.key", label, e) for e in names.qualified_name(label)]
        for j, value in enumerate(values):
            out += [invalid(f"{where}.values[{j}]", value, e) for e in names.label_value(value)] if isinstance(
                value, str) else []
    return out


def label_selector_matches(selector: Any, labels: dict[str, Any]) -> bool | None:
    """``LabelSelectorAsSelector(selector).Matches(labels)``: None when the selector does not convert (an
    unknown operator, a bad key or value, In without values); no selector matches nothing, an empty one all."""
    if selector is None:
        return False
    if not isinstance(selector, dict):
        return None
    wanted, exprs = selector.get("matchLabels") or {}, selector.get("matchExpressions") or []
    if label_selector_causes(selector, ""):
        return None
    ok = all(labels.get(k) == v for k, v in wanted.items())
    for expr in exprs:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        present = key in labels
        ok = ok and {"In": present and labels.get(key) in values, "NotIn": not present or labels.get(key) not in values,
                     "Exists": present, "DoesNotExist": not present}[op]
    return ok

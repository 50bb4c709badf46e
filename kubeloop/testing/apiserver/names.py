"""apimachinery's string rules: qualified names (label keys, annotation keys, finalizers), label values,
RFC 1123 subdomains and labels, RFC 1035 labels. Each check returns the real server's messages (empty:
valid), so callers attach them to whatever field they validate.
"""

from __future__ import annotations

import re

_QNAME_PART = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")

_QNAME_MSG = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
              "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
              "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
              "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
              "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                 "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                 "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
             "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
             "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
DNS1035_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
               "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
               "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")


def _too_long(n: int) -> str:
    return f"must be no more than {n} characters"


def qualified_name(value: str) -> list[str]:
    """``[prefix/]name``: an optional DNS subdomain prefix and a name part of at most 63 characters."""
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            return ["prefix part must be non-empty"]
        errs = dns1123_subdomain(prefix)
        if errs:
            return [f"prefix part {e}" for e in errs]
    else:
        return ["a qualified name " + _QNAME_MSG.replace("name part must", "must") +
                " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        return ["name part must be non-empty"]
    errs = []
    if len(name) > 63:
        errs.append("name part " + _too_long(63))
    if not _QNAME_PART.fullmatch(name):
        errs.append(_QNAME_MSG)
    return errs


def label_value(value: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append(_too_long(63))
    if not _LABEL_VALUE.fullmatch(value):
        errs.append(_VALUE_MSG)
    return errs


def dns1123_label(value: str) -> list[str]:
    errs = [_too_long(63)] if len(value) > 63 else []
    return errs + ([LABEL_MSG] if not _DNS1123_LABEL.fullmatch(value) else [])


def dns1123_subdomain(value: str) -> list[str]:
    errs = [_too_long(253)] if len(value) > 253 else []
    return errs + ([SUBDOMAIN_MSG] if not _DNS1123_SUBDOMAIN.fullmatch(value) else [])


def dns1035_label(value: str) -> list[str]:
    errs = [_too_long(63)] if len(value) > 63 else []
    return errs + ([DNS1035_MSG] if not _DNS1035_LABEL.fullmatch(value) else [])

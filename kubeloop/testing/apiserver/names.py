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


def _too_long_bytes(n: int) -> str:
    return f"must be no more than {n} bytes"


def _bytes(value: str) -> int:
    return len(value.encode())


def _subdomain_in_bytes(value: str) -> list[str]:
    errs = [_too_long_bytes(253)] if _bytes(value) > 253 else []
    return errs + ([SUBDOMAIN_MSG] if not _DNS1123_SUBDOMAIN.fullmatch(value) else [])


def qualified_name(value: str) -> list[str]:
    """``[prefix/]name``: an optional DNS subdomain prefix and a name part of at most 63 bytes (both
    parts are checked, and an empty name part is also reported as not matching the pattern). Label keys and
    values are measured in bytes (apimachinery's ``content`` package), names in characters."""
    parts = value.split("/")
    errs: list[str] = []
    if len(parts) > 2:
        return ["a valid label key " + _QNAME_MSG.replace("name part must", "must") +
                " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        errs += ["prefix part must be non-empty"] if not prefix else [f"prefix part {e}"
                                                                        for e in _subdomain_in_bytes(prefix)]
    if not name:
        errs.append("name part must be non-empty")
    elif _bytes(name) > 63:
        errs.append("name part " + _too_long_bytes(63))
    if not _QNAME_PART.fullmatch(name):
        errs.append(_QNAME_MSG)
    return errs


def label_value(value: str) -> list[str]:
    errs = []
    if _bytes(value) > 63:
        errs.append(_too_long_bytes(63))
    if not _LABEL_VALUE.fullmatch(value):
        errs.append(_VALUE_MSG)
    return errs


def dns1123_label(value: str) -> list[str]:
    """A valid subdomain that is not a label has dots (its length is checked already): said so."""
    errs = [_too_long(63)] if len(value) > 63 else []
    if _DNS1123_LABEL.fullmatch(value):
        return errs
    return errs + (["must not contain dots"] if _DNS1123_SUBDOMAIN.fullmatch(value) else [LABEL_MSG])


def dns1123_subdomain(value: str) -> list[str]:
    errs = [_too_long(253)] if len(value) > 253 else []
    return errs + ([SUBDOMAIN_MSG] if not _DNS1123_SUBDOMAIN.fullmatch(value) else [])


def dns1035_label(value: str) -> list[str]:
    errs = [_too_long(63)] if len(value) > 63 else []
    return errs + ([DNS1035_MSG] if not _DNS1035_LABEL.fullmatch(value) else [])


def port_name(value: str) -> list[str]:
    """An IANA service name (a named port): 15 characters, lower-case letters, digits and single hyphens."""
    errs = [_too_long(15)] if len(value) > 15 else []
    if not re.fullmatch(r"[-a-z0-9]+", value):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search(r"[a-z]", value):
        errs.append("must contain at least one letter (a-z)")
    if "--" in value:
        errs.append("must not contain consecutive hyphens")
    if value and (value[0] == "-" or value[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs

"""The string ``format`` s a CRD schema may name, checked as kube-apiserver 1.35 checks them (kube-openapi's
``strfmt`` registry, formats normalized by dropping ``-``); any other format is ignored, as the real
server strips it. Checked against the real server by the differential suite
(``custom_resource_formats_and_keywords``): the examples in the comments are what it answered.

Approximations: ``email`` (Go's ``net/mail.ParseAddress``) accepts ``local@domain`` and
``Name <local@domain>`` with no space or ``<>@`` in the parts; ``uri`` (``url.ParseRequestURI``) wants a
scheme or a leading ``/`` and no space, control character or bad escape in the host.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import ipaddress
import re
import unicodedata
from collections.abc import Callable

# kube-apiserver's apiextensions validation: the formats it keeps (others it sets to "").
SUPPORTED = frozenset({
    "bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac", "uuid", "uuid3", "uuid4", "uuid5",
    "isbn", "isbn10", "isbn13", "creditcard", "ssn", "hexcolor", "rgbcolor", "byte", "password", "date",
    "duration", "datetime",
})


def checker(fmt: str | None) -> Callable[[str], bool] | None:
    """The check of a schema's ``format`` (None: not one the real server validates)."""
    if not isinstance(fmt, str):
        return None
    name = fmt.replace("-", "")
    return _CHECKS.get(name) if name in SUPPORTED else None


# --- dates and durations ---------------------------------------------------------------------------

def is_date(value: str) -> bool:
    """``2006-01-02`` exactly (Go's time.Parse of RFC 3339's full-date): ``2026-1-1`` and ``2026-13-01`` fail."""
    if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", value):
        return False
    try:
        dt.date(int(value[:4]), int(value[5:7]), int(value[8:]))
    except ValueError:
        return False
    return True


_TIME = re.compile(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$")


def is_datetime(value: str) -> bool:
    """strfmt's IsDateTime: a date, ``t`` (any case), a time with a zone (``Z`` or ``±hh:mm``); a space
    or no zone fails."""
    if len(value) < 4:
        return False
    parts = value.lower().split("t")
    if len(parts) < 2 or not is_date(parts[0]):
        return False
    m = _TIME.match(parts[1])
    if m is None:
        return False
    return m.group(1) <= "23" and m.group(2) <= "59" and m.group(3) <= "59"


_GO_DURATION = re.compile(r"[-+]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h))+")
_UNITS = (("ns", "nano"), ("us", "µs", "micro"), ("ms", "milli"), ("s", "sec"), ("m", "min"), ("h", "hr", "hour"),
          ("d", "day"), ("w", "wk", "week"))


def is_duration(value: str) -> bool:
    """Go's time.ParseDuration (``1h30m``, ``-1h``, ``0``), else strfmt's words anywhere in the string
    (``5 days``, ``10 minutes``, ``P1D``); ``10`` alone fails."""
    if value in ("0", "+0", "-0") or _GO_DURATION.fullmatch(value):
        return True
    for _, unit in re.findall(r"((?:[0-9]+)\s*([A-Za-zµ]+))", value):
        unit = unit.lower()
        for variants in _UNITS:
            if any(unit == v for v in variants) or unit.startswith(variants[-1]):
                return True
    return False


# --- numbers, addresses, names ---------------------------------------------------------------------

_BASE64 = re.compile(r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$")


def is_base64(value: str) -> bool:
    """Standard padded base64: ``aGk=`` passes, ``aGk``, ``aGk_`` and the empty string fail."""
    if not _BASE64.match(value):
        return False
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _uuid(version: str) -> Callable[[str], bool]:
    middle = {"": "[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}", "3": "[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}",
              "4": "[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}", "5": "[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}"}
    pattern = re.compile(rf"^[0-9a-f]{{8}}-?{middle[version]}-?[0-9a-f]{{12}}$", re.IGNORECASE)
    return lambda value: bool(pattern.match(value))


def _parse_ip(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """Kubernetes' sloppy IP parsing: IPv4 parts may have leading zeros (``01.2.3.4``); no zone."""
    if "%" in value:
        return None
    if re.fullmatch(r"[0-9]{1,3}(\.[0-9]{1,3}){3}", value):
        parts = [int(p) for p in value.split(".")]
        return ipaddress.IPv4Address(".".join(map(str, parts))) if all(p < 256 for p in parts) else None
    try:
        return ipaddress.ip_address(value)
    except ValueError:
        return None


def is_ipv4(value: str) -> bool:
    """Any IP with a dot: ``1.2.3.4``, ``01.2.3.4``, even ``::ffff:1.2.3.4``; ``1.2.3`` and ``::1`` fail."""
    return _parse_ip(value) is not None and "." in value


def is_ipv6(value: str) -> bool:
    """Any IP with a colon: ``::1``, ``::ffff:1.2.3.4``; ``1.2.3.4`` fails."""
    return _parse_ip(value) is not None and ":" in value


def is_cidr(value: str) -> bool:
    """Go's net.ParseCIDR: an address and a prefix length (host bits may be set: ``10.0.0.1/8``)."""
    address, slash, bits = value.partition("/")
    if not slash or not re.fullmatch(r"[0-9]{1,3}", bits) or "%" in address:
        return False
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return int(bits) <= (32 if ip.version == 4 else 128)


def is_mac(value: str) -> bool:
    """Go's net.ParseMAC: 6, 8 or 20 octets as ``00:11:..``, ``00-11-..`` or ``0011.2233..``."""
    for sep in (":", "-"):
        parts = value.split(sep)
        if len(parts) in (6, 8, 20) and all(re.fullmatch(r"[0-9a-fA-F]{2}", p) for p in parts):
            return True
    parts = value.split(".")
    return len(parts) in (3, 4, 10) and all(re.fullmatch(r"[0-9a-fA-F]{4}", p) for p in parts)


_HOSTNAME = re.compile(r"^([a-zA-Z0-9#](-?[a-zA-Z0-9#]{0,62})?|([a-zA-Z0-9#](([a-zA-Z0-9#-]{0,61}[a-zA-Z0-9#])?)"
                       r"(\.)){1,}([a-zA-Z]){2,63})$")


def _letters_and_symbols(value: str) -> str:
    """The value with what Go's ``\\p{L}`` matches as ``a`` and ``\\p{S}`` as ``#`` (other non-ASCII: ``!``)."""
    out = []
    for c in value:
        category = unicodedata.category(c)
        if category.startswith("S"):
            out.append("#")
        elif c.isascii():
            out.append("!" if c == "#" else c)
        else:
            out.append("a" if category.startswith("L") else "!")
    return "".join(out)


def is_hostname(value: str) -> bool:
    """strfmt's pattern: one label (at most one hyphen, after its first character), or labels and a
    top-level domain of 2 to 63 letters: ``a``, ``ab.cd``, ``example.com`` pass, ``a.b``, ``a.b1``,
    ``1a.b``, ``-a``, ``a_b`` fail (letters and symbols beyond ASCII count as letters)."""
    if not value or len(value) > 255:
        return False
    return bool(_HOSTNAME.match(_letters_and_symbols(value))) and all(len(label) <= 63 for label in value.split("."))


def is_email(value: str) -> bool:
    """An address ``local@domain``, or ``Name <local@domain>`` (``a@b`` passes, ``nope`` fails)."""
    m = re.fullmatch(r"\s*(?:[^<>@]*<([^<>\s]+)>|(\S+))\s*", value)
    if not m:
        return False
    address = m.group(1) or m.group(2)
    local, at, domain = address.rpartition("@")
    return bool(at and local and domain and "@" not in local.strip('"') and
                re.fullmatch(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+|\"[^\"]*\"", local) and
                re.fullmatch(r"[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*|\[[^\]]*\]", domain))


def is_uri(value: str) -> bool:
    """Go's url.ParseRequestURI: ``http://x/y``, ``/rel/path``, ``/a b``, ``mailto:x`` pass; ``nope``
    and ``http://x y`` fail."""
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in value) or not value:
        return False
    m = re.match(r"^([a-zA-Z][a-zA-Z0-9+.-]*):", value)
    if m is None:
        return value.startswith("/")
    rest = value[m.end():]
    if rest.startswith("//"):
        authority = re.split(r"[/?]", rest[2:], maxsplit=1)[0]
        host = authority.rpartition("@")[2]
        return not re.search(r"[\s\"<>\\^`{|}]", host) and not re.search(r"%(?![0-9a-fA-F]{2})", host)
    return True


def _isbn10(value: str) -> bool:
    digits = re.sub(r"[\s-]", "", value)
    if not re.fullmatch(r"[0-9]{9}[0-9X]", digits):
        return False
    total = sum((10 - i) * (10 if c == "X" else int(c)) for i, c in enumerate(digits))
    return total % 11 == 0


def _isbn13(value: str) -> bool:
    digits = re.sub(r"[\s-]", "", value)
    if not re.fullmatch(r"[0-9]{13}", digits):
        return False
    total = sum(int(c) * (1 if i % 2 == 0 else 3) for i, c in enumerate(digits[:12]))
    return (10 - total % 10) % 10 == int(digits[12])


_CREDIT = re.compile(r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|(222[1-9]|22[3-9][0-9]|2[3-6][0-9]{2}|27[01][0-9]|"
                     r"2720)[0-9]{12}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|"
                     r"(?:2131|1800|35\d{3})\d{11}|6[27][0-9]{14})$")


def _creditcard(value: str) -> bool:
    digits = re.sub(r"[^0-9]+", "", value)
    if not _CREDIT.match(digits):
        return False
    total = 0
    for i, c in enumerate(reversed(digits)):
        n = int(c) * (2 if i % 2 else 1)
        total += n - 9 if n > 9 else n
    return total % 10 == 0


_BYTE = r"(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])"
_CHECKS: dict[str, Callable[[str], bool]] = {
    "bsonobjectid": lambda v: bool(re.fullmatch(r"[0-9a-fA-F]{24}", v)),
    "uri": is_uri, "email": is_email, "hostname": is_hostname, "ipv4": is_ipv4, "ipv6": is_ipv6, "cidr": is_cidr,
    "mac": is_mac, "uuid": _uuid(""), "uuid3": _uuid("3"), "uuid4": _uuid("4"), "uuid5": _uuid("5"),
    "isbn": lambda v: _isbn10(v) or _isbn13(v), "isbn10": _isbn10, "isbn13": _isbn13, "creditcard": _creditcard,
    "ssn": lambda v: len(v) == 11 and bool(re.fullmatch(r"\d{3}[- ]?\d{2}[- ]?\d{4}", v)),
    "hexcolor": lambda v: bool(re.fullmatch(r"#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})", v)),
    "rgbcolor": lambda v: bool(re.fullmatch(rf"rgb\(\s*{_BYTE}\s*,\s*{_BYTE}\s*,\s*{_BYTE}\s*\)", v)),
    "byte": is_base64, "password": lambda v: True, "date": is_date, "duration": is_duration, "datetime": is_datetime,
}

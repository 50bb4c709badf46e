"""``resource.Quantity`` as kube-apiserver stores it: parsed exactly, rounded up to nano units, and
written back in canonical form (``1000m`` → ``1``, ``1024Mi`` → ``1Gi``, ``0.5`` → ``500m``,
``1.5Gi`` → ``1536Mi``). An operator comparing what it wrote with what it reads back sees the same
rewrite on the fake as on a real server.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

_FORMAT = re.compile(r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$")
_NUMBER = re.compile(r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)$")
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_SUFFIX = {v: k for k, v in _DECIMAL.items()}
_BINARY_SUFFIX = {v: k for k, v in _BINARY.items()}
NANO = Fraction(1, 10**9)
MESSAGE = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


def parse(text: str) -> tuple[Fraction, str]:
    """(exact value rounded up to a nano unit, format: "binary", "decimal" or "exponent"); ValueError."""
    m = _FORMAT.match(text.strip()) if text.strip() else None
    if not m or not _NUMBER.match(m.group(1)):
        raise ValueError(MESSAGE)
    number, suffix = Fraction(m.group(1)), m.group(2)
    if suffix in _BINARY:
        value, form = number * 2 ** _BINARY[suffix], "binary"
    elif suffix in _DECIMAL:
        value, form = number * Fraction(10) ** _DECIMAL[suffix], "decimal"
    elif re.fullmatch(r"[eE][-+]?[0-9]+", suffix):
        value, form = number * Fraction(10) ** int(suffix[1:]), "exponent"
    else:
        raise ValueError(MESSAGE)
    return Fraction(math.ceil(value / NANO)) * NANO, form


MILLI = Fraction(1, 1000)


def canonical(value: str | int | float, *, milli: bool = False) -> str:
    """The canonical string of a quantity given as a string or a JSON number; ValueError if invalid.
    ``milli``: rounded up (away from zero) to milli units first, as a ResourceList's values are."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = repr(value) if isinstance(value, float) else str(value)
    amount, form = parse(str(value))
    if milli and (amount / MILLI).denominator != 1:
        steps = amount / MILLI
        amount = (math.ceil(steps) if amount > 0 else math.floor(steps)) * MILLI
    return render(amount, form)


def render(amount: Fraction, form: str) -> str:
    """``amount`` (a whole number of nano units) in canonical form for its format ("binary", "decimal" or
    "exponent"), as ``Quantity.String`` writes it."""
    if form == "binary" and (-1024 < amount < 1024 or amount.denominator != 1):
        form = "decimal"  # small or fractional binary amounts are shown in decimal, not rounded
    if form == "binary":
        number, exponent = int(amount), 0
        while number and number % 1024 == 0 and exponent < 60:
            number //= 1024
            exponent += 10
        return f"{number}{_BINARY_SUFFIX.get(exponent, '')}"
    number, exponent = _decimal(amount)
    if form == "exponent":
        return f"{number}e{exponent}" if exponent else str(number)
    suffix = _DECIMAL_SUFFIX.get(exponent)
    return f"{number}{suffix}" if suffix is not None else f"{number}e{exponent}"


def _decimal(amount: Fraction) -> tuple[int, int]:
    """(mantissa, exponent): exponent a multiple of 3 (at least -9), as large as keeps the mantissa whole."""
    if amount == 0:
        return 0, 0
    exponent = -9
    number = amount * 10**9
    while number.denominator != 1:  # cannot happen after rounding to nano units, kept for safety
        number = Fraction(math.ceil(number))
    whole = int(number)
    while whole % 1000 == 0:
        whole //= 1000
        exponent += 3
    return whole, exponent

"""Number reading and writing with Go's exact rules.

Every numeric read in Glimmer (threshold evaluation, the linter, Group and soak
folds) uses Go's ``strconv.ParseFloat`` semantics, and violation messages print
numbers with Go's ``%g`` and ``FormatFloat(x, 'f', -1)``: the stored verdicts and
messages of the Go implementation must read identically here. Python's ``float``
is close but not equal (it accepts surrounding whitespace, signed ``nan``, and
turns ``1e400`` into ``inf`` instead of failing), hence this module.
"""

from __future__ import annotations

import math
import re
from typing import Final

_DEC: Final = r"[0-9](?:_?[0-9])*"
_HEX: Final = r"[0-9a-fA-F](?:_?[0-9a-fA-F])*"
_DECIMAL_RE: Final = re.compile(
    rf"[+-]?(?:{_DEC}(?:\.(?:{_DEC})?)?|\.{_DEC})(?:[eE][+-]?{_DEC})?", re.ASCII
)
# A hex float needs its binary exponent; an underscore may follow the 0x prefix.
_HEX_RE: Final = re.compile(
    rf"[+-]?0[xX](?:_?{_HEX}(?:\.(?:{_HEX})?)?|\.{_HEX})[pP][+-]?{_DEC}", re.ASCII
)
_INF_RE: Final = re.compile(r"[+-]?(?:inf|infinity)", re.IGNORECASE | re.ASCII)
_NAN_RE: Final = re.compile(r"nan", re.IGNORECASE | re.ASCII)


def parse_go_float(text: str) -> float | None:
    """Parse like Go's ``strconv.ParseFloat(text, 64)``; ``None`` where Go errors.

    Overflow (``1e400``) is a failure, underflow quietly becomes 0, ``nan`` may
    not be signed, and no surrounding whitespace is allowed.
    """
    if _NAN_RE.fullmatch(text):
        return math.nan
    if _INF_RE.fullmatch(text):
        return -math.inf if text.startswith("-") else math.inf
    if _DECIMAL_RE.fullmatch(text):
        value = float(text.replace("_", ""))
        return None if math.isinf(value) else value
    if _HEX_RE.fullmatch(text):
        try:
            return float.fromhex(text.replace("_", ""))
        except OverflowError:
            return None
    return None


def _shortest_digits(x: float) -> tuple[str, int]:
    """Shortest round-trip decimal digits of ``abs(x)`` and the decimal point position.

    ``x == 0.d1d2d3... * 10**dp``; ``repr`` already yields the shortest digits.
    """
    text = repr(abs(x))
    mantissa, _, exp_text = text.partition("e")
    exponent = int(exp_text) if exp_text else 0
    whole, _, frac = mantissa.partition(".")
    digits = whole + frac
    dp = len(whole) + exponent
    stripped = digits.lstrip("0")
    dp -= len(digits) - len(stripped)
    stripped = stripped.rstrip("0")
    if not stripped:
        return "", 0
    return stripped, dp


def _special(x: float) -> str | None:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    return None


def format_go_g(x: float) -> str:
    """Go's ``fmt.Sprintf("%g", x)``: shortest round-trip digits, in exponent form when
    the decimal exponent is < -4 or >= 6, the exponent written with at least two
    digits (``1e+06``, ``1e-05``); otherwise plain (``83.22``, ``100000``)."""
    special = _special(x)
    if special is not None:
        return special
    sign = "-" if math.copysign(1.0, x) < 0 else ""
    digits, dp = _shortest_digits(x)
    if not digits:
        return sign + "0"
    exp = dp - 1
    if exp < -4 or exp >= 6:
        mant = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        exp_sign = "-" if exp < 0 else "+"
        return f"{sign}{mant}e{exp_sign}{abs(exp):02d}"
    return sign + _positional(digits, dp)


def format_go_plain(x: float) -> str:
    """Go's ``strconv.FormatFloat(x, 'f', -1, 64)``: shortest digits, never an exponent.

    Used to re-render numeric folds (Group election F7, soak ``Sum`` G2).
    """
    special = _special(x)
    if special is not None:
        return special
    sign = "-" if math.copysign(1.0, x) < 0 else ""
    digits, dp = _shortest_digits(x)
    if not digits:
        return sign + "0"
    return sign + _positional(digits, dp)


def _positional(digits: str, dp: int) -> str:
    if dp <= 0:
        return "0." + "0" * (-dp) + digits
    if dp >= len(digits):
        return digits + "0" * (dp - len(digits))
    return digits[:dp] + "." + digits[dp:]

"""The webhook signature: ``X-Glimmer-Signature: t=<unix seconds>,v1=<hex>``.

``v1`` is the lowercase hex HMAC-SHA256, keyed with the sink's signing secret, of the
ASCII decimal timestamp, one ``.``, then the exact request body bytes. Signing the
timestamp with the body lets a receiver refuse a replay outside its tolerance window
as well as a forgery; the ``Idempotency-Key`` header (the deliveryId) then lets it
drop a genuine retry it has already applied. Standard library only, so a receiver can
copy :func:`verify` as it is (docs/sinks.md shows it stand-alone).
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Final

SIGNATURE_HEADER: Final = "X-Glimmer-Signature"
#: How far a receiver's clock may be from the signer's (5 minutes) by default.
DEFAULT_TOLERANCE_SECONDS: Final = 300


class SignatureError(ValueError):
    """The signature header is missing, malformed, stale or does not match."""


def _mac(body: bytes, *, key: bytes, timestamp: int) -> str:
    return hmac.new(key, str(timestamp).encode("ascii") + b"." + body, hashlib.sha256).hexdigest()


def sign(body: bytes, *, key: bytes, timestamp: int) -> str:
    """The header value for ``body`` signed at ``timestamp`` (unix seconds)."""
    return f"t={timestamp},v1={_mac(body, key=key, timestamp=timestamp)}"


def verify(
    body: bytes,
    header: str | None,
    *,
    key: bytes,
    now: float,
    tolerance: float = DEFAULT_TOLERANCE_SECONDS,
) -> int:
    """The signed timestamp when ``header`` signs ``body`` with ``key`` within
    ``tolerance`` seconds of ``now``; else :class:`SignatureError`. Every ``v1`` entry
    is tried (a sender rotating keys may send several)."""
    if not header:
        raise SignatureError(f"no {SIGNATURE_HEADER} header")
    timestamp: int | None = None
    macs: list[str] = []
    for part in header.split(","):
        name, sep, value = part.strip().partition("=")
        if not sep:
            raise SignatureError(f"malformed {SIGNATURE_HEADER} element {part!r}")
        if name == "t":
            if not value.isascii() or not value.isdigit():
                raise SignatureError(f"timestamp {value!r} is not unix seconds")
            timestamp = int(value)
        elif name == "v1":
            macs.append(value)
    if timestamp is None or not macs:
        raise SignatureError(f"{SIGNATURE_HEADER} needs t= and v1=")
    if abs(now - timestamp) > tolerance:
        raise SignatureError(f"signed at {timestamp}, outside {tolerance:.0f}s of now")
    expected = _mac(body, key=key, timestamp=timestamp)
    if not any(hmac.compare_digest(expected, mac) for mac in macs):
        raise SignatureError("signature does not match the body")
    return timestamp

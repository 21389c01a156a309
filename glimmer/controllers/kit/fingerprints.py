"""A node's GPU vendor for image resolution (E14), from its NodeFingerprint.

The interface the run controller calls: :func:`vendor_of`. A node whose fingerprint
does not exist yet, or exists but has not been captured (no ``status.digest``), raises
:class:`FingerprintPendingError`: that is a retryable "not yet known", never "vendor
unknown", because treating it as unknown would hand an AMD node the NVIDIA default
image the first minute after it joins.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

#: The fingerprint's word for "a GPU of no known vendor" (api §7): no vendor.
UNKNOWN_VENDOR: Final = "unknown"


class FingerprintPendingError(LookupError):
    """The node has no captured NodeFingerprint yet; retry shortly."""


def vendor_of(fingerprint: Mapping[str, Any] | None, *, node: str = "") -> str | None:
    """``status.gpus[0].vendor`` of a captured fingerprint; None for no/unknown vendor.

    Raises :class:`FingerprintPendingError` when ``fingerprint`` is None or uncaptured.
    """
    where = f" of node {node}" if node else ""
    if fingerprint is None:
        raise FingerprintPendingError(f"the NodeFingerprint{where} does not exist yet")
    status = fingerprint.get("status") or {}
    if not status.get("digest"):
        raise FingerprintPendingError(f"the NodeFingerprint{where} has not been captured yet")
    gpus = status.get("gpus") or []
    first = gpus[0] if gpus and isinstance(gpus[0], Mapping) else {}
    vendor = first.get("vendor")
    if not isinstance(vendor, str) or vendor in ("", UNKNOWN_VENDOR):
        return None
    return vendor

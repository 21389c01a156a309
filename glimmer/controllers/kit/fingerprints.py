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

from glimmer.controllers.kit.view import FingerprintView

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
    view = FingerprintView(fingerprint)
    if not view.digest:
        raise FingerprintPendingError(f"the NodeFingerprint{where} has not been captured yet")
    gpus = view.gpus
    vendor = gpus[0].get("vendor") if gpus else None
    if not isinstance(vendor, str) or vendor in ("", UNKNOWN_VENDOR):
        return None
    return vendor

"""Names the fingerprint controller owns: object names, labels, the verdict label (api §7).

One place, so the name a schedule or the run controller looks up is the one the
controller created. The verdict label is in the ``burnin.glimmer.ai`` domain on
purpose: the salient-label filter (K2) drops that domain, so the operator writing it
can never read back as hardware drift.
"""

from __future__ import annotations

import hashlib
import re
from typing import Final

from glimmer.api import GROUP
from glimmer.controllers.run.kube import FINGERPRINTS, RUNS
from glimmer.plan import label_value

__all__ = [
    "FINGERPRINTS",
    "NODE_LABEL",
    "RUNS",
    "VERDICT_LABEL",
    "fingerprint_name",
]

#: On each NodeFingerprint: the node it describes (as a valid label value).
NODE_LABEL: Final = f"{GROUP}/node"
#: On each Node (Glimmer extension): Passed | Failed | Simulated | Expired | Missing
#: (docs/fingerprints.md).
VERDICT_LABEL: Final = f"{GROUP}/verdict"

_DNS_LABEL: Final = r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?"
_DNS_SUBDOMAIN: Final = re.compile(rf"{_DNS_LABEL}(?:\.{_DNS_LABEL})*")
_SANITISED_MAX: Final = 190


def fingerprint_name(node: str) -> str:
    """The node name when it is a valid DNS-1123 subdomain, else a sanitised stem plus
    the first 8 bytes of its sha256 (api §7): distinct nodes never share a fingerprint."""
    if len(node) <= 253 and _DNS_SUBDOMAIN.fullmatch(node):
        return node
    digest = hashlib.sha256(node.encode("utf-8")).hexdigest()[:16]
    stem = re.sub(r"[^a-z0-9.-]+", "-", node.lower())[:_SANITISED_MAX]
    stem = re.sub(r"^[^a-z0-9]+|[^a-z0-9]+$", "", stem)
    stem = re.sub(r"\.(?=[^a-z0-9])|(?<=[^a-z0-9])\.", "-", stem)
    return f"{stem}-{digest}" if stem else f"node-{digest}"


def node_label_value(node: str) -> str:
    """``burnin.glimmer.ai/node`` value for ``node`` (hashed when too long for a label)."""
    return label_value(node)

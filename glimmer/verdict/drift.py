"""Whether a node's hardware identity drifted (K5, K7): a node state, so decided here.

Pure, standard library only: the NodeFingerprint controller classifies the stored digest
against the one it just computed and writes what :func:`decide_drift` says (the
``Drifted`` condition, and whether a ``HardwareDrift`` Warning is raised).

The baseline (K7). The first capture of a node is its baseline, never drift. A node's
identity also settles for a while after it joins: the kubelet reports ``nodeInfo`` after
registering, and feature discovery and device plugins label the node minutes later.
Until anything has measured the node (no verdict stored, no run naming it), there is
nothing a changed identity could invalidate, so a change moves the baseline instead of
raising ``Drifted=True`` and a Warning: otherwise every new node would page someone.
Once a run has measured the node, a change of digest is drift, and sticky.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Classification(enum.StrEnum):
    """K5's four outcomes of comparing the stored digest with the new one."""

    BASELINE_CAPTURED = "BaselineCaptured"
    DIGEST_STABLE = "DigestStable"
    DIGEST_SCHEME_CHANGED = "DigestSchemeChanged"
    DIGEST_CHANGED = "DigestChanged"


def scheme_of(value: str) -> str:
    scheme, colon, _ = value.partition(":")
    return scheme if colon else ""


def classify(stored: str | None, new: str) -> Classification:
    """K5: stored empty is a baseline; another scheme is incomparable, never drift."""
    if not stored:
        return Classification.BASELINE_CAPTURED
    if stored == new:
        return Classification.DIGEST_STABLE
    if scheme_of(stored) != scheme_of(new):
        return Classification.DIGEST_SCHEME_CHANGED
    return Classification.DIGEST_CHANGED


@dataclass(frozen=True, slots=True)
class DriftDecision:
    """What to write: ``drifted`` None keeps the stored condition (sticky)."""

    drifted: bool | None
    reason: str
    message: str
    #: Raise a ``HardwareDrift`` Warning: only for a real change on a measured node.
    warn: bool


_MESSAGES = {
    Classification.BASELINE_CAPTURED: "first capture of this node's identity: the baseline",
    Classification.DIGEST_STABLE: "the node's identity is unchanged",
    Classification.DIGEST_SCHEME_CHANGED: "the stored digest uses another scheme; "
    "re-baselined without comparing",
}


def decide_drift(
    classification: Classification, *, changes: str, drifted: bool, measured: bool
) -> DriftDecision:
    """K5 and K7. ``drifted``: the stored condition is True; ``measured``: a verdict is
    stored for the node or a run names it; ``changes``: what differs, for the message."""
    if classification is Classification.DIGEST_CHANGED and measured:
        return DriftDecision(True, classification.value, changes, warn=True)
    if drifted:
        return DriftDecision(None, "", "", warn=False)
    if classification is Classification.DIGEST_CHANGED:
        message = f"not yet measured, so the baseline moved ({changes})"
        return DriftDecision(False, Classification.BASELINE_CAPTURED.value, message, warn=False)
    return DriftDecision(False, classification.value, _MESSAGES[classification], warn=False)


__all__ = ["Classification", "DriftDecision", "classify", "decide_drift", "scheme_of"]

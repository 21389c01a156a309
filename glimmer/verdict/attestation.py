"""What a signed node verdict may claim (I47): whether it certifies the node.

A node attestation (:mod:`glimmer.attest`) states a run's verdict on a node and the
node's verdict label as the NodeFingerprint controller decided it. It *certifies* the
node only when both say Passed: the run's node verdict (:func:`glimmer.verdict.nodes.node_verdict`:
every required unit Passed, measured on silicon, not suspect) and the label's state
(:func:`glimmer.verdict.expiry.evaluate`: that verdict is bound to the node's current
fingerprint digest and not older than its age limit). Anything else, a Simulated, Failed,
unjudged, expired or missing verdict, is signed as what it is and certifies nothing.

Which label states may be signed at all (I48): only those a run decided (Passed, Failed,
Simulated). Expired and Missing are the absence of a current verdict; signing them would
hand a provisioning system a certificate of nothing, so the attestation is withdrawn
instead.

Pure, standard library only: the signer writes what these functions decide.
"""

from __future__ import annotations

from typing import Final

from glimmer.verdict.expiry import VerdictState
from glimmer.verdict.nodes import NodeState, NodeVerdict

#: The label states a run decided: the only ones an attestation is written for (I48).
SIGNABLE_STATES: Final = frozenset(
    {VerdictState.PASSED, VerdictState.FAILED, VerdictState.SIMULATED}
)


def signable(label: VerdictState) -> bool:
    """Whether a node whose verdict label reads ``label`` gets an attestation (I48)."""
    return label in SIGNABLE_STATES


def node_certified(verdict: NodeVerdict, label: VerdictState) -> bool:
    """Whether a node attestation certifies the node (I47): the run's node verdict and
    the current label both Passed. Never on a simulated, suspect or unjudged result."""
    return verdict.state is NodeState.PASSED and label is VerdictState.PASSED


def label_agrees(verdict: NodeVerdict, label: VerdictState) -> bool:
    """Whether the label's state is the one the attested run's node verdict gives (a
    label of Passed, Failed or Simulated was decided by that run's verdict; a mismatch
    means the stored verdict names another run, and nothing of this run is signed)."""
    return str(verdict.state) == str(label)

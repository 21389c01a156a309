"""NodeFingerprints (K1-K6), the orphan-stamp reaper run inside them (E21), and
verdicts that expire when a node's hardware identity changes (Glimmer extension).

Public: the registration, the options, the verdict metric, and the two interfaces other
controllers use: :func:`vendor_of` (E14 image resolution) and
:func:`state_of_fingerprint` (a schedule's ``targetVerdicts``).
"""

from glimmer.controllers.fingerprint.digests import SCHEME, Classification, digest, digest_inputs
from glimmer.controllers.fingerprint.metrics import VERDICT_METRIC, VerdictMetrics
from glimmer.controllers.fingerprint.observe import Observation, observe
from glimmer.controllers.fingerprint.reconciler import (
    DRIFTED,
    HARDWARE_DRIFT,
    FingerprintOptions,
    FingerprintReconciler,
)
from glimmer.controllers.fingerprint.setup import FINGERPRINT_CONTROLLER, fingerprint_controller
from glimmer.controllers.fingerprint.verdict import (
    VERDICT_CURRENT,
    VerdictState,
    state_of_fingerprint,
)
from glimmer.controllers.kit.fingerprints import FingerprintPendingError, vendor_of
from glimmer.controllers.kit.names import VERDICT_LABEL, fingerprint_name

__all__ = [
    "DRIFTED",
    "FINGERPRINT_CONTROLLER",
    "HARDWARE_DRIFT",
    "SCHEME",
    "VERDICT_CURRENT",
    "VERDICT_LABEL",
    "VERDICT_METRIC",
    "Classification",
    "FingerprintOptions",
    "FingerprintPendingError",
    "FingerprintReconciler",
    "Observation",
    "VerdictMetrics",
    "VerdictState",
    "digest",
    "digest_inputs",
    "fingerprint_controller",
    "fingerprint_name",
    "observe",
    "state_of_fingerprint",
    "vendor_of",
]

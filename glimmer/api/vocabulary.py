"""The closed word sets of the v1alpha1 API (enum values exactly as on the wire).

Fields stay typed ``str`` rather than these enums: an object that bypassed apiserver
validation (or predates a CRD change) must still be readable so the controller can
refuse it as a configuration Error instead of crashing on it. These classes are the
single source of the allowed values, fed into the schema ``enum`` lists.

The words the verdict package decides in (phases, attempt triggers, comparisons,
applicability, provenance) are defined there once and re-exported here under their
API names, so the schema and the verdict can never disagree on a value.
"""

from __future__ import annotations

from enum import StrEnum

from glimmer.verdict import Applicability, Comparison, Provenance
from glimmer.verdict import Phase as RunPhase
from glimmer.verdict import Trigger as AttemptTrigger

__all__ = [
    "Applicability",
    "AttemptTrigger",
    "CancelPolicy",
    "Comparison",
    "ConcurrencyPolicy",
    "ConditionStatus",
    "CoverageState",
    "HostPathType",
    "Provenance",
    "RunPhase",
    "SinkType",
    "TestScope",
    "Vendor",
]


class TestScope(StrEnum):
    """Where one execution of a test runs."""

    __test__ = False  # not a pytest test class, despite the name

    NODE = "Node"
    PAIR = "Pair"
    GROUP = "Group"


class Vendor(StrEnum):
    """Accelerator vendors an image can be pinned for."""

    NVIDIA = "nvidia"
    AMD = "amd"
    INTEL = "intel"
    TENSTORRENT = "tenstorrent"
    HABANA = "habana"


class HostPathType(StrEnum):
    """Host path checks (no ``*OrCreate``: the runner never creates host files)."""

    DIRECTORY = "Directory"
    FILE = "File"
    SOCKET = "Socket"
    CHAR_DEVICE = "CharDevice"
    BLOCK_DEVICE = "BlockDevice"


class CancelPolicy(StrEnum):
    """How a cancelled run stops its pods."""

    GRACEFUL = "Graceful"
    IMMEDIATE = "Immediate"


class ConcurrencyPolicy(StrEnum):
    """What a schedule does when its previous run is still active."""

    FORBID = "Forbid"
    ALLOW = "Allow"


class SinkType(StrEnum):
    """Delivery channel of a BurnInSink."""

    WEBHOOK = "Webhook"
    PROMETHEUS = "Prometheus"
    CONFIG_MAP = "ConfigMap"


class ConditionStatus(StrEnum):
    """metav1.ConditionStatus."""

    TRUE = "True"
    FALSE = "False"
    UNKNOWN = "Unknown"


class PodPhase(StrEnum):
    """corev1.PodPhase: the kubelet's words for a pod, never a verdict (a pod that
    Failed may hold a runner that Passed its gates, or an Error)."""

    PENDING = "Pending"
    RUNNING = "Running"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    UNKNOWN = "Unknown"


class CoverageState(StrEnum):
    """What a BurnInProfile's last coverage measured (``status.coverage.state``).

    Only ``Measured`` carries a count of caught faults: a coverage whose healthy
    control did not Pass (``Void``) or with a case no run judged (``NotJudged``)
    claims nothing (N16).
    """

    MEASURED = "Measured"
    VOID = "Void"
    NOT_JUDGED = "NotJudged"

"""The closed word sets of the v1alpha1 API (enum values exactly as on the wire).

Fields stay typed ``str`` rather than these enums: an object that bypassed apiserver
validation (or predates a CRD change) must still be readable so the controller can
refuse it as a configuration Error instead of crashing on it. These classes are the
single source of the allowed values, fed into the schema ``enum`` lists.
"""

from __future__ import annotations

from enum import StrEnum


class TestScope(StrEnum):
    """Where one execution of a test runs."""

    __test__ = False  # not a pytest test class, despite the name

    NODE = "Node"
    PAIR = "Pair"
    GROUP = "Group"


class Comparison(StrEnum):
    """Threshold comparison (exact float64, no epsilon)."""

    GREATER_THAN_OR_EQUAL = "GreaterThanOrEqual"
    LESS_THAN_OR_EQUAL = "LessThanOrEqual"
    EQUAL = "Equal"
    NOT_EQUAL = "NotEqual"


class Applicability(StrEnum):
    """Whether a metric the runner declares unmeasurable fails the gate."""

    REQUIRED = "Required"
    REQUIRED_IF_MEASURABLE = "RequiredIfMeasurable"


class RunPhase(StrEnum):
    """Phase of a run, a test result or an attempt."""

    PENDING = "Pending"
    RUNNING = "Running"
    PASSED = "Passed"
    FAILED = "Failed"
    ERROR = "Error"
    SKIPPED = "Skipped"
    CANCELLED = "Cancelled"


class AttemptTrigger(StrEnum):
    """Why an attempt was started."""

    INITIAL = "Initial"
    REPEAT = "Repeat"
    ERROR_RETRY = "ErrorRetry"
    SEGMENT = "Segment"


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


class Provenance(StrEnum):
    """Whether a result was measured on real silicon or on the simulated GPU (Glimmer
    extension; absent on objects written by the Go implementation)."""

    SILICON = "silicon"
    SIM = "sim"

"""The burnin.glimmer.ai/v1alpha1 API: typed models of the six kinds, their converters,
condition helpers and the CRDs generated from them.

One source of truth: each attrs field carries its wire name and validation
(``glimmer.api.fields.field``), from which the converter, the CRD schemas and
``docs/api.md`` are all derived. Everything a reconciler needs is re-exported here;
the submodules are the implementation.
"""

from __future__ import annotations

from glimmer.api.burninprofile import (
    BurnInProfile,
    BurnInProfileSpec,
    BurnInProfileStatus,
    ProfileTest,
    TestVariant,
)
from glimmer.api.burninrun import (
    ArtifactRef,
    BurnInRun,
    BurnInRunSpec,
    BurnInRunStatus,
    NotEvaluated,
    TestAttempt,
    TestResult,
    Violation,
)
from glimmer.api.burninschedule import (
    BurnInSchedule,
    BurnInScheduleSpec,
    BurnInScheduleStatus,
    RunTemplate,
)
from glimmer.api.burninsink import (
    BurnInSink,
    BurnInSinkSpec,
    BurnInSinkStatus,
    ConfigMapSink,
    WebhookSink,
)
from glimmer.api.burnintest import (
    API_VERSION,
    DEFAULT_DURATION_SECONDS,
    BurnInTest,
    BurnInTestSpec,
    BurnInTestStatus,
    HostPathMount,
    RunnerSpec,
    SoakSpec,
    Threshold,
    VendorImage,
)
from glimmer.api.conditions import (
    clamp_message,
    find_condition,
    is_condition_true,
    set_condition,
)
from glimmer.api.convert import (
    MalformedObjectError,
    format_time,
    from_json,
    from_object,
    parse_time,
    to_json,
)
from glimmer.api.core import (
    EnvVar,
    KubeCondition,
    ObjectMeta,
    ObjectReference,
    OwnerReference,
    Probe,
    ResourceRequirements,
    SecretKeySelector,
    Toleration,
)
from glimmer.api.kinds import GROUP, KINDS, KINDS_BY_NAME, VERSION, KindInfo
from glimmer.api.nodefingerprint import (
    GPUInfo,
    NICInfo,
    NodeFingerprint,
    NodeFingerprintSpec,
    NodeFingerprintStatus,
)
from glimmer.api.target import TargetSelector
from glimmer.api.vocabulary import (
    Applicability,
    AttemptTrigger,
    CancelPolicy,
    Comparison,
    ConcurrencyPolicy,
    ConditionStatus,
    HostPathType,
    Provenance,
    RunPhase,
    SinkType,
    TestScope,
    Vendor,
)

__all__ = [
    "API_VERSION",
    "DEFAULT_DURATION_SECONDS",
    "GROUP",
    "KINDS",
    "KINDS_BY_NAME",
    "VERSION",
    "Applicability",
    "ArtifactRef",
    "AttemptTrigger",
    "BurnInProfile",
    "BurnInProfileSpec",
    "BurnInProfileStatus",
    "BurnInRun",
    "BurnInRunSpec",
    "BurnInRunStatus",
    "BurnInSchedule",
    "BurnInScheduleSpec",
    "BurnInScheduleStatus",
    "BurnInSink",
    "BurnInSinkSpec",
    "BurnInSinkStatus",
    "BurnInTest",
    "BurnInTestSpec",
    "BurnInTestStatus",
    "CancelPolicy",
    "Comparison",
    "ConcurrencyPolicy",
    "ConditionStatus",
    "ConfigMapSink",
    "EnvVar",
    "GPUInfo",
    "HostPathMount",
    "HostPathType",
    "KindInfo",
    "KubeCondition",
    "MalformedObjectError",
    "NICInfo",
    "NodeFingerprint",
    "NodeFingerprintSpec",
    "NodeFingerprintStatus",
    "NotEvaluated",
    "ObjectMeta",
    "ObjectReference",
    "OwnerReference",
    "Probe",
    "ProfileTest",
    "Provenance",
    "ResourceRequirements",
    "RunPhase",
    "RunTemplate",
    "RunnerSpec",
    "SecretKeySelector",
    "SinkType",
    "SoakSpec",
    "TargetSelector",
    "TestAttempt",
    "TestResult",
    "TestScope",
    "TestVariant",
    "Threshold",
    "Toleration",
    "Vendor",
    "VendorImage",
    "Violation",
    "WebhookSink",
    "clamp_message",
    "find_condition",
    "format_time",
    "from_json",
    "from_object",
    "is_condition_true",
    "parse_time",
    "set_condition",
    "to_json",
]

"""The generated CRD schemas match the wire reference (api-v1alpha1.md) field by field.

Manifests written for the Go implementation must apply unchanged, so JSON names,
types, required-ness, enums, defaults, patterns and bounds are pinned here from the
reference tables, independently of the generator that produces them.
"""

from __future__ import annotations

from typing import Any

import pytest

from glimmer.api.crd import crd_manifest
from glimmer.api.kinds import KINDS, KINDS_BY_NAME

RUN_PHASES = ["Pending", "Running", "Passed", "Failed", "Error", "Skipped", "Cancelled"]
SCOPES = ["Node", "Pair", "Group"]


def _root(kind: str) -> dict[str, Any]:
    version = crd_manifest(KINDS_BY_NAME[kind])["spec"]["versions"][0]
    schema: dict[str, Any] = version["schema"]["openAPIV3Schema"]
    return schema


def _at(kind: str, path: str) -> dict[str, Any]:
    """Schema at a dotted path; ``[]`` steps into list items (``spec.tests[].inline``)."""
    node = _root(kind)
    for step in path.split("."):
        items = step.endswith("[]")
        node = node["properties"][step.removesuffix("[]")]
        if items:
            node = node["items"]
    return node


def _walk(schema: dict[str, Any], path: str = "") -> list[tuple[str, dict[str, Any]]]:
    found = [(path, schema)]
    for name, child in schema.get("properties", {}).items():
        found += _walk(child, f"{path}.{name}")
    if "items" in schema:
        found += _walk(schema["items"], f"{path}[]")
    if isinstance(schema.get("additionalProperties"), dict):
        found += _walk(schema["additionalProperties"], f"{path}{{}}")
    return found


EXPECTED: list[tuple[str, str, dict[str, Any]]] = [
    # §2 BurnInTest
    ("BurnInTest", "spec", {"required": ["kind"]}),
    ("BurnInTest", "spec.kind", {"type": "string"}),
    ("BurnInTest", "spec.scope", {"type": "string", "enum": SCOPES, "default": "Node"}),
    ("BurnInTest", "spec.durationSeconds", {"type": "integer", "format": "int32", "minimum": 0}),
    ("BurnInTest", "spec.repeatCount", {"format": "int32", "default": 1, "minimum": 1}),
    ("BurnInTest", "spec.checkpointIntervalSeconds", {"format": "int32", "minimum": 0}),
    ("BurnInTest", "spec.soak", {"required": ["segmentSeconds"]}),
    ("BurnInTest", "spec.soak.segmentSeconds", {"format": "int32", "minimum": 300}),
    ("BurnInTest", "spec.soak.abortEarly", {"type": "boolean", "default": False}),
    ("BurnInTest", "spec.hostNetwork", {"type": "boolean"}),
    ("BurnInTest", "spec.runner.image", {"type": "string"}),
    (
        "BurnInTest",
        "spec.runner.imagesByVendor",
        {
            "type": "array",
            "maxItems": 8,
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["vendor"],
        },
    ),
    ("BurnInTest", "spec.runner.imagesByVendor[]", {"required": ["image", "vendor"]}),
    (
        "BurnInTest",
        "spec.runner.imagesByVendor[].vendor",
        {"enum": ["nvidia", "amd", "intel", "tenstorrent", "habana"]},
    ),
    ("BurnInTest", "spec.runner.imagesByVendor[].image", {"minLength": 1}),
    ("BurnInTest", "spec.runner.runAsUser", {"type": "integer", "format": "int64"}),
    ("BurnInTest", "spec.runner.privileged", {"type": "boolean"}),
    ("BurnInTest", "spec.runner.priorityClassName", {"type": "string"}),
    ("BurnInTest", "spec.runner.command", {"type": "array", "items": {"type": "string"}}),
    ("BurnInTest", "spec.runner.args", {"type": "array", "items": {"type": "string"}}),
    (
        "BurnInTest",
        "spec.runner.hostPaths",
        {"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["mountPath"]},
    ),
    ("BurnInTest", "spec.runner.hostPaths[]", {"required": ["mountPath", "path"]}),
    ("BurnInTest", "spec.runner.hostPaths[].path", {"minLength": 1, "pattern": "^/"}),
    ("BurnInTest", "spec.runner.hostPaths[].mountPath", {"minLength": 1, "pattern": "^/"}),
    ("BurnInTest", "spec.runner.hostPaths[].readOnly", {"type": "boolean", "default": True}),
    (
        "BurnInTest",
        "spec.runner.hostPaths[].type",
        {"enum": ["Directory", "File", "Socket", "CharDevice", "BlockDevice"]},
    ),
    ("BurnInTest", "spec.runner.env[]", {"required": ["name"]}),
    ("BurnInTest", "spec.runner.env[].valueFrom.secretKeyRef", {"required": ["key"]}),
    ("BurnInTest", "spec.runner.env[].valueFrom.fieldRef", {"required": ["fieldPath"]}),
    (
        "BurnInTest",
        "spec.runner.env[].valueFrom.fileKeyRef",
        {"required": ["key", "path", "volumeName"], "x-kubernetes-map-type": "atomic"},
    ),
    (
        "BurnInTest",
        "spec.runner.env[].valueFrom.fileKeyRef.optional",
        {"type": "boolean", "default": False},
    ),
    ("BurnInTest", "spec.runner.readinessProbe.tcpSocket", {"required": ["port"]}),
    (
        "BurnInTest",
        "spec.runner.readinessProbe.httpGet.port",
        {"x-kubernetes-int-or-string": True},
    ),
    ("BurnInTest", "spec.resources.limits", {"type": "object"}),
    (
        "BurnInTest",
        "spec.resources.claims",
        {"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]},
    ),
    ("BurnInTest", "spec.thresholds[]", {"required": ["comparison", "metric", "value"]}),
    ("BurnInTest", "spec.thresholds[].metric", {"pattern": "^[a-z][a-zA-Z0-9]*$"}),
    (
        "BurnInTest",
        "spec.thresholds[].comparison",
        {"enum": ["GreaterThanOrEqual", "LessThanOrEqual", "Equal", "NotEqual"]},
    ),
    (
        "BurnInTest",
        "spec.thresholds[].value",
        {"pattern": r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$"},
    ),
    (
        "BurnInTest",
        "spec.thresholds[].applicability",
        {"enum": ["Required", "RequiredIfMeasurable"], "default": "Required"},
    ),
    ("BurnInTest", "status.observedGeneration", {"format": "int64"}),
    # §3 BurnInProfile
    ("BurnInProfile", "spec", {"required": ["tests"]}),
    ("BurnInProfile", "spec.tests", {"type": "array", "minItems": 1}),
    ("BurnInProfile", "spec.tests[].testRef", {"type": "string"}),
    ("BurnInProfile", "spec.tests[].required", {"type": "boolean", "default": True}),
    ("BurnInProfile", "spec.tests[].inline", {"required": ["kind"]}),
    ("BurnInProfile", "spec.tests[].variants[]", {"required": ["name"]}),
    (
        "BurnInProfile",
        "spec.tests[].variants[].name",
        {"minLength": 1, "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"},
    ),
    ("BurnInProfile", "spec.tests[].variants[].axes", {"type": "object"}),
    ("BurnInProfile", "spec.tests[].variants[].repeatCount", {"format": "int32", "minimum": 1}),
    ("BurnInProfile", "spec.failFast", {"type": "boolean"}),
    ("BurnInProfile", "spec.sinks", {"type": "array", "items": {"type": "string"}}),
    # §4 BurnInRun
    ("BurnInRun", "spec", {"required": ["profileRef", "target"]}),
    ("BurnInRun", "spec.maxConcurrentNodes", {"format": "int32", "default": 1, "minimum": 1}),
    ("BurnInRun", "spec.force", {"type": "boolean", "default": False}),
    ("BurnInRun", "spec.retryOnErrorLimit", {"format": "int32", "default": 0, "minimum": 0}),
    ("BurnInRun", "spec.deadlineSeconds", {"format": "int32", "minimum": 0}),
    ("BurnInRun", "spec.suspend", {"default": False}),
    ("BurnInRun", "spec.baseline", {"default": False}),
    ("BurnInRun", "spec.cancel", {"default": False}),
    ("BurnInRun", "spec.cancelPolicy", {"enum": ["Graceful", "Immediate"], "default": "Graceful"}),
    ("BurnInRun", "spec.cancelReason", {"maxLength": 512}),
    ("BurnInRun", "spec.ttlSecondsAfterFinished", {"format": "int32"}),
    ("BurnInRun", "spec.target.nodeSelector", {"additionalProperties": {"type": "string"}}),
    ("BurnInRun", "spec.target.tolerations[].tolerationSeconds", {"format": "int64"}),
    ("BurnInRun", "status.phase", {"enum": RUN_PHASES, "default": "Pending"}),
    ("BurnInRun", "status.fingerprint", {"additionalProperties": {"type": "string"}}),
    ("BurnInRun", "status.startedAt", {"type": "string", "format": "date-time"}),
    ("BurnInRun", "status.passed", {"format": "int32"}),
    ("BurnInRun", "status.errored", {"format": "int32"}),
    ("BurnInRun", "status.priorUnschedulable", {"additionalProperties": {"type": "boolean"}}),
    ("BurnInRun", "status.sinkStatus", {"additionalProperties": {"type": "string"}}),
    ("BurnInRun", "status.observedGeneration", {"format": "int64"}),
    ("BurnInRun", "status.results[]", {"required": ["kind", "name", "phase"]}),
    ("BurnInRun", "status.results[].scope", {"enum": SCOPES}),
    ("BurnInRun", "status.results[].phase", {"enum": RUN_PHASES}),
    ("BurnInRun", "status.results[].repeatsRequired", {"format": "int32", "minimum": 0}),
    ("BurnInRun", "status.results[].truncatedAttempts", {"minimum": 0}),
    (
        "BurnInRun",
        "status.results[].violations[]",
        {"required": ["cause", "index", "kind", "metric"]},
    ),
    ("BurnInRun", "status.results[].violations[].index", {"minimum": 0}),
    ("BurnInRun", "status.results[].notEvaluated[]", {"required": ["metric", "reason"]}),
    ("BurnInRun", "status.results[].artifacts[]", {"required": ["name"]}),
    ("BurnInRun", "status.results[].artifacts[].sizeBytes", {"format": "int64", "minimum": 0}),
    ("BurnInRun", "status.results[].attempts[]", {"required": ["attempt", "trigger"]}),
    ("BurnInRun", "status.results[].attempts[].attempt", {"minimum": 1}),
    (
        "BurnInRun",
        "status.results[].attempts[].trigger",
        {"enum": ["Initial", "Repeat", "ErrorRetry", "Segment"]},
    ),
    ("BurnInRun", "status.results[].attempts[].phase", {"enum": RUN_PHASES}),
    ("BurnInRun", "status.results[].attempts[].exitCode", {"format": "int32"}),
    (
        "BurnInRun",
        "status.conditions[]",
        {"required": ["lastTransitionTime", "message", "reason", "status", "type"]},
    ),
    ("BurnInRun", "status.conditions[].status", {"enum": ["True", "False", "Unknown"]}),
    # §5 BurnInSchedule
    # The one relaxation of the reference: schedule is required exactly when no
    # trigger.nodeJoined is set (CEL on spec, docs/qualify.md); every reference object
    # (schedule set, no trigger) is still valid.
    ("BurnInSchedule", "spec", {"required": ["profileRef", "target"]}),
    (
        "BurnInSchedule",
        "spec",
        {
            "x-kubernetes-validations": [
                {
                    "rule": "has(self.schedule) != has(self.trigger)",
                    "message": "set exactly one of schedule (cron) and trigger (nodeJoined)",
                }
            ]
        },
    ),
    ("BurnInSchedule", "spec.schedule", {"minLength": 1}),
    ("BurnInSchedule", "spec.timeZone", {"type": "string"}),
    ("BurnInSchedule", "spec.suspend", {"default": False}),
    (
        "BurnInSchedule",
        "spec.concurrencyPolicy",
        {"enum": ["Forbid", "Allow"], "default": "Forbid"},
    ),
    ("BurnInSchedule", "spec.startingDeadlineSeconds", {"minimum": 0}),
    ("BurnInSchedule", "spec.successfulRunsHistoryLimit", {"default": 3, "minimum": 0}),
    ("BurnInSchedule", "spec.failedRunsHistoryLimit", {"default": 10, "minimum": 0}),
    ("BurnInSchedule", "spec.runTemplate.ttlSecondsAfterFinished", {"minimum": 0}),
    ("BurnInSchedule", "spec.runTemplate.deadlineSeconds", {"minimum": 0}),
    ("BurnInSchedule", "spec.runTemplate.maxConcurrentNodes", {"default": 1, "minimum": 1}),
    ("BurnInSchedule", "spec.runTemplate.retryOnErrorLimit", {"default": 0, "minimum": 0}),
    ("BurnInSchedule", "spec.runTemplate.baseline", {"default": False}),
    ("BurnInSchedule", "status.lastScheduleTime", {"format": "date-time"}),
    ("BurnInSchedule", "status.lastSuccessfulTime", {"format": "date-time"}),
    ("BurnInSchedule", "status.active[]", {"x-kubernetes-map-type": "atomic"}),
    ("BurnInSchedule", "status.lastRunName", {"type": "string"}),
    ("BurnInSchedule", "status.lastRunPhase", {"enum": RUN_PHASES}),
    ("BurnInSchedule", "status.missedSchedules", {"format": "int32", "minimum": 0}),
    # §6 BurnInSink
    ("BurnInSink", "spec", {"required": ["type"]}),
    ("BurnInSink", "spec.type", {"enum": ["Webhook", "Prometheus", "ConfigMap"]}),
    ("BurnInSink", "spec.webhook", {"required": ["url"]}),
    ("BurnInSink", "spec.webhook.tokenSecretRef", {"required": ["key"]}),
    ("BurnInSink", "spec.webhook.tokenSecretRef.name", {"default": ""}),
    ("BurnInSink", "spec.webhook.tokenSecretRef.optional", {"type": "boolean"}),
    ("BurnInSink", "spec.webhook.insecureSkipVerify", {"type": "boolean"}),
    ("BurnInSink", "spec.configMap", {"required": ["name"]}),
    ("BurnInSink", "status.lastDelivery", {"format": "date-time"}),
    ("BurnInSink", "status.lastError", {"type": "string"}),
    # §7 NodeFingerprint
    ("NodeFingerprint", "spec", {"required": ["nodeName"]}),
    ("NodeFingerprint", "status.capturedAt", {"format": "date-time"}),
    ("NodeFingerprint", "status.gpus[]", {"required": ["index"]}),
    ("NodeFingerprint", "status.gpus[].index", {"format": "int32"}),
    ("NodeFingerprint", "status.gpus[].memoryBytes", {"format": "int64"}),
    ("NodeFingerprint", "status.nics[]", {"required": ["name"]}),
    ("NodeFingerprint", "status.nics[].speedMbps", {"format": "int32"}),
    ("NodeFingerprint", "status.nics[].mtu", {"format": "int32"}),
    ("NodeFingerprint", "status.labels", {"additionalProperties": {"type": "string"}}),
    ("NodeFingerprint", "status.digest", {"type": "string"}),
]


@pytest.mark.parametrize(
    ("kind", "path", "expected"), EXPECTED, ids=[f"{k}.{p}" for k, p, _ in EXPECTED]
)
def test_field_matches_the_wire_reference(kind: str, path: str, expected: dict[str, Any]) -> None:
    schema = _at(kind, path)
    actual = {key: schema.get(key) for key in expected}
    if "items" in expected:
        actual["items"] = {k: schema["items"].get(k) for k in expected["items"]}
    assert actual == expected


# Reference fields that must NOT carry a bound/default the reference lacks.
UNBOUNDED: list[tuple[str, str, str]] = [
    ("BurnInTest", "spec.kind", "enum"),
    ("BurnInTest", "spec.hostNetwork", "default"),
    ("BurnInProfile", "spec.tests[].variants[].durationSeconds", "minimum"),
    ("BurnInProfile", "spec.failFast", "default"),
    ("BurnInRun", "spec.ttlSecondsAfterFinished", "minimum"),
    ("BurnInRun", "status.results[].violations[].cause", "enum"),
    ("BurnInRun", "status.results[].violations[].kind", "enum"),
    ("BurnInRun", "status.results[].kind", "minLength"),
    ("BurnInProfile", "spec.tests", "maxItems"),
]


@pytest.mark.parametrize(
    ("kind", "path", "key"), UNBOUNDED, ids=[f"{k}.{p}.{x}" for k, p, x in UNBOUNDED]
)
def test_no_restriction_beyond_the_reference(kind: str, path: str, key: str) -> None:
    assert key not in _at(kind, path)


def test_inline_test_spec_is_the_burnintest_spec_schema() -> None:
    inline = dict(_at("BurnInProfile", "spec.tests[].inline"))
    spec = dict(_at("BurnInTest", "spec"))
    inline.pop("description")
    spec.pop("description")
    assert inline == spec


@pytest.mark.parametrize("info", KINDS, ids=lambda i: i.kind)
def test_crd_identity_scope_and_subresources(info: Any) -> None:
    crd = crd_manifest(info)
    assert crd["apiVersion"] == "apiextensions.k8s.io/v1"
    assert crd["metadata"]["name"] == f"{info.plural}.burnin.glimmer.ai"
    spec = crd["spec"]
    assert spec["group"] == "burnin.glimmer.ai"
    assert spec["scope"] == "Namespaced"
    assert spec["names"]["categories"] == ["burnin"]
    (version,) = spec["versions"]
    assert (version["name"], version["served"], version["storage"]) == ("v1alpha1", True, True)
    assert version["subresources"] == {"status": {}}


NAMES_AND_COLUMNS = {
    "BurnInTest": (
        "burnintests",
        ["bit"],
        [("Kind", ".spec.kind", "string", 0), ("Scope", ".spec.scope", "string", 0)],
    ),
    "BurnInProfile": ("burninprofiles", ["bip"], [("Tests", ".spec.tests[*]", "integer", 0)]),
    "BurnInRun": (
        "burninruns",
        ["bir"],
        [
            ("Profile", ".spec.profileRef", "string", 0),
            ("Phase", ".status.phase", "string", 0),
            ("Baseline", ".spec.baseline", "boolean", 1),
            ("Passed", ".status.passed", "integer", 0),
            ("Failed", ".status.failed", "integer", 0),
            ("Age", ".metadata.creationTimestamp", "date", 0),
        ],
    ),
    "BurnInSchedule": (
        "burninschedules",
        ["bisc"],
        [
            ("Schedule", ".spec.schedule", "string", 0),
            ("Profile", ".spec.profileRef", "string", 0),
            ("Suspend", ".spec.suspend", "boolean", 0),
            ("Last Schedule", ".status.lastScheduleTime", "date", 0),
            ("Last Phase", ".status.lastRunPhase", "string", 0),
            ("Age", ".metadata.creationTimestamp", "date", 0),
        ],
    ),
    "BurnInSink": ("burninsinks", ["bis"], [("Type", ".spec.type", "string", 0)]),
    "NodeFingerprint": (
        "nodefingerprints",
        ["nfp"],
        [("Node", ".spec.nodeName", "string", 0), ("Digest", ".status.digest", "string", 0)],
    ),
}


#: Glimmer's additive columns (I16, N16), shown before Age (after the reference's
#: columns when the kind has no Age); the reference's stay in place.
ADDITIVE_COLUMNS = {
    "BurnInProfile": [
        ("Coverage", ".status.coverage.summary", "string", 0),
        ("Generation", ".metadata.generation", "integer", 1),
    ],
    "BurnInRun": [
        ("Measured", '.status.conditions[?(@.type=="Measured")].status', "string", 0),
        ("Certified", ".status.certifiesSilicon", "boolean", 0),
        ("Provenance", ".status.provenance", "string", 1),
    ],
    "BurnInSchedule": [("Next Schedule", ".status.nextScheduleTime", "string", 0)],
}


def _columns(kind: str) -> list[tuple[str, str, str, int]]:
    spec = crd_manifest(KINDS_BY_NAME[kind])["spec"]
    return [
        (c["name"], c["jsonPath"], c["type"], c.get("priority", 0))
        for c in spec["versions"][0]["additionalPrinterColumns"]
    ]


@pytest.mark.parametrize("kind", sorted(NAMES_AND_COLUMNS))
def test_names_and_printer_columns_match_the_reference_table(kind: str) -> None:
    plural, short, columns = NAMES_AND_COLUMNS[kind]
    spec = crd_manifest(KINDS_BY_NAME[kind])["spec"]
    assert spec["names"]["plural"] == plural
    assert spec["names"]["shortNames"] == short
    extra = ADDITIVE_COLUMNS.get(kind, [])
    aged = bool(columns) and columns[-1][0] == "Age"
    expected = columns[:-1] + extra + columns[-1:] if aged else columns + extra
    assert _columns(kind) == expected


def test_I16_get_burninrun_shows_measured_and_certified() -> None:
    names = [name for name, _, _, priority in _columns("BurnInRun") if priority == 0]
    assert {"Measured", "Certified"} <= set(names)
    assert names[-1] == "Age"


def test_I14_provenance_enums_include_unknown() -> None:
    schema = crd_manifest(KINDS_BY_NAME["BurnInRun"])["spec"]["versions"][0]["schema"]
    status = schema["openAPIV3Schema"]["properties"]["status"]["properties"]
    result = status["results"]["items"]["properties"]
    attempt = result["attempts"]["items"]["properties"]
    for field in (status["provenance"], result["provenance"], attempt["provenance"]):
        assert sorted(field["enum"]) == ["silicon", "sim", "unknown"]


@pytest.mark.parametrize("info", KINDS, ids=lambda i: i.kind)
def test_schemas_are_structural_with_no_unknown_field_escape_hatch(info: Any) -> None:
    for path, node in _walk(_root(info.kind)):
        assert "x-kubernetes-preserve-unknown-fields" not in node, path
        assert "type" in node or "anyOf" in node, f"{path} has no type"


@pytest.mark.parametrize("info", KINDS, ids=lambda i: i.kind)
def test_every_field_is_described_for_kubectl_explain(info: Any) -> None:
    for path, node in _walk(_root(info.kind)):
        if path in ("", ".metadata") or path.endswith(("[]", "{}")):
            continue
        assert node.get("description"), f"{info.kind}{path} has no description"


def _rules(kind: str, path: str) -> list[str]:
    node = _root(kind) if not path else _at(kind, path)
    return [rule["rule"] for rule in node.get("x-kubernetes-validations", [])]


@pytest.mark.parametrize(
    ("kind", "path", "needle"),
    [
        ("BurnInTest", "spec", "'compute-smoke'"),
        ("BurnInTest", "spec", "self.soak.segmentSeconds"),
        ("BurnInTest", "spec", "self.repeatCount == 1"),
        ("BurnInProfile", "spec.tests[].inline", "'fingerprint-probe'"),
        ("BurnInProfile", "spec.tests[]", "has(self.inline)"),
    ],
)
def test_run_start_refusals_are_declared_as_cel_rules(kind: str, path: str, needle: str) -> None:
    assert any(needle in rule for rule in _rules(kind, path))


@pytest.mark.parametrize("kind", ["BurnInRun", "BurnInSchedule"])
def test_duplicate_node_names_are_refused_by_a_set_list_with_no_length_cap(kind: str) -> None:
    schema = _at(kind, "spec.target")["properties"]["nodeNames"]
    assert schema["x-kubernetes-list-type"] == "set"
    assert "maxItems" not in schema


def test_soak_rule_accepts_an_unset_duration_as_600_seconds() -> None:
    """durationSeconds unset means 600 s at run time; a 300 s soak of it must stay legal."""
    (rule,) = [r for r in _rules("BurnInTest", "spec") if "segmentSeconds" in r]
    assert ": 600)" in rule

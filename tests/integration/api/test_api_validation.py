"""Malformed manifests are refused at apply time, each with a message naming the field.

Table-driven: every row is a single fault on an otherwise valid object, so the
apiserver reports exactly that fault (CEL rules only run once the structural schema
is satisfied). A second table pins what must stay *accepted*: anything the reference
schema admits and its controller would run.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

pytestmark = [pytest.mark.controlplane, pytest.mark.usefixtures("installed_crds")]

SOAK_FIX = "soak is not supported by burst-only kinds"
SEGMENT_FIX = "soak.segmentSeconds must not exceed durationSeconds"


def _gate(**overrides: Any) -> dict[str, Any]:
    return {"metric": "gpuTempC", "comparison": "LessThanOrEqual", "value": "87", **overrides}


def _test(**spec: Any) -> tuple[str, dict[str, Any]]:
    return "BurnInTest", {"kind": "clockprobe", **spec}


def _profile(*tests: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return "BurnInProfile", {"tests": list(tests)}


def _run(**spec: Any) -> tuple[str, dict[str, Any]]:
    return "BurnInRun", {"profileRef": "p", "target": {"nodeNames": ["n1"]}, **spec}


def _schedule(**spec: Any) -> tuple[str, dict[str, Any]]:
    return "BurnInSchedule", {
        "schedule": "@daily",
        "profileRef": "p",
        "target": {"nodeSelector": {"pool": "gpu"}},
        **spec,
    }


_NODE_JOINED: dict[str, Any] = {
    "nodeJoined": {"taint": {"key": "burnin.glimmer.ai/unqualified", "effect": "NoSchedule"}}
}


def _without(kind_spec: tuple[str, dict[str, Any]], key: str) -> tuple[str, dict[str, Any]]:
    kind, spec = kind_spec
    return kind, {k: v for k, v in spec.items() if k != key}


REJECTED: list[tuple[str, tuple[str, dict[str, Any]], str, str]] = [
    # (case id, (kind, spec), field named in the error, text that must also appear)
    ("scope-not-in-enum", _test(scope="Cluster"), "spec.scope", "Unsupported value"),
    (
        "threshold-value-NaN",
        _test(thresholds=[_gate(value="NaN")]),
        "spec.thresholds[0].value",
        "should match",
    ),
    (
        "threshold-value-Inf",
        _test(thresholds=[_gate(value="+Inf")]),
        "spec.thresholds[0].value",
        "should match",
    ),
    (
        "threshold-value-word",
        _test(thresholds=[_gate(value="fast")]),
        "spec.thresholds[0].value",
        "should match",
    ),
    (
        "threshold-value-empty",
        _test(thresholds=[_gate(value="")]),
        "spec.thresholds[0].value",
        "should match",
    ),
    (
        "metric-with-underscore",
        _test(thresholds=[_gate(metric="gpu_temp_c")]),
        "spec.thresholds[0].metric",
        "should match",
    ),
    (
        "metric-capitalised",
        _test(thresholds=[_gate(metric="GpuTempC")]),
        "spec.thresholds[0].metric",
        "should match",
    ),
    (
        "comparison-not-in-enum",
        _test(thresholds=[_gate(comparison="GreaterThan")]),
        "spec.thresholds[0].comparison",
        "Unsupported value",
    ),
    (
        "applicability-not-in-enum",
        _test(thresholds=[_gate(applicability="Optional")]),
        "spec.thresholds[0].applicability",
        "Unsupported value",
    ),
    (
        "threshold-missing-metric",
        _test(thresholds=[{"comparison": "Equal", "value": "0"}]),
        "spec.thresholds[0].metric",
        "Required value",
    ),
    ("test-missing-kind", ("BurnInTest", {"scope": "Node"}), "spec.kind", "Required value"),
    (
        "negative-duration",
        _test(durationSeconds=-1),
        "spec.durationSeconds",
        "greater than or equal to 0",
    ),
    ("duration-as-string", _test(durationSeconds="600"), "spec.durationSeconds", "integer"),
    ("zero-repeat-count", _test(repeatCount=0), "spec.repeatCount", "greater than or equal to 1"),
    (
        "negative-checkpoint-interval",
        _test(checkpointIntervalSeconds=-5),
        "spec.checkpointIntervalSeconds",
        "greater than or equal to 0",
    ),
    (
        "soak-segment-below-300",
        _test(durationSeconds=3600, soak={"segmentSeconds": 299}),
        "spec.soak.segmentSeconds",
        "greater than or equal to 300",
    ),
    (
        "soak-on-compute-smoke",
        (
            "BurnInTest",
            {"kind": "compute-smoke", "durationSeconds": 600, "soak": {"segmentSeconds": 300}},
        ),
        "spec.soak",
        SOAK_FIX,
    ),
    (
        "soak-on-fingerprint-probe",
        (
            "BurnInTest",
            {"kind": "fingerprint-probe", "durationSeconds": 600, "soak": {"segmentSeconds": 300}},
        ),
        "spec.soak",
        SOAK_FIX,
    ),
    (
        "soak-segment-longer-than-duration",
        _test(durationSeconds=600, soak={"segmentSeconds": 900}),
        "spec.soak.segmentSeconds",
        SEGMENT_FIX,
    ),
    (
        "soak-segment-longer-than-default-600",
        _test(soak={"segmentSeconds": 700}),
        "spec.soak.segmentSeconds",
        SEGMENT_FIX,
    ),
    (
        "soak-with-repeats",
        _test(durationSeconds=600, repeatCount=2, soak={"segmentSeconds": 300}),
        "spec.repeatCount",
        "set repeatCount to 1",
    ),
    (
        "vendor-not-in-enum",
        _test(runner={"imagesByVendor": [{"vendor": "acme", "image": "x"}]}),
        "spec.runner.imagesByVendor[0].vendor",
        "Unsupported value",
    ),
    (
        "vendor-image-empty",
        _test(runner={"imagesByVendor": [{"vendor": "amd", "image": ""}]}),
        "spec.runner.imagesByVendor[0].image",
        "at least 1 chars long",
    ),
    (
        "vendor-listed-twice",
        _test(
            runner={
                "imagesByVendor": [{"vendor": "amd", "image": "a"}, {"vendor": "amd", "image": "b"}]
            }
        ),
        "spec.runner.imagesByVendor[1]",
        "Duplicate value",
    ),
    (
        "nine-vendor-images",
        _test(runner={"imagesByVendor": [{"vendor": "amd", "image": str(i)} for i in range(9)]}),
        "spec.runner.imagesByVendor",
        "Too many",
    ),
    (
        "host-path-relative",
        _test(runner={"hostPaths": [{"path": "dev/kmsg", "mountPath": "/dev/kmsg"}]}),
        "spec.runner.hostPaths[0].path",
        "should match",
    ),
    (
        "host-mount-path-twice",
        _test(
            runner={
                "hostPaths": [{"path": "/a", "mountPath": "/m"}, {"path": "/b", "mountPath": "/m"}]
            }
        ),
        "spec.runner.hostPaths[1]",
        "Duplicate value",
    ),
    (
        "host-path-or-create",
        _test(
            runner={"hostPaths": [{"path": "/a", "mountPath": "/a", "type": "DirectoryOrCreate"}]}
        ),
        "spec.runner.hostPaths[0].type",
        "Unsupported value",
    ),
    (
        "env-without-name",
        _test(runner={"env": [{"value": "1"}]}),
        "spec.runner.env[0].name",
        "Required value",
    ),
    (
        "probe-without-port",
        _test(runner={"readinessProbe": {"tcpSocket": {"host": "x"}}}),
        "spec.runner.readinessProbe.tcpSocket.port",
        "Required value",
    ),
    (
        "negative-run-as-user-type",
        _test(runner={"runAsUser": "root"}),
        "spec.runner.runAsUser",
        "integer",
    ),
    ("profile-without-tests", _profile(), "spec.tests", "at least 1 items"),
    (
        "profile-entry-ref-and-inline",
        _profile({"testRef": "a", "inline": {"kind": "nccl"}}),
        "spec.tests[0]",
        "set exactly one of testRef or inline",
    ),
    (
        "profile-entry-neither",
        _profile({"required": True}),
        "spec.tests[0]",
        "set exactly one of testRef or inline",
    ),
    (
        "inline-soak-on-burst-kind",
        _profile(
            {
                "inline": {
                    "kind": "compute-smoke",
                    "durationSeconds": 600,
                    "soak": {"segmentSeconds": 300},
                }
            }
        ),
        "spec.tests[0].inline.soak",
        SOAK_FIX,
    ),
    (
        "inline-scope-not-in-enum",
        _profile({"inline": {"kind": "nccl", "scope": "Rack"}}),
        "spec.tests[0].inline.scope",
        "Unsupported value",
    ),
    (
        "variant-name-uppercase",
        _profile({"testRef": "a", "variants": [{"name": "Fp8"}]}),
        "spec.tests[0].variants[0].name",
        "should match",
    ),
    (
        "variant-zero-repeats",
        _profile({"testRef": "a", "variants": [{"name": "a", "repeatCount": 0}]}),
        "spec.tests[0].variants[0].repeatCount",
        "greater than or equal to 1",
    ),
    (
        "variant-threshold-NaN",
        _profile({"testRef": "a", "variants": [{"name": "a", "thresholds": [_gate(value="nan")]}]}),
        "spec.tests[0].variants[0].thresholds[0].value",
        "should match",
    ),
    ("run-missing-profile", _without(_run(), "profileRef"), "spec.profileRef", "Required value"),
    ("run-missing-target", _without(_run(), "target"), "spec.target", "Required value"),
    (
        "run-zero-concurrency",
        _run(maxConcurrentNodes=0),
        "spec.maxConcurrentNodes",
        "greater than or equal to 1",
    ),
    (
        "run-negative-retries",
        _run(retryOnErrorLimit=-1),
        "spec.retryOnErrorLimit",
        "greater than or equal to 0",
    ),
    (
        "run-negative-deadline",
        _run(deadlineSeconds=-1),
        "spec.deadlineSeconds",
        "greater than or equal to 0",
    ),
    (
        "run-cancel-policy-not-in-enum",
        _run(cancelPolicy="Now"),
        "spec.cancelPolicy",
        "Unsupported value",
    ),
    ("run-cancel-reason-too-long", _run(cancelReason="x" * 513), "spec.cancelReason", "Too long"),
    (
        "run-duplicate-node-names",
        _run(target={"nodeNames": ["a", "b", "a"]}),
        "spec.target.nodeNames[2]",
        "Duplicate value",
    ),
    (
        "run-target-selects-nothing",
        _run(target={}),
        "spec.target",
        "set nodeNames or a non-empty nodeSelector",
    ),
    ("run-force-as-string", _run(force="yes"), "spec.force", "boolean"),
    ("schedule-empty", _schedule(schedule=""), "spec.schedule", "at least 1 chars long"),
    (
        "schedule-replace-policy",
        _schedule(concurrencyPolicy="Replace"),
        "spec.concurrencyPolicy",
        "Unsupported value",
    ),
    (
        "schedule-negative-history",
        _schedule(successfulRunsHistoryLimit=-1),
        "spec.successfulRunsHistoryLimit",
        "greater than or equal to 0",
    ),
    (
        "schedule-negative-missed-deadline",
        _schedule(startingDeadlineSeconds=-1),
        "spec.startingDeadlineSeconds",
        "greater than or equal to 0",
    ),
    (
        "schedule-template-zero-concurrency",
        _schedule(runTemplate={"maxConcurrentNodes": 0}),
        "spec.runTemplate.maxConcurrentNodes",
        "greater than or equal to 1",
    ),
    (
        "schedule-duplicate-node-names",
        _schedule(target={"nodeNames": ["a", "a"]}),
        "spec.target.nodeNames[1]",
        "Duplicate value",
    ),
    ("sink-type-not-in-enum", ("BurnInSink", {"type": "Email"}), "spec.type", "Unsupported value"),
    (
        "sink-missing-type",
        ("BurnInSink", {"configMap": {"name": "x"}}),
        "spec.type",
        "Required value",
    ),
    (
        "webhook-without-url",
        ("BurnInSink", {"type": "Webhook", "webhook": {}}),
        "spec.webhook.url",
        "Required value",
    ),
    (
        "token-secret-without-key",
        (
            "BurnInSink",
            {"type": "Webhook", "webhook": {"url": "https://x", "tokenSecretRef": {"name": "s"}}},
        ),
        "spec.webhook.tokenSecretRef.key",
        "Required value",
    ),
    (
        "configmap-sink-without-name",
        ("BurnInSink", {"type": "ConfigMap", "configMap": {}}),
        "spec.configMap.name",
        "Required value",
    ),
    ("fingerprint-without-node", ("NodeFingerprint", {}), "spec.nodeName", "Required value"),
    # Qualify on join (docs/qualify.md): exactly one of schedule and trigger.
    (
        "schedule-and-trigger",
        _schedule(trigger=_NODE_JOINED),
        "spec",
        "set exactly one of schedule (cron) and trigger (nodeJoined)",
    ),
    (
        "neither-schedule-nor-trigger",
        _without(_schedule(), "schedule"),
        "spec",
        "set exactly one of schedule (cron) and trigger (nodeJoined)",
    ),
    (
        "trigger-taint-that-gates-nothing",
        _without(
            _schedule(
                trigger={"nodeJoined": {"taint": {"key": "k", "effect": "PreferNoSchedule"}}}
            ),
            "schedule",
        ),
        "spec.trigger.nodeJoined.taint.effect",
        "Unsupported value",
    ),
    (
        "trigger-without-taint",
        _without(_schedule(trigger={"nodeJoined": {}}), "schedule"),
        "spec.trigger.nodeJoined.taint",
        "Required value",
    ),
]

ACCEPTED: list[tuple[str, tuple[str, dict[str, Any]]]] = [
    ("soak-with-unset-duration-means-600", _test(soak={"segmentSeconds": 300})),
    ("soak-of-600-with-zero-duration", _test(durationSeconds=0, soak={"segmentSeconds": 600})),
    ("soak-segment-equal-to-duration", _test(durationSeconds=3600, soak={"segmentSeconds": 3600})),
    ("burst-kind-without-soak", ("BurnInTest", {"kind": "compute-smoke", "repeatCount": 3})),
    ("unknown-kind-is-open", ("BurnInTest", {"kind": "my-own-check"})),
    ("threshold-exponent-value", _test(thresholds=[_gate(value="-1.5e+3")])),
    ("threshold-leading-dot", _test(thresholds=[_gate(value=".5")])),
    ("empty-test-ref-with-inline", _profile({"testRef": "", "inline": {"kind": "nccl"}})),
    (
        "variant-empty-thresholds",
        _profile({"testRef": "a", "variants": [{"name": "a", "thresholds": []}]}),
    ),
    (
        "variant-negative-duration-unbounded",
        _profile({"testRef": "a", "variants": [{"name": "a", "durationSeconds": -5}]}),
    ),
    ("selector-only-target", _run(target={"nodeSelector": {"pool": "gpu"}})),
    ("ordered-pair-target", _run(target={"nodeNames": ["b", "a"]}, maxConcurrentNodes=2)),
    (
        "thousand-node-target",
        _run(target={"nodeNames": [f"gpu-{i:04d}.fleet.example.com" for i in range(1000)]}),
    ),
    ("negative-ttl-keeps-the-run", _run(ttlSecondsAfterFinished=-1)),
    ("sink-without-block", ("BurnInSink", {"type": "Webhook"})),
    ("schedule-with-time-zone", _schedule(timeZone="Europe/Berlin", schedule="0 2 * * 6")),
    ("trigger-instead-of-schedule", _without(_schedule(trigger=_NODE_JOINED), "schedule")),
]


def _manifest(kind: str, spec: dict[str, Any]) -> str:
    return json.dumps(
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": kind,
            "metadata": {"name": "case"},
            "spec": spec,
        }
    )


def _dry_run(control_plane: Any, namespace: str, kind: str, spec: dict[str, Any]) -> Any:
    return control_plane.kubectl(
        "create",
        "--dry-run=server",
        "-n",
        namespace,
        "-f",
        "-",
        input=_manifest(kind, spec),
        check=False,
    )


def test_at_least_thirty_malformed_cases_are_covered() -> None:
    assert len(REJECTED) >= 30


@pytest.mark.parametrize(
    ("kind_spec", "field", "text"),
    [pytest.param(ks, f, t, id=i) for i, ks, f, t in REJECTED],
)
def test_malformed_manifest_is_rejected_naming_the_field(
    control_plane: Any,
    dry_run_namespace: str,
    kind_spec: tuple[str, dict[str, Any]],
    field: str,
    text: str,
) -> None:
    kind, spec = kind_spec
    result = _dry_run(control_plane, dry_run_namespace, kind, spec)
    assert result.returncode != 0, f"accepted: {_manifest(kind, spec)}"
    assert f"{field}:" in result.stderr, result.stderr
    assert text in result.stderr, result.stderr


@pytest.mark.parametrize("kind_spec", [pytest.param(ks, id=i) for i, ks in ACCEPTED])
def test_what_the_reference_accepts_stays_accepted(
    control_plane: Any, dry_run_namespace: str, kind_spec: tuple[str, dict[str, Any]]
) -> None:
    kind, spec = kind_spec
    result = _dry_run(control_plane, dry_run_namespace, kind, spec)
    assert result.returncode == 0, result.stderr

"""The envelope's wire shape (L1), validation (L2), delivery IDs (L3) and strict decoding."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glimmer.contract import REGISTRY
from glimmer.contract.envelope import (
    ArtifactRef,
    ClusterRef,
    Envelope,
    EnvelopeDecodeError,
    EnvelopeInvalidError,
    NotEvaluated,
    RunRef,
    SegmentSummary,
    Summary,
    TestResult,
    Violation,
    decode,
    delivery_id,
    encode,
    event_key_for_result,
    format_sent_at,
    validate,
)

SENT = "2026-12-01T12:00:00.5Z"


def minimal(**changes: Any) -> Envelope:
    base = Envelope(
        delivery_id="d" * 32,
        reason="RunPhaseChanged",
        sent_at=SENT,
        run=RunRef(namespace="ns", name="r", uid="u-1"),
        phase="Running",
    )
    return dataclasses.replace(base, **changes)


def test_L1_minimal_envelope_is_exactly_the_go_shape() -> None:
    # Empty optionals are absent (omitempty), summary is always all four, order is Go's.
    assert encode(minimal()) == (
        b'{"version":"burnin.glimmer.ai/v1alpha1","deliveryId":"dddddddddddddddddddddddddd'
        b'dddddd","reason":"RunPhaseChanged","sentAt":"2026-12-01T12:00:00.5Z","run":{"names'
        b'pace":"ns","name":"r","uid":"u-1"},"phase":"Running","summary":{"passed":0,"faile'
        b'd":0,"errored":0,"skipped":0}}'
    )


def test_L1_every_field_in_go_order_with_its_omitempty_rule() -> None:
    result = TestResult(
        name="t", kind="", phase="Error", nodes=("a",), metrics={"z": "1", "a": "2"},
        violations=(Violation(index=0, metric="m", cause="Evidence", kind="NotReported"),),
        not_evaluated=(NotEvaluated(metric="m", reason="r"),),
        artifacts=(ArtifactRef(name="x"),),
        segments=SegmentSummary(completed=0, required=3),
    )  # fmt: skip
    env = minimal(
        baseline=True,
        cluster=ClusterRef(name="c"),
        phase="Cancelled",
        cancel_reason="why",
        checkpoint_sequence=4,
        fingerprint={"n": "kernel=k"},
        results=(result,),
        summary=Summary(errored=1),
        provenance="sim",
        certifies_silicon=False,
    )
    doc = json.loads(encode(env))
    assert list(doc) == [
        "version", "baseline", "deliveryId", "reason", "sentAt", "run", "cluster", "phase",
        "cancelReason", "checkpointSequence", "fingerprint", "results", "summary", "provenance",
    ]  # fmt: skip
    assert doc["cluster"] == {"name": "c"}  # uid omitempty
    [r] = doc["results"]
    # kind is always present (synthetic results carry ""), scope/message/etc. omitted.
    assert list(r) == ["name", "kind", "phase", "nodes", "metrics", "violations",
                       "notEvaluated", "artifacts", "segments"]  # fmt: skip
    assert list(r["metrics"]) == ["a", "z"]  # map keys sorted, as Go marshals them
    assert r["violations"] == [
        {"index": 0, "metric": "m", "cause": "Evidence", "kind": "NotReported"}
    ]
    assert r["artifacts"] == [{"name": "x"}]
    assert r["segments"] == {"completed": 0, "required": 3}  # both always, rest omitempty
    assert "attempts" not in r and "conditions" not in doc


def test_L1_sent_at_is_rfc3339nano_utc() -> None:
    plus2 = timezone(timedelta(hours=2))
    assert format_sent_at(datetime(2026, 1, 2, 5, 4, 5, 120000, tzinfo=plus2)) == (
        "2026-01-02T03:04:05.12Z"
    )
    assert format_sent_at(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)) == "2026-01-02T03:04:05Z"
    with pytest.raises(ValueError, match="naive"):
        format_sent_at(datetime(2026, 1, 2))


def test_L3_delivery_id_is_the_first_16_bytes_of_sha256_hex() -> None:
    # Vectors from `printf 'uid-1\0RunPhaseChanged\0Passed' | sha256sum | cut -c1-32`.
    assert delivery_id("uid-1", "RunPhaseChanged", "Passed") == "df990beeea8f68119f5231b90d8dcf12"
    assert delivery_id("3f2a", "TestCompleted", "nccl/a+b") == "4ac9fc582c907b9be288852b0c8218dd"


def test_L3_test_completed_key_joins_nodes_with_plus_or_is_the_bare_name() -> None:
    assert event_key_for_result("nccl", ["a", "b"]) == "nccl/a+b"
    assert event_key_for_result("resolve", []) == "resolve"


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"version": ""}, "version"),
        ({"version": "burnin.glimmer.ai/v2"}, "version"),
        ({"delivery_id": ""}, "deliveryId"),
        ({"reason": ""}, "reason"),
        ({"run": RunRef(namespace="ns", name="r")}, "run.uid"),
        ({"sent_at": ""}, "sentAt"),
        ({"sent_at": "0001-01-01T00:00:00Z"}, "sentAt"),
        ({"results": (TestResult(name="t", metrics={"gpu_temp": "1"}),)}, "results[0].metrics"),
        ({"results": (TestResult(name="t", metrics={"GpuTempC": "1"}),)}, "results[0].metrics"),
        ({"results": (TestResult(name="t", metrics={"": "1"}),)}, "results[0].metrics"),
    ],
)
def test_L2_validate_refuses_what_a_consumer_could_not_trust(
    changes: dict[str, Any], field: str
) -> None:
    with pytest.raises(EnvelopeInvalidError) as caught:
        validate(minimal(**changes))
    assert caught.value.field == field


def test_L2_a_well_formed_envelope_validates() -> None:
    validate(minimal(results=(TestResult(name="t", metrics={"gpuTempC": "70"}),)))


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d.update(attempts=[]), "attempts"),
        (lambda d: d["run"].update(generation=1), "run.generation"),
        (lambda d: d["results"][0].update(attempts=[]), "results[0].attempts"),
        (lambda d: d["results"][0]["violations"][0].update(x=1), "results[0].violations[0].x"),
        (lambda d: d["summary"].update(total=1), "summary.total"),
    ],
)
def test_strict_decode_refuses_unknown_fields_naming_them(
    mutate: Callable[[dict[str, Any]], None], field: str
) -> None:
    doc = json.loads(encode(minimal(results=(TestResult(
        name="t", violations=(Violation(metric="m"),)),))))  # fmt: skip
    mutate(doc)
    with pytest.raises(EnvelopeDecodeError) as caught:
        decode(json.dumps(doc))
    assert caught.value.field == field
    assert field in str(caught.value) and "unknown field" in str(caught.value)
    # Lenient decoding drops what it does not know and keeps the rest.
    assert decode(json.dumps(doc), strict=False).results[0].name == "t"


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"summary": {"passed": "1", "failed": 0, "errored": 0, "skipped": 0}}, "summary.passed"),
        ({"summary": {"passed": 1.5, "failed": 0, "errored": 0, "skipped": 0}}, "summary.passed"),
        ({"summary": {"passed": True, "failed": 0, "errored": 0, "skipped": 0}}, "summary.passed"),
        ({"sentAt": "yesterday"}, "sentAt"),
        ({"sentAt": "2026-13-01T00:00:00Z"}, "sentAt"),
        ({"baseline": "true"}, "baseline"),
        ({"fingerprint": {"n": 1}}, "fingerprint.n"),
        ({"results": {"name": "t"}}, "results"),
        ({"summary": {"passed": 2**31, "failed": 0, "errored": 0, "skipped": 0}}, "summary.passed"),
    ],
)
def test_decode_refuses_wrong_types_naming_the_field(patch: dict[str, object], field: str) -> None:
    doc = json.loads(encode(minimal()))
    doc.update(patch)
    with pytest.raises(EnvelopeDecodeError) as caught:
        decode(json.dumps(doc))
    assert caught.value.field == field


def test_decode_refuses_what_is_not_json_or_not_an_object() -> None:
    with pytest.raises(EnvelopeDecodeError, match="not JSON"):
        decode(b"\xff{")
    with pytest.raises(EnvelopeDecodeError, match="expected an object"):
        decode(b"[]")


def test_a_go_written_envelope_decodes_with_nanoseconds_and_nulls() -> None:
    go = (
        '{"version":"burnin.glimmer.ai/v1alpha1","deliveryId":"abc","reason":"Checkpoint",'
        '"sentAt":"2026-12-01T12:00:00.123456789Z","run":{"namespace":"n","name":"r","uid":"u"},'
        '"phase":"Running","checkpointSequence":3,"fingerprint":null,"results":[{"name":"t",'
        '"kind":"gpu-burn","phase":"Running","startedAt":"2026-12-01T11:00:00+01:00",'
        '"metrics":{"gpuTempC":"71"}}],"summary":{"passed":0,"failed":0,"errored":0,"skipped":0}}'
    )
    env = decode(go)
    assert env.sent_at == "2026-12-01T12:00:00.123456789Z"  # kept exactly, never rounded
    assert env.checkpoint_sequence == 3 and env.fingerprint == {}
    assert env.results[0].started_at == "2026-12-01T11:00:00+01:00"


# --- properties ------------------------------------------------------------------

_names = st.one_of(st.from_regex(r"\A[a-z][A-Za-z0-9]{0,20}\Z"), st.sampled_from(sorted(REGISTRY)))
_text = st.text(max_size=12)
_times = st.one_of(
    st.just(""),
    st.datetimes(
        min_value=datetime(1970, 1, 1), max_value=datetime(2200, 1, 1), timezones=st.just(UTC)
    ).map(format_sent_at),
)
_i32 = st.integers(min_value=0, max_value=2**31 - 1)
_results = st.builds(
    TestResult,
    name=_text, kind=_text, scope=_text, phase=_text,
    nodes=st.lists(_text, max_size=3).map(tuple), started_at=_times, finished_at=_times,
    metrics=st.dictionaries(_names, _text, max_size=4), message=_text,
    violations=st.lists(st.builds(Violation, index=_i32, metric=_text, cause=_text,
                                  kind=_text, reason=_text), max_size=2).map(tuple),
    not_evaluated=st.lists(st.builds(NotEvaluated, metric=_text, reason=_text),
                           max_size=2).map(tuple),
    unmeasurable=st.lists(_text, max_size=2).map(tuple),
    artifacts=st.lists(st.builds(ArtifactRef, name=_text, media_type=_text,
                                 size_bytes=st.integers(0, 2**40), digest=_text),
                       max_size=2).map(tuple),
    variant_axes=st.dictionaries(_text, _text, max_size=2),
    segments=st.none() | st.builds(SegmentSummary, completed=_i32, required=_i32,
                                   segment_seconds=_i32, truncated_attempts=_i32),
    provenance=st.sampled_from(["", "sim", "silicon", "unknown"]), suspect=st.booleans(),
)  # fmt: skip
_envelopes = st.builds(
    Envelope,
    baseline=st.booleans(), delivery_id=st.text(min_size=1, max_size=8),
    reason=st.sampled_from(["RunPhaseChanged", "TestCompleted", "Checkpoint"]),
    sent_at=_times.filter(bool),
    run=st.builds(RunRef, namespace=_text, name=_text, uid=st.text(min_size=1, max_size=8),
                  profile=_text),
    cluster=st.none() | st.builds(ClusterRef, name=_text, uid=_text),
    phase=_text, cancel_reason=_text, checkpoint_sequence=st.integers(0, 10**6),
    fingerprint=st.dictionaries(_text, _text, max_size=3),
    results=st.lists(_results, max_size=3).map(tuple),
    summary=st.builds(Summary, passed=_i32, failed=_i32, errored=_i32, skipped=_i32),
    provenance=_text, certifies_silicon=st.booleans(),
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(_envelopes)
def test_L1_property_decode_of_encode_is_identity_and_metric_keys_pass_the_grammar(
    env: Envelope,
) -> None:
    assert decode(encode(env)) == env
    validate(env)  # every generated metric key obeys B1, so L2 accepts the envelope

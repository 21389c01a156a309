"""The one result codec (I4; its free-text clamping, I21) and wire.py over it."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from glimmer.controllers.run import wire
from glimmer.verdict import (
    AttemptRecord,
    Cause,
    NotEvaluated,
    Phase,
    Provenance,
    TestResultState,
    Trigger,
    Violation,
    ViolationKind,
    record_attempt,
)
from glimmer.verdict.codec import (
    DECIDING,
    MAX_MESSAGE_BYTES,
    MAX_REASON_BYTES,
    clamp_text,
    result_from_json,
    result_to_json,
)
from tests.unit.verdict.helpers import gte, judge

GATES = [gte("bw", "100")]


def settled_state(**overrides: Any) -> TestResultState:
    verdict = judge("bw=150\nprovenance=silicon\nRUNNER_PASS\n", GATES)
    state = record_attempt(
        TestResultState(name="t", kind="custom"), verdict, retry_on_error_limit=0
    )
    return TestResultState(**{**{f: getattr(state, f) for f in state.__slots__}, **overrides})


# --- clamping ------------------------------------------------------------------------


def test_I21_clamp_cuts_on_a_utf8_boundary_with_a_visible_suffix() -> None:
    text = "é" * 5000  # 2 bytes each
    out = clamp_text(text, 101)
    assert len(out.encode("utf-8")) <= 101
    assert out.endswith(" …[truncated, 10000 bytes]")
    out.encode("utf-8").decode("utf-8")  # whole characters only
    assert clamp_text(out, 101) == out  # idempotent: re-encoding never shrinks again
    assert clamp_text("short", 101) == "short"


def test_I21_every_free_text_field_is_clamped() -> None:
    long = "x" * 100_000
    state = settled_state(
        phase=Phase.FAILED,
        message=long,
        violations=(Violation(0, "bw", ViolationKind.UNSATISFIED, Cause.MEASUREMENT, long),),
        not_evaluated=(NotEvaluated("s", long),),
        attempts=(
            AttemptRecord(
                attempt=1,
                trigger=Trigger.INITIAL,
                phase=Phase.FAILED,
                exit_code=1,
                message=long + "y",
                metrics={},
            ),
        ),
    )
    out = result_to_json(state)
    assert len(out["message"].encode()) <= MAX_MESSAGE_BYTES
    assert len(out["violations"][0]["reason"].encode()) <= MAX_REASON_BYTES
    assert len(out["notEvaluated"][0]["reason"].encode()) <= MAX_REASON_BYTES
    assert len(out["attempts"][0]["message"].encode()) <= MAX_MESSAGE_BYTES
    assert "truncated" in out["message"]


def test_I21_synthetic_result_message_is_clamped() -> None:
    out = wire.synthetic_result("resolve", "e" * 50_000)
    assert len(out["message"].encode()) <= MAX_MESSAGE_BYTES


# --- one shape ------------------------------------------------------------------------


def test_I21_empty_violation_reason_is_omitted_and_decodes_empty() -> None:
    state = settled_state(
        phase=Phase.FAILED,
        violations=(Violation(0, "bw", ViolationKind.NOT_REPORTED, Cause.EVIDENCE, ""),),
    )
    out = result_to_json(state)
    assert "reason" not in out["violations"][0]
    assert result_from_json(out, required=True).violations[0].reason == ""


def test_I21_absent_provenance_decodes_unknown() -> None:
    result = {"name": "t", "kind": "custom", "phase": "Passed", "attempts": [{"attempt": 1}]}
    state = result_from_json(result, required=True)
    assert state.provenance is Provenance.UNKNOWN
    assert state.attempts[0].provenance is Provenance.UNKNOWN
    assert result_from_json({**result, "provenance": "SIM"}, required=True).provenance is (
        Provenance.SIM
    )
    assert result_from_json({**result, "provenance": "x"}, required=True).provenance is (
        Provenance.UNKNOWN
    )


def test_I21_unreadable_phase_decodes_error() -> None:
    result = {"name": "t", "kind": "custom", "phase": "Pased", "attempts": [{"phase": 7}]}
    state = result_from_json(result, required=True)
    assert state.phase is Phase.ERROR and state.attempts[0].phase is Phase.ERROR


def test_I21_garbage_never_crashes_the_decoder() -> None:
    result: dict[str, Any] = {
        "name": None,
        "phase": None,
        "repeatsRequired": "x",
        "repeatsCompleted": [],
        "errorRetries": {},
        "attempts": ["nope", {"attempt": "one", "exitCode": "z", "metrics": [1]}],
        "violations": [{"kind": "Weird", "cause": "Who", "index": "i"}, 3],
        "notEvaluated": [{"metric": "m"}],
        "unmeasurable": "abc",
        "metrics": "nope",
    }
    state = result_from_json(result, required=True)
    assert state.phase is Phase.ERROR
    assert (state.repeats_required, state.repeats_completed, state.error_retries) == (1, 0, 0)
    assert state.attempts[0].exit_code == -1 and dict(state.attempts[0].metrics) == {}
    assert state.violations[0].cause is Cause.EVIDENCE
    assert state.not_evaluated[0].reason == "unmeasurable on this hardware"


# --- metrics stored once -------------------------------------------------------------


def test_I21_a_settled_result_stores_its_deciding_metrics_once() -> None:
    state = settled_state()
    out = result_to_json(state)
    (attempt,) = out["attempts"]
    assert attempt[DECIDING] is True
    assert "metrics" not in attempt and "message" not in attempt
    assert out["metrics"] == {"bw": "150", "provenance": "silicon"}
    assert result_from_json(out, required=True) == state


def test_I21_an_open_result_keeps_every_attempt_whole() -> None:
    verdict = judge("bw=150\nprovenance=silicon\n", GATES)
    state = record_attempt(
        TestResultState(name="t", kind="custom", repeats_required=2),
        verdict,
        retry_on_error_limit=0,
    )
    out = result_to_json(state)
    assert DECIDING not in out["attempts"][0]
    assert out["attempts"][0]["metrics"] == out["metrics"]


def test_I21_a_force_settled_result_keeps_the_attempt_whole() -> None:
    state = settled_state(phase=Phase.ERROR, message="terminated")
    out = result_to_json(state)
    assert DECIDING not in out["attempts"][0] and out["attempts"][0]["metrics"]


# --- wire.py is a thin adapter -------------------------------------------------------


def test_I21_wire_adapter_is_the_codec_and_leaves_the_in_flight_attempt_out() -> None:
    state = settled_state()
    base = {"name": "t", "kind": "custom", "scope": "Node", "nodes": ["n1"], "phase": "Running"}
    written = wire.state_to_wire(base, state)
    assert written == result_to_json(state, base=base)
    assert written["scope"] == "Node" and written["nodes"] == ["n1"]
    running = {"attempt": 2, "trigger": "Repeat", "phase": "Running", "podName": "p2"}
    with_flight = {**written, "attempts": [*written["attempts"], running]}
    assert wire.state_from_wire(with_flight, required=True) == state
    assert wire.in_flight(with_flight) == running


# --- round trip ----------------------------------------------------------------------

TEXT = st.text(st.characters(codec="utf-8"), max_size=40)
METRICS = st.dictionaries(st.sampled_from(["bw", "gpuTempC", "xidEvents"]), TEXT, max_size=3)
PROVENANCE = st.sampled_from(list(Provenance))
ATTEMPT = st.builds(
    AttemptRecord,
    attempt=st.integers(1, 5),
    trigger=st.sampled_from(list(Trigger)),
    phase=st.sampled_from([p for p in Phase if p.terminal]),
    exit_code=st.integers(-1, 255),
    message=TEXT,
    metrics=METRICS,
    provenance=PROVENANCE,
    node=TEXT,
    pod_name=TEXT,
    started_at=st.none() | st.just("2024-01-01T00:00:00Z"),
    finished_at=st.none() | st.just("2024-01-01T00:01:00Z"),
)
STATE = st.builds(
    TestResultState,
    name=TEXT,
    kind=TEXT,
    required=st.booleans(),
    phase=st.sampled_from(list(Phase)),
    repeats_required=st.integers(1, 4),
    repeats_completed=st.integers(0, 4),
    error_retries=st.integers(0, 3),
    attempts=st.lists(ATTEMPT, max_size=3).map(tuple),
    message=TEXT,
    metrics=METRICS,
    violations=st.lists(
        st.builds(
            Violation,
            index=st.integers(0, 9),
            metric=TEXT,
            kind=st.sampled_from(list(ViolationKind)),
            cause=st.sampled_from(list(Cause)),
            reason=TEXT,
        ),
        max_size=2,
    ).map(tuple),
    not_evaluated=st.lists(st.builds(NotEvaluated, metric=TEXT, reason=TEXT), max_size=2).map(
        tuple
    ),
    unmeasurable=st.lists(TEXT, max_size=3).map(lambda xs: tuple(sorted(xs))),
    provenance=PROVENANCE,
    suspect=st.booleans(),
)


@settings(max_examples=500, deadline=None)
@given(STATE)
def test_I21_codec_round_trips_every_state_within_the_budget(state: TestResultState) -> None:
    out = result_to_json(state)
    assert result_from_json(out, required=state.required) == state
    assert result_to_json(result_from_json(out, required=state.required)) == out

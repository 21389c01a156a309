"""H1, H2, G6, N5, N6: the checkpoint and not-run-here rules both dispatchers share.

``glimmer.verdict.checkpoint`` decides when a checkpoint is due, how a running
runner's output is read, what is kept and the envelope's sequence;
``glimmer.verdict.not_run_here`` settles a test a bare-host run does not execute. Both
dispatchers call these very functions (the identity tests below keep it so).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from glimmer.contract.report import MAX_LINE_BYTES, read_report
from glimmer.verdict import (
    Phase,
    Provenance,
    ResultClosedError,
    TestResultState,
    record_attempt,
    run_phase,
    run_provenance,
)
from glimmer.verdict.attempt import AttemptVerdict
from glimmer.verdict.checkpoint import (
    RunningLog,
    checkpoint_metrics,
    checkpoint_reading,
    checkpoint_sequence,
    checkpoint_wait,
)
from glimmer.verdict.not_run_here import not_run_here

# --- H1: the cadence --------------------------------------------------------------------


def test_H1_a_checkpoint_is_due_an_interval_after_the_start_or_the_last_one() -> None:
    assert checkpoint_wait(10, since=100.0, now=104.0) == 6.0
    assert checkpoint_wait(10, since=100.0, now=110.0) == 0.0
    wait = checkpoint_wait(10, since=100.0, now=125.0)
    assert wait is not None and wait < 0  # overdue: due now
    assert checkpoint_wait(10, since=None, now=5.0) == 0.0  # no start known: due now


@pytest.mark.parametrize("interval", [0, -5])
def test_H1_a_test_without_a_positive_interval_takes_no_checkpoint(interval: int) -> None:
    assert checkpoint_wait(interval, since=0.0, now=1e9) is None


# --- H1, I11: the read ------------------------------------------------------------------


def test_H1_the_running_log_never_reads_the_unterminated_last_line() -> None:
    log = RunningLog(kind="custom")
    log.feed(b"bw=5\nbw=12\nbw=1")  # the runner is mid-write: "bw=1" of "bw=100"
    assert log.snapshot().metrics == {"bw": "12"}
    log.feed(b"00\n")
    assert log.snapshot().metrics == {"bw": "100"}
    assert log.finish().metrics == {"bw": "100"}


def test_H1_an_over_long_line_is_handed_on_without_waiting_for_its_end() -> None:
    log = RunningLog(kind="custom")
    log.feed(b"bw=5\n" + b"x" * (MAX_LINE_BYTES + 10))
    log.feed(b"still no newline")
    report = log.snapshot()
    assert report.metrics == {"bw": "5"} and report.unreadable_lines == 1


@given(
    output=st.lists(
        st.sampled_from([b"bw=5", b"bw=12", b"tempC=70", b"prose", b"", b"provenance=sim"]),
        max_size=8,
    ).map(lambda lines: b"\n".join(lines) + b"\n"),
    cuts=st.lists(st.integers(min_value=0, max_value=200), max_size=6),
)
def test_H1_the_running_log_reads_complete_output_as_the_final_read_does(
    output: bytes, cuts: list[int]
) -> None:
    """However the bytes arrive, a snapshot of complete lines is the whole-output read."""
    log = RunningLog(kind="custom")
    start = 0
    for cut in sorted(c % (len(output) + 1) for c in cuts):
        log.feed(output[start:cut])
        start = cut
    log.feed(output[start:])
    whole = read_report(output, kind="custom", exit_code=0)
    snapshot = log.snapshot()
    assert (snapshot.metrics, snapshot.declared_provenance) == (
        whole.metrics,
        whole.declared_provenance,
    )


def test_H1_I11_nothing_is_kept_from_a_cut_read_or_one_without_metrics() -> None:
    measured = read_report(b"bw=3\nbw=2\n", kind="custom", exit_code=0)
    assert checkpoint_reading(measured, whole=True) == {"bw": "2"}
    assert checkpoint_reading(measured, whole=False) is None
    assert (
        checkpoint_reading(read_report(b"warming up\n", kind="custom", exit_code=0), whole=True)
        is None
    )


def test_G6_a_soak_checkpoint_shows_the_fold_and_a_plain_one_the_window() -> None:
    window = {"elapsedS": "30", "gpuTempC": "70"}
    assert checkpoint_metrics(window, aggregate=None) == window
    folded = checkpoint_metrics(window, aggregate={"elapsedS": "60", "gpuTempC": "80"})
    assert folded == {"elapsedS": "90", "gpuTempC": "80"}  # Sum and Max, never replaced


# --- H2: the sequence -------------------------------------------------------------------


def test_H2_the_sequence_counts_the_plans_smallest_positive_interval_from_the_run_start() -> None:
    assert checkpoint_sequence([0, 30, 10], started=1000.0, now=1000.0) == 0
    assert checkpoint_sequence([0, 30, 10], started=1000.0, now=1019.9) == 1
    assert checkpoint_sequence([0, 30, 10], started=1000.0, now=1020.0) == 2
    assert checkpoint_sequence([30, 10], started=1000.0, now=1345.0) == 34


def test_H2_no_sequence_without_a_checkpointing_test_or_a_start() -> None:
    assert checkpoint_sequence([0, 0], started=1000.0, now=2000.0) is None
    assert checkpoint_sequence([], started=1000.0, now=2000.0) is None
    assert checkpoint_sequence([10], started=None, now=2000.0) is None


@given(
    intervals=st.lists(st.integers(min_value=-5, max_value=600), min_size=1, max_size=5),
    elapsed=st.floats(min_value=0, max_value=1e6, allow_nan=False),
)
def test_H2_one_sequence_per_interval_however_often_it_is_computed(
    intervals: list[int], elapsed: float
) -> None:
    """The same moment always gives the same sequence, so the same delivery ID."""
    first = checkpoint_sequence(intervals, started=0.0, now=elapsed)
    again = checkpoint_sequence(intervals, started=0.0, now=elapsed)
    assert first == again
    positive = [i for i in intervals if i > 0]
    if positive:
        assert first == int(elapsed // min(positive))
    else:
        assert first is None


# --- N5: a test not run here ------------------------------------------------------------


def test_N5_a_test_not_run_here_is_skipped_with_no_attempt_and_no_provenance() -> None:
    state = not_run_here(TestResultState(name="link", kind="tcp-baseline"), reason="elsewhere")
    assert state.phase is Phase.SKIPPED and state.message == "elsewhere"
    assert state.attempts == () and state.metrics == {}
    assert state.provenance is Provenance.UNKNOWN and not state.suspect


def test_N5_a_test_that_has_run_cannot_be_recorded_as_not_run_here() -> None:
    ran = record_attempt(
        TestResultState(name="t", kind="custom"),
        AttemptVerdict(
            phase=Phase.FAILED, message="short", exit_code=1, metrics={}, unmeasurable=()
        ),
        retry_on_error_limit=0,
    )
    with pytest.raises(ResultClosedError):
        not_run_here(ran, reason="elsewhere")


def test_N5_a_required_test_not_run_here_never_lets_the_run_certify() -> None:
    """The Node test Passed on silicon; the link was not run here: the run's phase is
    the Node test's (D6), and it certifies nothing (I16)."""
    node = record_attempt(
        TestResultState(name="gemm", kind="gemm-sweep"),
        AttemptVerdict(
            phase=Phase.PASSED, message="OK", exit_code=0, metrics={"tflops": "900"},
            unmeasurable=(), provenance=Provenance.SILICON,
        ),
        retry_on_error_limit=0,
    )  # fmt: skip
    link = not_run_here(TestResultState(name="ib", kind="ib-write-bw"), reason="elsewhere")
    phase = run_phase([node, link])
    assert phase is Phase.PASSED
    assert run_provenance([node], phase=phase).certifies_silicon  # the Node test alone would
    origin = run_provenance([node, link], phase=phase)
    assert not origin.certifies_silicon
    optional = not_run_here(
        TestResultState(name="ib", kind="ib-write-bw", required=False), reason="elsewhere"
    )
    # An optional test never decides: what certifies is the required tests that ran.
    assert run_provenance([node, optional], phase=phase).certifies_silicon


# --- one function, both dispatchers -----------------------------------------------------


def test_N6_both_dispatchers_checkpoint_through_the_same_functions() -> None:
    from glimmer.controllers.run import evidence, soak
    from glimmer.local import checkpoints

    for name in ("RunningLog", "checkpoint_reading", "checkpoint_sequence", "checkpoint_wait"):
        assert getattr(evidence, name) is getattr(checkpoints, name), name
    assert soak.published_metrics is checkpoints.checkpoint_metrics

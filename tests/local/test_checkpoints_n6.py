"""N6: ``glimmer run`` checkpoints a running runner as the operator does (H1, H2, I23).

A test with ``checkpointIntervalSeconds`` is read while it runs, at the operator's
cadence and through the operator's functions: its metrics so far (never the
unterminated last line) go on the open result with ``lastCheckpointAt``, are shown on
the terminal, and with ``--sink-url`` are delivered as ``Checkpoint`` envelopes, once
per sequence, under the run's one UID, before the verdict's envelope. A checkpoint never
changes a phase; an attempt stopped after one keeps what it read (I23). A side that
decides nothing takes none.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
import yaml
from rich.console import Console

from glimmer.contract import RunnerReport
from glimmer.contract.envelope import decode, delivery_id
from glimmer.local.checkpoints import CheckpointWatch, run_checkpoints
from glimmer.local.dispatcher import LocalOptions, LocalResult, SilentReporter, run_plan
from glimmer.local.interrupt import signals_interrupt
from glimmer.local.progress import RunProgress
from glimmer.local.records import SideAttempt
from glimmer.local.results import result_json, run_document
from glimmer.plan import GroupRendezvous, PairRendezvous, PinnedPlan, PlannedTest, build_plan
from glimmer.verdict import Phase, TestResultState
from tests.local.bare_sides import glimmer_run, run_json

GATE = [{"metric": "bw", "comparison": "GreaterThanOrEqual", "value": "10"}]
#: Prints a measurement and half a line, waits, then finishes: checkpoints fall in the wait.
SLOW = "echo bw=5; printf 'bw=1'; sleep 2.6; echo 00; echo bw=12; echo OK"


def plan_of(script: str, **spec: Any) -> PinnedPlan:
    plan = build_plan(
        profile={"tests": [{"testRef": "t"}]},
        tests={"t": {"kind": "custom", "runner": {"command": ["sh", "-c", script]}, **spec}},
        targets=["host"],
        max_concurrent_nodes=1,
    )
    assert isinstance(plan, PinnedPlan), plan
    return plan


class Recorder:
    """A checkpoint listener that keeps what it was told, as it was told it."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, Any], int | None, float]] = []

    def checkpoint(
        self, *, result: LocalResult, results: Sequence[LocalResult], envelope_sequence: int | None
    ) -> None:
        self.seen.append(
            (str(result.state.phase), result_json(result), envelope_sequence, time.monotonic())
        )


def test_N6_a_running_runner_is_checkpointed_at_its_interval_without_a_verdict(
    tmp_path: Path,
) -> None:
    recorder = Recorder()
    started = time.monotonic()
    run = run_plan(
        plan_of(SLOW, thresholds=GATE, checkpointIntervalSeconds=1),
        options=LocalOptions(node="host", report_dir=tmp_path, checkpoints=recorder),
        reporter=SilentReporter(),
    )
    assert len(recorder.seen) >= 2, recorder.seen
    for phase, shown, _, _at in recorder.seen:
        # bw=5 is below the gate: a checkpoint never fails anything; "bw=1" is half a line.
        assert phase == "Running" and shown["phase"] == "Running"
        assert shown["metrics"] == {"bw": "5"} and shown["lastCheckpointAt"]
        assert "provenance" not in shown  # no attempt recorded yet: nothing to be weakest of
    first_at = recorder.seen[0][3] - started
    assert 0.9 <= first_at < 2.0, f"first checkpoint {first_at:.2f}s in, interval 1s"
    # H2: one envelope per sequence: the sequences owed are distinct and increasing.
    owed = [seq for _, _, seq, _ in recorder.seen if seq is not None]
    assert owed and owed == sorted(set(owed)) and owed[0] >= 1
    (result,) = run.results
    assert result.state.phase is Phase.PASSED and dict(result.state.metrics) == {"bw": "12"}
    doc = run_document(run.results, node="host", profile="p", sim=None, started_at=0, finished_at=0)
    assert doc["results"][0]["lastCheckpointAt"]  # as in the status, it stays
    assert doc["results"][0]["metrics"] == {"bw": "12"}


def test_N6_a_test_without_an_interval_is_never_read_while_it_runs(tmp_path: Path) -> None:
    recorder = Recorder()
    run = run_plan(
        plan_of("echo bw=5; sleep 1.2; echo bw=12"),
        options=LocalOptions(node="host", report_dir=tmp_path, checkpoints=recorder),
        reporter=SilentReporter(),
    )
    assert recorder.seen == []
    assert (
        "lastCheckpointAt"
        not in run_document(
            run.results, node="host", profile="p", sim=None, started_at=0, finished_at=0
        )["results"][0]
    )


def test_N6_nothing_is_kept_before_the_runner_has_measured_anything(tmp_path: Path) -> None:
    recorder = Recorder()
    run_plan(
        plan_of("echo warming up; sleep 1.6; echo bw=12", checkpointIntervalSeconds=1),
        options=LocalOptions(node="host", report_dir=tmp_path, checkpoints=recorder),
        reporter=SilentReporter(),
    )
    assert recorder.seen == []


def test_I23_an_attempt_stopped_after_a_checkpoint_keeps_what_it_read(tmp_path: Path) -> None:
    """The checkpoint read miscompares=12; then the run is interrupted: the attempt is
    Error (no verdict) and keeps the checkpointed metrics as evidence."""

    class InterruptAfterCheckpoint(Recorder):
        def checkpoint(self, **told: Any) -> None:
            super().checkpoint(**told)
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C, as a terminal sends it

    # As glimmer run does: SIGINT becomes the interrupt, whatever handler an earlier test
    # in this process left behind (one left ignoring it would let the runner finish).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with signals_interrupt():
            run = run_plan(
                plan_of("echo miscompares=12; sleep 30", checkpointIntervalSeconds=1),
                options=LocalOptions(
                    node="host", report_dir=tmp_path, checkpoints=InterruptAfterCheckpoint()
                ),
                reporter=SilentReporter(),
            )
    finally:
        signal.signal(signal.SIGINT, previous)
    assert run.stopped
    (result,) = run.results
    assert result.state.phase is Phase.ERROR
    assert dict(result.state.attempts[-1].metrics) == {"miscompares": "12"}
    assert dict(result.state.metrics) == {"miscompares": "12"}


def test_N6_the_terminal_shows_each_checkpoint_as_evidence() -> None:
    out = StringIO()
    progress = RunProgress(
        sim=False, console=Console(file=out, force_terminal=False, width=200), ticking=False
    )
    progress.attempt_started(test="soak", attempt=1, index=0, total=1)
    local = LocalResult(state=TestResultState(name="soak", kind="custom"), scope="Node", node="n")
    local.checkpoint_metrics = {f"m{i}": str(i) for i in range(8)}
    progress.checkpoint(result=local)
    line = out.getvalue().splitlines()[-1]
    assert line.startswith("[1/1] soak: checkpoint: m0=0 m1=1")
    assert "(+2 more)" in line and "not a verdict" in line
    assert "\x1b" not in out.getvalue()


# --- through the CLI, with a receiver ----------------------------------------------------


class _Receiver:
    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        received = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                received.bodies.append(self.rfile.read(length))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *_: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/verdicts"


@pytest.fixture
def receiver() -> Iterator[_Receiver]:
    rx = _Receiver()
    thread = threading.Thread(target=rx.server.serve_forever, daemon=True)
    thread.start()
    yield rx
    rx.server.shutdown()
    rx.server.server_close()


def _profile(path: Path, script: str, **spec: Any) -> Path:
    test = {"kind": "custom", "runner": {"command": ["sh", "-c", script]}, **spec}
    body = {
        "kind": "BurnInProfile",
        "metadata": {"name": "p"},
        "spec": {"tests": [{"inline": test}]},
    }
    path.write_text(yaml.safe_dump(body))
    return path


def test_N6_checkpoint_envelopes_go_once_per_sequence_before_the_verdict_under_one_uid(
    tmp_path: Path, receiver: _Receiver
) -> None:
    suite = _profile(tmp_path / "p.yaml", SLOW, thresholds=GATE, checkpointIntervalSeconds=1)
    out = tmp_path / "r"
    result = glimmer_run(
        str(suite), "--node", "n0", "--results-dir", str(out), "--sink-url", receiver.url
    )
    assert result.exit_code == 0, result.output
    assert "checkpoint: bw=5" in result.output
    sent = [decode(body) for body in receiver.bodies]
    *checkpoints, verdict = sent
    assert checkpoints, [e.reason for e in sent]
    assert verdict.reason == "RunPhaseChanged" and verdict.phase == "Passed"
    uid = verdict.run.uid
    sequences = [e.checkpoint_sequence for e in checkpoints]
    assert sequences == sorted(set(sequences)) and sequences[0] >= 1
    for envelope in checkpoints:
        assert envelope.reason == "Checkpoint" and envelope.phase == "Running"
        assert envelope.run.uid == uid and envelope.run.namespace == "local"
        assert envelope.delivery_id == delivery_id(
            uid, "Checkpoint", str(envelope.checkpoint_sequence)
        )
        assert not envelope.certifies_silicon and envelope.node_verdicts == ()
        (shown,) = envelope.results
        assert (shown.phase, dict(shown.metrics)) == ("Running", {"bw": "5"})
        assert (envelope.summary.passed, envelope.summary.failed) == (0, 0)
    assert run_json(out)["results"][0]["lastCheckpointAt"]


def test_N6_without_a_sink_nothing_is_delivered_but_the_checkpoint_is_kept(
    tmp_path: Path,
) -> None:
    suite = _profile(tmp_path / "p.yaml", SLOW, thresholds=GATE, checkpointIntervalSeconds=1)
    out = tmp_path / "r"
    result = glimmer_run(str(suite), "--node", "n0", "--results-dir", str(out))
    assert result.exit_code == 0, result.output
    assert "checkpoint: bw=5" in result.output
    assert sorted(p.name for p in (out / "envelopes").iterdir()) == ["001-RunPhaseChanged.json"]
    assert run_json(out)["results"][0]["lastCheckpointAt"]


def test_N6_a_side_that_decides_nothing_takes_no_checkpoint(tmp_path: Path) -> None:
    suite = tmp_path / "p.yaml"
    test = {
        "kind": "custom", "scope": "Pair", "checkpointIntervalSeconds": 1,
        "runner": {"command": ["sh", "-c", "echo bw=5; sleep 1.5; echo OK"]},
    }  # fmt: skip
    body = {
        "kind": "BurnInProfile",
        "metadata": {"name": "p"},
        "spec": {"tests": [{"inline": test}]},
    }
    suite.write_text(yaml.safe_dump(body))
    result = glimmer_run(
        str(suite), "--role", "server", "--node", "a", "--peer-node", "b",
        "--results-dir", str(tmp_path / "r"),
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "checkpoint:" not in result.output


# --- the run's checkpointing, directly ----------------------------------------------------


class _Side:
    """A link side as the dispatcher sees it (only whether it decides matters here; a
    checkpoint decision must never reach for the rendezvous or fold a report)."""

    def __init__(self, *, decides: bool) -> None:
        self._decides = decides

    @property
    def decides(self) -> bool:
        return self._decides

    @property
    def rendezvous(self) -> PairRendezvous | GroupRendezvous:
        raise AssertionError("checkpointing never needs the rendezvous")

    @property
    def nodes(self) -> tuple[str, ...]:
        return ("a", "b")

    @property
    def record_node(self) -> str:
        return "a"

    def fold(self, *, test: PlannedTest, attempt: SideAttempt) -> RunnerReport:
        raise AssertionError("checkpointing never folds a side's report")


def test_N6_only_a_deciding_side_checkpoints() -> None:
    plan = plan_of("echo bw=5", checkpointIntervalSeconds=1)
    for decides, takes in ((False, False), (True, True)):
        options = LocalOptions(node="a", link=_Side(decides=decides))
        assert (run_checkpoints(plan, options=options, results=[]) is not None) is takes
    assert run_checkpoints(plan_of("echo bw=5"), options=LocalOptions(node="a"), results=[]) is None


def test_H2_a_sequence_is_owed_one_envelope_however_many_checkpoints_fall_in_it() -> None:
    plan = plan_of("echo bw=5", checkpointIntervalSeconds=10)
    recorder = Recorder()
    options = LocalOptions(node="host", checkpoints=recorder, run_started_at=1000.0)
    run = run_checkpoints(plan, options=options, results=[])
    assert run is not None
    local = LocalResult(state=TestResultState(name="t", kind="custom"), scope="Node", node="host")
    watch = CheckpointWatch(plan.tests[0], local=local, run=run)
    watch.feed(b"bw=5\n")
    for now in (1012.0, 1015.0, 1021.0):
        watch._take(run, now=now)
    assert [seq for _, _, seq, _ in recorder.seen] == [1, None, 2]


def test_H1_the_watch_reads_only_once_the_interval_has_passed_on_its_clock() -> None:
    """Driven by a hand-moved clock: output is there from the start, yet nothing is read
    until the interval has passed since the result started, then the next an interval
    after that."""
    now = [1000.0]
    plan = plan_of("echo bw=5", checkpointIntervalSeconds=10)
    recorder = Recorder()
    options = LocalOptions(node="host", checkpoints=recorder, clock=lambda: now[0])
    run = run_checkpoints(plan, options=options, results=[])
    assert run is not None
    local = LocalResult(state=TestResultState(name="t", kind="custom"), scope="Node", node="host")

    def settle(seconds: float = 0.6) -> int:
        time.sleep(seconds)  # the watch looks at its clock every 0.25 s
        return len(recorder.seen)

    watch = CheckpointWatch(plan.tests[0], local=local, run=run)
    watch.feed(b"bw=5\n")  # printed before the watch first looks
    with watch:
        assert settle() == 0
        now[0] = 1009.0
        assert settle() == 0
        now[0] = 1010.0
        assert settle() == 1 and local.last_checkpoint_at == 1010.0
        now[0] = 1019.5
        assert settle() == 1
        now[0] = 1020.0
        assert settle() == 2


def test_H1_a_read_that_kept_nothing_is_retried_an_interval_later_not_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The operator requeues an interval after every read; so does the watch."""
    now = [1000.0]
    plan = plan_of("echo warming up", checkpointIntervalSeconds=10)
    run = run_checkpoints(plan, options=LocalOptions(node="host", clock=lambda: now[0]), results=[])
    assert run is not None
    local = LocalResult(state=TestResultState(name="t", kind="custom"), scope="Node", node="host")
    watch = CheckpointWatch(plan.tests[0], local=local, run=run)
    reads: list[float] = []
    snapshot = watch._log.snapshot

    def counted() -> Any:
        reads.append(now[0])
        return snapshot()

    monkeypatch.setattr(watch._log, "snapshot", counted)
    watch.feed(b"warming up\n")
    with watch:
        now[0] = 1010.0
        time.sleep(0.8)
        assert reads == [1010.0]
        now[0] = 1020.0
        time.sleep(0.6)
        assert reads == [1010.0, 1020.0]

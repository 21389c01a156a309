"""One brain, two dispatchers: the same evidence gives the same result in both.

The operator (the run reconciler, driven on the in-memory apiserver with a hand-driven
kubelet) and ``glimmer run`` (the bare-host dispatcher, running a real process that
prints the exact bytes) are fed the same exit codes and output bytes for the same
BurnInTest spec and retry budget. Their results must agree field for field, in the
wire shape each writes (``status.results[]`` and ``run.json``'s ``results[]``) and
after decoding both through the one result codec; the run-level verdict too. The only
fields allowed to differ are named once, in :data:`LEGITIMATE_DIFFERENCES`.
"""

from __future__ import annotations

import asyncio
import copy
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glimmer.contract.envelope import encode
from glimmer.contract.report import MAX_LINE_BYTES
from glimmer.local.dispatcher import LocalOptions, LocalResult, SilentReporter, run_plan
from glimmer.local.links import host_plan, not_run_here
from glimmer.local.results import checkpoint_document, result_json, run_document
from glimmer.plan import PinnedPlan, PlanRefusal, build_plan
from glimmer.sinks import build_envelope
from glimmer.sinks.bare import checkpoint_envelope
from glimmer.verdict import Phase, TestResultState
from glimmer.verdict.codec import result_from_json
from tests.unit.controllers.run.harness import NS, Cluster, custom_test

JSON = dict[str, Any]
NODE: Final = "n0"
TEST: Final = "t"

#: Every field that may differ between the two dispatchers' result for the same
#: evidence, and why. Anything not listed here must be identical.
LEGITIMATE_DIFFERENCES: Final[Mapping[tuple[str, str], str]] = {
    ("result", "startedAt"): "wall clock of each dispatcher",
    ("result", "finishedAt"): "wall clock of each dispatcher",
    ("result", "required"): "run.json only (the status reads it from the pinned plan)",
    ("result", "rawLogs"): "run.json only: the raw log files a bare host keeps",
    ("result", "startedAtPrecise"): "run.json only: startedAt in milliseconds (M6)",
    ("result", "finishedAtPrecise"): "run.json only: finishedAt in milliseconds (M6)",
    ("result", "lastRetryTrigger"): "run.json only: the message that caused the last retry",
    ("result", "lastCheckpointAt"): "wall clock of each dispatcher (its presence is compared)",
    ("attempt", "podName"): "operator only: a bare host runs processes, not pods",
    ("attempt", "podUID"): "operator only: the adopted runner pod's UID (I18)",
    ("attempt", "startedAt"): "wall clock of each dispatcher",
    ("attempt", "finishedAt"): "wall clock of each dispatcher",
    ("artifact", "configMap"): "operator only: where the operator stored the payload",
    ("artifact", "key"): "operator only: the ConfigMap key",
    ("artifact", "file"): "run.json only: where the bare host stored the payload",
}

GATE: Final = [{"metric": "bw", "comparison": "GreaterThanOrEqual", "value": "10"}]
OPTIONAL_GATE: Final = [
    *GATE,
    {
        "metric": "peerBw",
        "comparison": "GreaterThanOrEqual",
        "value": "5",
        "applicability": "RequiredIfMeasurable",
    },
]

#: The stand-in for the runner image: print attempt N's bytes exactly, exit its code;
#: a lingering attempt first leaves a background child holding stdout open (a container
#: ends with its main process, so the cluster never waits for that child).
SCRIPT: Final = (
    'if [ -e "$0/linger.$BURNIN_ATTEMPT" ]; then (sleep 300 &); fi; '
    'cat "$0/out.$BURNIN_ATTEMPT"; exit "$(cat "$0/code.$BURNIN_ATTEMPT")"'
)
#: A lingering runner's attempt must end at its main process's exit: far below any deadline.
LINGER_BOUND_SECONDS: Final = 10.0

BEGIN = b"-----BEGIN BURNIN ARTIFACT %s application/json-----"
END = b"-----END BURNIN ARTIFACT-----"


@dataclass(frozen=True)
class Evidence:
    """What one runner execution left: its exit code and its output bytes, and whether
    its main process exited leaving a background child holding stdout open."""

    exit_code: int
    output: bytes
    lingers: bool = False


@dataclass(frozen=True)
class Case:
    id: str
    attempts: tuple[Evidence, ...]
    expected: Phase
    spec: Mapping[str, Any] = field(default_factory=dict)
    retry_on_error_limit: int = 0
    provenance: str = "unknown"


def ok(output: bytes) -> Evidence:
    return Evidence(0, output)


CASES: Final = [
    Case("passed", (ok(b"bw=12\nOK\n"),), Phase.PASSED, {"thresholds": GATE}),
    Case("failed-exit-1", (Evidence(1, b"bw=12\nBAD\n"),), Phase.FAILED, {"thresholds": GATE}),
    Case("failed-threshold", (ok(b"bw=9\nOK\n"),), Phase.FAILED, {"thresholds": GATE}),
    Case("declared-skip", (Evidence(2, b"X_SKIP: no GPU here\n"),), Phase.SKIPPED),
    Case("undeclared-skip", (Evidence(2, b"oops\n"),), Phase.ERROR, {"thresholds": GATE}),
    Case("crash-no-output", (Evidence(3, b""),), Phase.ERROR),
    Case("empty-harvest", (ok(b"only prose\n"),), Phase.ERROR, {"thresholds": GATE}),
    Case(
        "over-long-line",
        (ok(b"bw=12\n" + b"x" * (MAX_LINE_BYTES + 7) + b"\nOK\n"),),
        Phase.ERROR,
        {"thresholds": GATE},
    ),
    Case(
        "orphan-end-discards-what-came-before",
        (ok(b"bw=3\n" + END + b"\nbw=12\nOK\n"),),
        Phase.PASSED,
        {"thresholds": GATE},
    ),
    Case(
        "orphan-end-leaves-nothing",
        (ok(b"bw=12\n" + END + b"\nOK\n"),),
        Phase.ERROR,
        {"thresholds": GATE},
    ),
    Case(
        "main-exits-leaving-a-child-holding-stdout",
        (Evidence(0, b"bandwidthGbps=150\nbw=12\nDONE\n", lingers=True),),
        Phase.PASSED,
        {"thresholds": GATE},
    ),
    Case(
        "main-exits-1-leaving-a-child-holding-stdout",
        (Evidence(1, b"bw=12\nBAD\n", lingers=True),),
        Phase.FAILED,
        {"thresholds": GATE},
    ),
    Case(
        "error-then-retry-passed",
        (Evidence(3, b"no device\n"), ok(b"bw=12\nOK\n")),
        Phase.PASSED,
        {"thresholds": GATE},
        retry_on_error_limit=1,
    ),
    Case(
        "error-retries-exhausted",
        (Evidence(3, b"no device\n"), Evidence(137, b"bw=12\n")),
        Phase.ERROR,
        {"thresholds": GATE},
        retry_on_error_limit=1,
    ),
    Case(
        "repeats-all-pass",
        (ok(b"bw=11\nOK\n"), ok(b"bw=15\nOK\n"), ok(b"bw=12\nOK\n")),
        Phase.PASSED,
        {"thresholds": GATE, "repeatCount": 3},
    ),
    Case(
        "repeats-second-fails",
        (ok(b"bw=11\nOK\n"), ok(b"bw=5\nslow\n")),
        Phase.FAILED,
        {"thresholds": GATE, "repeatCount": 3},
    ),
    Case(
        "error-retry-inside-repeats",
        (ok(b"bw=11\n"), Evidence(3, b"flake\n"), ok(b"bw=12\n")),
        Phase.PASSED,
        {"thresholds": GATE, "repeatCount": 2},
        retry_on_error_limit=2,
    ),
    Case("n/a-required-metric", (ok(b"bw=n/a\nOK\n"),), Phase.FAILED, {"thresholds": GATE}),
    Case(
        "n/a-optional-metric",
        (ok(b"bw=12\npeerBw=n/a\nOK\n"),),
        Phase.PASSED,
        {"thresholds": OPTIONAL_GATE},
    ),
    Case("nan", (ok(b"bw=NaN\nOK\n"),), Phase.FAILED, {"thresholds": GATE}),
    Case(
        "declared-silicon",
        (ok(b"bw=12\nprovenance=silicon\nOK\n"),),
        Phase.PASSED,
        {"thresholds": GATE},
        provenance="silicon",
    ),
    Case(
        "declared-sim-is-suspect",
        (ok(b"bw=12\nprovenance=sim\nOK\n"),),
        Phase.PASSED,
        {"thresholds": GATE},
        provenance="sim",
    ),
    Case("invalid-utf8", (ok(b"bw=12\n\xff\xfe odd\nOK\n"),), Phase.PASSED, {"thresholds": GATE}),
    Case("invalid-metric-name", (ok(b"bw=12\n9bad=1\nOK\n"),), Phase.PASSED, {"thresholds": GATE}),
    Case(
        "artifacts",
        (
            ok(
                BEGIN % b"a.json"
                + b"\n{}\n"
                + END
                + b"\n"
                + BEGIN % b"../x"
                + b"\n1\n"
                + END
                + b"\nbw=12\nOK\n"
            ),
        ),
        Phase.PASSED,
        {"thresholds": GATE},
    ),
]


# --- the two dispatchers ----------------------------------------------------------------


def spec_for(case_spec: Mapping[str, Any]) -> JSON:
    """The one BurnInTest spec both dispatchers run (its command is the operator's
    image entrypoint; the bare host runs :data:`SCRIPT` in its place)."""
    return custom_test("echo", **copy.deepcopy(dict(case_spec)))


async def operator_run(
    spec: Mapping[str, Any], attempts: Sequence[Evidence], *, retry_on_error_limit: int
) -> JSON:
    """The run reconciler's status after the kubelet reported each attempt in turn, for
    as long as the reconciler starts another runner pod."""
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={TEST: dict(spec)})
    await cluster.create_run(retryOnErrorLimit=retry_on_error_limit)
    await cluster.reconcile()
    for evidence in attempts:
        live = cluster.live_pods()
        if not live:
            break
        (pod_object,) = live
        pod = str(pod_object["metadata"]["name"])
        reason = "Completed" if evidence.exit_code == 0 else "Error"  # what a kubelet says
        await cluster.kubelet(pod, exit_code=evidence.exit_code, reason=reason)
        cluster.client.set_pod_log(pod, namespace=NS, text=evidence.output)
        await cluster.reconcile()
    assert cluster.live_pods() == [], "the operator wants more attempts than the case gives"
    status: JSON = (await cluster.run())["status"]
    return status


def local_run(
    spec: Mapping[str, Any],
    attempts: Sequence[Evidence],
    *,
    retry_on_error_limit: int,
    folder: Path,
) -> JSON:
    """``run.json`` of ``glimmer run`` over a runner that prints each attempt's bytes."""
    for number, evidence in enumerate(attempts, 1):
        (folder / f"out.{number}").write_bytes(evidence.output)
        (folder / f"code.{number}").write_text(str(evidence.exit_code))
        if evidence.lingers:
            (folder / f"linger.{number}").touch()
    plan = build_plan(
        profile={"tests": [{"testRef": TEST}]},
        tests={TEST: dict(spec)},
        targets=[NODE],
        max_concurrent_nodes=1,
    )
    assert not isinstance(plan, PlanRefusal), plan
    assert isinstance(plan, PinnedPlan)
    options = LocalOptions(
        node=NODE,
        retry_on_error_limit=retry_on_error_limit,
        image_commands={"custom": ["sh", "-c", SCRIPT, str(folder)]},
        report_dir=folder / "report",
    )
    started = time.monotonic()
    run = run_plan(plan, options=options, reporter=SilentReporter())
    assert not run.stopped, run.stopped
    if any(evidence.lingers for evidence in attempts):
        took = time.monotonic() - started
        assert took < LINGER_BOUND_SECONDS * len(attempts), f"waited {took:.0f} s on a child"
    return run_document(
        run.results, node=NODE, profile="prof", sim=None, started_at=0.0, finished_at=0.0
    )


# --- comparing --------------------------------------------------------------------------


def _without(entry: Mapping[str, Any], where: str) -> JSON:
    return {k: v for k, v in entry.items() if (where, k) not in LEGITIMATE_DIFFERENCES}


def comparable(result: Mapping[str, Any]) -> JSON:
    """A result with every legitimately differing field removed, at every level."""
    out = _without(result, "result")
    out["attempts"] = [_without(a, "attempt") for a in result.get("attempts") or []]
    if "artifacts" in result:
        refs = [_without(a, "artifact") for a in result["artifacts"]]
        out["artifacts"] = refs  # I31: both list them in document order
    return out


def decoded(result: Mapping[str, Any]) -> TestResultState:
    return result_from_json(comparable(result), required=True)


def run_verdict(*, phase: Any, provenance: Any, certifies: Any, counts: Sequence[Any]) -> JSON:
    return {"phase": phase, "provenance": provenance, "certifiesSilicon": certifies,
            "counts": list(counts)}  # fmt: skip


def assert_same(
    spec: Mapping[str, Any],
    attempts: Sequence[Evidence],
    *,
    retry_on_error_limit: int,
    folder: Path,
) -> JSON:
    """Run both dispatchers on the evidence, assert they agree; the local result."""
    status = asyncio.run(operator_run(spec, attempts, retry_on_error_limit=retry_on_error_limit))
    document = local_run(spec, attempts, retry_on_error_limit=retry_on_error_limit, folder=folder)
    (theirs,) = status["results"]
    (ours,) = document["results"]
    for result in (theirs, ours):
        for attempt in result["attempts"]:
            assert attempt.get("startedAt") and attempt.get("finishedAt"), attempt
    assert comparable(ours) == comparable(theirs)
    assert decoded(ours) == decoded(theirs)
    summary = document["summary"]
    assert run_verdict(
        phase=document["phase"],
        provenance=document["provenance"],
        certifies=document["certifiesSilicon"],
        counts=[summary[k] for k in ("passed", "failed", "errored", "skipped")],
    ) == run_verdict(
        phase=status["phase"],
        provenance=status["provenance"],
        certifies=status["certifiesSilicon"],
        counts=[status[k] for k in ("passed", "failed", "errored", "skipped")],
    )
    ours_json: JSON = ours
    return ours_json


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_one_brain_two_dispatchers_same_evidence_same_result(case: Case, tmp_path: Path) -> None:
    result = assert_same(
        spec_for(case.spec),
        case.attempts,
        retry_on_error_limit=case.retry_on_error_limit,
        folder=tmp_path,
    )
    assert result["phase"] == str(case.expected), result.get("message")
    assert result["provenance"] == case.provenance
    assert bool(result.get("suspect")) is (case.provenance == "sim")
    assert len(result["attempts"]) == len(case.attempts), "the case's evidence was not all used"


def test_the_legitimate_differences_are_only_bookkeeping() -> None:
    """Nothing a verdict is made of may be listed as allowed to differ."""
    verdict_fields = {
        "name", "kind", "scope", "phase", "nodes", "message", "metrics", "unmeasurable",
        "violations", "notEvaluated", "attempts", "repeatsRequired", "repeatsCompleted",
        "errorRetries", "provenance", "suspect", "exitCode", "trigger", "attempt",
        "deciding", "node", "dropped", "digest", "sizeBytes", "mediaType",
    }  # fmt: skip
    assert not verdict_fields & {key for _, key in LEGITIMATE_DIFFERENCES}


# --- a property over generated outputs --------------------------------------------------

#: Enough evidence for the longest result the property makes: 2 repeats + 1 retry.
MAX_ATTEMPTS: Final = 3
_METRIC_VALUES = st.sampled_from(
    [b"12", b"9", b"10", b"n/a", b"NaN", b"inf", b"-1", b"1e3", b"abc", b""]
)
_LINES = st.one_of(
    st.builds(lambda v: b"bw=" + v, _METRIC_VALUES),
    st.builds(lambda v: b"peerBw=" + v, _METRIC_VALUES),
    st.sampled_from(
        [
            b"OK",
            b"FAIL: slow",
            b"X_SKIP: nothing to test",
            b"provenance=sim",
            b"provenance=silicon",
            b"provenance=n/a",
            b"9bad=1",
            b"\xff\xfe not utf-8",
            b"",
            END,
            BEGIN % b"a.json" + b"\n{}\n" + END,
            BEGIN % b"../x" + b"\nbw=99\n" + END,
        ]
    ),
    st.just(b"y" * (MAX_LINE_BYTES + 1)),
)
_OUTPUTS = st.builds(
    lambda lines, newline: b"\n".join(lines) + (b"\n" if newline else b""),
    st.lists(_LINES, max_size=8),
    st.booleans(),
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    attempts=st.lists(
        st.builds(
            Evidence,
            exit_code=st.sampled_from([0, 0, 1, 2, 3]),
            output=_OUTPUTS,
            lingers=st.sampled_from([False, False, False, True]),
        ),
        min_size=MAX_ATTEMPTS,
        max_size=MAX_ATTEMPTS,
    ),
    thresholds=st.sampled_from([[], GATE, OPTIONAL_GATE]),
    repeats=st.sampled_from([1, 2]),
    retry_on_error_limit=st.sampled_from([0, 1]),
)
def test_one_brain_two_dispatchers_agree_on_any_output(
    attempts: list[Evidence],
    thresholds: list[JSON],
    repeats: int,
    retry_on_error_limit: int,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    spec: JSON = {"repeatCount": repeats}
    if thresholds:
        spec["thresholds"] = thresholds
    assert_same(
        spec_for(spec),
        attempts,
        retry_on_error_limit=retry_on_error_limit,
        folder=tmp_path_factory.mktemp("evidence"),
    )


# --- a mixed-scope profile (N5): the Node tests agree, the links are not run here -------

#: The Pair test a mixed profile carries beside the case's Node test.
LINK: Final = "link"
#: Cases for the mixed profile: one of each verdict (running all would double the suite).
MIXED_CASES: Final = [
    c
    for c in CASES
    if c.id
    in {
        "passed",
        "failed-threshold",
        "declared-skip",
        "crash-no-output",
        "error-then-retry-passed",
        "declared-silicon",
    }
]


def _mixed_tests(spec: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {TEST: dict(spec), LINK: custom_test("echo", scope="Pair")}


async def operator_mixed_run(
    spec: Mapping[str, Any], attempts: Sequence[Evidence], *, retry_on_error_limit: int
) -> JSON:
    """The operator on two nodes running the whole mixed profile: each Node-test pod gets
    the case's evidence, attempt by attempt; the Pair test after it is left unfinished."""
    cluster = Cluster(nodes=2)
    await cluster.setup(tests=_mixed_tests(spec))
    await cluster.create_run(retryOnErrorLimit=retry_on_error_limit, maxConcurrentNodes=2)
    await cluster.reconcile()
    for evidence in attempts:
        live = [
            p for p in cluster.live_pods()
            if p["metadata"]["labels"]["burnin.glimmer.ai/test"] == TEST
        ]  # fmt: skip
        if not live:
            break
        for pod_object in live:
            pod = str(pod_object["metadata"]["name"])
            reason = "Completed" if evidence.exit_code == 0 else "Error"
            await cluster.kubelet(pod, exit_code=evidence.exit_code, reason=reason)
            cluster.client.set_pod_log(pod, namespace=NS, text=evidence.output)
        await cluster.reconcile()
    (ours,) = [
        r for r in (await cluster.run())["status"]["results"]
        if r["name"] == TEST and r["nodes"] == [NODE]
    ]  # fmt: skip
    result: JSON = ours
    return result


def local_mixed_run(
    spec: Mapping[str, Any],
    attempts: Sequence[Evidence],
    *,
    retry_on_error_limit: int,
    folder: Path,
) -> JSON:
    """``run.json`` of a plain ``glimmer run`` of the mixed profile on node n0, planned
    and split as the CLI does (``host_plan``, ``not_run_here``)."""
    for number, evidence in enumerate(attempts, 1):
        (folder / f"out.{number}").write_bytes(evidence.output)
        (folder / f"code.{number}").write_text(str(evidence.exit_code))
    tests = _mixed_tests(spec)
    plan = host_plan(
        profile={"tests": [{"testRef": name} for name in tests]},
        tests=tests,
        node=NODE,
        flags=None,
    )
    assert isinstance(plan, PinnedPlan), plan
    skipped = not_run_here(plan, flags=None, command="glimmer run suite.yaml")
    assert list(skipped) == [LINK]
    options = LocalOptions(
        node=NODE,
        retry_on_error_limit=retry_on_error_limit,
        image_commands={"custom": ["sh", "-c", SCRIPT, str(folder)]},
        report_dir=folder / "report",
        not_run_here=skipped,
    )
    run = run_plan(plan, options=options, reporter=SilentReporter())
    assert not run.stopped, run.stopped
    return run_document(
        run.results, node=NODE, profile="prof", sim=None, started_at=0.0, finished_at=0.0
    )


@pytest.mark.parametrize("case", MIXED_CASES, ids=[c.id for c in MIXED_CASES])
def test_N5_a_mixed_profile_gives_the_node_tests_the_same_result_in_both(
    case: Case, tmp_path: Path
) -> None:
    spec = spec_for(case.spec)
    limit = case.retry_on_error_limit
    theirs = asyncio.run(operator_mixed_run(spec, case.attempts, retry_on_error_limit=limit))
    document = local_mixed_run(spec, case.attempts, retry_on_error_limit=limit, folder=tmp_path)
    ours, link = document["results"]
    assert comparable(ours) == comparable(theirs)
    assert decoded(ours) == decoded(theirs)
    assert ours["phase"] == str(case.expected)
    # The link the cluster runs is not run on this host: Skipped, and never certifying.
    assert (link["name"], link["phase"], link["attempts"]) == (LINK, "Skipped", [])
    assert document["notRunHere"] == [LINK] and document["certifiesSilicon"] is False


# --- checkpoints (H1, H2, N6): the same reading, the same envelope ----------------------

#: Speeds the bare host's checkpoint clock up so a 10 s interval takes 1 s of real time.
CLOCK_RATE: Final = 10.0
INTERVAL: Final = 10
#: The bare-host runner for a checkpoint case: print what the checkpoint sees, wait for
#: the checkpoint to have been taken, then print the rest and exit.
CHECKPOINT_SCRIPT: Final = (
    'cat "$0/during"; n=0; while [ ! -e "$0/release" ] && [ $n -lt 400 ]; do '
    'sleep 0.05; n=$((n+1)); done; cat "$0/after"; exit "$(cat "$0/code")"'
)


@dataclass(frozen=True)
class CheckpointCase:
    id: str
    #: What the runner has printed when the checkpoint is taken (maybe half a line).
    during: bytes
    #: What it prints afterwards, and its exit code.
    after: bytes
    exit_code: int = 0
    spec: Mapping[str, Any] = field(default_factory=lambda: {"thresholds": GATE})


CHECKPOINT_CASES: Final = [
    CheckpointCase("below-the-gate-then-passes", b"bw=5\nbw=1", b"00\nbw=12\nOK\n"),
    CheckpointCase("then-fails", b"bw=15\ntempC=70\n", b"bw=3\nslow\n"),
    CheckpointCase("then-crashes", b"bw=15\n", b"", exit_code=3),
    CheckpointCase("declares-silicon", b"provenance=silicon\nbw=11\n", b"bw=12\nOK\n"),
    CheckpointCase(
        "a-soak-shows-the-fold",
        b"elapsedS=30\ngpuTempC=71\n",
        b"OK\n",
        spec={"kind": "thermal-soak", "durationSeconds": 300, "soak": {"segmentSeconds": 300}},
    ),
]

_ENVELOPE_RUN_IDENTITY: Final = ("sentAt", "deliveryId", "run", "fingerprint")


def _envelope_view(envelope: Any) -> JSON:
    """An envelope without what names the run or the moment (both legitimately differ)."""
    body: JSON = json.loads(encode(envelope))
    for key in _ENVELOPE_RUN_IDENTITY:
        body.pop(key, None)
    for result in body.get("results", []):
        for key in ("startedAt", "finishedAt", *_SEGMENT_BOOKKEEPING):
            result.pop(key, None)
    return body


async def operator_checkpoint_run(spec: Mapping[str, Any], case: CheckpointCase) -> JSON:
    """The open result and the Checkpoint envelope after one checkpoint, then the
    settled result (the operator reads the pod's whole log at each)."""
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={TEST: dict(spec)})
    await cluster.create_run()
    await cluster.reconcile()
    (pod_object,) = cluster.live_pods()
    pod = str(pod_object["metadata"]["name"])
    await cluster.kubelet(pod, exit_code=None)
    await cluster.reconcile()
    cluster.client.set_pod_log(pod, namespace=NS, text=case.during)
    cluster.advance(INTERVAL + 1)
    await cluster.reconcile()
    (open_result,) = (await cluster.run())["status"]["results"]
    (delivery,) = [d for d in cluster.delivered.sent if d.reason == "Checkpoint"]
    envelope = build_envelope(
        delivery.run, reason=str(delivery.reason), event_key=delivery.event_key,
        sent_at=datetime.now(UTC), baseline=False,
    )  # fmt: skip
    reason = "Completed" if case.exit_code == 0 else "Error"
    await cluster.kubelet(pod, exit_code=case.exit_code, reason=reason)
    cluster.client.set_pod_log(pod, namespace=NS, text=case.during + case.after)
    await cluster.reconcile()
    (settled,) = (await cluster.run())["status"]["results"]
    return {"open": open_result, "envelope": envelope, "settled": settled}


class _FirstCheckpoint:
    """Keeps the first checkpoint as both dispatchers' sinks would see it, then lets
    the runner finish."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.taken: JSON = {}

    def checkpoint(
        self, *, result: LocalResult, results: Sequence[LocalResult], envelope_sequence: int | None
    ) -> None:
        if self.taken:
            return
        document = checkpoint_document(results, node=NODE, profile="prof", sim=None,
                                       started_at=0.0)  # fmt: skip
        self.taken = {
            "open": result_json(result),
            "flight": dict(result.flight_metrics),
            "envelope": None
            if envelope_sequence is None
            else checkpoint_envelope(
                document, uid="local-uid", sequence=envelope_sequence, sent_at=datetime.now(UTC)
            ),
        }
        (self.folder / "release").touch()


def local_checkpoint_run(spec: Mapping[str, Any], case: CheckpointCase, *, folder: Path) -> JSON:
    (folder / "during").write_bytes(case.during)
    (folder / "after").write_bytes(case.after)
    (folder / "code").write_text(str(case.exit_code))
    plan = build_plan(
        profile={"tests": [{"testRef": TEST}]}, tests={TEST: dict(spec)}, targets=[NODE],
        max_concurrent_nodes=1,
    )  # fmt: skip
    assert isinstance(plan, PinnedPlan), plan
    real = time.time()
    listener = _FirstCheckpoint(folder)
    options = LocalOptions(
        node=NODE,
        image_commands={
            kind: ["sh", "-c", CHECKPOINT_SCRIPT, str(folder)]
            for kind in ("custom", "thermal-soak")
        },
        report_dir=folder / "report",
        checkpoints=listener,
        clock=lambda: real + (time.time() - real) * CLOCK_RATE,
        run_started_at=real,
    )
    run = run_plan(plan, options=options, reporter=SilentReporter())
    assert not run.stopped, run.stopped
    assert listener.taken, "no checkpoint was taken"
    document = run_document(
        run.results, node=NODE, profile="prof", sim=None, started_at=0.0, finished_at=0.0
    )
    (settled,) = document["results"]
    return {**listener.taken, "settled": settled}


#: What an open result's comparison leaves out: its attempts (the operator's lists the
#: in-flight one, compared through its metrics) and when the checkpoint was taken.
_OPEN_ONLY_IN_ONE: Final = ("attempts", "lastCheckpointAt")
#: N2: a bare host runs a segmented soak as one window, so it keeps no segment
#: bookkeeping (nor does its envelope carry ``segments``); everything else agrees.
_SEGMENT_BOOKKEEPING: Final = (
    "segmentsRequired", "segmentSeconds", "segmentsCompleted", "aggregatedMetrics",
    "truncatedAttempts", "segments",
)  # fmt: skip
#: A settled soak's verdict (its message words the segments it was run as, N2).
_SETTLED_VERDICT: Final = ("phase", "metrics", "provenance", "suspect", "unmeasurable")


def _open_view(result: Mapping[str, Any]) -> JSON:
    drop = (*_OPEN_ONLY_IN_ONE, *_SEGMENT_BOOKKEEPING)
    return {k: v for k, v in comparable(result).items() if k not in drop}


@pytest.mark.parametrize("case", CHECKPOINT_CASES, ids=[c.id for c in CHECKPOINT_CASES])
def test_N6_a_checkpoint_reads_the_same_in_both_and_the_verdict_is_unchanged(
    case: CheckpointCase, tmp_path: Path
) -> None:
    spec = custom_test("echo", checkpointIntervalSeconds=INTERVAL, **copy.deepcopy(dict(case.spec)))
    theirs = asyncio.run(operator_checkpoint_run(spec, case))
    ours = local_checkpoint_run(spec, case, folder=tmp_path)
    # H1: the open result, field for field; the running attempt's metrics.
    open_theirs, open_ours = theirs["open"], ours["open"]
    assert open_theirs["phase"] == open_ours["phase"] == "Running"
    assert open_theirs["lastCheckpointAt"] and open_ours["lastCheckpointAt"]
    assert _open_view(open_ours) == _open_view(open_theirs)
    assert ours["flight"] == open_theirs["attempts"][-1]["metrics"]
    # H2: the Checkpoint envelope, but for the run's identity and the moment.
    assert ours["envelope"] is not None
    assert _envelope_view(ours["envelope"]) == _envelope_view(theirs["envelope"])
    assert ours["envelope"].checkpoint_sequence == theirs["envelope"].checkpoint_sequence == 1
    # The verdict is the one the whole output gives, whatever the checkpoint saw.
    settled_theirs, settled_ours = theirs["settled"], ours["settled"]
    assert settled_theirs["lastCheckpointAt"] and settled_ours["lastCheckpointAt"]
    if "soak" in case.spec:  # N2: one window here, segments there; the verdict agrees
        assert {k: settled_ours.get(k) for k in _SETTLED_VERDICT} == {
            k: settled_theirs.get(k) for k in _SETTLED_VERDICT
        }
        return
    assert comparable(settled_ours) == comparable(settled_theirs)
    assert decoded(settled_ours) == decoded(settled_theirs)

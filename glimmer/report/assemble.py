"""Envelopes -> one :class:`~glimmer.report.model.Report` (M1).

The rules that make every format agree, applied once here:

- a delivery seen twice (a retried or re-sent envelope: same ``deliveryId``) counts
  once; two envelopes with one ``deliveryId`` but different verdicts are refused,
  since one of them is not what the operator sent;
- every envelope must be about the same run (``run.uid``): a report never mixes two
  runs, even two runs that reused one name;
- the terminal ``RunPhaseChanged`` is the verdict of record. Without one, the latest
  cumulative envelope is shown and the report says INCOMPLETE; two different terminal
  phases for one run are refused (a terminal phase is never rewritten, E19);
- checkpoints are unjudged evidence, ordered by their sequence, never a verdict;
- the delivered summary must match the delivered results, or the input is refused.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Final

from glimmer.contract import envelope as wire
from glimmer.report.model import (
    ArtifactView,
    Checkpoint,
    CohortBand,
    Gate,
    NodeIdentity,
    NodeVerdictView,
    NotEvaluatedView,
    Report,
    ResultView,
    SegmentsView,
    Summary,
    ViolationView,
)
from glimmer.report.reading import ReportInputError
from glimmer.verdict import Phase, Provenance
from glimmer.verdict.codec import provenance_from_json

_CUMULATIVE: Final = (wire.REASON_RUN_PHASE_CHANGED, wire.REASON_TEST_COMPLETED)


def result_view(result: wire.TestResult) -> ResultView:
    segments = result.segments
    return ResultView(
        name=result.name,
        kind=result.kind,
        phase_word=result.phase,
        scope=result.scope,
        nodes=tuple(result.nodes),
        started_at=result.started_at or None,
        finished_at=result.finished_at or None,
        metrics=dict(result.metrics),
        message=result.message,
        violations=tuple(
            ViolationView(
                index=v.index, metric=v.metric, cause=v.cause, kind=v.kind, reason=v.reason
            )
            for v in result.violations
        ),
        not_evaluated=tuple(NotEvaluatedView(n.metric, n.reason) for n in result.not_evaluated),
        unmeasurable=tuple(result.unmeasurable),
        artifacts=tuple(
            ArtifactView(
                name=a.name,
                media_type=a.media_type,
                # sizeBytes is omitempty on the wire: 0 and absent cannot be told apart.
                size_bytes=a.size_bytes or None,
                digest=a.digest,
                config_map=a.config_map,
                key=a.key,
                dropped=a.dropped,
            )
            for a in result.artifacts
        ),
        variant_axes=dict(result.variant_axes),
        segments=(
            SegmentsView(
                segments.completed,
                segments.required,
                segments.segment_seconds,
                segments.truncated_attempts,
            )
            if segments is not None
            else None
        ),
        provenance=provenance_from_json(result.provenance or None),
        suspect=result.suspect,
    )


def _instant(text: str) -> datetime:
    return wire.parse_time(text)


def _verdict(envelope: wire.Envelope) -> tuple[object, ...]:
    """What a re-sent delivery must repeat exactly: the run, its phase, every result's
    phase and the counters (a redelivery may differ in ``sentAt`` and fresher evidence)."""
    return (
        envelope.run,
        envelope.reason,
        envelope.phase,
        envelope.summary,
        tuple((r.name, tuple(r.nodes), r.phase) for r in envelope.results),
    )


def _dedupe(envelopes: Iterable[wire.Envelope]) -> tuple[list[wire.Envelope], int]:
    """One envelope per deliveryId (the latest ``sentAt``); how many repeats were seen."""
    kept: dict[str, wire.Envelope] = {}
    duplicates = 0
    for envelope in envelopes:
        seen = kept.get(envelope.delivery_id)
        if seen is None:
            kept[envelope.delivery_id] = envelope
            continue
        duplicates += 1
        if _verdict(seen) != _verdict(envelope):
            raise ReportInputError(
                f"two envelopes share deliveryId {envelope.delivery_id} but not their verdict "
                f"(sent {seen.sent_at} and {envelope.sent_at}): one of them is not what the "
                "operator delivered"
            )
        if _instant(envelope.sent_at) > _instant(seen.sent_at):
            kept[envelope.delivery_id] = envelope
    return list(kept.values()), duplicates


def _one_run(envelopes: Sequence[wire.Envelope]) -> None:
    uids = sorted({e.run.uid for e in envelopes})
    if len(uids) > 1:
        names = sorted({f"{e.run.namespace}/{e.run.name} (uid {e.run.uid})" for e in envelopes})
        raise ReportInputError(
            "the input mixes envelopes of different runs; report one run at a time: "
            + ", ".join(names)
        )


def _of_record(envelopes: Sequence[wire.Envelope]) -> tuple[wire.Envelope, bool]:
    """The envelope whose verdict the report shows, and whether the run is incomplete."""
    terminal = [
        e
        for e in envelopes
        if e.reason == wire.REASON_RUN_PHASE_CHANGED and e.phase in _TERMINAL_WORDS
    ]
    phases = sorted({e.phase for e in terminal})
    if len(phases) > 1:
        raise ReportInputError(
            f"the run delivered more than one terminal phase ({', '.join(phases)}); a terminal "
            "phase is never rewritten, so this input is not one run's deliveries"
        )
    if terminal:
        return max(terminal, key=lambda e: _instant(e.sent_at)), False
    cumulative = [e for e in envelopes if e.reason in _CUMULATIVE]
    if not cumulative:
        cumulative = list(envelopes)
    return max(cumulative, key=lambda e: _instant(e.sent_at)), True


_TERMINAL_WORDS: Final = frozenset(str(p) for p in Phase if p.terminal)


def check_summary(summary: Summary, results: Sequence[ResultView], *, where: str) -> int:
    """D5: the counters are the results per phase. More results in a phase than its
    counter says is a contradiction and refused; fewer means results are missing from
    the input (returned: how many), and the report says so instead of guessing them."""
    phases = [r.phase for r in results]
    counted = Summary(
        passed=phases.count(Phase.PASSED),
        failed=phases.count(Phase.FAILED),
        errored=phases.count(Phase.ERROR),
        skipped=phases.count(Phase.SKIPPED),
    )
    pairs = (
        (counted.passed, summary.passed),
        (counted.failed, summary.failed),
        (counted.errored, summary.errored),
        (counted.skipped, summary.skipped),
    )
    if any(have > said for have, said in pairs):
        raise ReportInputError(
            f"{where}: the summary (passed {summary.passed}, failed {summary.failed}, errored "
            f"{summary.errored}, skipped {summary.skipped}) contradicts its results "
            f"(passed {counted.passed}, failed {counted.failed}, errored {counted.errored}, "
            f"skipped {counted.skipped})"
        )
    return sum(said - have for have, said in pairs)


def evidence_gates(results: Iterable[ResultView]) -> tuple[Gate, ...]:
    """The gates the results themselves name (violations, not-evaluated), when no plan
    says which thresholds exist: names only, never an invented threshold."""
    seen: dict[tuple[str, str], None] = {}
    for result in results:
        for metric in [v.metric for v in result.violations] + [
            n.metric for n in result.not_evaluated
        ]:
            seen.setdefault((result.name, metric), None)
    return tuple(Gate(test=test, metric=metric) for test, metric in seen)


def assemble(
    envelopes: Sequence[wire.Envelope],
    *,
    source: str,
    gates: Sequence[Gate] | None = None,
    required: Mapping[str, bool] | None = None,
    identities: Sequence[NodeIdentity] = (),
    cohort_bands: Sequence[CohortBand] = (),
) -> Report:
    """One run's report from its envelopes. ``gates`` and ``required`` come from the
    pinned plan when it was read (``--run``); otherwise gates are only named."""
    if not envelopes:
        raise ReportInputError(f"{source}: no envelopes to report")
    unique, duplicates = _dedupe(envelopes)
    _one_run(unique)
    record, incomplete = _of_record(unique)
    results = tuple(result_view(r) for r in record.results)
    if required is not None:
        results = tuple(replace(r, required=required.get(r.name)) for r in results)
    summary = Summary(
        record.summary.passed,
        record.summary.failed,
        record.summary.errored,
        record.summary.skipped,
    )
    missing = check_summary(summary, results, where=f"envelope {record.delivery_id}")
    checkpoints = sorted(
        (e for e in unique if e.reason == wire.REASON_CHECKPOINT),
        key=lambda e: (e.checkpoint_sequence, _instant(e.sent_at)),
    )
    starts = [r.started_at for r in results if r.started_at]
    ends = [r.finished_at for r in results if r.finished_at]
    return Report(
        namespace=record.run.namespace,
        name=record.run.name,
        uid=record.run.uid,
        profile=record.run.profile,
        cluster=record.cluster.name if record.cluster is not None else "",
        phase_word=record.phase,
        incomplete=incomplete,
        baseline=any(e.baseline for e in unique),
        results=results,
        summary=summary,
        source=source,
        sent_at=record.sent_at,
        started_at=min(starts, key=_instant) if starts else None,
        finished_at=max(ends, key=_instant) if ends and not incomplete else None,
        cancel_reason=record.cancel_reason if record.phase == Phase.CANCELLED else None,
        fingerprint=dict(record.fingerprint),
        checkpoints=tuple(
            Checkpoint(e.checkpoint_sequence, e.sent_at, tuple(result_view(r) for r in e.results))
            for e in checkpoints
        ),
        gates=tuple(gates) if gates is not None else evidence_gates(results),
        gates_from_plan=gates is not None,
        identities=tuple(identities),
        cohort_bands=tuple(cohort_bands),
        provenance=_run_provenance(record, results),
        certifies_silicon=record.certifies_silicon and not incomplete,
        missing_results=missing,
        envelopes=len(envelopes),
        duplicates=duplicates,
        node_verdicts=()
        if incomplete
        else tuple(NodeVerdictView(v.node, v.verdict, v.reason) for v in record.node_verdicts),
    )


def _run_provenance(record: wire.Envelope, results: Sequence[ResultView]) -> Provenance:
    """The weakest of what the run and its results declared; nothing declared is unknown."""
    from glimmer.verdict import weakest

    declared = [provenance_from_json(record.provenance or None)]
    declared += [r.provenance for r in results]
    return weakest(declared)

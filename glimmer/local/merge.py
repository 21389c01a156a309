"""``glimmer merge``: N Group rank records -> one Group verdict, as the operator reaches it.

Every rank of a bare-host Group wrote ``ranks/rank-NN.json`` and decided nothing
(:mod:`glimmer.local.links`). The merge reads all N, refuses a turnout it cannot judge
whole, and then judges each attempt through the same code the operator uses:
``combine_group`` (F6 verdict, F7 election, F8 message) and ``judge_attempt`` (D1),
then ``record_attempt`` (repeats, Error-only retries), so a bare-host group and an
in-cluster group reach the same verdict from the same evidence.

Refused before anything is judged (exit 3, no ``run.json``): a missing rank (F6: Pass
and Skip are never concluded from a subset, and a missing file is not a rank that
"did not report"; the message names the ranks to fetch), a rank recorded twice or
two ranks on one node, a record written for another group size, another profile,
other tests or another root, a record still being written (``complete`` false), and
any unreadable or foreign file under ``ranks/``. A record of another *session* than
rank 0's, or whose attempt did not run beside the others' (windows that do not
overlap), is foreign too: yesterday's passing ``rank-01.json`` must never Pass over
today's failing rank 1 (see :mod:`glimmer.local.records`).

Inside a whole turnout, a rank's attempt that is missing, cut at its deadline or
stopped by an interrupt is a rank that did not report that attempt (F5/F6 Error), and
such a rank makes the group's provenance ``unknown``
(:func:`glimmer.verdict.links.link_provenance`): never silicon.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from glimmer.local.dispatcher import LocalResult
from glimmer.local.records import (
    CLOCK_SKEW_SECONDS,
    RANK,
    RERUN_HINT,
    RecordError,
    SideRecord,
    read_record,
    stamp_seconds,
    windows_overlap,
)
from glimmer.plan import spec as specs
from glimmer.plan.gates import threshold_from_wire
from glimmer.verdict import (
    TestResultState,
    attempt_record,
    judge_attempt,
    record_attempt,
)
from glimmer.verdict.links import SideReport, combine_group
from glimmer.verdict.not_run_here import not_run_here

_RANK_FILE: Final = re.compile(r"rank-(\d{1,6})\.json")


class TurnoutError(ValueError):
    """The rank records cannot be judged as one group; nothing is written."""


@dataclass(frozen=True)
class Merged:
    results: list[LocalResult]
    records: list[SideRecord]
    stopped: str
    started_at: float
    finished_at: float


def read_turnout(results_dir: Path, *, nranks: int) -> list[SideRecord]:
    """All N rank records, in rank order, or :class:`TurnoutError` saying what is wrong."""
    folder = results_dir / "ranks"
    if not folder.is_dir():
        raise TurnoutError(f"{folder} does not exist: copy every rank's ranks/rank-NN.json into it")
    by_rank: dict[int, list[tuple[Path, SideRecord]]] = {}
    for path in sorted(folder.iterdir()):
        if path.name.startswith("."):
            continue  # a record being written (.rank-NN.json.partial)
        named = _RANK_FILE.fullmatch(path.name)
        if named is None or not path.is_file():
            raise TurnoutError(f"{path}: not a rank record (expected ranks/rank-NN.json)")
        try:
            record = read_record(path)
        except RecordError as err:
            raise TurnoutError(str(err)) from err
        if record.role != RANK:
            raise TurnoutError(f"{path}: written by a Pair {record.role}, not a Group rank")
        if record.nranks != nranks:
            raise TurnoutError(
                f"{path}: written for a group of {record.nranks}, not --nranks {nranks}"
            )
        if int(named.group(1)) != record.rank:
            raise TurnoutError(f"{path}: holds rank {record.rank}; its name says another rank")
        by_rank.setdefault(int(named.group(1)), []).append((path, record))
    duplicated = {r: found for r, found in sorted(by_rank.items()) if len(found) > 1}
    if duplicated:
        listed = "; ".join(
            f"rank {r}: {', '.join(str(p) for p, _ in found)}" for r, found in duplicated.items()
        )
        raise TurnoutError(f"duplicate turnout, each rank must report once: {listed}")
    missing = [r for r in range(nranks) if r not in by_rank]
    if missing:
        raise TurnoutError(
            f"partial turnout: {len(missing)} of {nranks} ranks missing "
            f"(rank {', '.join(map(str, missing))}); a group verdict is never concluded "
            f"from a subset (F6): copy the missing ranks/rank-NN.json into {folder}"
        )
    found = [by_rank[r][0] for r in range(nranks)]
    _check_one_group(found)
    _check_one_session(found)
    return [record for _, record in found]


def _check_one_session(found: Sequence[tuple[Path, SideRecord]]) -> None:
    """Every record is of rank 0's session, and each attempt of each test ran at the
    same time on every rank that ran it (windows overlap within the clock skew)."""
    root_path, root = found[0]
    for path, record in found[1:]:
        if record.session != root.session:
            raise TurnoutError(
                f"{path}: rank {record.rank} ran in session {record.session!r}, but rank 0 "
                f"({root_path}) in session {root.session!r}: not the same group run (an "
                f"earlier run's record?); {RERUN_HINT}"
            )
    for planned in root.tests:
        name = planned.test.name
        numbers = sorted(
            {a.attempt for _, r in found if (t := r.test(name)) is not None for a in t.attempts}
        )
        for number in numbers:
            ran = []
            for path, record in found:
                side = record.test(name)
                attempt = side.attempt(number) if side is not None else None
                window = attempt.window if attempt is not None else None
                if window is not None:
                    ran.append((path, record, window))
            if windows_overlap([w for _, _, w in ran], slack=CLOCK_SKEW_SECONDS):
                continue
            late = max(ran, key=lambda item: item[2][0])
            early = min(ran, key=lambda item: item[2][1])
            raise TurnoutError(
                f"{late[0]}: rank {late[1].rank}'s attempt {number} of test {name!r} started "
                f"{_rfc3339(late[2][0])}, after {early[0]} (rank {early[1].rank}) had ended "
                f"it at {_rfc3339(early[2][1])}: not one session's attempt (windows more "
                f"than {CLOCK_SKEW_SECONDS:g} s apart); {RERUN_HINT}"
            )


def _check_one_group(found: Sequence[tuple[Path, SideRecord]]) -> None:
    root = found[0][1]
    nodes: dict[str, int] = {}
    for path, record in found:
        where = f"{path}: rank {record.rank}"
        if record.node in nodes:
            raise TurnoutError(
                f"duplicate turnout: ranks {nodes[record.node]} and {record.rank} both ran on "
                f"node {record.node!r}; each rank needs its own node (--node)"
            )
        nodes[record.node] = int(record.rank or 0)
        if not record.complete:
            raise TurnoutError(
                f"{where} ({record.node}) has not finished writing its record (still "
                "running, or killed before its end); merge once every rank has ended"
            )
        if record.profile != root.profile:
            raise TurnoutError(f"{where} ran profile {record.profile!r}, rank 0 {root.profile!r}")
        if [(t.test.name, t.digest) for t in record.tests] != [
            (t.test.name, t.digest) for t in root.tests
        ]:
            raise TurnoutError(
                f"{where} ran other tests than rank 0 (names or specs differ): a mixed "
                "turnout is not one group"
            )
        # The root's address identifies the group; its node name is for messages only
        # (a worker that was not given --root-node records the address there).
        if record.peer_host != root.peer_host:
            raise TurnoutError(
                f"{where} met root {record.peer_host!r}, but rank 0 served as "
                f"{root.peer_host!r}: not the same group"
            )
        if record.retry_on_error_limit != root.retry_on_error_limit:
            raise TurnoutError(
                f"{where} ran with --retry-on-error {record.retry_on_error_limit}, rank 0 "
                f"with {root.retry_on_error_limit}"
            )


def merge_group(records: Sequence[SideRecord]) -> Merged:
    """Judge every test of a whole turnout (rank order), attempt by attempt."""
    root = records[0]
    results: list[LocalResult] = []
    stamps: list[float] = []
    for planned in root.tests:
        test = planned.test
        thresholds = [threshold_from_wire(t) for t in specs.thresholds(test.spec)]
        state = TestResultState(
            name=test.name,
            kind=test.kind,
            required=test.required,
            repeats_required=specs.repeat_count(test.spec),
        )
        local = LocalResult(
            state=state,
            scope=test.scope,
            node=root.node,
            nodes=tuple(r.node for r in records),
            variant_axes=dict(test.axes),
        )
        if planned.not_run_here:
            # N5: a mixed profile's test of another scope: no rank ran it, by design.
            local.nodes = (root.node,)
            local.state = not_run_here(local.state, reason=planned.not_run_here)
            local.not_run_here = planned.not_run_here
            results.append(local)
            continue
        number = 0
        while local.state.open:
            number += 1
            attempts = []
            for record in records:
                side = record.test(test.name)
                attempts.append(side.attempt(number) if side is not None else None)
            # A rank under --sim is sim whatever it declared; one that did not report
            # this attempt is unknown: the group's provenance is the weakest of them.
            sides = [
                SideReport(
                    label=f"rank {record.rank}",
                    node=record.node,
                    report=found.report if found is not None and found.reported else None,
                    simulated=record.sim is not None,
                )
                for record, found in zip(records, attempts, strict=True)
            ]
            verdict = judge_attempt(combine_group(sides), kind=test.kind, thresholds=thresholds)
            started = [s for a in attempts if a is not None for s in _stamp(a.started_at)]
            finished = [s for a in attempts if a is not None for s in _stamp(a.finished_at)]
            stamps += started + finished
            entry = attempt_record(
                verdict,
                attempt=number,
                trigger=local.state.next_trigger(),
                node=root.node,
                started_at=_rfc3339(min(started)) if started else None,
                finished_at=_rfc3339(max(finished)) if finished else None,
            )
            ran = any(a is not None for a in attempts)
            local.state = record_attempt(
                local.state,
                verdict,
                # No rank ran this attempt: nothing more will come, so it settles here.
                retry_on_error_limit=root.retry_on_error_limit if ran else 0,
                record=entry,
            )
            if started and local.started_at is None:
                local.started_at = min(started)
            if finished:
                local.finished_at = max(finished)
        results.append(local)
    stopped = "; ".join(f"rank {r.rank}: {r.stopped}" for r in records if r.stopped)
    now = time.time()
    return Merged(
        results=results,
        records=list(records),
        stopped=stopped,
        started_at=min(stamps, default=now),
        finished_at=max(stamps, default=now),
    )


def _stamp(text: str | None) -> list[float]:
    found = stamp_seconds(text) if text is not None else None
    return [] if found is None else [found]


def _rfc3339(stamp: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stamp))

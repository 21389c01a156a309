"""Reading a runner's exit code and output into a :class:`RunnerReport` (A1-A11).

The interface between Glimmer and a runner image is an exit code plus ``key=value``
lines. This module turns raw bytes into what the runner *declared*, and nothing
more: a metric exists only if a line printed it, ``n/a`` is a positive finding
distinct from absence, and the last occurrence of a name wins.

Output is streamed (``ReportReader.feed``) so that a 100 MB log or a 1 MB line is
read in bounded memory, and the report is the same however the bytes are chunked.
Where a bound bites, the reader fails closed: an over-long line is never a metric
and is counted in ``unreadable_lines`` (the verdict makes the attempt Error, so an
older value of a name it may have carried can never stand); a name whose value
cannot be kept is removed from both maps (so a gate on it reads ``NotReported``),
never left at an older value.

An orphan artifact END (one with no open fence) means the lines since the last fence
boundary were a payload's tail (A11): a boundary is the stream's start or any END.
So what output lines declare is held in two layers: what is *settled* (read before
the last boundary, never taken back) and the current *segment* (read since it,
tentative). An END that closes a fence settles the segment, so metrics printed
before a complete artifact stand; an orphan END discards the segment, so nothing
between the last boundary and it is ever a metric, an invalid name, an overflow, an
unreadable line or the message; the end of the stream settles it. The segment holds
at most one value per name under the same budgets, so memory stays bounded however
long the output; its budget counts what the settled layer would hold after settling,
so settling never overflows.

Provenance is positive and sticky: a ``provenance=sim`` line anywhere (even one an
orphan END later discards) wins over ``silicon``, any other value (``n/a``, a value
too long to keep, an unreadable line) can only weaken it, and ``silicon`` is read
only when it was declared (in a segment that was settled) and nothing weaker was.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from glimmer.contract.artifacts import Artifact, DroppedArtifact, FenceScanner, LineRole
from glimmer.contract.names import canonical_name, name_problem
from glimmer.contract.registry import REGISTRY
from glimmer.contract.text import go_trim

#: Lines longer than this are never metrics (a pod log fetch is capped at 1 MiB).
MAX_LINE_BYTES: Final = 1_048_576
#: A value longer than this cannot be stored in a status; the name is dropped.
MAX_VALUE_BYTES: Final = 65_536
#: Total bytes of names + values kept across both maps.
MAX_METRIC_BYTES: Final = 8 * 1_048_576
#: How many invalid names / dropped artifacts are kept verbatim (counts stay exact).
MAX_LISTED: Final = 1_000

UNMEASURABLE: Final = "n/a"
PROVENANCE_METRIC: Final = "provenance"
#: The declared provenance words (the verdict's ``Provenance`` has the same values).
PROVENANCE_SIM: Final = "sim"
PROVENANCE_UNKNOWN: Final = "unknown"
PROVENANCE_SILICON: Final = "silicon"

_SKIP_MARKER: Final = re.compile(rb"[A-Z][A-Z0-9_]*_SKIP\b")


class Outcome(enum.StrEnum):
    """The runner's own verdict, from its exit code (A2)."""

    PASS = "Pass"
    FAIL = "Fail"
    SKIP = "Skip"
    ERROR = "Error"


def outcome_for_exit(exit_code: int, *, skip_declared: bool) -> Outcome:
    """0 Pass, 1 Fail, 2 Skip only when declared (A3), everything else Error."""
    if exit_code == 0:
        return Outcome.PASS
    if exit_code == 1:
        return Outcome.FAIL
    if exit_code == 2 and skip_declared:
        return Outcome.SKIP
    return Outcome.ERROR


@dataclass(frozen=True, slots=True)
class RunnerReport:
    """Everything a runner declared in one execution."""

    exit_code: int
    outcome: Outcome
    metrics: dict[str, str]
    unmeasurable: frozenset[str]
    #: Canonical names that failed the grammar, one entry per offending line (A7).
    invalid_names: tuple[str, ...]
    invalid_name_count: int
    #: The last non-metric line (A4); usually the runner's verdict marker.
    message: str
    skip_declared: bool
    artifacts: tuple[Artifact, ...]
    dropped_artifacts: tuple[DroppedArtifact, ...]
    #: Names removed because their value or the metric budget exceeded the bounds.
    overflow_names: tuple[str, ...] = ()
    #: Output lines (outside artifact payloads) longer than ``MAX_LINE_BYTES``: what
    #: they said is unknown, so no value read before them may stand (I13).
    unreadable_lines: int = 0
    #: ``sim``, ``unknown`` or ``silicon`` (weakest declaration wins), None when the
    #: runner declared nothing.
    declared_provenance: str | None = None
    #: Accepted and dropped fences interleaved, in document order (I31).
    artifacts_in_order: tuple[Artifact | DroppedArtifact, ...] = ()
    #: Group folds only (F7): keys the election dropped as unmeasurable although some
    #: rank measured them, with each measuring side's own reading ``(side, value)``. A
    #: gate on such a key is still checked against those readings, so a dropped fold
    #: can never hide one rank's measured violation behind another rank's ``n/a``.
    dropped_readings: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()

    @property
    def undeclared_skip(self) -> bool:
        return self.exit_code == 2 and not self.skip_declared

    @property
    def harvested_nothing(self) -> bool:
        """No metric, no ``n/a`` and no invalid name: the input of the A10 rule."""
        return not self.metrics and not self.unmeasurable and self.invalid_name_count == 0

    @property
    def provenance(self) -> str | None:
        """What the runner said about its hardware, sticky and weakest-wins."""
        return self.declared_provenance


#: A segment's entry for a name whose value could not be kept: settling removes the name.
_OVERFLOWED: Final = object()


def _cost(name: str, value: str) -> int:
    """Budget bytes of one entry (an ``n/a`` costs its name only)."""
    if value.lower() == UNMEASURABLE:
        return len(name)
    return len(name) + len(value.encode("utf-8", "replace"))


@dataclass
class _Segment:
    """What output lines declared since the last fence boundary: tentative until the
    next END (or the end of the stream) settles it, or an orphan END discards it."""

    #: name -> last value, or ``_OVERFLOWED``; insertion order is declaration order.
    values: dict[str, object] = field(default_factory=dict)
    #: Budget bytes of ``values``.
    cost: int = 0
    #: Budget bytes the settled layer holds for the names in ``values`` (they go).
    shadowed: int = 0
    invalid: list[str] = field(default_factory=list)
    invalid_count: int = 0
    overflow: list[str] = field(default_factory=list)
    message: str = ""
    unreadable: int = 0
    silicon_declared: bool = False
    #: Output bytes read in this segment (an orphan END records this much discarded).
    output_bytes: int = 0


@dataclass
class ReportReader:
    """Incremental reader: ``feed`` bytes as they arrive, then ``finish``."""

    kind: str
    _partial: bytearray = field(default_factory=bytearray)
    _partial_overflow: bool = False
    #: Bytes of the current line beyond what is kept (its true length is kept + this).
    _partial_excess: int = 0
    _fences: FenceScanner = field(default_factory=FenceScanner)
    #: The settled layer: read before the last fence boundary, never taken back.
    _metrics: dict[str, str] = field(default_factory=dict)
    _unmeasurable: set[str] = field(default_factory=set)
    _metric_bytes: int = 0
    _invalid: list[str] = field(default_factory=list)
    _invalid_count: int = 0
    _overflow: list[str] = field(default_factory=list)
    _message: str = ""
    _unreadable: int = 0
    _silicon_declared: bool = False
    #: The tentative layer: read since the last fence boundary.
    _segment: _Segment = field(default_factory=_Segment)
    _skip_declared: bool = False
    #: Sticky across an orphan END: a weak declaration is never taken back.
    _sim_declared: bool = False
    _unknown_declared: bool = False
    #: raw key -> canonical name, or "" when the name is invalid (names repeat a lot).
    _names: dict[str, str] = field(default_factory=dict)

    def feed(self, chunk: bytes) -> None:
        start = 0
        while True:
            newline = chunk.find(b"\n", start)
            if newline < 0:
                self._buffer(chunk[start:])
                return
            self._buffer(chunk[start:newline])
            self._line_done()
            start = newline + 1

    def _buffer(self, piece: bytes) -> None:
        room = MAX_LINE_BYTES + 1 - len(self._partial)
        if len(piece) > room:
            self._partial += piece[: max(room, 0)]
            self._partial_excess += len(piece) - max(room, 0)
            self._partial_overflow = True
        else:
            self._partial += piece

    def _line_done(self) -> None:
        raw = bytes(self._partial)
        true_size = len(raw) + self._partial_excess
        overflow = self._partial_overflow or len(raw) > MAX_LINE_BYTES
        self._partial.clear()
        self._partial_overflow = False
        self._partial_excess = 0
        if overflow:
            self._overlong(raw[:MAX_LINE_BYTES], true_size=true_size)
        else:
            self._line(raw)

    def _overlong(self, raw: bytes, *, true_size: int) -> None:
        """A line over the limit: never a marker, a metric or the message (I13)."""
        if not self._skip_declared and raw[:1].isupper() and _SKIP_MARKER.match(raw):
            self._skip_declared = True
        if self._fences.feed(raw, cut_from=true_size) is LineRole.FENCE:
            return
        self._segment.output_bytes += true_size + 1
        # What it said is unknown: the verdict fails the attempt closed, and it can
        # only weaken provenance.
        self._segment.unreadable += 1
        self._unknown_declared = True

    def _line(self, raw: bytes) -> None:
        # A3 looks at raw output, before artifacts are lifted out.
        if not self._skip_declared and raw[:1].isupper() and _SKIP_MARKER.match(raw):
            self._skip_declared = True
        line = raw[:-1] if raw.endswith(b"\r") else raw
        if line.startswith(b"-----") or self._fences.inside:
            role = self._fences.feed(line, discarded=self._segment.output_bytes)
            if role is LineRole.ORPHAN_END:
                self._segment = _Segment()  # I12: the segment was a payload's tail
                return
            if role is LineRole.CLOSE:
                self._settle()  # what came before a complete fence stands
                return
            if role is LineRole.FENCE:
                return
        segment = self._segment
        segment.output_bytes += len(raw) + 1
        text = go_trim(line.decode("utf-8", "replace"))
        if not text:
            return
        eq = text.find("=")
        if eq <= 0:
            segment.message = text
            return
        key = go_trim(text[:eq])
        if " " in key or "\t" in key:
            segment.message = text
            return
        value = go_trim(text[eq + 1 :])
        if key.lower() == PROVENANCE_METRIC:
            self._declare_provenance(key, value)
        name = self._names.get(key)
        if name is None:
            name = self._canonical(key)
        if not name:
            segment.invalid_count += 1
            if len(segment.invalid) < MAX_LISTED:
                segment.invalid.append(canonical_name(self.kind, key) or key)
            return
        self._declare(name, value)

    def _declare_provenance(self, key: str, value: str) -> None:
        """Weakest wins: any spelling of the key may say ``sim``; only the exact
        canonical key with the exact word ``silicon`` may vouch for silicon."""
        word = value.lower()
        if word == PROVENANCE_SIM:
            self._sim_declared = True
        elif word == PROVENANCE_SILICON and key == PROVENANCE_METRIC:
            self._segment.silicon_declared = True
        else:
            self._unknown_declared = True

    def _provenance(self) -> str | None:
        if self._sim_declared:
            return PROVENANCE_SIM
        if self._unknown_declared:
            return PROVENANCE_UNKNOWN
        return PROVENANCE_SILICON if self._silicon_declared else None

    def _canonical(self, key: str) -> str:
        name = canonical_name(self.kind, key)
        spec = REGISTRY.get(name)
        valid = name_problem(name, spec.unit if spec else None) is None
        if len(self._names) < MAX_LISTED:
            self._names[key] = name if valid else ""
        return name if valid else ""

    def _settled_cost(self, name: str) -> int:
        value = self._metrics.get(name)
        if value is not None:
            return _cost(name, value)
        return len(name) if name in self._unmeasurable else 0

    def _declare(self, name: str, value: str) -> None:
        """Last occurrence wins (A9), in the segment; over a bound the name is marked
        to go from both maps, never left at an older value."""
        segment = self._segment
        if name in segment.values:
            old = segment.values.pop(name)
            if isinstance(old, str):
                segment.cost -= _cost(name, old)
        else:
            segment.shadowed += self._settled_cost(name)
        cost = _cost(name, value)
        held = self._metric_bytes - segment.shadowed + segment.cost
        if len(value) > MAX_VALUE_BYTES or held + cost > MAX_METRIC_BYTES:
            segment.values[name] = _OVERFLOWED
            if len(segment.overflow) < MAX_LISTED and name not in segment.overflow:
                segment.overflow.append(name)
            return
        segment.values[name] = value
        segment.cost += cost

    def _settle(self) -> None:
        """A fence boundary (or the end): the segment's declarations become final."""
        segment, self._segment = self._segment, _Segment()
        for name, value in segment.values.items():
            self._forget(name)
            if not isinstance(value, str):
                continue
            if value.lower() == UNMEASURABLE:
                self._unmeasurable.add(name)
            else:
                self._metrics[name] = value
            self._metric_bytes += _cost(name, value)
        for name in segment.overflow:
            if len(self._overflow) < MAX_LISTED and name not in self._overflow:
                self._overflow.append(name)
        self._invalid.extend(segment.invalid[: MAX_LISTED - len(self._invalid)])
        self._invalid_count += segment.invalid_count
        if segment.message:
            self._message = segment.message
        self._unreadable += segment.unreadable
        self._silicon_declared = self._silicon_declared or segment.silicon_declared

    def _forget(self, name: str) -> None:
        old = self._metrics.pop(name, None)
        if old is not None:
            self._metric_bytes -= _cost(name, old)
        elif name in self._unmeasurable:
            self._unmeasurable.discard(name)
            self._metric_bytes -= len(name)

    def finish(self, *, exit_code: int) -> RunnerReport:
        if self._partial or self._partial_overflow:
            self._line_done()
        self._fences.finish()
        self._settle()
        in_order = tuple(self._fences.found)
        artifacts = tuple(a for a in in_order if isinstance(a, Artifact))
        dropped = tuple(a for a in in_order if isinstance(a, DroppedArtifact))
        return RunnerReport(
            exit_code=exit_code,
            outcome=outcome_for_exit(exit_code, skip_declared=self._skip_declared),
            metrics=dict(self._metrics),
            unmeasurable=frozenset(self._unmeasurable),
            invalid_names=tuple(self._invalid),
            invalid_name_count=self._invalid_count,
            message=self._message,
            skip_declared=self._skip_declared,
            artifacts=artifacts,
            dropped_artifacts=dropped,
            overflow_names=tuple(self._overflow),
            unreadable_lines=self._unreadable,
            declared_provenance=self._provenance(),
            artifacts_in_order=in_order,
        )


def read_report(output: bytes | Iterable[bytes], *, kind: str, exit_code: int) -> RunnerReport:
    """Read a runner's whole output (bytes, or an iterable of chunks) and exit code."""
    reader = ReportReader(kind=kind)
    if isinstance(output, bytes | bytearray):
        reader.feed(bytes(output))
    else:
        for chunk in output:
            reader.feed(chunk)
    return reader.finish(exit_code=exit_code)

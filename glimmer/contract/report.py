"""Reading a runner's exit code and output into a :class:`RunnerReport` (A1-A11).

The interface between Glimmer and a runner image is an exit code plus ``key=value``
lines. This module turns raw bytes into what the runner *declared*, and nothing
more: a metric exists only if a line printed it, ``n/a`` is a positive finding
distinct from absence, and the last occurrence of a name wins.

Output is streamed (``ReportReader.feed``) so that a 100 MB log or a 1 MB line is
read in bounded memory. Where a bound bites, the reader fails closed: an over-long
line is never a metric, and a name whose value cannot be kept is removed from both
maps (so a gate on it reads ``NotReported``), never left at an older value.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from glimmer.contract.artifacts import Artifact, DroppedArtifact, FenceScanner
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

    @property
    def undeclared_skip(self) -> bool:
        return self.exit_code == 2 and not self.skip_declared

    @property
    def harvested_nothing(self) -> bool:
        """No metric, no ``n/a`` and no invalid name: the input of the A10 rule."""
        return not self.metrics and not self.unmeasurable and self.invalid_name_count == 0

    @property
    def provenance(self) -> str | None:
        """What the runner said about its hardware (``provenance=sim|silicon``)."""
        value = self.metrics.get(PROVENANCE_METRIC)
        return value.lower() if value is not None else None


@dataclass
class ReportReader:
    """Incremental reader: ``feed`` bytes as they arrive, then ``finish``."""

    kind: str
    _partial: bytearray = field(default_factory=bytearray)
    _partial_overflow: bool = False
    _fences: FenceScanner = field(default_factory=FenceScanner)
    _metrics: dict[str, str] = field(default_factory=dict)
    _unmeasurable: set[str] = field(default_factory=set)
    _metric_bytes: int = 0
    _invalid: list[str] = field(default_factory=list)
    _invalid_count: int = 0
    _overflow: list[str] = field(default_factory=list)
    _message: str = ""
    _skip_declared: bool = False
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
            self._partial_overflow = True
        else:
            self._partial += piece

    def _line_done(self) -> None:
        raw = bytes(self._partial)
        overflow = self._partial_overflow or len(raw) > MAX_LINE_BYTES
        self._partial.clear()
        self._partial_overflow = False
        if overflow:
            raw = raw[:MAX_LINE_BYTES]
        self._line(raw, overflow=overflow)

    def _line(self, raw: bytes, *, overflow: bool) -> None:
        # A3 looks at raw output, before artifacts are lifted out.
        if not self._skip_declared and raw[:1].isupper() and _SKIP_MARKER.match(raw):
            self._skip_declared = True
        line = raw[:-1] if raw.endswith(b"\r") else raw
        if (line.startswith(b"-----") or self._fences.inside) and self._fences.feed(line):
            return
        text = go_trim(line.decode("utf-8", "replace"))
        if not text:
            return
        if overflow:
            self._message = text
            return
        eq = text.find("=")
        if eq <= 0:
            self._message = text
            return
        key = go_trim(text[:eq])
        if " " in key or "\t" in key:
            self._message = text
            return
        value = go_trim(text[eq + 1 :])
        name = self._names.get(key)
        if name is None:
            name = self._canonical(key)
        if not name:
            self._invalid_count += 1
            if len(self._invalid) < MAX_LISTED:
                self._invalid.append(canonical_name(self.kind, key) or key)
            return
        self._declare(name, value)

    def _canonical(self, key: str) -> str:
        name = canonical_name(self.kind, key)
        spec = REGISTRY.get(name)
        valid = name_problem(name, spec.unit if spec else None) is None
        if len(self._names) < MAX_LISTED:
            self._names[key] = name if valid else ""
        return name if valid else ""

    def _declare(self, name: str, value: str) -> None:
        self._forget(name)
        if value.lower() == UNMEASURABLE:
            self._unmeasurable.add(name)
            self._metric_bytes += len(name)
            return
        cost = len(name) + len(value.encode("utf-8", "replace"))
        if len(value) > MAX_VALUE_BYTES or self._metric_bytes + cost > MAX_METRIC_BYTES:
            # Fail closed: the name is gone from both maps, never left at an old value.
            if len(self._overflow) < MAX_LISTED and name not in self._overflow:
                self._overflow.append(name)
            return
        self._metrics[name] = value
        self._metric_bytes += cost

    def _forget(self, name: str) -> None:
        old = self._metrics.pop(name, None)
        if old is not None:
            self._metric_bytes -= len(name) + len(old.encode("utf-8", "replace"))
        elif name in self._unmeasurable:
            self._unmeasurable.discard(name)
            self._metric_bytes -= len(name)

    def finish(self, *, exit_code: int) -> RunnerReport:
        if self._partial or self._partial_overflow:
            self._line_done()
        self._fences.finish()
        artifacts = tuple(a for a in self._fences.found if isinstance(a, Artifact))
        dropped = tuple(a for a in self._fences.found if isinstance(a, DroppedArtifact))
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

"""The one assembled view every report format renders (M1).

Every renderer reads a :class:`Report` and nothing else, so JUnit, HTML, Markdown,
NVVS JSON and CTRF cannot disagree about a run: they are five spellings of one view.
The view holds only what an input declared (M2): an absent timestamp is ``None``, not
zero; an unknown phase stays unknown (``phase is None``) instead of being guessed;
provenance nobody declared is ``unknown``, never silicon.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from glimmer.contract.numbers import parse_go_float
from glimmer.verdict import Cause, Phase, Provenance

#: Scopes whose one result covers several nodes: reported only in the links view (M2).
LINK_SCOPES: Final = frozenset({"Pair", "Group"})


@dataclass(frozen=True, slots=True)
class ViolationView:
    """One failed gate, as delivered; ``cause`` is kept as the word the input used."""

    index: int
    metric: str
    cause: str
    kind: str
    reason: str = ""

    @property
    def who_acts(self) -> Cause:
        """The verdict vocabulary's cause; a word this version does not know is
        Evidence (unjudged), never a hardware finding (api §8)."""
        try:
            return Cause(self.cause)
        except ValueError:
            return Cause.EVIDENCE


@dataclass(frozen=True, slots=True)
class NotEvaluatedView:
    metric: str
    reason: str


@dataclass(frozen=True, slots=True)
class ArtifactView:
    """An artifact reference; ``dropped`` non-empty means it was never stored."""

    name: str
    media_type: str = ""
    size_bytes: int | None = None
    digest: str = ""
    config_map: str = ""
    key: str = ""
    dropped: str = ""
    #: Where a bare-host run stored it (``glimmer run``'s results dir), if known.
    file: str = ""


@dataclass(frozen=True, slots=True)
class SegmentsView:
    completed: int
    required: int
    segment_seconds: int
    truncated_attempts: int = 0


@dataclass(frozen=True, slots=True)
class ResultView:
    """One execution unit's result as the input declared it."""

    name: str
    kind: str
    #: The phase word as delivered (kept for the report when it is not one we know).
    phase_word: str
    scope: str = ""
    nodes: tuple[str, ...] = ()
    started_at: str | None = None
    finished_at: str | None = None
    metrics: Mapping[str, str] = field(default_factory=dict)
    message: str = ""
    violations: tuple[ViolationView, ...] = ()
    not_evaluated: tuple[NotEvaluatedView, ...] = ()
    unmeasurable: tuple[str, ...] = ()
    artifacts: tuple[ArtifactView, ...] = ()
    variant_axes: Mapping[str, str] = field(default_factory=dict)
    segments: SegmentsView | None = None
    provenance: Provenance = Provenance.UNKNOWN
    suspect: bool = False
    #: Whether the result decides the run (known from run.json or the pinned plan).
    required: bool | None = None

    @property
    def phase(self) -> Phase | None:
        """The phase, or ``None`` when the word is not one this version knows."""
        try:
            return Phase(self.phase_word)
        except ValueError:
            return None

    @property
    def synthetic(self) -> bool:
        """``resolve``/``admission`` refusals: detected by the empty kind, never the name."""
        return self.kind == ""

    @property
    def link(self) -> bool:
        """Pair/Group results belong to a link, never to one node (M2)."""
        return self.scope in LINK_SCOPES

    @property
    def dropped_artifacts(self) -> tuple[ArtifactView, ...]:
        return tuple(a for a in self.artifacts if a.dropped)


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A mid-flight reading (H2): unjudged evidence, never a verdict."""

    sequence: int
    sent_at: str
    results: tuple[ResultView, ...]


@dataclass(frozen=True, slots=True)
class Gate:
    """One threshold of one test, when the input says what it is.

    ``comparison``/``value`` are empty when only the metric's name is known (it
    appears in a violation or a not-evaluated entry, but the input carries no plan).
    """

    test: str
    metric: str
    comparison: str = ""
    value: str = ""
    applicability: str = ""

    @property
    def known(self) -> bool:
        return bool(self.comparison and self.value)


@dataclass(frozen=True, slots=True)
class NodeIdentity:
    """What a NodeFingerprint says about a node (``--run`` only)."""

    node: str
    gpus: tuple[str, ...] = ()
    os_image: str = ""
    kernel: str = ""
    digest: str = ""
    drifted: bool = False


@dataclass(frozen=True, slots=True)
class Summary:
    passed: int
    failed: int
    errored: int
    skipped: int


@dataclass(frozen=True, slots=True)
class NodeVerdictView:
    """What the run established about one target node, as the terminal envelope says
    (decided by ``glimmer.verdict.nodes``; the report never re-decides it)."""

    node: str
    #: Passed, Failed, Simulated or NotJudged (any other word is shown as unknown).
    verdict: str
    reason: str = ""


@dataclass(frozen=True, slots=True)
class CohortBand:
    """One cohort's band for one relative gate, as the run recorded it
    (``status.cohortVerdicts``, C9): drawn, never recomputed."""

    test: str
    metric: str
    fingerprint: str
    comparison: str
    median: float
    allowed: float
    size: int
    outliers: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        digest = self.fingerprint.rsplit(":", 1)[-1][:8] or "?"
        return f"cohort {digest} ({self.size} nodes)"


def cohort_bands(records: object) -> tuple[CohortBand, ...]:
    """The evaluated records of ``status.cohortVerdicts`` with readable numbers; one
    that cannot be read is left out (a band is context, never the verdict)."""
    bands: list[CohortBand] = []
    for record in records if isinstance(records, list) else []:
        if not isinstance(record, Mapping) or record.get("evaluated") is not True:
            continue
        median = parse_go_float(str(record.get("median")))
        allowed = parse_go_float(str(record.get("allowedDeviation")))
        size = record.get("size")
        if median is None or allowed is None or not isinstance(size, int):
            continue
        if not (math.isfinite(median) and math.isfinite(allowed)):
            continue
        outliers = record.get("outliers")
        bands.append(
            CohortBand(
                test=str(record.get("test", "")),
                metric=str(record.get("metric", "")),
                fingerprint=str(record.get("fingerprint", "")),
                comparison=str(record.get("comparison", "")),
                median=median,
                allowed=allowed,
                size=size,
                outliers=tuple(str(o) for o in outliers) if isinstance(outliers, list) else (),
            )
        )
    return tuple(bands)


@dataclass(frozen=True, slots=True)
class Report:
    """One run, assembled from whatever input was given."""

    namespace: str
    name: str
    uid: str
    #: The run phase of record: the terminal RunPhaseChanged's, else the latest seen.
    phase_word: str
    #: True when no terminal verdict was delivered (the run is INCOMPLETE).
    incomplete: bool
    baseline: bool
    results: tuple[ResultView, ...]
    summary: Summary
    source: str
    profile: str = ""
    cluster: str = ""
    sent_at: str = ""
    started_at: str | None = None
    finished_at: str | None = None
    cancel_reason: str | None = None
    fingerprint: Mapping[str, str] = field(default_factory=dict)
    checkpoints: tuple[Checkpoint, ...] = ()
    gates: tuple[Gate, ...] = ()
    #: False when the input could not say which thresholds exist (no plan read).
    gates_from_plan: bool = False
    identities: tuple[NodeIdentity, ...] = ()
    provenance: Provenance = Provenance.UNKNOWN
    certifies_silicon: bool = False
    #: The simulated GPU named by a bare-host run (``glimmer run --sim``), if any.
    simulated_gpu: str = ""
    #: Why a bare-host run ended early ("" if it did not).
    stopped: str = ""
    #: Results the summary counts that the input does not carry (a compacted input).
    missing_results: int = 0
    #: Envelopes read, and how many were the same delivery seen again.
    envelopes: int = 0
    duplicates: int = 0
    #: Each target node's verdict from the terminal envelope (none while incomplete).
    node_verdicts: tuple[NodeVerdictView, ...] = ()
    #: The cohort bands the run recorded for its relative gates (C9; cluster input only).
    cohort_bands: tuple[CohortBand, ...] = ()

    @property
    def phase(self) -> Phase | None:
        try:
            return Phase(self.phase_word)
        except ValueError:
            return None

    @property
    def title(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def tags(self) -> tuple[str, ...]:
        """The flags every format carries beside the run's name (M2, M3)."""
        tags: list[str] = []
        if self.baseline:
            tags.append("baseline")
        if self.incomplete or self.missing_results:
            tags.append("INCOMPLETE")
        if self.simulated:
            tags.append("SIMULATED")
        return tuple(tags)

    @property
    def simulated(self) -> bool:
        """Anything simulated makes the whole report simulated (sim beats silicon)."""
        return (
            self.provenance is Provenance.SIM
            or bool(self.simulated_gpu)
            or any(r.provenance is Provenance.SIM for r in self.results)
        )

    @property
    def node_results(self) -> tuple[ResultView, ...]:
        return tuple(r for r in self.results if not r.link and not r.synthetic)

    @property
    def link_results(self) -> tuple[ResultView, ...]:
        return tuple(r for r in self.results if r.link)

    @property
    def run_results(self) -> tuple[ResultView, ...]:
        """Synthetic refusals: about the run, not any node."""
        return tuple(r for r in self.results if r.synthetic)

    @property
    def nodes(self) -> tuple[str, ...]:
        """Every node a Node-scope result names, in first-seen order."""
        seen: dict[str, None] = {}
        for result in self.node_results:
            for node in result.nodes:
                seen.setdefault(node, None)
        return tuple(seen)

    def gates_of(self, test: str) -> tuple[Gate, ...]:
        return tuple(g for g in self.gates if g.test == test)

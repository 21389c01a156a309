"""What a bare-host run is given and what it keeps, shared by the dispatcher's modules.

:class:`LocalOptions` is what ``glimmer run`` gives one run (the node, ``--sim``, the
container runtime, the Pair/Group side through the :class:`LinkSide` seam that
:mod:`glimmer.local.links` fills, the tests it does not run, N5); :class:`LocalResult` is
what it keeps per planned test and :class:`LocalRun` for the whole; a :class:`Reporter`
is told as attempts start and finish, a :class:`CheckpointListener` of each checkpoint
(H1, N6, :mod:`glimmer.local.checkpoints`). :mod:`glimmer.local.launch`,
:mod:`glimmer.local.attempts`, :mod:`glimmer.local.interrupt` and
:mod:`glimmer.local.dispatcher` all speak these.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from glimmer.contract import RunnerReport
from glimmer.local.records import SideAttempt
from glimmer.local.runtimes import ContainerRuntime
from glimmer.plan import GroupRendezvous, PairRendezvous, PlannedTest
from glimmer.verdict import AttemptVerdict, TestResultState


class Reporter(Protocol):
    """Live progress; the CLI draws it, tests record it.

    ``window_seconds`` is the attempt's known window for long work (a soak or a
    stress kind, :func:`glimmer.local.attempts.progress_window`), None when it has none
    worth a bar.
    """

    def attempt_started(
        self,
        *,
        test: str,
        attempt: int,
        index: int,
        total: int,
        window_seconds: float | None = None,
    ) -> None: ...

    def attempt_finished(self, *, test: str, verdict: AttemptVerdict, seconds: float) -> None: ...

    def test_finished(self, *, result: LocalResult) -> None: ...


class SilentReporter:
    """A :class:`Reporter` that shows nothing: for callers that read only the results
    (an embedding program, a test)."""

    def attempt_started(
        self,
        *,
        test: str,
        attempt: int,
        index: int,
        total: int,
        window_seconds: float | None = None,
    ) -> None:
        return None

    def attempt_finished(self, *, test: str, verdict: AttemptVerdict, seconds: float) -> None:
        return None

    def test_finished(self, *, result: LocalResult) -> None:
        return None


class LinkSide(Protocol):
    """How one side of a Pair or Group runs here (:mod:`glimmer.local.links`).

    ``decides`` is False for a side that only records (a Pair server, a Group rank):
    its attempts are judged without gates, only to know whether another attempt is
    owed, and that provisional verdict is never written as a result.
    """

    @property
    def decides(self) -> bool: ...

    @property
    def rendezvous(self) -> PairRendezvous | GroupRendezvous: ...

    @property
    def nodes(self) -> tuple[str, ...]: ...

    @property
    def record_node(self) -> str: ...

    def fold(self, *, test: PlannedTest, attempt: SideAttempt) -> RunnerReport:
        """The report this attempt is judged on; raises :class:`LinkError` when it
        cannot be known (the attempt is then Error, never judged on a guess)."""
        ...


class LinkError(Exception):
    """The other side's evidence for an attempt cannot be read; the attempt is Error."""


class CheckpointListener(Protocol):
    """Told of each checkpoint a deciding side takes (H1, N6), from the thread that
    follows the runner's output: the CLI shows it and, with a sink, delivers the
    ``Checkpoint`` envelope. It must return promptly and never raise.

    ``result`` is the open result just checkpointed (its ``checkpoint_metrics`` and
    ``last_checkpoint_at`` set), ``results`` every result of the run so far (the
    envelope carries them all), ``envelope_sequence`` the H2 sequence when an envelope
    is owed for it (None: the plan has no interval, or this sequence was delivered).
    """

    def checkpoint(
        self,
        *,
        result: LocalResult,
        results: Sequence[LocalResult],
        envelope_sequence: int | None,
    ) -> None: ...


@dataclass
class LocalResult:
    """A settled test result plus what only the bare host records."""

    state: TestResultState
    scope: str
    node: str
    #: Every node the result covers (Pair: server, client; Group: rank order).
    nodes: tuple[str, ...] = ()
    started_at: float | None = None
    finished_at: float | None = None
    artifacts: list[dict[str, Any]] = field(default_factory=list)
    #: What each listed artifact ref stands for (A12's de-duplication identity).
    artifact_ids: set[tuple[str, str]] = field(default_factory=set, repr=False)
    raw_logs: list[str] = field(default_factory=list)
    variant_axes: Mapping[str, str] = field(default_factory=dict)
    #: When the attempt now in flight began (for the record of an interrupted one).
    attempt_started_at: float | None = None
    #: N5: why this run does not execute the test ("" when it does): its result is
    #: Skipped with this message and no attempt.
    not_run_here: str = ""
    #: H1: when the last checkpoint kept something (on ``LocalOptions.clock``).
    last_checkpoint_at: float | None = None
    #: H1: when the result's first attempt started, on the checkpoint clock.
    checkpoint_origin: float | None = None
    #: What the last checkpoint showed as the result's metrics (G6 for a soak).
    checkpoint_metrics: dict[str, str] = field(default_factory=dict)
    #: The in-flight attempt's checkpointed metrics: kept on it as evidence if it is
    #: stopped before it finishes (I23), never judged.
    flight_metrics: dict[str, str] = field(default_factory=dict)


@dataclass
class LocalRun:
    """Every planned test's result, and why the run stopped early ("" when it did not)."""

    results: list[LocalResult]
    stopped: str = ""


@dataclass(frozen=True)
class LocalOptions:
    node: str
    sim: str | None = None
    retry_on_error_limit: int = 0
    image_commands: Mapping[str, Sequence[str]] = field(default_factory=dict)
    report_dir: Path | None = None
    #: ``status.hostIP`` for ``valueFrom`` (the host's primary address, N2).
    host_ip: str = "127.0.0.1"
    #: The Pair/Group side this host plays; None for Node scope.
    link: LinkSide | None = None
    #: The container runtime that runs images; None: every execution is a local process.
    runtime: ContainerRuntime | None = None
    #: Part of every container's name, so this run can stop its own containers.
    run_id: str = field(default_factory=lambda: secrets.token_hex(4))
    #: N5: the planned tests this run does not execute (a mixed profile's tests of
    #: another scope), each with the reason its Skipped result gives.
    not_run_here: Mapping[str, str] = field(default_factory=dict)
    #: Told of every checkpoint (H1, N6); None: checkpoints are still taken and kept
    #: on the result, nobody is told.
    checkpoints: CheckpointListener | None = None
    #: The run's start (H2's sequence counts from it); None: when ``run_plan`` starts.
    run_started_at: float | None = None
    #: The checkpoint clock (seconds since the epoch): cadence, stamps and sequences.
    clock: Callable[[], float] = time.time
    #: N9: under ``--sim``, the bound on the real window of a runner that loads the real
    #: host (memory-stress, disk-io); None: every runner gets its profile's window.
    host_window: int | None = None

    @property
    def nodes(self) -> tuple[str, ...]:
        """Every node a result of this run covers (Pair: server, client; Group: ranks)."""
        return self.link.nodes if self.link is not None else (self.node,)

    @property
    def record_node(self) -> str:
        """F9: a link's attempts are recorded on the server's / rank 0's node."""
        return self.link.record_node if self.link is not None else self.node

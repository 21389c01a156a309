"""The evidence a runner pod leaves: its log, the kubelet's account, its artifacts.

Read here, judged by ``glimmer.verdict`` (the one choke point), stored by reference
(A12-A14); mid-run checkpoints (H1/H2) read the same log without judging it.

The log is the whole retained log, streamed from its first byte through the contract's
streaming reader in bounded chunks, never decoded (I11, I19): a byte-limited tail
would keep the *first* MiB of its window and drop the final metrics. The read is bounded
in bytes and time; a read that stops short of the end is never judged (a prefix can hold
an older, superseded value), it is an Error naming what cut it.

Provenance does not depend on what the log still holds (I14): when the pod ran against
the simulated GPU (the runner container's ``GLIMMER_SIM_GPU``, or a node the simulated
kubelet marks), the operator itself records ``sim``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from glimmer.api import format_time, parse_time
from glimmer.contract import SIM_GPU_ENV, RunnerReport
from glimmer.contract.report import Outcome, ReportReader
from glimmer.controllers.kit import names
from glimmer.controllers.kit.core_view import PodView
from glimmer.controllers.kit.ref import RunRef
from glimmer.controllers.kit.view import ObjectView
from glimmer.controllers.run import kube, podstate, soak, wire
from glimmer.controllers.run.artifacts import configmap_name, plan_store, store_failed
from glimmer.controllers.run.context import Part
from glimmer.controllers.run.delivery import Delivery, Reason
from glimmer.controllers.run.passes import Pass
from glimmer.engine import CONFIGMAPS, NODES, ApiError, KubeClient
from glimmer.plan import PlannedTest, Unit, label_value
from glimmer.plan import spec as specs
from glimmer.plan.gates import threshold_from_wire
from glimmer.verdict import (
    AttemptVerdict,
    Phase,
    Provenance,
    Termination,
    apply_termination,
    judge_attempt,
)
from glimmer.verdict.checkpoint import (
    RunningLog,
    checkpoint_reading,
    checkpoint_sequence,
    checkpoint_wait,
)

JSON = dict[str, Any]

#: Most bytes of one runner log the operator reads. The kubelet keeps one current log
#: file per container (10 MiB by default, ``containerLogMaxSize``); a log past this bound
#: is an Error naming it, never a judged prefix.
LOG_MAX_BYTES: Final = 64 << 20
#: Seconds one whole log read may take, body included; past it the read is cut (Error).
LOG_READ_SECONDS: Final = 120.0
#: Bytes handed to the reader at a time (bounds what one read holds in memory).
LOG_CHUNK_BYTES: Final = 64 << 10

#: The runner environment variable that points the runner SDK at the simulated GPU.
#: Node labels the simulated kubelet (glimmer.sim) puts on every node it runs: a pod on
#: such a node ran as a local process against the simulated GPU, never on silicon.
SIM_NODE_LABELS: Final = ("sim.glimmer.dev/simulated-gpu", "sim.glimmer.dev/instance")


@dataclass(frozen=True, slots=True)
class LogRead:
    """What a whole-log read produced."""

    report: RunnerReport
    #: Nothing could be read at all (A13: a log outage is not a hardware Fail).
    unavailable: bool = False
    #: Why the read stopped short of the end ("" when the whole retained log was read).
    cut: str = ""
    received: int = 0


async def read_runner_log(
    client: KubeClient,
    *,
    pod: str,
    namespace: str,
    kind: str,
    exit_code: int,
    running: bool = False,
    max_bytes: int | None = None,
    timeout: float | None = None,
) -> LogRead:
    """Stream the runner container's whole retained log through the contract's reader.

    Bounded: at most ``max_bytes`` (the server is asked to stop one byte past it, so an
    over-long log is seen as one) and ``timeout`` seconds (None: ``LOG_MAX_BYTES``,
    ``LOG_READ_SECONDS``). Bytes only, never decoded.
    ``running``: the runner may be mid-line, so an unterminated last line is a fragment
    (``gpuTempC=10`` of ``gpuTempC=105``) and is never read."""
    max_bytes = LOG_MAX_BYTES if max_bytes is None else max_bytes
    timeout = LOG_READ_SECONDS if timeout is None else timeout
    # H1: a running runner's unterminated last line is never read (RunningLog).
    reader: RunningLog | ReportReader = (
        RunningLog(kind=kind) if running else ReportReader(kind=kind)
    )
    received = 0
    cut = ""
    stream = client.stream_pod_log(
        pod,
        namespace=namespace,
        container=names.RUNNER_CONTAINER,
        limit_bytes=max_bytes + 1,
        chunk_size=LOG_CHUNK_BYTES,
        timeout=timeout,
    )
    try:
        async with contextlib.aclosing(stream) as chunks:
            async for chunk in chunks:
                received += len(chunk)
                if received > max_bytes:
                    cut = (
                        f"the runner log is longer than the operator's {max_bytes}-byte read bound"
                    )
                    break
                reader.feed(chunk)
    except TimeoutError:
        cut = f"the runner log could not be read within the {timeout:g} s read bound"
    except kube.LOG_ERRORS as err:
        if received == 0:
            return LogRead(report=reader.finish(exit_code=exit_code), unavailable=True)
        cut = f"the runner log read broke after {received} bytes ({type(err).__name__}: {err})"
    return LogRead(report=reader.finish(exit_code=exit_code), cut=cut, received=received)


def cut_log_verdict(
    read: LogRead,
    *,
    kind: str,
    exit_code: int,
    provenance: Provenance | None,
) -> AttemptVerdict:
    """I11: a log read that stopped short is never judged. Only the runner's own
    exit 1 (a measured shortfall, read from the kubelet, not the log) stands as Failed;
    every other outcome is Error, naming what cut the read."""
    nothing = ReportReader(kind=kind).finish(exit_code=exit_code)
    verdict = judge_attempt(nothing, kind=kind, thresholds=(), dispatcher_provenance=provenance)
    note = f"{read.cut}; nothing it printed was judged (no verdict)"
    if verdict.phase is Phase.FAILED:
        return replace(verdict, message=f"{verdict.message} [{note}]")
    return replace(
        verdict,
        phase=Phase.ERROR,
        message=note,
        violations=(),
        not_evaluated=(),
        suspect=False,
        gated=False,
    )


def sim_gpu_in_spec(pod: Mapping[str, Any]) -> bool:
    """The runner container was pointed at the simulated GPU (any ``GLIMMER_SIM_GPU``)."""
    for container in PodView(pod).containers:
        if container.get("name") != names.RUNNER_CONTAINER:
            continue
        env = container.get("env")
        if any(isinstance(e, Mapping) and e.get("name") == SIM_GPU_ENV for e in env or []):
            return True
    return False


def sim_node(node: Mapping[str, Any] | None) -> bool:
    node_labels = ObjectView(node or {}).labels
    return any(label in node_labels for label in SIM_NODE_LABELS)


_PHASE_OF: Final = {
    Outcome.PASS: Phase.PASSED,
    Outcome.FAIL: Phase.FAILED,
    Outcome.SKIP: Phase.SKIPPED,
    Outcome.ERROR: Phase.ERROR,
}


def side_report(read: LogRead, termination: Termination, *, kind: str) -> RunnerReport:
    """One side of a Pair or one Group rank, as the link combination reads it: what the
    runner declared, with the pod's end folded in by the same A14/I17 rule a Node
    attempt gets (:func:`~glimmer.verdict.apply_termination`), so an evicted,
    deadline-killed or OOM-killed side is an Error side, whatever it printed.

    A read that stopped short (I11) is never judged: the side keeps only its exit
    code's word when that is the runner's own Fail (exit 1), else it is an Error side
    naming what cut the read."""
    report = read.report
    if read.cut:
        nothing = ReportReader(kind=kind).finish(exit_code=report.exit_code)
        note = f"{read.cut}; nothing it printed was judged (no verdict)"
        outcome = Outcome.FAIL if nothing.outcome is Outcome.FAIL else Outcome.ERROR
        report = replace(nothing, outcome=outcome, message=note)
    phase = _PHASE_OF[report.outcome]
    probe = AttemptVerdict(
        phase=phase, message=report.message, exit_code=report.exit_code, metrics={},
        unmeasurable=(), undeclared_skip=report.undeclared_skip,
    )  # fmt: skip
    folded = apply_termination(probe, termination, runner_line=report.message)
    if folded.phase is phase and folded.message == probe.message:
        return report
    outcome = Outcome.ERROR if folded.phase is Phase.ERROR else report.outcome
    return replace(report, outcome=outcome, message=folded.message)


@dataclass(frozen=True, slots=True)
class SideRead:
    """What one terminated pod of a Pair or Group attempt left."""

    #: The side's report, its pod's end folded in (:func:`side_report`).
    report: RunnerReport
    #: The pod ran against the simulated GPU (I14): the link is sim if any side is.
    simulated: bool
    #: Nothing of its log could be read (A13, applied once to the combined result).
    unavailable: bool
    #: The log was read to its end, so its artifacts may be stored (I11).
    whole: bool


class Evidence(Part):
    """Reads a runner pod's evidence; never decides a verdict itself."""

    async def read_side(self, work: Pass, test: PlannedTest, pod: JSON) -> SideRead:
        """A terminated Pair/Group pod's log and kubelet account, not judged: the link
        is judged once, over every side (F3, F6)."""
        exit_code = podstate.exit_code(pod)
        read = await read_runner_log(
            self.client, pod=ObjectView(pod).name, namespace=work.view.namespace, kind=test.kind,
            exit_code=exit_code,
        )  # fmt: skip
        return SideRead(
            report=side_report(read, podstate.termination(pod), kind=test.kind),
            simulated=await self.simulated(pod),
            unavailable=read.unavailable,
            whole=not read.cut,
        )

    async def store_side_artifacts(
        self, work: Pass, test: PlannedTest, pod: str, side: SideRead
    ) -> list[JSON]:
        """F9: a reporting side's artifacts, stored under its own pod's key."""
        if not side.whole or not side.report.artifacts_in_order:
            return []
        return await self._store_artifacts(work, test, pod, side.report)

    async def judge(
        self, work: Pass, test: PlannedTest, pod: JSON
    ) -> tuple[AttemptVerdict, list[JSON]]:
        """Logs + kubelet account of a terminated pod -> its verdict and artifact refs."""
        seen = ObjectView(pod)
        name = seen.name
        namespace = work.view.namespace
        exit_code = podstate.exit_code(pod)
        ahead = work.prefetched.pop(name, None)
        if ahead is not None and ahead[0] == seen.uid:
            read: LogRead = await ahead[1]  # the same read, started ahead of the walk
        else:
            if ahead is not None:
                ahead[1].cancel()
            read = await read_runner_log(
                self.client, pod=name, namespace=namespace, kind=test.kind, exit_code=exit_code
            )
        provenance = Provenance.SIM if await self.simulated(pod) else None
        report = read.report
        if read.cut:
            verdict = cut_log_verdict(
                read, kind=test.kind, exit_code=exit_code, provenance=provenance
            )
        else:
            thresholds = [threshold_from_wire(t) for t in specs.thresholds(test.spec)]
            # A13: a log outage (read.unavailable) must not become a hardware Fail.
            verdict = judge_attempt(
                report,
                kind=test.kind,
                thresholds=thresholds,
                dispatcher_provenance=provenance,
                # G2: a segment is decided by its exit code; the gates judge the fold.
                gate=not soak.segmented(test),
                logs_unavailable=read.unavailable,
            )
        verdict = apply_termination(verdict, podstate.termination(pod), runner_line=report.message)
        refs: list[JSON] = []
        if not read.cut and report.artifacts_in_order:
            refs = await self._store_artifacts(work, test, name, report)
        return verdict, refs

    def read_ahead(
        self, work: Pass, test: PlannedTest, pod: JSON, *, gate: asyncio.Semaphore
    ) -> None:
        """Start the whole-log read :meth:`judge` will make of terminated ``pod``, bounded
        by ``gate`` (the caller has proven the pod ours: a foreign pod is never read)."""
        seen = ObjectView(pod)
        name = seen.name
        if name in work.prefetched:
            return

        async def read() -> LogRead:
            async with gate:
                return await read_runner_log(
                    self.client, pod=name, namespace=work.view.namespace,
                    kind=test.kind, exit_code=podstate.exit_code(pod),
                )  # fmt: skip

        work.prefetched[name] = (seen.uid, asyncio.ensure_future(read()))

    async def simulated(self, pod: Mapping[str, Any]) -> bool:
        """I14: the dispatcher's own knowledge that the pod ran against the simulated
        GPU: its spec says so, or its node does. The node is read once per harvest
        (the labels decide provenance; a node that is gone tells nothing, and the
        runner's declaration then stands alone)."""
        if sim_gpu_in_spec(pod):
            return True
        node = podstate.node_of(pod)
        if not node:
            return False
        # Cached: the labels are the simulated kubelet's, set when the node registers;
        # a cached miss is confirmed live.
        return sim_node(await self.reads.get(NODES, node))

    async def _store_artifacts(
        self, work: Pass, test: PlannedTest, pod: str, report: RunnerReport
    ) -> list[JSON]:
        run = work.run
        namespace = work.view.namespace
        cm_name = configmap_name(work.view.name)
        # Cached where a cache holds it: the write below carries this resourceVersion.
        current = await self.reads.get(CONFIGMAPS, cm_name, namespace=namespace)
        stored = plan_store(
            configmap=cm_name,
            data=(current or {}).get("data") or {},
            binary_data=(current or {}).get("binaryData") or {},
            test=test.name,
            pod=pod,
            found=report.artifacts_in_order,
        )
        if not (stored.data or stored.binary_data):
            return stored.refs
        try:
            if current is None:
                ref = RunRef.of(run)
                body: JSON = {
                    "metadata": {
                        "name": cm_name,
                        "labels": {names.RUN_LABEL: label_value(work.view.name)},
                        "ownerReferences": [ref.owner_reference()],
                    },
                    "data": stored.data,
                }
                if stored.binary_data:
                    body["binaryData"] = stored.binary_data
                await self.client.create(CONFIGMAPS, body, namespace=namespace)
            else:
                patch: JSON = {
                    "metadata": {"resourceVersion": ObjectView(current).resource_version or None},
                    "data": stored.data,
                }
                if stored.binary_data:
                    patch["binaryData"] = stored.binary_data
                await self.client.patch(CONFIGMAPS, cm_name, patch, namespace=namespace)
        except ApiError:
            return store_failed(stored.refs)
        return stored.refs

    async def checkpoint(self, work: Pass, test: PlannedTest, unit: Unit, pod: JSON) -> None:
        """H1: refresh metrics of a started open unit; no threshold, no phase change.
        The cadence, the read, what is kept and the H2 sequence are decided in
        :mod:`glimmer.verdict.checkpoint`, which ``glimmer run`` checkpoints through too."""
        interval = specs.checkpoint_interval_seconds(test.spec)
        if interval <= 0:
            return
        position = work.find(test.name, unit.nodes)
        if position is None:
            return
        result = dict(work.results[position])
        flight = wire.in_flight(result)
        if flight is None:
            return
        last = result.get("lastCheckpointAt") or result.get("startedAt")
        since = parse_time(str(last)).timestamp() if last else None
        wait = checkpoint_wait(interval, since=since, now=work.now.timestamp())
        if wait is not None and wait > 0:
            work.wait(wait)
            return
        read = await read_runner_log(
            self.client,
            pod=ObjectView(pod).name,
            namespace=work.view.namespace,
            kind=test.kind,
            exit_code=0,
            running=True,
        )
        work.wait(interval)
        # A cut read may hold values the runner has since superseded: never stored.
        window = checkpoint_reading(read.report, whole=not (read.unavailable or read.cut))
        if window is None:
            return
        stamp = format_time(work.now)
        # G6: a soak shows fold(aggregate, window so far); aggregatedMetrics is not touched.
        result["metrics"] = soak.checkpoint_metrics(result, test, window)
        result["lastCheckpointAt"] = stamp
        flight.update(metrics=window, lastCheckpointAt=stamp)
        result["attempts"] = [*wire.finished_attempts(result), flight]
        work.put(result)
        # H2: one Checkpoint envelope per sequence, derived so that delivery IDs are stable.
        started = work.view.started_at
        sequence = checkpoint_sequence(
            (specs.checkpoint_interval_seconds(t.spec) for t in work.plan.tests),
            started=parse_time(str(started)).timestamp() if started else None,
            now=work.now.timestamp(),
        )
        if sequence is not None:
            key = str(sequence)
            if not any(
                d.reason is Reason.CHECKPOINT and d.event_key == key for d in work.deliveries
            ):
                work.deliveries.append(Delivery(Reason.CHECKPOINT, key, work.run))

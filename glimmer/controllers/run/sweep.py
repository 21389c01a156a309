"""The sweep: harvest finished pods, launch the next wave, hold and release nodes
(E8-E16, H, A12-A14).

Every attempt outcome is decided by ``glimmer.verdict``; this module only gathers the
evidence (the runner's log, the kubelet's account) and keeps the result. Pods are
created with deterministic names, so a pass that crashed half-way is simply redone.

A pass runs in this order (I20): the walk decides every launch and cordons its
node (stamp, then ``unschedulable``); the release of idle cordons (E12); one status
write that records the cordons; only then are the planned pods created, so a crash
between a cordon and its pod never leaves a cordon that status does not know. A pod the
apiserver refuses (PodSecurity, quota, a missing PriorityClass, an invalid field) is an
Error attempt carrying the apiserver's message, retried under the Error budget, and its
node is released once nothing else holds it. A pod found under one of our names is
read only once it is proven ours (:func:`~glimmer.controllers.run.pods.foreign_reason`,
or the UID pinned in its attempt entry); a foreign pod becomes an Error attempt naming
it, is never read, and is left where it is (it claims this run as its controller, so
the terminate step unloads it with the run's other pods, by UID precondition).

Each unit is stepped once per attempt (:meth:`Sweeper._step`), on an
:class:`~glimmer.controllers.run.passes.Execution` that holds its result, its decoded
state, attempt number, trigger and pod name, each computed once; the step returns a
:class:`Step` saying what happened. While a unit is stepped, log lines carry its
``test`` and ``node`` (the controller binds ``namespace`` and ``run`` per reconcile).
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import functools
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, Final

import structlog

from glimmer.api import format_time, parse_time
from glimmer.contract.kinds import drives_sustained_load
from glimmer.controllers.kit import checkpoint, names
from glimmer.controllers.kit.cordon import (
    Release,
    conditioned,
    cordon_patches,
    heat_until,
    kept_message,
    release_decision,
)
from glimmer.controllers.kit.core_view import PodView
from glimmer.controllers.kit.fingerprints import FingerprintPendingError, vendor_of
from glimmer.controllers.kit.names import fingerprint_name
from glimmer.controllers.kit.ref import RunRef
from glimmer.controllers.kit.view import ObjectView, RunView
from glimmer.controllers.run import kube, podstate, repairs, soak, wire
from glimmer.controllers.run.artifacts import merge_refs
from glimmer.controllers.run.context import Part, RunContext
from glimmer.controllers.run.delivery import Delivery, Reason
from glimmer.controllers.run.evidence import Evidence
from glimmer.controllers.run.finish import Finisher
from glimmer.controllers.run.links import Links
from glimmer.controllers.run.openunits import OpenUnitsCache, listed_results
from glimmer.controllers.run.passes import (
    Execution,
    Launch,
    Pass,
    Step,
    error_verdict,
    live_pod_settled,
    new_result,
)
from glimmer.controllers.run.pods import PodRequest, allowed_images, build_pod, foreign_reason
from glimmer.controllers.run.services import LINK_SCOPES
from glimmer.engine import NODES, PODS, ApiError, is_already_exists, is_conflict, is_not_found
from glimmer.plan import (
    ImageError,
    PinnedPlan,
    PlannedTest,
    Unit,
    can_launch,
    depends_on_vendor,
    heat_expiry_seconds,
    overdue_after_seconds,
    resolve_image,
    units_of_test,
)
from glimmer.plan import spec as specs
from glimmer.verdict import (
    AttemptVerdict,
    Phase,
    attempt_record,
    record_attempt,
    run_phase,
)

JSON = dict[str, Any]


log = structlog.get_logger("glimmer.controllers.run")


def _uid(pod: Mapping[str, Any]) -> str:
    """The pod's UID: kept on its attempt once settled (the audit trail, I18)."""
    return ObjectView(pod).uid


#: E14: how long a launch waits for its node's NodeFingerprint to be captured (a node
#: that just joined), from the run's start, and how often it looks again.
FINGERPRINT_GRACE_SECONDS: Final = 120.0
FINGERPRINT_RECHECK_SECONDS: Final = 5.0
FANOUT: Final = 48
"""The most requests one pass has in flight at once (releases, creates, log reads):
enough to hide a request's round trip behind the others, few enough that one run's
pass never floods the apiserver (the client's rate limit still applies to each)."""


async def fan_out(calls: Sequence[Callable[[], Awaitable[None]]], *, limit: int = FANOUT) -> None:
    """Run ``calls`` concurrently, at most ``limit`` at once; the first error is raised
    once every call has ended (none is left running behind the pass)."""
    gate = asyncio.Semaphore(limit)

    async def bounded(call: Callable[[], Awaitable[None]]) -> None:
        async with gate:
            await call()

    outcomes = await asyncio.gather(*(bounded(c) for c in calls), return_exceptions=True)
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome


#: How many passes in a row wait for a pod cache that lags this process's own creates
#: before one lists the run's pods live (a create's ADDED event usually comes first).
POD_CACHE_PATIENCE: Final = 3
#: The backstop requeue of a pass put off for the pod cache (the events come first).
POD_CACHE_WAIT_SECONDS: Final = 1.0


class PodsBehindError(Exception):
    """The pod cache has not shown pods this process just created: the pass is put
    off (its pods' own events requeue the run), nothing read or written."""


def _unit_log_context(ex: Execution) -> Any:
    """Log lines about one unit carry its test and node (beside the run's namespace and
    name, bound per reconcile by the controller)."""
    return structlog.contextvars.bound_contextvars(test=ex.test.name, node="+".join(ex.unit.nodes))


def _log_attempt(ex: Execution, verdict: AttemptVerdict, *, settled: Phase | None) -> None:
    """One info line per judged attempt, with its test and node bound: settled (the
    result's phase and the deciding gate, the first violation) or retried."""
    with _unit_log_context(ex):
        first = verdict.violations[0] if verdict.violations else None
        gate = {"gate": first.metric, "gate_reason": first.reason} if first else {}
        if settled is None:
            log.info("attempt retried", attempt=ex.attempt, phase=str(verdict.phase),
                     message=verdict.message)  # fmt: skip
        else:
            log.info("test settled", attempt=ex.attempt, phase=str(settled), **gate)


class Sweeper(Part):
    """One pass over a started run: every unit of the current test, then the commit."""

    def __init__(self, ctx: RunContext, *, finisher: Finisher | None = None) -> None:
        super().__init__(ctx)
        self.evidence = Evidence(ctx)
        self.finisher = finisher if finisher is not None else Finisher(ctx)
        #: Pair and Group units (F1-F9), stepped with this sweeper's records and cordons.
        self.links = Links(self)
        #: Link blame's re-pairs (F10-F13), stepped by the same Links.
        self.repairs = repairs.Repairs(self.links, self.reads)
        #: Each run's open units, kept between passes (a cache of the status: built
        #: again from it whenever the run is not exactly what it describes).
        self.open_units = OpenUnitsCache()
        #: Run UID -> passes put off in a row for a pod cache behind our creates.
        self._waited: dict[str, int] = {}

    def forget(self, uid: str) -> None:
        """What this sweeper keeps for the run ``uid`` (a cache: never needed again)."""
        self.open_units.forget(uid)
        self._waited.pop(uid, None)

    async def new_pass(
        self, run: JSON, plan: PinnedPlan, *, live_pods: bool = False, may_wait: bool = False
    ) -> Pass:
        """A pass over ``run``. Its pods come from the cache (by the run-label index, no
        list request). The live reads the rules keep:

        - ``live_pods``: a live list, for a decision a lagging cache would get wrong
          (E18's cancel waits for what is running);
        - a cache that has not shown the pods this process just created is listed live
          once (their ADDED events are on their way: with ``may_wait``, the pass is
          first put off a few times, :class:`PodsBehindError`, since a list holds every
          pod of the run, thousands at fleet scale, and those events requeue the run);
        - a pod that status expects but the cache lacks is read live by name before its
          attempt is settled as deleted (H, :meth:`get_pod`), and so is a twin our
          create met (its foreign check runs on the live pod);
        - a release is decided on a live list unless the cache shows every pod this
          process created for the run (E12, :meth:`RunReads.pods_for_release`);
        - a cordon confirms the run view and reads the node live first (E10, E22).
        """
        if live_pods:
            found, cached = await self.reads.live_pods_of(run), False
        else:
            found, cached = await self.reads.pods_of(run)
        pods = {ObjectView(p).name: p for p in found}
        uid = ObjectView(run).uid
        if cached and not self.reads.shows_created(run, pods):
            # The cache has not shown pods this process just created: a walk over it
            # would create them again (AlreadyExists, then a live read each). Wait for
            # it a few times, then one live list, which also settles the release
            # (pods_cached False).
            waited = self._waited.pop(uid, 0)
            if may_wait and waited < POD_CACHE_PATIENCE:
                self._waited[uid] = waited + 1
                raise PodsBehindError(uid)
            found = await self.reads.live_pods_of(run)
            pods, cached = {ObjectView(p).name: p for p in found}, False
            self.reads.pods_for_release_settled(run)
        else:
            self._waited.pop(uid, None)
        view = RunView(run)
        # F10: link blame's re-pairs sit among the results while the pass runs (so the
        # one unit machinery steps them); every status write keeps them apart again.
        overlay, repair_units = repairs.load(view.status, plan)
        # The settled results only status.packedResults holds are not read: the index
        # counts them (openunits.py), unless their status does not read cleanly.
        index = self.open_units.get(run, plan)
        held = view.results if index.reads_all else listed_results(view.stored_status)
        return Pass(
            run=run,
            plan=plan,
            pods=pods,
            pods_cached=cached,
            now=self.now(),
            results=[*(dict(r) for r in held), *overlay],
            requeue=self.options.requeue_idle_seconds,
            deadline=time.monotonic() + self.options.pass_budget_seconds,
            repair_units=list(repair_units),
            index=index,
        )

    async def commit(self, work: Pass, *, terminal: Phase | None = None) -> JSON:
        """Release idle cordons (E12), write status, create what was planned, then do
        what the writes justify.

        ``terminal``: this pass ends the run with that phase (so does a pass whose pod
        creation settled its last unit). Its one status write is the verdict (E19(1)):
        nothing is released first (the unload releases everything) and nothing is
        created; the pass's deletes, TestCompleted deliveries and events follow that
        write, and ``work.ended`` tells the caller to converge (unload, then the terminal
        envelope), so L4 holds: TestCompleted, then RunPhaseChanged, both after it."""
        if terminal is None:
            if work.planned and any(d.reason == Reason.TEST_COMPLETED for d in work.deliveries):
                # I9: what settled reaches status before this pass's releases and
                # the next wave's cordons (hundreds of node writes at fleet scale),
                # not after them: exit -> status stays one pass's walk, not a wave's.
                await self._write(work)
            await self._release_idle(work)
            await self._cordon_planned(work)
            if work.planned:
                # E10: the cordons these pods need are in status before any of them
                # exists (already there, unless this pass changed something).
                if work.changed:
                    await self._write(work)
                await self._create_planned(work)
                terminal = self.finished(work)  # a refused or foreign pod settled the last
                if terminal is None:
                    await self._release_idle(work)  # a refused pod's unit holds nothing
        if terminal is not None:
            await self._write_verdict(work, phase=terminal)
        elif work.changed:
            await self._write(work)
        run = work.run
        namespace = work.view.namespace
        for name in work.delete_after_write:
            with contextlib.suppress(ApiError):
                await self.client.delete(PODS, name, namespace=namespace)
        # A terminal pass's leftover Services (a crash between one and its first status
        # write, a retry's) go in the unload that follows, by one label-selected list.
        for name in dict.fromkeys(work.services_after_write):
            await self.links.delete_service(work, name)
        for type_, reason, message in work.events:
            await kube.record_event(self.client, run, type_=type_, reason=reason, message=message)
        if terminal is None and self._observe is not None:
            self._observe(run)  # (the verdict write observed the terminal run itself)
        # L4/L5: last, and together: each TestCompleted carries the same cumulative
        # status, and each has its own 15 s budget, so a hanging receiver costs a pass
        # one budget, never one per settled unit (which could outlast the reconcile
        # timeout and cut the pass before its cordons and events were recorded).
        await asyncio.gather(
            *(
                self.deliverer.deliver(
                    Delivery(delivery.reason, delivery.event_key, run, work.plan.sinks)
                )
                for delivery in work.deliveries
            )
        )
        return run

    async def _write_verdict(self, work: Pass, *, phase: Phase) -> None:
        """The terminal pass's one status write: its results settled into the verdict."""
        for launch in work.planned:
            work.abandon(launch.execution.node)  # D7: a run that ends starts nothing
        work.planned = []
        self.repairs.close(work, phase=phase)  # F12: a blame still owed is undetermined
        repairs.store(work)
        work.status["results"] = work.judged_results()
        self.finisher.settle_verdict(work.run, phase=phase, extra=(), plan=work.plan)
        self.open_units.forget(work.view.uid)  # a terminal run is never swept again
        # I21: unclamped, so a status over budget ends the run Error, never a verdict
        # written with its evidence cut to fit.
        work.run = await self.finisher.write_verdict(work.run, phase=phase, clamp=False)
        work.changed = False
        work.confirmed = True
        work.ended = phase

    def _held(self, work: Pass) -> set[str]:
        return work.busy() | {podstate.pinned_node(work.pods[n]) for n in work.delete_after_write
                              if n in work.pods}  # fmt: skip

    async def _release_idle(self, work: Pass) -> None:
        """E12: every recorded cordon no unit holds any more is handed back."""
        status = work.status
        recorded = work.view.cordoned_nodes
        busy = self._held(work)
        if work.pods_cached and set(recorded) - busy:
            # H/E12: a cache lagging a pod created a moment ago would hand its node back
            # while it loads it: the release is decided on the cache only once it shows
            # every pod this process created for the run, else on a live list.
            live = await self.reads.pods_for_release(work.run)
            if live is not None:
                work.replace_pods(live)
                busy = self._held(work)
        keep = sorted(n for n in set(recorded) if n in busy)
        prior = work.prior
        # E12: only our own stamp is restored (a stale cache is a 409, then live); the
        # releases are independent of each other, so they go out together (bounded).
        await fan_out(
            [
                functools.partial(self.release, work, node, prior=prior.get(node))
                for node in sorted(set(recorded) - busy)
            ]
        )
        if keep != recorded:
            work.changed = True
        status["cordonedNodes"] = keep
        if not keep:
            status.pop("cordonedNodes", None)

    async def _write(self, work: Pass) -> None:
        repairs.store(work)
        work.status["results"] = work.judged_results()
        self._recount(work)
        before = work.run
        work.run = await checkpoint.write_status(
            self.client, work.run, budget=self.options.status_budget_bytes
        )
        self.reads.wrote(before, work.run)
        work.changed = False
        work.confirmed = True  # the write's answer is the apiserver's current object
        self._advance(work)

    def _advance(self, work: Pass) -> None:
        """The run's index after this pass's accepted write (openunits.py): advanced from
        what the write sent and the apiserver answered, or dropped (the next pass then
        builds it from the status, as a restarted manager would)."""
        index = work.index
        uid = work.view.uid
        advanced = None
        if index is not None and not work.reads_every_result:
            advanced = index.advanced(work.run, held=work.held(), claimed=work._claimed)
        if advanced is None:
            self.open_units.forget(uid)
            if index is not None and not work.reads_every_result:
                work.read_every_result()
            return
        self.open_units.put(advanced)
        work.rebase(advanced)

    def finished(self, work: Pass) -> Phase | None:
        """The run's phase if nothing is left to do (D6/D7), else None; for a pass whose
        pod creation settled units after the walk had already looked."""
        if work.fail_fast_stops():
            return run_phase(work.states())
        if not work.settled_everywhere():
            return None
        if self.repairs.pending(work):
            return None  # F10: a Failed Pair's re-pairs are still owed its blame
        return run_phase(work.states())

    async def _create_planned(self, work: Pass) -> None:
        """Create the pods the walk planned; a refusal or a foreign twin is an Error.

        Units are independent, so their creates go out together (bounded); the pods of
        one unit (a link's server and client, a group's ranks) are created in order,
        since a refused member settles the attempt the later ones belong to."""
        planned, work.planned = work.planned, []
        by_unit: dict[str, list[Launch]] = {}
        for launch in planned:
            by_unit.setdefault(launch.execution.label, []).append(launch)
        await fan_out(
            [functools.partial(self._create_unit, work, launches) for launches in by_unit.values()]
        )
        work.wait(self.options.requeue_unstarted_seconds)

    async def _create_unit(self, work: Pass, launches: Sequence[Launch]) -> None:
        namespace = work.view.namespace
        for launch in launches:
            if work.fail_fast_stops():
                return  # D7: no new load once a required result has failed
            if self._current(work, launch.execution).attempt != launch.execution.attempt:
                continue  # its attempt was settled by an earlier launch of this pass
            with _unit_log_context(launch.execution):
                try:
                    created = await self.client.create(PODS, launch.manifest, namespace=namespace)
                except ApiError as err:
                    if is_already_exists(err):
                        await self._existing_twin(work, launch)
                    elif kube.refusal(err):
                        self._refused(work, launch, err)
                    else:
                        raise
                    continue
                log.info("pod created", pod=ObjectView(created).name)
            self.reads.created(work.run, ObjectView(created).name)
            work.add_pod(created)

    async def _existing_twin(self, work: Pass, launch: Launch) -> None:
        """Our create met a pod of the same name: adopt it only if it is provably ours."""
        ex = launch.execution
        pod = await self.get_pod(work, ex.pod_name)
        if pod is None:
            work.wait(1.0)  # it went away again: the next pass plans afresh
            return
        if launch.build is None:
            problem = self._foreign(work, ex, pod)
        else:
            problem = self.foreign_pod(work, pod, test=ex.test, recorded_uid=None,
                                        build=launch.build)  # fmt: skip
        if problem is None:
            work.add_pod(pod)
            return
        self.record_foreign(work, self._current(work, ex), pod, problem=problem,
                             record_as=launch.lead_pod)  # fmt: skip
        self._unload_siblings(work, launch)
        work.abandon(ex.node)
        work.wait(1.0)

    @staticmethod
    def _unload_siblings(work: Pass, launch: Launch) -> None:
        """A link member that could not be made: the attempt's other live pods go after
        the status write (a half-made link measures nothing, F1/F4)."""
        for name in launch.siblings:
            pod = work.pods.get(name)
            if pod is not None and podstate.live(pod) and name not in work.delete_after_write:
                work.delete_after_write.append(name)

    def _refused(self, work: Pass, launch: Launch, err: ApiError) -> None:
        ex = launch.execution
        message = (
            f"the apiserver refused runner pod {ex.pod_name}: "
            f"{checkpoint.api_message(err)}; no verdict"
        )
        current = self._current(work, ex)
        started = (current.flight or {}).get("startedAt")
        self.record(work, current, error_verdict(message), pod=launch.lead_pod or ex.pod_name,
                    started=started, base=current.result)  # fmt: skip
        work.events.append(("Warning", "PodRefused", message))
        self._unload_siblings(work, launch)
        work.abandon(ex.node)
        work.wait(1.0)

    @staticmethod
    def _current(work: Pass, ex: Execution) -> Execution:
        """``ex`` as the pass holds it now (pod creation comes after the walk, which may
        have changed the unit's result since the launch was planned)."""
        return work.execution(ex.test_index, ex.test, ex.unit)

    def _recount(self, work: Pass) -> None:
        tally = work.tally()
        work.status.update(
            passed=tally.passed, failed=tally.failed, errored=tally.errored, skipped=tally.skipped
        )

    async def sweep(self, work: Pass, *, launch: bool) -> Phase | None:
        """Harvest and launch; the run's phase when nothing is left, else None.

        The walk is in plan order (E8, E9 decide in it), but the runner logs it will
        judge are read ahead, concurrently (:meth:`_read_ahead`)."""
        self._read_ahead(work)
        try:
            return await self._walk(work, launch=launch)
        finally:
            for _, task in work.prefetched.values():
                task.cancel()  # a read the walk did not reach (out of time, D7, an error)
            work.prefetched.clear()

    def _read_ahead(self, work: Pass) -> None:
        """Start the log reads of the terminated pods the walk is about to judge: the
        open Node units of the first test with any (E8 goes no further), each pod
        proven ours first (a foreign pod is never read). A unit with no pod has nothing
        to read, so only the open results and the pending units with a pod are looked at."""
        gate = asyncio.Semaphore(FANOUT)
        for index, test in enumerate(work.plan.tests):
            if test.scope in LINK_SCOPES:
                return  # a link reads its sides itself, each once the link is judged
            if not work.has_unsettled(index):
                continue
            units = work.shape.units[index]
            for position in sorted({*work.open_positions(index), *work.pending_with_pods(index)}):
                ex = work.execution(index, test, units[position])
                pod = work.pods.get(ex.pod_name)
                if (
                    pod is not None
                    and podstate.terminated(pod)
                    and self._foreign(work, ex, pod) is None
                ):
                    self.evidence.read_ahead(work, test, pod, gate=gate)
            return

    async def _walk(self, work: Pass, *, launch: bool) -> Phase | None:
        plan = work.plan
        for index, test in enumerate(plan.tests):
            if work.fail_fast_stops():
                return run_phase(work.states())
            settled = await self._walk_test(work, index, test, launch=launch)
            if settled is None:
                return None  # out of time: commit what this pass did; the next goes on
            if work.fail_fast_stops():
                return run_phase(work.states())
            if not settled:
                return None
        # F10: every planned unit has settled (the run's verdict is complete): only now
        # are Failed Pairs re-paired, so a re-pair never delays or changes a planned test.
        if not await self.repairs.step(work, launch=launch):
            return None
        return run_phase(work.states())

    async def _walk_test(
        self, work: Pass, index: int, test: PlannedTest, *, launch: bool
    ) -> bool | None:
        """Step the unsettled units of one test in plan order (E8, E9 decide in it):
        whether every one has settled, None when the pass ran out of time.

        A settled unit has nothing to step, so only the unsettled ones are visited (the
        run's index says which: openunits.py). Of those, a Node unit with no result and
        no pod only launches: once one is held back by ``maxConcurrentNodes`` (E9: its
        node is not busy and no slot is free), every later one whose node is not busy is
        held back too until the busy nodes change, which only stepping a unit with a
        result or a pod can do. So the walk skips to the next such unit (or to the next
        of those whose node is busy), and a pass costs its open units, not the plan."""
        units = work.shape.units[index]
        unsettled = work.unsettled(index)
        if test.scope != "Node":
            active, candidates = unsettled, []
        else:
            active = sorted({*work.open_positions(index), *work.pending_with_pods(index)})
            taken = set(active)
            candidates = [p for p in unsettled if p not in taken]
        nodes_at = work.shape.positions[index]
        settled = True
        a = c = 0
        while a < len(active) or c < len(candidates):
            if work.out_of_time():
                return None
            if c < len(candidates) and (a == len(active) or candidates[c] < active[a]):
                position = candidates[c]
                unit = units[position]
                go = launch and not work.fail_fast_stops()
                if not go or not self._may_launch(work, unit):
                    # Held back, and so is every later candidate before the next unit to
                    # step whose node is not busy (this docstring's reasoning).
                    settled = False
                    limit = active[a] if a < len(active) else len(units)
                    c = self._next_candidate(work, candidates, c + 1, limit, nodes_at, go=go)
                    continue
                c += 1
            else:
                position = active[a]
                unit = units[position]
                a += 1
                go = launch and not work.fail_fast_stops()
            # D7 also stops the same test's other nodes: no new load once it is in.
            with structlog.contextvars.bound_contextvars(test=test.name, node="+".join(unit.nodes)):
                outcome = await self._unit(work, index, test, unit, launch=go)
            settled = outcome is Step.SETTLED and settled
        return settled

    @staticmethod
    def _may_launch(work: Pass, unit: Unit) -> bool:
        """E9's answer for a unit with no result or pod (the one ``_launch`` asks)."""
        return can_launch(
            unit.nodes, busy=frozenset(work.busy()), cap=work.view.max_concurrent_nodes
        )

    @staticmethod
    def _next_candidate(
        work: Pass,
        candidates: Sequence[int],
        start: int,
        limit: int,
        nodes_at: Mapping[tuple[str, ...], int],
        *,
        go: bool,
    ) -> int:
        """Where the walk goes on after a held-back candidate: the first later candidate
        (from ``start``) before position ``limit`` whose node is busy (it may launch, E9),
        else the first at or after ``limit``."""
        end = bisect.bisect_left(candidates, limit, lo=start)
        if not go:
            return end  # launching is off for this unit and every later one
        busy = (nodes_at.get((node,)) for node in work.busy())
        found = sorted(p for p in busy if p is not None and p < limit)
        for position in found:
            at = bisect.bisect_left(candidates, position, lo=start, hi=end)
            if at < end and candidates[at] == position:
                return at
        return end

    async def _unit(
        self, work: Pass, index: int, test: PlannedTest, unit: Unit, *, launch: bool
    ) -> Step:
        """Advance one unit: SETTLED once its result has settled, else WAITING."""
        ex = work.execution(index, test, unit)
        if not ex.open:
            return Step.SETTLED
        linked = test.scope in LINK_SCOPES
        for _ in range(3):  # an attempt settled as Error may launch the retry at once
            if linked:
                step = await self.links.step(work, ex, launch=launch)
            else:
                step = await self._step(work, ex, launch=launch)
            if step is not Step.AGAIN:
                return step
            ex = work.execution(index, test, unit)  # the next attempt: its own names
        work.wait(1.0)
        return Step.WAITING

    async def _step(self, work: Pass, ex: Execution, *, launch: bool) -> Step:
        """The one step of the unit's current attempt: its pod judged, watched or
        launched; the outcome says what happened."""
        pod = work.pods.get(ex.pod_name)
        if pod is None and ex.flight is not None:
            pod = await self.get_pod(work, ex.pod_name)
            if pod is None:
                # I23: what a checkpoint already read stays on the Error (never judged).
                verdict = error_verdict(
                    f"runner pod {ex.pod_name} was deleted before it terminated; no verdict",
                    exit_code=-1, metrics=ex.flight.get("metrics"),
                )  # fmt: skip
                return self.record(work, ex, verdict, pod=ex.pod_name,
                                    started=ex.flight.get("startedAt"))  # fmt: skip
        if pod is not None:
            problem = self._foreign(work, ex, pod)
            if problem is not None:
                return self.record_foreign(work, ex, pod, problem=problem)
            if work.pods_cached and not podstate.terminated(pod) and self._gives_up(work, ex, pod):
                # A stale cache never settles a live pod early: the pod it would give up
                # on (overdue, or an image that will not arrive) is read live first.
                pod = await self.get_pod(work, ex.pod_name)
                if pod is None:
                    work.forget_pod(ex.pod_name)
                    work.wait(1.0)  # gone since the cache saw it: the next pass decides
                    return Step.WAITING
                problem = self._foreign(work, ex, pod)
                if problem is not None:
                    return self.record_foreign(work, ex, pod, problem=problem)
            work.add_pod(pod)
            if podstate.terminated(pod):
                return await self._harvest(work, ex, pod)
            step = self._running_or_pending(work, ex, pod)
            if step is Step.WAITING:
                await self.evidence.checkpoint(work, ex.test, ex.unit, pod)
            return step
        if not launch:
            return Step.WAITING
        return await self._launch(work, ex)

    def manifest(self, work: Pass, ex: Execution, *, image: str) -> JSON:
        """What the one builder (E13) makes for this attempt: created, or compared with."""
        return build_pod(
            run=RunRef.of(work.run),
            request=PodRequest(
                test_index=ex.test_index, test=ex.test, node=ex.node, attempt=ex.attempt,
                image=image,
            ),
            tolerations=work.view.tolerations,
            service_account=self.options.runner_service_account,
        )  # fmt: skip

    def _foreign(self, work: Pass, ex: Execution, pod: JSON) -> str | None:
        """Why ``pod`` is not provably the one this run created for the attempt, or None.

        A UID pinned in the attempt entry decides; before one is pinned (the pod has not
        started yet, or a crash came between its creation and that write) the pod must
        be exactly what :func:`build_pod` makes for this attempt, node included."""
        return self.foreign_pod(
            work, pod, test=ex.test, recorded_uid=(ex.flight or {}).get("podUID"),
            build=lambda image: self.manifest(work, ex, image=image),
        )  # fmt: skip

    def foreign_pod(
        self,
        work: Pass,
        pod: JSON,
        *,
        test: PlannedTest,
        recorded_uid: str | None,
        build: Callable[[str], JSON],
    ) -> str | None:
        """:meth:`_foreign` for any pod of an attempt: ``recorded_uid`` is the UID its
        attempt entry pinned (None: none pinned for this pod), ``build`` what the
        builder makes for it with a given image."""
        uid = _uid(pod)
        if recorded_uid:
            if uid == recorded_uid:
                return None
            return f"its UID {uid} is not {recorded_uid}, the one this run recorded for it"
        if not podstate.owned_by(pod, work.view.uid):
            return "it does not name this run as its controller"
        containers = PodView(pod).containers
        image = str(containers[0].get("image", "")) if containers else ""
        if image not in allowed_images(test.kind, specs.runner(test.spec)):
            return f"its image {image!r} is not one this test runs"
        field = foreign_reason(pod, expected=build(image))
        if field is None:
            return None
        return f"its {field} is not what the operator builds for this attempt"

    def record_foreign(
        self, work: Pass, ex: Execution, pod: JSON, *, problem: str, record_as: str | None = None
    ) -> Step:
        """I18: an Error attempt naming the pod; nothing it printed is read, and it is
        left where it is (the next attempt has another name). ``record_as``: the pod
        the attempt is recorded against (a link's server or rank 0, F9)."""
        foreign = ObjectView(pod)
        name = foreign.name
        work.forget_pod(name)
        message = (
            f"foreign pod {name} (uid {foreign.uid or None}) was not created by this "
            f"run: {problem}; its output was not read; no verdict"
        )
        work.events.append(("Warning", "ForeignPod", message))
        if record_as is None:
            return self.record(work, ex, error_verdict(message), pod=name, started=None)
        # A link member: the attempt stays the server's (or rank 0's), started when it did.
        return self.record(work, ex, error_verdict(message), pod=record_as,
                            started=(ex.flight or {}).get("startedAt"))  # fmt: skip

    async def get_pod(self, work: Pass, name: str) -> JSON | None:
        """Live by name (H: the pod the status expects, or the twin our create met, may
        be missing from a cache that lags its creation); whether it is ours is decided
        by the caller."""
        return await self.reads.live_get(PODS, name, namespace=work.view.namespace)

    def record(
        self,
        work: Pass,
        ex: Execution,
        verdict: AttemptVerdict,
        *,
        pod: str | None,
        started: str | None,
        finished: str | None = None,
        artifacts: Sequence[Mapping[str, Any]] = (),
        base: JSON | None = None,
        pod_uid: str = "",
    ) -> Step:
        """Apply one attempt through the verdict package (D2-D4) and keep the result;
        AGAIN when the budget allows another attempt, else SETTLED. ``base`` is the
        result as this step has already edited it (its in-flight entry added)."""
        base = dict(base if base is not None else ex.result or new_result(ex.test, ex.unit))
        state = (
            ex.state
            if ex.state is not None
            else wire.state_from_wire(base, required=ex.test.required)
        )
        finished = finished or format_time(work.now)
        record = attempt_record(
            verdict, attempt=ex.attempt, trigger=ex.trigger, node=ex.node, pod_name=pod or "",
            pod_uid=pod_uid, started_at=started, finished_at=finished,
        )  # fmt: skip
        if soak.segmented(ex.test):
            # G2-G5: the fold is written with the segment's attempt entry, in one write.
            new_state, progress = soak.record(
                state, base, verdict, test=ex.test,
                retry_on_error_limit=work.view.retry_on_error_limit, entry=record,
            )  # fmt: skip
            updated = soak.progress_to_wire(wire.state_to_wire(base, new_state), progress)
        else:
            new_state = record_attempt(
                state, verdict, retry_on_error_limit=work.view.retry_on_error_limit, record=record
            )
            updated = wire.state_to_wire(base, new_state)
        if started and not updated.get("startedAt"):
            updated["startedAt"] = started
        updated["finishedAt"] = finished
        if artifacts:
            updated["artifacts"] = merge_refs(updated.get("artifacts") or [], artifacts)
        work.put(updated, new_state)
        where = ex.label.replace("/", " on ", 1)
        _log_attempt(ex, verdict, settled=new_state.phase if not new_state.open else None)
        if not new_state.open:
            if ex.test.name not in work.diagnostic:
                # F10: a re-pair is diagnostic: no TestCompleted for a result that
                # status.results never holds (its entry's blame is the news).
                work.deliveries.append(Delivery(Reason.TEST_COMPLETED, ex.label, work.run))
            if new_state.phase in (Phase.FAILED, Phase.ERROR):
                # An Event says what needs a look; a passed result is in status, in the
                # sinks' TestCompleted and in the run's own transition Events, so it
                # costs the apiserver no Event per node (no rule asks for one).
                work.events.append(
                    ("Warning", f"Test{new_state.phase}",
                     f"{where}: {new_state.phase}: {new_state.message}")
                )  # fmt: skip
            return Step.SETTLED
        if verdict.phase is Phase.ERROR:
            work.events.append(
                ("Warning", "AttemptRetried",
                 f"{where} attempt {ex.attempt} Error, retrying: {verdict.message}")
            )  # fmt: skip
        return Step.AGAIN

    async def _harvest(self, work: Pass, ex: Execution, pod: JSON) -> Step:
        """A terminated pod: its evidence, judged, becomes one attempt (D1-D4)."""
        verdict, refs = await self.evidence.judge(work, ex.test, pod)
        started = podstate.started_at(pod) or (ex.flight or {}).get("startedAt")
        return self.record(
            work, ex, verdict, pod=ex.pod_name, started=started,
            finished=podstate.finished_at(pod) or format_time(work.now), artifacts=refs,
            pod_uid=_uid(pod),
        )  # fmt: skip

    def _gives_up(self, work: Pass, ex: Execution, pod: JSON) -> bool:
        """Whether :meth:`_running_or_pending` would settle this live pod as Error: it is
        overdue (E16), or it never started and its image will not arrive."""
        created = ObjectView(pod).created_at
        age = (work.now - parse_time(str(created))).total_seconds() if created else 0.0
        if age >= overdue_after_seconds(ex.test.spec):
            return True
        if podstate.started_at(pod):
            return False
        reason, _ = podstate.waiting(pod)
        if reason in podstate.PERMANENT_IMAGE_REASONS:
            return True
        return (
            reason in podstate.IMAGE_PULL_REASONS and age >= self.options.image_pull_grace_seconds
        )

    def _running_or_pending(self, work: Pass, ex: Execution, pod: JSON) -> Step:
        """A live pod: its start recorded (the UID pinned), or it is overdue (E16) or
        its image will not arrive: WAITING while it may still run, else settled."""
        name = ex.pod_name
        started = podstate.started_at(pod)
        created = ObjectView(pod).created_at
        age = (work.now - parse_time(str(created))).total_seconds() if created else 0.0
        overdue = overdue_after_seconds(ex.test.spec)
        if started:
            base = dict(ex.result) if ex.result is not None else new_result(ex.test, ex.unit)
            base.setdefault("startedAt", started)
            flight = ex.flight
            if flight is None:
                flight = {
                    "attempt": ex.attempt,
                    "trigger": str(ex.trigger),
                    "phase": str(Phase.RUNNING),
                    "node": ex.node,
                    "podName": name,
                    # I18: from here on this UID, not the name, says the pod is ours.
                    "podUID": _uid(pod),
                    "startedAt": started,
                }
                base["attempts"] = [*(base.get("attempts") or []), flight]
                work.put(base, ex.state)  # the in-flight entry is not the verdict's
            if self._gives_up(work, ex, pod):
                # E16: the kubelet's own deadline should have ended it long ago (a lost
                # node, a stuck kubelet); nothing it printed is a verdict.
                message = (
                    f"runner pod {name} still not terminated {int(age)}s after creation "
                    f"(overdue after {overdue}s); no verdict"
                )
                work.delete_after_write.append(name)
                return live_pod_settled(self.record(
                    work, ex, error_verdict(message, metrics=flight.get("metrics")), pod=name,
                    started=started, base=base, pod_uid=_uid(pod)))  # fmt: skip
            interval = specs.checkpoint_interval_seconds(ex.test.spec)
            work.wait(min(interval if interval > 0 else self.options.requeue_idle_seconds,
                          overdue - age))  # fmt: skip
            return Step.WAITING
        # Never started: overdue (E16), or an image that will not be pulled.
        reason, detail = podstate.waiting(pod)
        pulling = reason in podstate.IMAGE_PULL_REASONS
        grace = self.options.image_pull_grace_seconds
        if self._gives_up(work, ex, pod):
            account = podstate.scheduler_message(pod)
            if reason:
                account = f"container waiting: {reason}" + (f": {detail}" if detail else "")
            message = (
                f"runner pod {name} never started ({int(age)}s after creation): "
                f"{account or 'no scheduler or kubelet account'}; no verdict"
            )
            work.delete_after_write.append(name)
            return live_pod_settled(
                self.record(
                    work, ex, error_verdict(message), pod=name, started=None, pod_uid=_uid(pod)
                )
            )
        work.wait(min(overdue - age, self.options.requeue_unstarted_seconds))
        if pulling:
            work.wait(grace - age)
        return Step.WAITING

    async def image_for(self, work: Pass, test: PlannedTest, node: str) -> str | ImageError | None:
        """E14: the runner image for ``test`` on ``node``; None = wait for the node's
        fingerprint.

        When the image turns on the node's GPU vendor, the vendor comes from the node's
        captured NodeFingerprint (cached; a miss is confirmed live). A node whose
        fingerprint is not captured yet is a retryable state, never the default image
        by accident (an AMD node given the NVIDIA image): the launch waits up to
        ``FINGERPRINT_GRACE_SECONDS`` from the run's start (a node that just joined),
        then the attempt is Error, retried under the budget.
        """
        runner = specs.runner(test.spec)
        if not depends_on_vendor(kind=test.kind, runner=runner):
            return resolve_image(kind=test.kind, runner=runner, node_vendor=None)
        fingerprint = await self.reads.get(
            names.FINGERPRINTS, fingerprint_name(node), namespace=self.options.operator_namespace
        )
        try:
            vendor = vendor_of(fingerprint, node=node)
        except FingerprintPendingError as pending:
            started = parse_time(work.view.started_at or "")
            # No recorded start: no grace to measure, so no wait (never an unbounded hold).
            waited = (work.now - started).total_seconds() if started else FINGERPRINT_GRACE_SECONDS
            if waited < FINGERPRINT_GRACE_SECONDS:
                work.wait(min(FINGERPRINT_RECHECK_SECONDS, FINGERPRINT_GRACE_SECONDS - waited))
                return None
            return ImageError(
                f"FingerprintPending: {pending}; the {test.kind!r} image depends on the "
                "node's GPU vendor, which only its NodeFingerprint says (is the manager's "
                "fingerprint controller running?)"
            )
        return resolve_image(kind=test.kind, runner=runner, node_vendor=vendor)

    async def _launch(self, work: Pass, ex: Execution) -> Step:
        """Plan the attempt's pod (created after the cordon is written), or settle it."""
        if not can_launch(
            ex.unit.nodes, busy=frozenset(work.busy()), cap=work.view.max_concurrent_nodes
        ):
            return Step.WAITING  # held back by maxConcurrentNodes (E9)
        image = await self.image_for(work, ex.test, ex.node)
        if image is None:
            return Step.WAITING  # E14: the node's fingerprint is not captured yet
        if isinstance(image, ImageError):
            # E14: that execution is an Error (no cordon placed), retried under the budget.
            message = f"no runner image for node {ex.node}: {image.message}"
            return self.record(work, ex, error_verdict(message), pod=None, started=None)
        work.cordons.append((ex.test, ex.node))  # written by the commit, before its pod
        work.planned.append(Launch(execution=ex, manifest=self.manifest(work, ex, image=image)))
        work.launch(ex.node)
        return Step.WAITING

    async def _cordon_planned(self, work: Pass) -> None:
        """E10/E11 for the Node launches the walk planned: their cordons go out together
        (bounded), each still stamp-then-cordon, all before the status write that
        records them and so before any of their pods exists. The run view is confirmed
        once, first (a stale view never cordons)."""
        pending, work.cordons = work.cordons, []
        if not pending or not work.planned:
            return
        await self.confirm(work)
        await fan_out([functools.partial(self.cordon, work, test, node) for test, node in pending])

    async def confirm(self, work: Pass) -> None:
        """The run view is what the apiserver holds, before a write that precedes the
        pass's status write (a cordon, a rendezvous Service): never from a stale view (a
        run that already ended would cordon a node nothing then releases)."""
        if not work.confirmed:
            await self.reads.confirm(names.RUNS, work.run)
            work.confirmed = True

    async def cordon(self, work: Pass, test: PlannedTest, node: str) -> None:
        """E10/E11: stamp and cordon in one atomic write (cordon.py), preconditioned on the
        node's resourceVersion.

        A stale cache never decides a cordon (E22): the patches computed from the cached
        node are written only under its resourceVersion, so a cache lagging our own
        writes or another owner's stamp is a 409, and the node is then read live and the
        patches computed again; a cached node that needs no write is read live too (a
        cache can show a cordon that is gone). So the live node read is made only when
        the cache cannot be trusted, not before every cordon.

        Only a target of the pinned plan is ever cordoned: the release scan reads only
        those (finish.py), so a stamp anywhere else could outlive the run."""
        if node not in work.plan.target_set:
            raise ValueError(f"cordon of node {node!r}: not a target of the run's pinned plan")
        await self.confirm(work)
        heat = (
            heat_until(work.now, seconds=heat_expiry_seconds(test.spec))
            if drives_sustained_load(test.kind)
            else None
        )
        prior = work.prior.get(node)
        stamp = RunRef.of(work.run)
        record = await self._cordon_from_cache(node, stamp=stamp, prior=prior, heat=heat)
        if record is None:
            # E10/E11: live, since a cache lagging our own writes would make our fresh
            # cordon look pre-existing, or another owner's stamp look absent.
            current = await self.reads.live_get(NODES, node)
            if current is None:
                return
            patches, record = cordon_patches(current, stamp=stamp, prior=prior, heat_until=heat)
            for patch in patches:
                await self.client.patch(NODES, node, patch)
        recorded = work.view.cordoned_nodes
        if record and node not in recorded:
            log.info("node cordoned", test=test.name, node=node)
            work.status["cordonedNodes"] = sorted({*recorded, node})
            work.changed = True

    async def _cordon_from_cache(
        self, node: str, *, stamp: RunRef, prior: bool | None, heat: datetime | None
    ) -> bool | None:
        """The cordon written from the cached node under its resourceVersion: whether to
        record it, or None when the cache cannot decide (no cached node, nothing to
        write, or a 409: the cache lagged) and the node must be read live."""
        cached = await self.reads.peek(NODES, node)
        if cached is None:
            return None
        patches, record = cordon_patches(cached, stamp=stamp, prior=prior, heat_until=heat)
        writes = conditioned(patches, cached)
        if writes is None:
            return None
        try:
            for patch in writes:
                await self.client.patch(NODES, node, patch)
        except ApiError as err:
            if (is_conflict(err) or is_not_found(err)) and patch is writes[0]:
                return None  # the cache lagged (or the node went): decide on a live read
            raise
        return record

    async def release(self, work: Pass, node: str, *, prior: bool | None) -> None:
        """E12: our stamp removed and the prior schedulability restored (a cordon
        someone else re-asserted is kept, with an Event saying why: cordon.py), written
        from the cached node under its resourceVersion; a cache that shows no stamp of
        ours, or lagged (409), is answered by a live read, and so is an uncordon the
        cached node cannot decide (a cache that keeps no field owners)."""
        stamp = RunRef.of(work.run)
        cached = await self.reads.peek(NODES, node)
        decision = release_decision(cached, stamp=stamp, prior=prior) if cached else None
        writes = conditioned([decision.patch], cached) if decision and cached else None
        if decision is not None and writes is not None and not decision.blind:
            try:
                await self.client.patch(NODES, node, writes[0])
                self._note_kept(work, node, decision)
                log.info("node released", node=node)
                return
            except ApiError as err:
                if is_not_found(err):
                    return
                if not is_conflict(err):
                    raise
        current = await self.reads.live_get(NODES, node)
        decision = release_decision(current, stamp=stamp, prior=prior) if current else None
        if decision is None:
            return  # gone, or no longer stamped by this run: nothing of ours to undo
        try:
            await self.client.patch(NODES, node, decision.patch)
        except ApiError as err:
            if not is_not_found(err):
                raise
            return
        self._note_kept(work, node, decision)
        log.info("node released", node=node)

    @staticmethod
    def _note_kept(work: Pass, node: str, decision: Release) -> None:
        if decision.kept is not None:
            work.events.append(("Normal", "CordonKept", kept_message(node, decision.kept)))

    def settle_rest(self, work: Pass, *, phase: Phase, message: str) -> None:
        """Every open result and every planned unit with no result gets ``phase``."""
        work.read_every_result()  # once, at the end: every unit is looked at
        stamp = format_time(work.now)
        for index, test in enumerate(work.plan.tests):
            for unit in units_of_test(work.plan, index):
                position = work.find(test.name, unit.nodes)
                if position is None:
                    fresh = new_result(test, unit)
                    fresh.update(phase=str(phase), message=message, finishedAt=stamp)
                    work.put(fresh)
                elif work.results[position].get("phase") == str(Phase.RUNNING):
                    settled = dict(work.results[position])
                    settled.update(phase=str(phase), message=message, finishedAt=stamp)
                    work.put(settled)

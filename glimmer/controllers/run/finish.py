"""Ending a run: terminate in the safe order, converge, clean up on deletion (E19, E20).

The verdict is made durable before anything is unloaded, and nodes are released only
after their pods are gone: killing pods first made the operator harvest its own
SIGKILL as hardware Error, and releasing first handed hot nodes back to the scheduler.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Final

import aiohttp
import structlog

from glimmer.api import format_time, parse_time
from glimmer.controllers.kit import checkpoint, names
from glimmer.controllers.kit.conditions import upsert_condition
from glimmer.controllers.kit.cordon import kept_message, owner_of, release_decision
from glimmer.controllers.kit.ref import RunRef
from glimmer.controllers.kit.view import ObjectView, RunView
from glimmer.controllers.run import kube, wire
from glimmer.controllers.run.cohort import CohortJudge
from glimmer.controllers.run.context import Part, RunContext
from glimmer.controllers.run.delivery import (
    Delivery,
    Reason,
    ReportingDeliverer,
    pinned_baseline,
)
from glimmer.controllers.run.services import LINK_SCOPES
from glimmer.engine import NODES, ApiError, KubeClient, Result, is_not_found
from glimmer.plan import PinnedPlan
from glimmer.sinks import build
from glimmer.verdict import Phase, count, measured_condition, run_provenance
from glimmer.verdict.codec import clamp_text

log = structlog.get_logger("glimmer.controllers.run")

JSON = dict[str, Any]
#: Runs whose refused terminal envelope is paced in memory (oldest forgotten first).
_MAX_TRACKED_RESENDS: Final = 4096
#: Each sink's entry in the run's ``status.sinkStatus`` is clamped to this many bytes.
SINK_STATUS_BYTES: Final = 512
#: E19(3): a run whose plan names at most this many nodes reads them by name to release
#: its stamps; above, one uncached list of every node costs fewer requests.
RELEASE_READS_BY_NAME: Final = 32
TERMINATE_OPEN_MESSAGE: Final = (
    "run reached a terminal phase before this execution completed; no verdict"
)


class Finisher(Part):
    """Terminate (E19), converge terminal runs, clean up deleted ones (E20)."""

    def __init__(self, ctx: RunContext) -> None:
        super().__init__(ctx)
        #: Run UID -> when its refused terminal envelope was last sent (E19 pacing).
        self._terminal_attempts: dict[str, datetime] = {}
        #: C9: the run-level phase of judgement, applied as the verdict settles.
        self.cohorts = CohortJudge(ctx)

    async def finalise(
        self,
        run: JSON,
        *,
        phase: Phase,
        extra: Sequence[JSON],
        plan: PinnedPlan | None,
        sinks: tuple[str, ...] | None = None,
        budget: int | None = None,
    ) -> Result:
        """E19(1): settle what is open, write the verdict, then converge. ``budget``
        overrides the status size budget for this one write (after a size refusal)."""
        self.settle_verdict(run, phase=phase, extra=extra, plan=plan)
        run = await self.write_verdict(run, phase=phase, budget=budget)
        return await self.converge_terminal(run, deliver=True, sinks=sinks)

    def settle_verdict(
        self, run: JSON, *, phase: Phase, extra: Sequence[JSON], plan: PinnedPlan | None
    ) -> Phase:
        """Edit the run's status in place into its verdict: every open result settled as
        Error (no verdict), ``extra`` appended, the cohort-relative gates judged (D8: a
        Passed outlier becomes Failed, and ``phase``, where it was D6's, follows), then
        provenance, certification and the Measured condition, the counts and
        ``finishedAt``. Nothing is written here. Returns the phase written."""
        view = RunView(run)
        status = view.status
        now = self.now()
        results = [dict(r) for r in view.results] + [dict(r) for r in extra]
        for result in results:
            if result.get("phase") == str(Phase.RUNNING):
                result.update(phase=str(Phase.ERROR), message=TERMINATE_OPEN_MESSAGE,
                              finishedAt=format_time(now))  # fmt: skip
        required = {t.name: t.required for t in plan.tests} if plan is not None else {}
        states = [
            wire.state_from_wire(r, required=required.get(str(r.get("name")), True))
            for r in results
        ]
        if plan is not None:
            results, states, phase = self.cohorts.settle(
                run, plan, results=results, states=states, phase=phase
            )
        tally = count(states)
        origin = run_provenance(states, phase=phase, baseline=pinned_baseline(view, plan))
        status.update(
            provenance=str(origin.provenance),
            certifiesSilicon=origin.certifies_silicon,
            phase=str(phase),
            finishedAt=format_time(now),
            results=results,
            passed=tally.passed,
            failed=tally.failed,
            errored=tally.errored,
            skipped=tally.skipped,
        )
        # I16: every finished run says whether anything was measured (kubectl's
        # Measured column); an all-Skipped Pass reads False and certifies nothing.
        fact = measured_condition(origin)
        upsert_condition(status, type_=fact.type, status_=fact.status, reason=fact.reason,
                      message=fact.message, now=now)  # fmt: skip
        # The terminal status owes no release record: the unload releases every node
        # whose owner stamp names the run, from a live node list (E19(3)), and repeats on
        # each terminal reconcile while the finalizer stands, so the one terminal write
        # already says what the run will hold (nothing) and the unload needs no write.
        status.pop("cordonedNodes", None)
        return phase

    async def write_verdict(
        self, run: JSON, *, phase: Phase, budget: int | None = None, clamp: bool = True
    ) -> JSON:
        """(1) The settled verdict made durable before anything is unloaded: the run's
        one terminal status write. Returns the run as the apiserver now holds it.

        ``clamp``: the write must fit (terminal compaction, see kube), since no later
        write can repair it. The pass that ends a run writes with ``clamp=False``: a
        verdict whose evidence does not fit the budget is never recorded with that
        evidence clamped away; it is
        :class:`~glimmer.controllers.kit.checkpoint.StatusTooLargeError` and the run ends
        Error (I21), through a clamped write."""
        before = _version_of(run)
        run = await checkpoint.write_status(
            self.client, run, budget=budget or self.options.status_budget_bytes, terminal=clamp
        )
        self.reads.wrote(before, run)
        view = RunView(run)
        with contextlib.suppress(ValueError):
            # The phase the status now holds: the cohort judgement (C9) may have turned
            # the caller's Passed into Failed as it settled.
            phase = Phase(view.phase_text)
        passed, failed, errored, skipped = view.counts
        log.info("run finished", phase=str(phase), passed=passed, failed=failed,
                 errored=errored, skipped=skipped)  # fmt: skip
        await kube.record_event(
            self.client, run, type_="Normal" if phase is Phase.PASSED else "Warning",
            reason=f"Run{phase}",
            message=f"run {phase}: {passed} passed, {failed} failed, "
            f"{errored} errored, {skipped} skipped",
        )  # fmt: skip
        if self._observe is not None:
            self._observe(run)
        return run

    async def _unload(self, run: JSON) -> JSON:
        """(2) delete live pods and rendezvous Services, (3) release every stamp naming
        this run. The pods are the cache's once it shows every pod this process created
        for the run (the E12 rule), else an uncached list."""
        pods = await self.reads.pods_for_release(run)
        if pods is None:
            pods, _ = await self.reads.pods_of(run)
        await kube.delete_live_pods(self.client, run, pods=pods)
        view = RunView(run)
        if _may_hold_services(view):
            await kube.delete_owned_services(self.client, run)
        await self.release_every_stamp(run)
        if view.cordoned_nodes:
            run["status"] = {k: v for k, v in view.status.items() if k != "cordonedNodes"}
            before = _version_of(run)
            run = await checkpoint.write_status(
                self.client, run, budget=self.options.status_budget_bytes
            )
            self.reads.wrote(before, run)
        return run

    async def release_every_stamp(self, run: JSON) -> None:
        """E19(3)/E20: every node whose owner stamp names this run, read live (so the
        release sees who wrote each cordon, cordon.py); a cordon someone else
        re-asserted is kept, with an Event on the run saying why."""
        stamp = RunRef.of(run)
        prior = RunView(run).prior_unschedulable
        for node in await self._stamp_candidates(run):
            owner = owner_of(node)
            if owner is None or owner.uid != stamp.uid:
                continue
            name = ObjectView(node).name
            decision = release_decision(node, stamp=stamp, prior=prior.get(name))
            if decision is None:
                continue
            try:
                await self.client.patch(NODES, name, decision.patch)
            except ApiError as err:
                if not is_not_found(err):
                    raise
                continue
            log.info("node released", node=name)
            if decision.kept is not None:
                await kube.record_event(self.client, run, type_="Normal", reason="CordonKept",
                                        message=kept_message(name, decision.kept))  # fmt: skip

    async def _stamp_candidates(self, run: JSON) -> list[JSON]:
        """The nodes the release scan reads, uncached (E22). A run stamps only nodes its
        pinned plan names (E10: a cordon is refused for any other), so a plan of at most
        :data:`RELEASE_READS_BY_NAME` nodes is read node by node; a larger one, or a run
        whose plan is missing or unreadable, lists every node. A list decodes the whole
        cluster: a hundred one-pair runs on a 1,000-node fleet would each decode 1,000
        nodes to release two."""
        plan = RunView(run).readable_plan()
        if plan is None or len(plan.targets) > RELEASE_READS_BY_NAME:
            return await kube.list_all(self.client, NODES)
        nodes = []
        for name in dict.fromkeys(plan.targets):
            try:
                nodes.append(await self.client.get(NODES, name))
            except ApiError as err:
                if not is_not_found(err):  # E20: only a missing node is passed over
                    raise
        return nodes

    async def converge_terminal(
        self, run: JSON, *, deliver: bool = False, sinks: tuple[str, ...] | None = None
    ) -> Result:
        view = RunView(run)
        phase = view.phase_text
        sinks = sinks if sinks is not None else self._sinks(view)
        # E19: the finalizer goes only after the terminal envelope was sent (or its
        # refusal recorded as pending), so a terminal run still holding it has not been
        # delivered: the pass that wrote the verdict was cut (a conflict, a restart)
        # before it got that far. Deliver now, or the verdict never reaches a sink.
        unsent = names.FINALIZER in view.finalizers
        if unsent:
            run = await self._unload(run)
        pending = RunView(run).annotations.get(names.PENDING_TERMINAL_DELIVERY)
        due = deliver or unsent or bool(pending)
        requeue: float | None = None
        wait = 0.0 if deliver or not due else self._resend_wait(view.uid)
        if wait > 0:
            requeue = wait  # a re-send is not due yet (our own writes wake us)
        elif due:
            # I9: the terminal envelope carries every result in full, its compact
            # records expanded from the run's evidence shards (an unreadable shard's
            # results travel as Error); a run with no compact record costs no read.
            evidence = await _hydrated(self.client, run) if sinks else run
            delivery = Delivery(Reason.RUN_PHASE_CHANGED, phase, evidence, sinks)
            ok, run = await self._deliver_terminal(run, delivery)
            self._note_terminal_attempt(view.uid, delivered=ok)
            if ok and pending:
                run = await self._patch_metadata(
                    run, {"annotations": {names.PENDING_TERMINAL_DELIVERY: None}}
                )
            elif not ok:
                if not pending:
                    run = await self._patch_metadata(
                        run,
                        {"annotations": {names.PENDING_TERMINAL_DELIVERY: phase}},
                    )  # fmt: skip
                requeue = self.options.terminal_delivery_retry_seconds
        finalizers = RunView(run).finalizers
        if names.FINALIZER in finalizers:
            run = await self._patch_metadata(
                run,
                {"finalizers": [f for f in finalizers if f != names.FINALIZER]},
            )
        view = RunView(run)
        ttl = view.ttl_seconds_after_finished
        finished = view.finished_at
        if ttl > 0 and finished:
            remaining = (parse_time(finished) - self.now()).total_seconds() + ttl
            if remaining <= 0:
                if view.uid:  # never a delete that could hit a run re-created by name
                    with contextlib.suppress(ApiError):
                        await self.client.delete(
                            names.RUNS, view.name, namespace=view.namespace,
                            precondition_uid=view.uid,
                        )  # fmt: skip
                return Result()
            requeue = remaining if requeue is None else min(requeue, remaining)
        return Result(requeue_after=requeue) if requeue else Result()

    async def _patch_metadata(self, run: JSON, changes: JSON) -> JSON:
        """A metadata patch of the terminal run (kube.patch_metadata), remembered as our
        write: a cache still showing the run before it (with its finalizer) waits for
        its event instead of unloading and delivering a second time."""
        after = await kube.patch_metadata(self.client, run, changes)
        self.reads.wrote(_version_of(run), after)
        return after

    def _resend_wait(self, uid: str) -> float:
        """Seconds until a refused terminal envelope is due again (E19: every retry
        period). Every write of the run wakes a terminal reconcile; without this each of
        our own annotation and finalizer patches would re-send at once. In memory only: a
        restarted manager re-sends at once, which is what a retry should do."""
        last = self._terminal_attempts.get(uid)
        if last is None:
            return 0.0
        elapsed = (self.now() - last).total_seconds()
        return max(0.0, self.options.terminal_delivery_retry_seconds - elapsed)

    def _note_terminal_attempt(self, uid: str, *, delivered: bool) -> None:
        if delivered or not uid:
            self._terminal_attempts.pop(uid, None)
            return
        self._terminal_attempts[uid] = self.now()
        while len(self._terminal_attempts) > _MAX_TRACKED_RESENDS:  # bounded memory
            self._terminal_attempts.pop(next(iter(self._terminal_attempts)))

    async def _deliver_terminal(self, run: JSON, delivery: Delivery) -> tuple[bool, JSON]:
        """(4) The terminal envelope; with a reporting deliverer, each sink's outcome is
        recorded in ``status.sinkStatus`` (best effort: the verdict is already durable,
        and a failed bookkeeping write must not cost the re-send its annotation)."""
        if not isinstance(self.deliverer, ReportingDeliverer):
            return await self.deliverer.deliver(delivery), run
        report = await self.deliverer.deliver_reporting(delivery)
        if not report.outcomes:
            return report.ok, run
        stamp = format_time(self.now())
        recorded = {
            o.sink: f"Delivered {stamp}"
            if o.delivered
            else clamp_text(f"Failed {stamp}: {o.error}", SINK_STATUS_BYTES)
            for o in report.outcomes
        }
        view = RunView(run)
        if view.status.get("sinkStatus") == recorded:
            return report.ok, run
        with contextlib.suppress(ApiError, OSError, TimeoutError, aiohttp.ClientError):
            # Only this map changes, so no resourceVersion precondition is needed; the
            # answer carries the new resourceVersion the metadata patches below use.
            run = await self.client.patch(
                names.RUNS, view.name, {"status": {"sinkStatus": recorded}},
                namespace=view.namespace, subresource="status",
            )  # fmt: skip
        return report.ok, run

    @staticmethod
    def _sinks(view: RunView) -> tuple[str, ...]:
        """The pinned plan's sinks; none when no plan is pinned or it is unreadable."""
        plan = view.readable_plan()
        return plan.sinks if plan is not None else ()

    async def cleanup(self, run: JSON) -> Result:
        """E20: the run is being deleted; unload, release, forget, let it go."""
        view = RunView(run)
        finalizers = view.finalizers
        if names.FINALIZER in finalizers:
            await kube.delete_live_pods(self.client, run)
            if _may_hold_services(view):
                await kube.delete_owned_services(self.client, run)
            await self.release_every_stamp(run)
            await kube.patch_metadata(
                self.client, run, {"finalizers": [f for f in finalizers if f != names.FINALIZER]}
            )
        self._terminal_attempts.pop(view.uid, None)
        self.cohorts.forget(view.uid)
        if self._forget is not None:
            self._forget(view.namespace, view.name)
        return Result()


def _version_of(run: JSON) -> JSON:
    """The identity and version of ``run`` as read, kept before a write replaces it."""
    view = ObjectView(run)
    return {"metadata": {"uid": view.uid, "resourceVersion": view.resource_version}}


def _may_hold_services(view: RunView) -> bool:
    """Whether the run may have made a rendezvous Service: its pinned plan has a Pair or
    Group test, or a plan is pinned that cannot be read (then look rather than guess). A
    run with no pinned plan never created one; node-only runs skip the extra list."""
    if view.plan_text is None:
        return False
    plan = view.readable_plan()
    return plan is None or any(test.scope in LINK_SCOPES for test in plan.tests)


async def _hydrated(client: KubeClient, run: JSON) -> JSON:
    """``run`` with every result in full, read through its shards (sinks read evidence
    the way the envelope builder does)."""
    return build.expand_run(run, await build.read_evidence(client, run))

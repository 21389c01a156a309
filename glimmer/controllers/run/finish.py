"""Ending a run: terminate in the safe order, converge, clean up on deletion (E19, E20).

The verdict is made durable before anything is unloaded, and nodes are released only
after their pods are gone: killing pods first made the operator harvest its own
SIGKILL as hardware Error, and releasing first handed hot nodes back to the scheduler.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Any, Final

import structlog

from glimmer.api import format_time, parse_time
from glimmer.controllers.run import kube, labels, wire
from glimmer.controllers.run.conditions import set_condition
from glimmer.controllers.run.context import Part, run_key
from glimmer.controllers.run.delivery import Delivery, Reason
from glimmer.engine import ApiError, Result
from glimmer.plan import PinnedPlan, PlanDecodeError
from glimmer.verdict import Phase, count, measured_condition, run_provenance

log = structlog.get_logger("glimmer.controllers.run")

JSON = dict[str, Any]
TERMINATE_OPEN_MESSAGE: Final = (
    "run reached a terminal phase before this execution completed; no verdict"
)


def pinned_baseline(run: Mapping[str, Any], plan: PinnedPlan | None) -> bool:
    """Whether the run is a baseline (I19.6: a baseline measures, it never certifies).

    ``spec.baseline`` is pinned: the plan's copy decides, so a spec edited after the pin
    changes nothing; the spec is read only when no plan could be pinned or decoded."""
    if plan is not None:
        return plan.baseline
    return bool((run.get("spec") or {}).get("baseline"))


class Finisher(Part):
    """Terminate (E19), converge terminal runs, clean up deleted ones (E20)."""

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
        status = run.setdefault("status", {})
        now = self.now()
        results = [dict(r) for r in status.get("results") or []] + [dict(r) for r in extra]
        for result in results:
            if result.get("phase") == str(Phase.RUNNING):
                result.update(phase=str(Phase.ERROR), message=TERMINATE_OPEN_MESSAGE,
                              finishedAt=format_time(now))  # fmt: skip
        required = {t.name: t.required for t in plan.tests} if plan is not None else {}
        states = [
            wire.state_from_wire(r, required=required.get(str(r.get("name")), True))
            for r in results
        ]
        tally = count(states)
        origin = run_provenance(states, phase=phase, baseline=pinned_baseline(run, plan))
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
        # I19.6: every finished run says whether anything was measured (kubectl's
        # Measured column); an all-Skipped Pass reads False and certifies nothing.
        fact = measured_condition(origin)
        set_condition(status, type_=fact.type, status_=fact.status, reason=fact.reason,
                      message=fact.message, now=now)  # fmt: skip
        # (1) the verdict is durable before anything is unloaded; this write must fit
        # (terminal compaction, see kube), since no later write can repair it.
        run = await kube.write_status(
            self.client, run, budget=budget or self.options.status_budget_bytes, terminal=True
        )
        log.info("run finished", run=kube.meta(run).get("name"), phase=str(phase))
        await kube.record_event(
            self.client, run, type_="Normal" if phase is Phase.PASSED else "Warning",
            reason=f"Run{phase}",
            message=f"run {phase}: {tally.passed} passed, {tally.failed} failed, "
            f"{tally.errored} errored, {tally.skipped} skipped",
        )  # fmt: skip
        if self._observe is not None:
            self._observe(run)
        return await self.converge_terminal(run, deliver=True, sinks=sinks)

    async def _unload(self, run: JSON) -> JSON:
        """(2) delete live pods, (3) release every stamp naming this run."""
        await kube.delete_live_pods(self.client, run)
        status = run.get("status") or {}
        await kube.release_all_stamps(
            self.client, run, prior=status.get("priorUnschedulable") or {}
        )
        if status.get("cordonedNodes"):
            run["status"] = {k: v for k, v in status.items() if k != "cordonedNodes"}
            run = await kube.write_status(self.client, run, budget=self.options.status_budget_bytes)
        return run

    async def converge_terminal(
        self, run: JSON, *, deliver: bool = False, sinks: tuple[str, ...] | None = None
    ) -> Result:
        key = run_key(run)
        m = kube.meta(run)
        status = run.get("status") or {}
        phase = str(status.get("phase"))
        sinks = sinks if sinks is not None else self._sinks(run)
        if labels.FINALIZER in (m.get("finalizers") or []):
            run = await self._unload(run)
        notes = kube.meta(run).get("annotations") or {}
        pending = notes.get(labels.PENDING_TERMINAL_DELIVERY)
        requeue: float | None = None
        if deliver or pending:
            ok = await self.deliverer.deliver(Delivery(Reason.RUN_PHASE_CHANGED, phase, run, sinks))
            if ok and pending:
                run = await kube.patch_metadata(
                    self.client, run, {"annotations": {labels.PENDING_TERMINAL_DELIVERY: None}}
                )
            elif not ok:
                if not pending:
                    run = await kube.patch_metadata(
                        self.client, run,
                        {"annotations": {labels.PENDING_TERMINAL_DELIVERY: phase}},
                    )  # fmt: skip
                requeue = self.options.terminal_delivery_retry_seconds
        finalizers = list(kube.meta(run).get("finalizers") or [])
        if labels.FINALIZER in finalizers:
            run = await kube.patch_metadata(
                self.client,
                run,
                {"finalizers": [f for f in finalizers if f != labels.FINALIZER]},
            )
        self.interlock.drop_run(key)
        ttl = int((run.get("spec") or {}).get("ttlSecondsAfterFinished") or 0)
        finished = (run.get("status") or {}).get("finishedAt")
        if ttl > 0 and finished:
            remaining = (parse_time(str(finished)) - self.now()).total_seconds() + ttl
            if remaining <= 0:
                with contextlib.suppress(ApiError):
                    await self.client.delete(
                        kube.RUNS, str(m["name"]), namespace=str(m["namespace"]),
                        precondition_uid=str(m.get("uid")),
                    )  # fmt: skip
                return Result()
            requeue = remaining if requeue is None else min(requeue, remaining)
        return Result(requeue_after=requeue) if requeue else Result()

    def _sinks(self, run: Mapping[str, Any]) -> tuple[str, ...]:
        text = (kube.meta(run).get("annotations") or {}).get(labels.PLAN_ANNOTATION)
        if not text:
            return ()
        try:
            return PinnedPlan.from_annotation(text).sinks
        except PlanDecodeError:
            return ()

    async def cleanup(self, run: JSON) -> Result:
        """E20: the run is being deleted; unload, release, forget, let it go."""
        m = kube.meta(run)
        finalizers = list(m.get("finalizers") or [])
        if labels.FINALIZER in finalizers:
            await kube.delete_live_pods(self.client, run)
            await kube.release_all_stamps(
                self.client, run, prior=(run.get("status") or {}).get("priorUnschedulable") or {}
            )
            await kube.patch_metadata(
                self.client, run, {"finalizers": [f for f in finalizers if f != labels.FINALIZER]}
            )
        self.interlock.drop_run(run_key(run))
        if self._forget is not None:
            self._forget(str(m["namespace"]), str(m["name"]))
        return Result()

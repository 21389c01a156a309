"""The BurnInRun reconciler (semantics E, F, H).

Nothing is remembered between passes: every pass re-derives what to do from the pinned
plan, the run's status and the run's pods (E1), so a manager restarted at any point
adopts its pods (deterministic names) and finishes. The status is the checkpoint: a pod
is deleted only after the status that justifies deleting it has been written, and a
status write carries the resourceVersion it was computed from, so a conflict is a
requeue, never a blind overwrite.

This module holds the E1 dispatch and the E7 step gate (cancel, deadline, sweep); the
rule groups live beside it: ``start`` (E2-E6), ``sweep`` (E8-E16), ``evidence``
(A12-A14, H), ``finish`` (E19-E20). Every Pass/Fail/Error decision is made by
``glimmer.verdict`` (the one choke point). Pair and Group units (F1-F9) are stepped
by ``links`` with the same records, cordons and pod checks.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Final

from glimmer.api import CancelPolicy, parse_time
from glimmer.api.vocabulary import ConditionStatus
from glimmer.controllers.kit import checkpoint, names
from glimmer.controllers.kit.conditions import upsert_condition
from glimmer.controllers.kit.reads import StaleViewError, uncached
from glimmer.controllers.kit.view import ObjectView, RunView
from glimmer.controllers.run import kube, podstate, wire
from glimmer.controllers.run.context import RunContext, RunOptions, now_utc
from glimmer.controllers.run.delivery import Deliverer, NoDelivery
from glimmer.controllers.run.finish import Finisher
from glimmer.controllers.run.links import lead_alone
from glimmer.controllers.run.passes import Pass
from glimmer.controllers.run.reads import RunReads
from glimmer.controllers.run.start import Pinned, Refused, Starter
from glimmer.controllers.run.sweep import POD_CACHE_WAIT_SECONDS, PodsBehindError, Sweeper
from glimmer.engine import (
    NAMESPACES,
    PODS,
    ApiError,
    KubeClient,
    NotCachedError,
    Readers,
    Result,
    is_conflict,
    is_not_found,
)
from glimmer.plan import PinnedPlan, PlanDecodeError
from glimmer.verdict import Phase

JSON = dict[str, Any]

NO_REASON: Final = "cancelled with no reason given"
#: E25: the condition a Graceful cancel's drain is told in, and its reason.
CANCELLING: Final = "Cancelling"
DRAINING: Final = "Draining"
DRAINED: Final = "Drained"
#: E25: how often a drain looks again (a pod's deletion also requeues the run).
DRAIN_POLL_SECONDS: Final = 1.0


def cancelling_message(pods: int, grace: int) -> str:
    """What ``Cancelling`` says while a Graceful cancel drains (E25)."""
    return f"draining {pods} pod{'' if pods == 1 else 's'}, grace {grace}s"


def _draining(status: Mapping[str, Any]) -> str | None:
    """The drain's message once this run's cancel sent its running pods their SIGTERM
    (E25), else None."""
    for c in status.get("conditions") or ():
        if isinstance(c, Mapping) and c.get("type") == CANCELLING and c.get("reason") == DRAINING:
            return str(c.get("message") or "")
    return None


__all__ = ["RunOptions", "RunReconciler", "now_utc"]


class RunReconciler:
    """Drives one BurnInRun ("namespace/name") from start to its terminal phase."""

    def __init__(
        self,
        *,
        client: KubeClient,
        options: RunOptions,
        deliverer: Deliverer | None = None,
        now: Callable[[], datetime] = now_utc,
        observer: Callable[[Mapping[str, Any]], None] | None = None,
        forget: Callable[[str, str], None] | None = None,
        readers: Readers | None = None,
    ) -> None:
        """``readers``: the cached and live readers (the manager's, from the
        registration); None reads everything live through ``client``."""
        self.ctx = RunContext(
            client=client,
            options=options,
            reads=RunReads(readers if readers is not None else uncached(client)),
            deliverer=deliverer if deliverer is not None else NoDelivery(),
            now=now,
            observe=observer,
            forget=forget,
        )
        self.client = client
        self.reads = self.ctx.reads
        self.now = now
        self._forget = forget
        self.starter = Starter(self.ctx)
        self.finisher = Finisher(self.ctx)
        self.sweeper = Sweeper(self.ctx, finisher=self.finisher)

    async def reconcile(self, key: str) -> Result:
        namespace, _, name = key.partition("/")
        # Cached: every write of the run carries its resourceVersion (a stale view is a
        # 409), the cordon confirms the view first (reads.confirm), and a cached "not
        # found" is confirmed live before the run is taken as gone.
        run = await self.reads.get(names.RUNS, name, namespace=namespace)
        if run is not None and self.reads.behind_our_write(run):
            # The cache still shows the run as it was before our last status write: its
            # own watch event requeues the run in a moment (the 1 s is a backstop). A
            # pass over it would redo what that write recorded and lose a 409. After a
            # few such waits the pass goes ahead (its writes are 409s until it catches up).
            return Result(requeue_after=1.0)
        if run is None:
            if self._forget is not None:
                self._forget(namespace, name)
            return Result()
        try:
            result = await self._reconcile(run)
        except StaleViewError:
            return Result(requeue=True)  # the cache lags the run: come back to a newer one
        except ApiError as err:
            if is_conflict(err):
                # Someone (or our own stale view) moved the object: recompute from scratch.
                return Result(requeue=True)
            raise
        return result

    async def _reconcile(self, run: JSON) -> Result:
        view = RunView(run)
        if view.deleting or view.terminal:
            self.sweeper.forget(view.uid)  # its index: a run that ends is never swept again
        if view.deleting:
            return await self.finisher.cleanup(run)
        if view.terminal:
            return await self.finisher.converge_terminal(run)
        if not await self._serves(view.namespace):
            return await self._not_served(run)
        try:
            plan = view.pinned_plan()
        except PlanDecodeError as err:
            return await self.finisher.finalise(
                run,
                phase=Phase.ERROR,
                extra=[wire.synthetic_result("resolve", str(err))],
                plan=None,
            )
        if plan is None:
            return await self._start(run)
        if view.phase is Phase.PENDING:
            run = await self.starter.mark_running(run, plan)
        return await self._step(run, plan)

    async def _start(self, run: JSON) -> Result:
        outcome = await self.starter.start(run)
        if isinstance(outcome, Refused):
            return await self.finisher.finalise(
                outcome.run,
                phase=Phase.ERROR,
                extra=[outcome.result],
                plan=None,
                sinks=outcome.sinks,
            )
        if isinstance(outcome, Pinned):
            run = await self.starter.mark_running(outcome.run, outcome.plan)
            return await self._step(run, outcome.plan)
        return outcome

    async def _serves(self, namespace: str) -> bool:
        """Whether ``namespace`` is served (:meth:`RunOptions.serves` decides). By label,
        its labels come from the Namespace cache the selector fills (the run controller's
        watch); a namespace the cache does not hold, or a cache that cannot answer (not
        synced, no such watch), is read live before it is taken as unlabelled, since the
        answer ends the run. Nothing else serves it: not found, or not read (the error
        propagates, the pass is retried, nothing done), is not served."""
        options = self.ctx.options
        selector = options.namespace_selector
        if selector is None:
            return options.serves(namespace)
        found: JSON | None
        try:
            found = await self.reads.cached.get_metadata(
                NAMESPACES, namespace, label_selector=selector
            )
        except NotCachedError:
            found = None
        except ApiError as err:
            if not is_not_found(err):
                raise
            found = None
        if found is None:
            live = await self.reads.live_get(NAMESPACES, namespace)
            found = None if live is None else dict(ObjectView(live).meta)
        if found is None:
            return False
        return options.serves(namespace, namespace_labels=found.get("labels") or {})

    def _not_served_message(self, namespace: str) -> str:
        options = self.ctx.options
        selector = options.served_namespace_selector
        if selector is not None:
            terms = options.namespace_selector
            if namespace == options.operator_namespace:
                return (
                    f"namespace {namespace!r} is this manager's own namespace, which is never "
                    f"served, labelled ({terms}) or not: it holds the manager's Lease and "
                    "NodeFingerprints, and whoever may create runs in it could act as the "
                    "manager. Create the run in a namespace that carries the labels"
                )
            spaced = " ".join(f"{key}={value}" for key, value in selector.items())
            return (
                f"namespace {namespace!r} does not carry the labels this manager serves "
                f"({terms}): label it (kubectl label namespace {namespace} {spaced}) and "
                "grant it (helm upgrade); nothing more is cordoned or created for this run"
            )
        served = sorted(options.served_namespaces or ())
        return (
            f"namespace {namespace!r} is not served by this manager (it serves: "
            f"{', '.join(served) or 'none'}); nothing was cordoned or created. To allow it, "
            "run the manager with --serve-namespaces including it (glimmer manager "
            f"--serve-namespaces={','.join([*served, namespace])}; in the Helm chart or "
            "kustomize overlay, the value that sets that flag)"
        )

    async def _not_served(self, run: JSON) -> Result:
        """I29: a run outside the served namespaces ends Error; nothing is read for it,
        cordoned or created (a run pinned before the boundary moved, or whose namespace
        lost the served labels, is unloaded)."""
        namespace = RunView(run).namespace
        message = self._not_served_message(namespace)
        upsert_condition(
            RunView(run).status,
            type_="Admitted",
            status_=ConditionStatus.FALSE,
            reason="NamespaceNotServed",
            message=message,
            now=self.now(),
        )
        plan = RunView(run).readable_plan()
        return await self.finisher.finalise(
            run,
            phase=Phase.ERROR,
            extra=[wire.synthetic_result("admission", message)],
            plan=plan,
            sinks=None if plan is not None else (),
        )

    async def _step(self, run: JSON, plan: PinnedPlan) -> Result:
        """E7's gate, with the status size budget's terminal failure mode (I21)."""
        try:
            return await self._gate(run, plan)
        except checkpoint.StatusTooLargeError as err:
            return await self._oversize(err, plan)

    async def _oversize(self, err: checkpoint.StatusTooLargeError, plan: PinnedPlan) -> Result:
        """A status that cannot be written never becomes a retry loop: the run ends Error
        (its terminal write compacted to fit) and its nodes are released."""
        run = err.run
        message = (
            f"{err.detail}; etcd refuses objects over about 1.5 MiB, so the run was ended "
            "Error and its nodes released. Split it into smaller runs (fewer target nodes, "
            "tests or repeats each) or have its runners print fewer or shorter lines"
        )
        upsert_condition(
            RunView(run).status,
            type_="StatusSizeBudget",
            status_=ConditionStatus.FALSE,
            reason="StatusTooLarge",
            message=message,
            now=self.now(),
        )
        await kube.record_event(
            self.client, run, type_="Warning", reason="StatusTooLarge", message=message
        )
        budget = self.ctx.options.status_budget_bytes
        if err.by_apiserver:
            budget = min(budget, err.size // 2)
        return await self.finisher.finalise(
            run, phase=Phase.ERROR, extra=[], plan=plan, budget=budget
        )

    async def _gate(self, run: JSON, plan: PinnedPlan) -> Result:
        view = RunView(run)
        if view.cancel or view.cancelling is not None:
            return await self._cancel(run, plan)
        # C9: the digests a relative gate's cohorts are made of, before anything settles.
        await self.finisher.cohorts.observe(run, plan)
        deadline = view.deadline_seconds
        started = view.started_at
        if deadline > 0 and started:
            elapsed = (self.now() - parse_time(started)).total_seconds()
            if elapsed >= deadline:
                return await self._expire(run, plan, deadline=deadline)
        try:
            work = await self.sweeper.new_pass(run, plan, may_wait=True)
        except PodsBehindError:
            return Result(requeue_after=POD_CACHE_WAIT_SECONDS)
        if deadline > 0 and started:
            work.wait(deadline - (self.now() - parse_time(started)).total_seconds())
        done = await self.sweeper.sweep(work, launch=not view.suspend)
        if view.suspend:
            # E17: a suspended run lets its in-flight work finish and record its results,
            # then waits, non-terminal and holding no cordon, even when nothing is left
            # to run: it is judged and delivered only once suspend is cleared.
            done = None
        run = await self.sweeper.commit(work, terminal=done)
        if work.ended is not None:
            return await self._converge(run, plan)
        return Result(requeue_after=work.requeue)

    async def _converge(self, run: JSON, plan: PinnedPlan) -> Result:
        """After a pass whose one status write was the verdict: unload, then deliver."""
        return await self.finisher.converge_terminal(run, deliver=True, sinks=plan.sinks)

    async def _cancel(self, run: JSON, plan: PinnedPlan) -> Result:
        view = RunView(run)
        reason = view.cancelling
        if reason is None:
            # One-way: the annotation is written first; clearing spec.cancel has no effect.
            reason = view.cancel_reason or NO_REASON
            run = await kube.patch_metadata(
                self.client, run, {"annotations": {names.CANCELLING_ANNOTATION: reason}}
            )
        # E18: live pods, since Graceful waits for what is running and a cache lagging a
        # pod's start would have it killed as never started.
        work = await self.sweeper.new_pass(run, plan, live_pods=True)
        if _draining(view.status) is not None:
            # E25: the running pods were sent their SIGTERM; wait out their grace (the
            # kubelet's), harvesting nothing: a load stopped half-way is no evidence.
            if any(podstate.live(p) for p in work.pods.values()):
                return Result(requeue_after=DRAIN_POLL_SECONDS)
        else:
            await self.sweeper.sweep(work, launch=False)  # harvest what already terminated
            # Graceful stops what is running; a pod that never started is not running.
            # E18: a Pair server / Group rank 0 whose client / workers do not exist yet is
            # not running a measurement: it is cancelled and killed, not waited for.
            pods = list(work.pods.values())
            running = [
                p
                for p in pods
                if podstate.live(p) and podstate.started_at(p) and not lead_alone(p, pods)
            ]
            if view.cancel_policy != CancelPolicy.IMMEDIATE and running:
                return await self._drain(work, running)
        drained = _draining(view.status)
        if drained is not None:
            upsert_condition(
                RunView(work.run).status,
                type_=CANCELLING,
                status_=ConditionStatus.FALSE,
                reason=DRAINED,
                message=drained.replace("draining", "drained", 1),
                now=self.now(),
            )
        message = f"run cancelled: {reason}"
        self.sweeper.settle_rest(work, phase=Phase.CANCELLED, message=message)
        run = await self.sweeper.commit(work, terminal=Phase.CANCELLED)
        return await self._converge(run, plan)

    async def _drain(self, work: Pass, running: list[JSON]) -> Result:
        """E25: a Graceful cancel deletes the running pods with their own grace period
        (SIGTERM, then the kubelet's SIGKILL), says so in ``Cancelling``, and keeps their
        nodes cordoned until they are gone; the next pass after that ends the run."""
        grace = max(podstate.grace_seconds(p) for p in running)
        message = cancelling_message(len(running), grace)
        upsert_condition(
            RunView(work.run).status,
            type_=CANCELLING,
            status_=ConditionStatus.TRUE,
            reason=DRAINING,
            message=message,
            now=self.now(),
        )
        work.changed = True
        work.events.append(("Normal", DRAINING, message))
        await self.sweeper.commit(work)
        for pod in running:
            found = ObjectView(pod)
            with contextlib.suppress(ApiError):
                await self.client.delete(
                    PODS, found.name, namespace=found.namespace, precondition_uid=found.uid or None
                )
        return Result(requeue_after=DRAIN_POLL_SECONDS)

    async def _expire(self, run: JSON, plan: PinnedPlan, *, deadline: int) -> Result:
        work = await self.sweeper.new_pass(run, plan)
        message = (
            f"run deadline of {deadline}s (spec.deadlineSeconds) exceeded before this "
            "execution completed; no verdict"
        )
        self.sweeper.settle_rest(work, phase=Phase.ERROR, message=message)
        run = await self.sweeper.commit(work, terminal=Phase.ERROR)
        return await self._converge(run, plan)

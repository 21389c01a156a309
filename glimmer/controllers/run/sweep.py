"""The sweep: harvest finished pods, launch the next wave, hold and release nodes
(E8-E16, H, A12-A14).

Every attempt outcome is decided by ``glimmer.verdict``; this module only gathers the
evidence (the runner's log, the kubelet's account) and keeps the result. Pods are
created with deterministic names, so a pass that crashed half-way is simply redone.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping, Sequence
from typing import Any

from glimmer.api import format_time, parse_time
from glimmer.contract.kinds import drives_sustained_load
from glimmer.controllers.run import kube, labels, podstate, wire
from glimmer.controllers.run.artifacts import merge_refs
from glimmer.controllers.run.context import Part, RunContext, run_key
from glimmer.controllers.run.cordon import cordon_patches, heat_until
from glimmer.controllers.run.delivery import Delivery, Reason
from glimmer.controllers.run.evidence import Evidence
from glimmer.controllers.run.passes import Pass, error_verdict, new_result
from glimmer.controllers.run.pods import PodRequest, RunRef, build_pod
from glimmer.engine import NODES, PODS, ApiError, is_already_exists, is_not_found
from glimmer.plan import (
    ImageError,
    PinnedPlan,
    PlannedTest,
    Unit,
    can_launch,
    heat_expiry_seconds,
    overdue_after_seconds,
    pod_name,
    resolve_image,
    units_of_test,
)
from glimmer.plan import spec as specs
from glimmer.verdict import AttemptRecord, AttemptVerdict, Phase, count, record_attempt, run_phase

JSON = dict[str, Any]


class Sweeper(Part):
    """One pass over a started run: every unit of the current test, then the commit."""

    def __init__(self, ctx: RunContext) -> None:
        super().__init__(ctx)
        self.evidence = Evidence(ctx)

    async def new_pass(self, run: JSON, plan: PinnedPlan) -> Pass:
        pods = {str(kube.meta(p)["name"]): p for p in await kube.owned_pods(self.client, run)}
        status = run.setdefault("status", {})
        return Pass(
            run=run,
            plan=plan,
            pods=pods,
            now=self.now(),
            results=[dict(r) for r in status.get("results") or []],
            requeue=self.options.requeue_idle_seconds,
            deadline=time.monotonic() + self.options.pass_budget_seconds,
        )

    async def commit(self, work: Pass) -> JSON:
        """Release idle cordons (E12), write status, then do what the write justifies."""
        run = work.run
        status = work.status
        busy = work.busy() | {self._pod_node(work.pods[n]) for n in work.delete_after_write}
        cordoned = sorted(set(status.get("cordonedNodes") or []))
        keep: list[str] = []
        prior = status.get("priorUnschedulable") or {}
        for node in cordoned:
            if node in busy:
                keep.append(node)
                continue
            await kube.release_node(
                self.client, node, stamp=kube.stamp_of(run), prior=prior.get(node)
            )
        if keep != list(status.get("cordonedNodes") or []):
            work.changed = True
        status["cordonedNodes"] = keep
        if not keep:
            status.pop("cordonedNodes", None)
        if work.changed:
            status["results"] = work.results
            self._recount(work)
            run = await kube.write_status(self.client, run)
            work.run = run
        for name in work.delete_after_write:
            with contextlib.suppress(ApiError):
                await self.client.delete(PODS, name, namespace=str(kube.meta(run)["namespace"]))
        for delivery in work.deliveries:
            await self.deliverer.deliver(
                Delivery(delivery.reason, delivery.event_key, run, work.plan.sinks)
            )
        for type_, reason, message in work.events:
            await kube.record_event(self.client, run, type_=type_, reason=reason, message=message)
        self.interlock.set_run(run_key(run), work.busy())
        if self._observe is not None:
            self._observe(run)
        return run

    @staticmethod
    def _pod_node(pod: Mapping[str, Any]) -> str:
        selector = (pod.get("spec") or {}).get("nodeSelector") or {}
        return str(selector.get(labels.HOSTNAME_LABEL, ""))

    def _recount(self, work: Pass) -> None:
        tally = count(work.states())
        work.status.update(
            passed=tally.passed, failed=tally.failed, errored=tally.errored, skipped=tally.skipped
        )

    async def sweep(self, work: Pass, *, launch: bool) -> Phase | None:
        """Harvest and launch; the run's phase when nothing is left, else None."""
        plan = work.plan
        for index, test in enumerate(plan.tests):
            if work.fail_fast_stops():
                return run_phase(work.states())
            settled = True
            for unit in units_of_test(plan, index):
                if work.out_of_time():
                    return None  # commit what this pass did; the next one goes on
                # D7 also stops the same test's other nodes: no new load once it is in.
                go = launch and not work.fail_fast_stops()
                settled = await self._unit(work, index, test, unit, launch=go) and settled
            if work.fail_fast_stops():
                return run_phase(work.states())
            if not settled:
                return None
        return run_phase(work.states())

    def _unsupported(self, test: PlannedTest) -> str | None:
        if test.scope != "Node":
            return (
                f"{test.scope} scope is not supported by this controller yet; "
                "the test was not run (no verdict)"
            )
        if specs.soak(test.spec) is not None:
            return (
                "segmented soaks (spec.soak) are not supported by this controller yet; "
                "the test was not run (no verdict)"
            )
        return None

    async def _unit(
        self, work: Pass, index: int, test: PlannedTest, unit: Unit, *, launch: bool
    ) -> bool:
        """Advance one unit; True once its result has settled."""
        position = work.find(test.name, unit.nodes)
        result = work.results[position] if position is not None else None
        if result is not None and result.get("phase") != str(Phase.RUNNING):
            return True
        reason = self._unsupported(test)
        if reason is not None:
            settled = new_result(test, unit)
            settled.update(phase=str(Phase.ERROR), message=reason, finishedAt=format_time(work.now))
            work.put(settled)
            return True
        node = unit.lead_node
        for _ in range(3):  # a harvest that leaves the result open may launch the retry
            attempt = wire.next_attempt_number(result)
            name = pod_name(
                run_name=str(kube.meta(work.run)["name"]),
                run_uid=str(kube.meta(work.run)["uid"]),
                test_index=index,
                node=node,
                attempt=attempt,
            )
            pod = work.pods.get(name)
            flight = wire.in_flight(result) if result is not None else None
            if pod is None and flight is not None:
                pod = await self._get_pod(work, name)
                if pod is None:
                    result = self._record(work, test, unit, result, error_verdict(
                        f"runner pod {name} was deleted before it terminated; no verdict",
                        exit_code=-1), attempt=attempt, pod=name, started=flight.get("startedAt"),
                    )  # fmt: skip
                    if result.get("phase") != str(Phase.RUNNING):
                        return True
                    continue
            if pod is not None:
                if podstate.terminated(pod):
                    result = await self._harvest(work, test, unit, result, pod, attempt=attempt)
                    if result.get("phase") != str(Phase.RUNNING):
                        return True
                    continue
                self._running_or_pending(work, test, unit, result, pod, attempt=attempt)
                await self.evidence.checkpoint(work, test, unit, pod)
                position = work.find(test.name, unit.nodes)
                return position is not None and work.results[position].get("phase") != str(
                    Phase.RUNNING
                )
            if not launch:
                return False
            before = result
            await self._launch(work, index, test, unit, result, attempt=attempt)
            position = work.find(test.name, unit.nodes)
            result = work.results[position] if position is not None else None
            if result is not None and result.get("phase") != str(Phase.RUNNING):
                return True
            if result is before:
                return False  # launched, or held back by the interlock
            # An unbuildable attempt was recorded as Error and the budget allows another.
        work.wait(1.0)
        return False

    async def _get_pod(self, work: Pass, name: str) -> JSON | None:
        try:
            pod = await self.client.get(PODS, name, namespace=str(kube.meta(work.run)["namespace"]))
        except ApiError as err:
            if is_not_found(err):
                return None
            raise
        if not podstate.owned_by(pod, str(kube.meta(work.run)["uid"])):
            return None
        work.add_pod(pod)
        return pod

    def _record(
        self,
        work: Pass,
        test: PlannedTest,
        unit: Unit,
        result: JSON | None,
        verdict: AttemptVerdict,
        *,
        attempt: int,
        pod: str | None,
        started: str | None,
        finished: str | None = None,
        artifacts: Sequence[Mapping[str, Any]] = (),
    ) -> JSON:
        """Apply one attempt through the verdict package (D2-D4) and keep the result."""
        base = dict(result) if result is not None else new_result(test, unit)
        state = wire.state_from_wire(base, required=test.required)
        finished = finished or format_time(work.now)
        record = AttemptRecord(
            attempt=attempt,
            trigger=state.next_trigger(),
            phase=verdict.phase,
            exit_code=verdict.exit_code,
            message=verdict.message,
            metrics=dict(verdict.metrics),
            provenance=verdict.provenance,
            node=unit.lead_node,
            pod_name=pod or "",
            started_at=started,
            finished_at=finished,
        )
        retry_limit = int(work.spec.get("retryOnErrorLimit") or 0)
        new_state = record_attempt(state, verdict, retry_on_error_limit=retry_limit, record=record)
        updated = wire.state_to_wire(base, new_state)
        if started and not updated.get("startedAt"):
            updated["startedAt"] = started
        updated["finishedAt"] = finished
        if artifacts:
            updated["artifacts"] = merge_refs(updated.get("artifacts") or [], artifacts)
        work.put(updated)
        if not new_state.open:
            work.deliveries.append(
                Delivery(Reason.TEST_COMPLETED, f"{test.name}/{'+'.join(unit.nodes)}", work.run)
            )
            work.events.append(
                (
                    "Warning" if new_state.phase in (Phase.FAILED, Phase.ERROR) else "Normal",
                    f"Test{new_state.phase}",
                    f"{test.name} on {'+'.join(unit.nodes)}: {new_state.phase}: "
                    f"{new_state.message}",
                )
            )
        elif verdict.phase is Phase.ERROR:
            work.events.append(
                ("Warning", "AttemptRetried",
                 f"{test.name} on {'+'.join(unit.nodes)} attempt {attempt} Error, retrying: "
                 f"{verdict.message}")
            )  # fmt: skip
        return updated

    async def _harvest(
        self, work: Pass, test: PlannedTest, unit: Unit, result: JSON | None, pod: JSON,
        *, attempt: int,
    ) -> JSON:  # fmt: skip
        """A terminated pod: its evidence, judged, becomes one attempt (D1-D4)."""
        verdict, refs = await self.evidence.judge(work, test, pod)
        flight = wire.in_flight(result) if result is not None else None
        started = podstate.started_at(pod) or (flight or {}).get("startedAt")
        return self._record(
            work, test, unit, result, verdict, attempt=attempt,
            pod=str(kube.meta(pod)["name"]), started=started,
            finished=podstate.finished_at(pod) or format_time(work.now), artifacts=refs,
        )  # fmt: skip

    def _running_or_pending(
        self, work: Pass, test: PlannedTest, unit: Unit, result: JSON | None, pod: JSON,
        *, attempt: int,
    ) -> None:  # fmt: skip
        name = str(kube.meta(pod)["name"])
        started = podstate.started_at(pod)
        created = kube.meta(pod).get("creationTimestamp")
        age = (work.now - parse_time(str(created))).total_seconds() if created else 0.0
        overdue = overdue_after_seconds(test.spec)
        if started:
            base = dict(result) if result is not None else new_result(test, unit)
            base.setdefault("startedAt", started)
            if wire.in_flight(base) is None:
                base["attempts"] = [
                    *(base.get("attempts") or []),
                    {
                        "attempt": attempt,
                        "trigger": str(wire.state_from_wire(base, required=True).next_trigger()),
                        "phase": str(Phase.RUNNING),
                        "node": unit.lead_node,
                        "podName": name,
                        "startedAt": started,
                    },
                ]
                work.put(base)
            if age >= overdue:
                # E16: the kubelet's own deadline should have ended it long ago (a lost
                # node, a stuck kubelet); nothing it printed is a verdict.
                message = (
                    f"runner pod {name} still not terminated {int(age)}s after creation "
                    f"(overdue after {overdue}s); no verdict"
                )
                self._record(work, test, unit, base, error_verdict(message), attempt=attempt,
                             pod=name, started=started)  # fmt: skip
                work.delete_after_write.append(name)
                return
            interval = specs.checkpoint_interval_seconds(test.spec)
            work.wait(min(interval if interval > 0 else self.options.requeue_idle_seconds,
                          overdue - age))  # fmt: skip
            return
        # Never started: overdue (E16), or an image that will not be pulled.
        reason, detail = podstate.waiting(pod)
        pulling = reason in podstate.IMAGE_PULL_REASONS
        permanent = reason in podstate.PERMANENT_IMAGE_REASONS
        grace = self.options.image_pull_grace_seconds
        if permanent or (pulling and age >= grace) or age >= overdue:
            account = podstate.scheduler_message(pod)
            if reason:
                account = f"container waiting: {reason}" + (f": {detail}" if detail else "")
            message = (
                f"runner pod {name} never started ({int(age)}s after creation): "
                f"{account or 'no scheduler or kubelet account'}; no verdict"
            )
            self._record(work, test, unit, result, error_verdict(message), attempt=attempt,
                         pod=name, started=None)  # fmt: skip
            work.delete_after_write.append(name)
            return
        work.wait(min(overdue - age, self.options.requeue_unstarted_seconds))
        if pulling:
            work.wait(grace - age)

    async def _node_vendor(self, node: str) -> str | None:
        try:
            fingerprint = await self.client.get(
                kube.FINGERPRINTS, node, namespace=self.options.operator_namespace
            )
        except ApiError as err:
            if is_not_found(err):
                return None
            raise
        gpus = (fingerprint.get("status") or {}).get("gpus") or []
        vendor = gpus[0].get("vendor") if gpus and isinstance(gpus[0], Mapping) else None
        return str(vendor) if vendor else None

    async def _launch(
        self, work: Pass, index: int, test: PlannedTest, unit: Unit, result: JSON | None,
        *, attempt: int,
    ) -> None:  # fmt: skip
        node = unit.lead_node
        cap = work.spec.get("maxConcurrentNodes")
        if not can_launch(unit.nodes, busy=frozenset(work.busy()), cap=cap):
            return
        image = resolve_image(
            kind=test.kind,
            runner=specs.runner(test.spec),
            node_vendor=await self._node_vendor(node),
        )
        if isinstance(image, ImageError):
            # E14: that execution is an Error (no cordon placed), retried under the budget.
            self._record(work, test, unit, result, error_verdict(
                f"no runner image for node {node}: {image.message}"), attempt=attempt, pod=None,
                started=None)  # fmt: skip
            return
        await self._cordon(work, test, node)
        run = work.run
        ref = RunRef(str(kube.meta(run)["namespace"]), str(kube.meta(run)["name"]),
                     str(kube.meta(run)["uid"]))  # fmt: skip
        tolerations = ((work.spec.get("target") or {}).get("tolerations")) or []
        manifest = build_pod(
            run=ref,
            request=PodRequest(
                test_index=index, test=test, node=node, attempt=attempt, image=image
            ),
            tolerations=tolerations,
        )
        try:
            created = await self.client.create(PODS, manifest, namespace=ref.namespace)
        except ApiError as err:
            if not is_already_exists(err):
                raise
            existing = await self._get_pod(work, str(manifest["metadata"]["name"]))
            if existing is None:
                raise
            created = existing
        work.add_pod(created)
        work.launch(node)
        work.wait(self.options.requeue_unstarted_seconds)

    async def _cordon(self, work: Pass, test: PlannedTest, node: str) -> None:
        """E10/E11: uncached read, stamp first, cordon second, with a precondition."""
        try:
            current = await self.client.get(NODES, node)
        except ApiError as err:
            if is_not_found(err):
                return
            raise
        heat = (
            heat_until(work.now, seconds=heat_expiry_seconds(test.spec))
            if drives_sustained_load(test.kind)
            else None
        )
        prior = (work.status.get("priorUnschedulable") or {}).get(node)
        patches, record = cordon_patches(
            current, stamp=kube.stamp_of(work.run), prior=prior, heat_until=heat
        )
        for patch in patches:
            await self.client.patch(NODES, node, patch)
        if record and node not in (work.status.get("cordonedNodes") or []):
            work.status["cordonedNodes"] = sorted({*work.status.get("cordonedNodes", []), node})
            work.changed = True

    def settle_rest(self, work: Pass, *, phase: Phase, message: str) -> None:
        """Every open result and every planned unit with no result gets ``phase``."""
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

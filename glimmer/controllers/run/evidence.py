"""The evidence a runner pod leaves: its log, the kubelet's account, its artifacts.

Read here, judged by ``glimmer.verdict`` (the one choke point), stored by reference
(A12-A14); mid-run checkpoints (H1/H2) read the same log without judging it.
"""

from __future__ import annotations

from typing import Any, Final

from glimmer.api import format_time, parse_time
from glimmer.contract import RunnerReport, read_report
from glimmer.controllers.run import kube, labels, podstate, wire
from glimmer.controllers.run.artifacts import configmap_name, plan_store, store_failed
from glimmer.controllers.run.context import Part
from glimmer.controllers.run.delivery import Delivery, Reason
from glimmer.controllers.run.passes import Pass
from glimmer.controllers.run.pods import RunRef
from glimmer.engine import CONFIGMAPS, ApiError, is_not_found
from glimmer.plan import PlannedTest, Unit, label_value
from glimmer.plan import spec as specs
from glimmer.plan.gates import threshold_from_wire
from glimmer.verdict import AttemptVerdict, apply_termination, judge_attempt

JSON = dict[str, Any]

LOG_TAIL_LINES: Final = 2000
LOG_LIMIT_BYTES: Final = 1 << 20


class Evidence(Part):
    """Reads a runner pod's evidence; never decides a verdict itself."""

    async def judge(
        self, work: Pass, test: PlannedTest, pod: JSON
    ) -> tuple[AttemptVerdict, list[JSON]]:
        """Logs + kubelet account of a terminated pod -> its verdict and artifact refs."""
        name = str(kube.meta(pod)["name"])
        namespace = str(kube.meta(work.run)["namespace"])
        logs_unavailable = False
        try:
            text = await self.client.read_pod_log(
                name, namespace=namespace, container=labels.RUNNER_CONTAINER,
                tail_lines=LOG_TAIL_LINES, limit_bytes=LOG_LIMIT_BYTES,
            )  # fmt: skip
        except kube.LOG_ERRORS:
            # A13: a log outage must not become a hardware Fail.
            text, logs_unavailable = "", True
        report = read_report(text.encode(), kind=test.kind, exit_code=podstate.exit_code(pod))
        thresholds = [threshold_from_wire(t) for t in specs.thresholds(test.spec)]
        verdict = judge_attempt(
            report, kind=test.kind, thresholds=thresholds, logs_unavailable=logs_unavailable
        )
        verdict = apply_termination(verdict, podstate.termination(pod), runner_line=report.message)
        refs: list[JSON] = []
        if report.artifacts or report.dropped_artifacts:
            refs = await self._store_artifacts(work, test, name, report)
        return verdict, refs

    async def _store_artifacts(
        self, work: Pass, test: PlannedTest, pod: str, report: RunnerReport
    ) -> list[JSON]:
        run = work.run
        namespace = str(kube.meta(run)["namespace"])
        cm_name = configmap_name(str(kube.meta(run)["name"]))
        try:
            current: JSON | None = await self.client.get(CONFIGMAPS, cm_name, namespace=namespace)
        except ApiError as err:
            if not is_not_found(err):
                raise
            current = None
        stored = plan_store(
            configmap=cm_name,
            data=(current or {}).get("data") or {},
            binary_data=(current or {}).get("binaryData") or {},
            test=test.name,
            pod=pod,
            artifacts=report.artifacts,
            dropped=report.dropped_artifacts,
        )
        if not (stored.data or stored.binary_data):
            return stored.refs
        try:
            if current is None:
                ref = RunRef(namespace, str(kube.meta(run)["name"]), str(kube.meta(run)["uid"]))
                body: JSON = {
                    "metadata": {
                        "name": cm_name,
                        "labels": {labels.RUN_LABEL: label_value(str(kube.meta(run)["name"]))},
                        "ownerReferences": [ref.owner_reference()],
                    },
                    "data": stored.data,
                }
                if stored.binary_data:
                    body["binaryData"] = stored.binary_data
                await self.client.create(CONFIGMAPS, body, namespace=namespace)
            else:
                patch: JSON = {
                    "metadata": {"resourceVersion": kube.meta(current).get("resourceVersion")},
                    "data": stored.data,
                }
                if stored.binary_data:
                    patch["binaryData"] = stored.binary_data
                await self.client.patch(CONFIGMAPS, cm_name, patch, namespace=namespace)
        except ApiError:
            return store_failed(stored.refs)
        return stored.refs

    async def checkpoint(self, work: Pass, test: PlannedTest, unit: Unit, pod: JSON) -> None:
        """H1: refresh metrics of a started open unit; no threshold, no phase change."""
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
        if last and (work.now - parse_time(str(last))).total_seconds() < interval:
            work.wait(interval - (work.now - parse_time(str(last))).total_seconds())
            return
        name = str(kube.meta(pod)["name"])
        try:
            text = await self.client.read_pod_log(
                name, namespace=str(kube.meta(work.run)["namespace"]),
                container=labels.RUNNER_CONTAINER, tail_lines=LOG_TAIL_LINES,
                limit_bytes=LOG_LIMIT_BYTES,
            )  # fmt: skip
        except kube.LOG_ERRORS:
            work.wait(interval)
            return
        report = read_report(text.encode(), kind=test.kind, exit_code=0)
        work.wait(interval)
        if not report.metrics:
            return
        stamp = format_time(work.now)
        result["metrics"] = dict(sorted(report.metrics.items()))
        result["lastCheckpointAt"] = stamp
        flight.update(metrics=dict(sorted(report.metrics.items())), lastCheckpointAt=stamp)
        result["attempts"] = [*wire.finished_attempts(result), flight]
        work.put(result)
        # H2: one Checkpoint envelope per sequence, derived so that delivery IDs are stable.
        intervals = [
            specs.checkpoint_interval_seconds(t.spec)
            for t in work.plan.tests
            if specs.checkpoint_interval_seconds(t.spec) > 0
        ]
        started = work.status.get("startedAt")
        if intervals and started:
            elapsed = (work.now - parse_time(str(started))).total_seconds()
            key = str(int(elapsed // min(intervals)))
            if not any(
                d.reason is Reason.CHECKPOINT and d.event_key == key for d in work.deliveries
            ):
                work.deliveries.append(Delivery(Reason.CHECKPOINT, key, work.run))

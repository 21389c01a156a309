"""Qualify on join: the pass of a BurnInSchedule with ``trigger.nodeJoined`` (J6-J9).

What is decided is :mod:`glimmer.verdict.qualify`'s (which nodes batch, whether a taint
goes, what drift is); this module reads the inputs and makes the writes.

A pass, in order:

1. The open batch (``status.qualification``, phase Running): its run is read live. Gone
   (or not this schedule's): the batch is Lost, said in the ``Qualified`` condition, and
   its nodes, which still carry the taint, join the next batch. Terminal: each node is
   judged (J7) and written in one JSON patch whose first operation tests the node's
   resourceVersion (and, to remove the taint, a second tests the taint entry itself),
   so a node changed since it was read is never overwritten; the patch records the run
   in the node's ``burnin.glimmer.ai/qualify-run`` annotation, which is also how a pass
   interrupted half-way knows which nodes it already judged. An Event on the node names
   the outcome. Then the batch is Judged.
2. Drift (J8, ``retaintOnDrift``): a target node without the taint whose fingerprint
   expired with its hardware is tainted again, in a resourceVersion-tested patch that
   also writes ``burnin.glimmer.ai/qualify-tainted-by`` (ownership is provable) and
   drops ``qualify-run`` (so the node is a candidate again).
3. Batching (J6): candidates open a window; when it closes the cursor is written first
   (J9: ``batch``, the run's deterministic name, the nodes, phase Running, with the
   schedule's resourceVersion as precondition), and only then is the run created. A
   crash between the two leaves a cursor with no run, which the next pass reads as
   Lost: a batch number creates at most one run, ever, and a stale cached schedule
   cannot start a batch twice (its cursor write conflicts).

The run tolerates exactly the configured taint (``Equal`` on key, value and effect)
besides the target's own tolerations, so its runner pods can land on the tainted nodes
and on nothing the taint's owner did not mean.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

import aiohttp
import structlog

from glimmer.api import GROUP, format_time, parse_time
from glimmer.api.vocabulary import ConditionStatus
from glimmer.controllers.kit.conditions import set_json_condition
from glimmer.controllers.kit.names import FINGERPRINTS, RUNS, fingerprint_name
from glimmer.controllers.kit.reads import ConfirmingReader
from glimmer.controllers.kit.view import ObjectView, RunView, ScheduleView
from glimmer.controllers.schedule.history import owned_by
from glimmer.engine import (
    EVENTS,
    NODES,
    ApiError,
    KubeClient,
    PatchType,
)
from glimmer.plan import label_value
from glimmer.plan.units import verdict_units
from glimmer.verdict.nodes import NodeVerdict, node_verdict
from glimmer.verdict.phases import Phase
from glimmer.verdict.qualify import (
    Candidate,
    Decision,
    KeepReason,
    drift_reason,
    plan_batch,
    qualify_decision,
    taint_index,
)
from glimmer.verdict.taints import Taint

log = structlog.get_logger("glimmer.controllers.schedule.qualify")

JSON = dict[str, Any]

QUALIFIED: Final = "Qualified"
#: On the run: the batch number it qualifies.
BATCH_LABEL: Final = f"{GROUP}/qualify-batch"
#: On the node: "<namespace>/<run>" of the trigger run that judged it since its taint.
QUALIFY_RUN: Final = f"{GROUP}/qualify-run"
#: On the node: that judgement's reason (Qualified, Failed, Simulated, ...).
QUALIFY_REASON: Final = f"{GROUP}/qualify-reason"
#: On the node: "<namespace>/<schedule>" when this operator placed the taint (drift).
TAINTED_BY: Final = f"{GROUP}/qualify-tainted-by"
#: How often a trigger schedule looks again with nothing pending (drift, missed events).
RECHECK_SECONDS: Final = 60.0
_NAME_STEM: Final = 40
#: Requeue after a status write met a newer schedule (the cache catches up in moments).
RETRY: Final = 1.0
#: Fresh reads a node's judgement may take when its patch meets a concurrent write.
_JUDGE_ATTEMPTS: Final = 3


@dataclass(frozen=True, slots=True)
class Trigger:
    taint: Taint
    selector: Mapping[str, str]
    window_seconds: int
    retaint_on_drift: bool


def trigger_of(schedule: Mapping[str, Any]) -> Trigger | None:
    """The schedule's ``trigger.nodeJoined``, or None (a cron schedule)."""
    trigger = ScheduleView(schedule).spec.get("trigger")
    joined = trigger.get("nodeJoined") if isinstance(trigger, Mapping) else None
    if not isinstance(joined, Mapping):
        return None
    taint = joined.get("taint")
    window = joined.get("batchWindowSeconds")
    selector = joined.get("selector")
    return Trigger(
        taint=Taint.of(taint if isinstance(taint, Mapping) else {}),
        selector={str(k): str(v) for k, v in selector.items()}
        if isinstance(selector, Mapping)
        else {},
        window_seconds=window if isinstance(window, int) and not isinstance(window, bool) else 60,
        retaint_on_drift=joined.get("retaintOnDrift") is True,
    )


def batch_run_name(schedule: Mapping[str, Any], batch: int) -> str:
    """Deterministic per schedule (its UID, so a same-named successor never collides)."""
    view = ObjectView(schedule)
    return f"{view.name[:_NAME_STEM]}-{(view.uid or 'nouid')[:5]}-q{batch}"


def run_node_verdict(run: Mapping[str, Any], node: str) -> NodeVerdict | None:
    """What a terminal run says of ``node`` (None: not terminal, or no result names it),
    by :func:`glimmer.verdict.nodes.node_verdict` over the run's pinned plan."""
    view = RunView(run)
    phase = view.phase
    if phase is None or not phase.terminal or phase is Phase.SKIPPED:
        return None
    results = [r for r in view.results if r.get("kind") and node in (r.get("nodes") or ())]
    if not results:
        return None
    pinned = view.readable_plan()
    planned = verdict_units(pinned)
    mine = None if planned is None else [u for u in planned if node in u.nodes]
    baseline = view.baseline or bool(pinned and pinned.baseline)
    return node_verdict(node, planned=mine, results=results, baseline=baseline)


def _pointer(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def annotation_ops(
    node: Mapping[str, Any], set_: Mapping[str, str], drop: Sequence[str]
) -> list[JSON]:
    """JSON-patch operations that set and drop annotations (creating the map if absent)."""
    current = ObjectView(node).annotations
    if not current:
        return [{"op": "add", "path": "/metadata/annotations", "value": dict(set_)}] if set_ else []
    ops: list[JSON] = [
        {"op": "add", "path": f"/metadata/annotations/{_pointer(k)}", "value": v}
        for k, v in set_.items()
    ]
    ops += [
        {"op": "remove", "path": f"/metadata/annotations/{_pointer(k)}"}
        for k in drop
        if k in current and k not in set_
    ]
    return ops


def judgement_patch(
    node: Mapping[str, Any], decision: Decision, *, taint: Taint, run: str
) -> list[JSON]:
    """J7's write: tested on the node's resourceVersion; removing the taint also tests the
    taint entry, so only that exact entry at that index goes."""
    view = ObjectView(node)
    ops: list[JSON] = [
        {"op": "test", "path": "/metadata/resourceVersion", "value": view.resource_version}
    ]
    taints = _taints(node)
    index = taint_index(taints, taint)
    if decision.untaint and index is not None:
        ops += [
            {"op": "test", "path": f"/spec/taints/{index}", "value": taints[index]},
            {"op": "remove", "path": f"/spec/taints/{index}"},
        ]
    ops += annotation_ops(
        node,
        {QUALIFY_RUN: run, QUALIFY_REASON: str(decision.reason)},
        drop=[TAINTED_BY] if decision.untaint else [],
    )
    return ops


def retaint_patch(node: Mapping[str, Any], *, taint: Taint, owner: str) -> list[JSON]:
    """J8's write: the taint added (tested on the resourceVersion), the ownership recorded,
    the earlier judgement dropped so the node is a candidate again."""
    view = ObjectView(node)
    entry: JSON = {"key": taint.key, "effect": taint.effect}
    if taint.value:
        entry["value"] = taint.value
    has_taints = isinstance(view.spec.get("taints"), list)
    ops: list[JSON] = [
        {"op": "test", "path": "/metadata/resourceVersion", "value": view.resource_version},
        {"op": "add", "path": "/spec/taints/-", "value": entry}
        if has_taints
        else {"op": "add", "path": "/spec/taints", "value": [entry]},
    ]
    return ops + annotation_ops(node, {TAINTED_BY: owner}, drop=[QUALIFY_RUN, QUALIFY_REASON])


def _taints(node: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    taints = ObjectView(node).spec.get("taints")
    return [t for t in taints if isinstance(t, Mapping)] if isinstance(taints, list) else []


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return parse_time(value)
    except ValueError:
        return None


class QualifyPass:
    """One pass of a node-joined trigger (module docstring)."""

    def __init__(
        self,
        *,
        client: KubeClient,
        reads: ConfirmingReader,
        operator_namespace: str,
        write: Callable[..., Awaitable[None]],
        make_run: Callable[..., JSON],
    ) -> None:
        self.client = client
        self.reads = reads
        self.operator_namespace = operator_namespace
        self.write = write
        self.make_run = make_run
        self.now = datetime.min

    async def run(
        self,
        schedule: JSON,
        *,
        stored: JSON,
        status: JSON,
        runs: Sequence[Mapping[str, Any]],
        trigger: Trigger,
        now: datetime,
        suspended: bool = False,
    ) -> float:
        """The pass; returns the requeue-after in seconds. ``suspended``: only an open
        batch is judged (no drift re-taint, no new batch)."""
        self.now = now
        view = ScheduleView(schedule)
        generation = view.generation
        key = f"{view.namespace}/{view.name}"
        qual: JSON = dict(status.get("qualification") or {})

        def condition(state: ConditionStatus, reason: str, message: str) -> None:
            status["conditions"] = set_json_condition(
                status.get("conditions"),
                type_=QUALIFIED,
                status=state,
                reason=reason,
                message=message[:1000],
                now=now,
                generation=generation,
            )

        busy = False
        judged_now: set[str] = set()
        if qual.get("phase") == "Running" and qual.get("runName"):
            name = str(qual["runName"])
            run = next((r for r in runs if ObjectView(r).name == name), None)
            if run is None:
                run = await self.reads.live_get(RUNS, name, namespace=view.namespace)
            if run is None or not owned_by(run, view.uid):
                log.warning("qualification batch lost: its run is missing or not ours",
                            schedule=key, run=name, batch=qual.get("batch"))  # fmt: skip
                qual["phase"] = "Lost"
                condition(
                    ConditionStatus.FALSE,
                    "RunLost",
                    f"batch {qual.get('batch')}: run {name} does not exist (or is not this "
                    "schedule's); its nodes keep the taint and join the next batch",
                )
            elif not Phase.is_terminal_text(RunView(run).phase_text):
                busy = True
                listed = ", ".join(str(n) for n in qual.get("nodes") or ())
                condition(
                    ConditionStatus.UNKNOWN,
                    "Qualifying",
                    f"batch {qual.get('batch')} (run {name}) is qualifying {listed}",
                )
            else:
                outcomes = await self._judge(run, qual, trigger=trigger, schedule=schedule)
                judged_now = {str(o["node"]) for o in outcomes}
                qual["phase"] = "Judged"
                qual["outcomes"] = outcomes
                kept = [o for o in outcomes if o["outcome"] == "Kept"]
                if kept:
                    condition(
                        ConditionStatus.FALSE,
                        "TaintKept",
                        "; ".join(
                            f"{o['node']} ({o['reason']}): {o.get('message', '')}" for o in kept
                        ),
                    )
                else:
                    condition(
                        ConditionStatus.TRUE,
                        "Untainted",
                        f"batch {qual.get('batch')} (run {name}) qualified every node: "
                        + ", ".join(o["node"] for o in outcomes),
                    )

        if suspended:
            qual.pop("windowOpenedAt", None)
            _store(status, qual)
            return RECHECK_SECONDS if await self._saved(schedule, stored, status) else RETRY
        nodes = await self._target_nodes(view, trigger)
        # The open batch's nodes, and those judged in this very pass (the cache may not
        # show the judgement's annotation yet), are no candidates.
        pending = set(str(n) for n in qual.get("nodes") or ()) if busy else set()
        pending |= judged_now
        if trigger.retaint_on_drift:
            await self._retaint(nodes, trigger=trigger, schedule=schedule, skip=pending, now=now)
            nodes = await self._target_nodes(view, trigger)

        candidates = [
            Candidate(ObjectView(n).name, _time(ObjectView(n).created_at))
            for n in nodes
            if ObjectView(n).name not in pending
            and taint_index(_taints(n), trigger.taint) is not None
            and QUALIFY_RUN not in ObjectView(n).annotations
        ]
        limit = view.run_template.get("maxConcurrentNodes")
        plan = plan_batch(
            candidates,
            opened_at=_time(qual.get("windowOpenedAt")),
            now=now,
            window_seconds=trigger.window_seconds,
            limit=limit if isinstance(limit, int) and not isinstance(limit, bool) else 1,
            busy=busy,
        )
        if plan.opened_at is None:
            qual.pop("windowOpenedAt", None)
        else:
            qual["windowOpenedAt"] = format_time(plan.opened_at)
        requeue = RECHECK_SECONDS
        if plan.due_at is not None and not busy:
            requeue = max(1.0, min(requeue, (plan.due_at - now).total_seconds()))
        # The batch is confirmed on live reads: a cached node may lag a write.
        chosen = [n for n in plan.batch if await self._still_candidate(n, trigger)]
        if not chosen:
            _store(status, qual)
            return requeue if await self._saved(schedule, stored, status) else RETRY

        # J9: the cursor is durable before the run exists (see the module docstring).
        batch = int(qual.get("batch") or 0) + 1
        name = batch_run_name(schedule, batch)
        qual.update(batch=batch, runName=name, nodes=chosen, phase="Running")
        qual.pop("windowOpenedAt", None)
        condition(
            ConditionStatus.UNKNOWN,
            "Qualifying",
            f"batch {batch} (run {name}) is qualifying {', '.join(chosen)}",
        )
        _store(status, qual)
        if not await self._saved(schedule, stored, status, force=True):
            return RETRY  # a stale copy of the schedule: no cursor, so no run
        body = self._run_body(
            schedule, name=name, batch=batch, nodes=chosen, trigger=trigger, now=now
        )
        try:
            await self.client.create(RUNS, body, namespace=view.namespace)
        except ApiError as err:
            if err.status != 409:
                raise  # the next pass reads the cursor with no run: Lost, then rebatched
        log.info("qualification run created", schedule=key, run=name, nodes=chosen)
        return RECHECK_SECONDS

    async def _saved(
        self, schedule: JSON, stored: JSON, status: JSON, *, force: bool = False
    ) -> bool:
        """The status written with the read resourceVersion; False when the schedule moved
        on since (a cached copy lagging our own last write): the pass is redone on a fresh
        read shortly, and nothing that depends on this write happens."""
        try:
            await self.write(schedule, stored, status, force=force)
        except ApiError as err:
            if err.status != 409:
                raise
            log.debug("schedule changed since it was read; retrying the pass",
                      schedule=ObjectView(schedule).key)  # fmt: skip
            return False
        return True

    async def _still_candidate(self, name: str, trigger: Trigger) -> bool:
        node = await self.reads.live_get(NODES, name)
        return (
            node is not None
            and taint_index(_taints(node), trigger.taint) is not None
            and QUALIFY_RUN not in ObjectView(node).annotations
        )

    def _run_body(
        self,
        schedule: JSON,
        *,
        name: str,
        batch: int,
        nodes: Sequence[str],
        trigger: Trigger,
        now: datetime,
    ) -> JSON:
        view = ScheduleView(schedule)
        target: JSON = {"nodeNames": list(nodes)}
        tolerations = [
            dict(t) for t in view.target.get("tolerations") or () if isinstance(t, Mapping)
        ]
        target["tolerations"] = [*tolerations, trigger.taint.toleration()]
        body = self.make_run(schedule, tick=now, target=target)
        made = ObjectView(body)
        meta: JSON = {k: v for k, v in made.meta.items() if k != "generateName"}
        meta["name"] = name
        meta["labels"] = {**made.labels, BATCH_LABEL: label_value(str(batch))}
        return {**body, "metadata": meta}

    async def _target_nodes(self, view: ScheduleView, trigger: Trigger) -> list[JSON]:
        target = view.target
        names = [str(n) for n in target.get("nodeNames") or () if n]
        if names:
            found = [await self.reads.get(NODES, n) for n in names]
            nodes = [n for n in found if n is not None]
        else:
            selector = target.get("nodeSelector") or {}
            terms = ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
            nodes = list(await self.reads.list(NODES, label_selector=terms or None))
        return [
            n
            for n in nodes
            if all(ObjectView(n).labels.get(k) == v for k, v in trigger.selector.items())
        ]

    async def _judge(
        self, run: Mapping[str, Any], qual: Mapping[str, Any], *, trigger: Trigger,
        schedule: Mapping[str, Any],
    ) -> list[JSON]:  # fmt: skip
        run_view = RunView(run)
        run_key = f"{run_view.namespace}/{run_view.name}"
        ours = (
            owned_by(run, ObjectView(schedule).uid)
            and run_view.name == qual.get("runName")
            and run_view.labels.get(BATCH_LABEL) == label_value(str(qual.get("batch")))
        )
        outcomes: list[JSON] = []
        for name in (str(n) for n in qual.get("nodes") or ()):
            outcome = await self._judge_node(name, run, trigger=trigger, ours=ours, run_key=run_key)
            if outcome is not None:
                outcomes.append(outcome)
        return outcomes

    async def _judge_node(
        self, name: str, run: Mapping[str, Any], *, trigger: Trigger, ours: bool, run_key: str
    ) -> JSON | None:
        """J7 for one node, on a live read; a write that meets a node changed since (the
        patch's test fails) is decided again on a fresh read, a few times at most."""
        for attempt in range(_JUDGE_ATTEMPTS):
            node = await self.reads.live_get(NODES, name)
            if node is None:
                return None  # gone: nothing to untaint or keep
            annotations = ObjectView(node).annotations
            if annotations.get(QUALIFY_RUN) == run_key:  # judged by an interrupted pass
                reason = annotations.get(QUALIFY_REASON) or ""
                return {
                    "node": name,
                    "reason": reason,
                    "outcome": "Untainted" if reason == KeepReason.QUALIFIED else "Kept",
                    "message": f"judged earlier by run {run_key}",
                }
            decision = qualify_decision(
                name,
                taint=trigger.taint,
                carries_taint=taint_index(_taints(node), trigger.taint) is not None,
                verdict=run_node_verdict(run, name),
                from_trigger=ours,
                run=run_key,
            )
            patch = judgement_patch(node, decision, taint=trigger.taint, run=run_key)
            try:
                await self.client.patch(NODES, name, patch, patch_type=PatchType.JSON)
            except ApiError as err:
                if err.status not in (409, 422) or attempt + 1 == _JUDGE_ATTEMPTS:
                    raise
                log.info("node changed under the judgement; deciding again", node=name)
                continue
            await self._event(node, decision)
            return {
                "node": name,
                "outcome": "Untainted" if decision.untaint else "Kept",
                "reason": str(decision.reason),
                "message": decision.message[:900],
            }
        return None  # unreachable: the last attempt returns or raises

    async def _retaint(
        self, nodes: Sequence[JSON], *, trigger: Trigger, schedule: Mapping[str, Any],
        skip: set[str], now: datetime,
    ) -> None:  # fmt: skip
        view = ObjectView(schedule)
        owner = f"{view.namespace}/{view.name}"
        for node in nodes:
            name = ObjectView(node).name
            if name in skip or taint_index(_taints(node), trigger.taint) is not None:
                continue
            fingerprint = await self.reads.get(
                FINGERPRINTS, fingerprint_name(name), namespace=self.operator_namespace
            )
            why = drift_reason(
                fingerprint, now=now, qualified_by=ObjectView(node).annotations.get(QUALIFY_RUN)
            )
            if why is None:
                continue
            live = await self.reads.live_get(NODES, name)
            if live is None or taint_index(_taints(live), trigger.taint) is not None:
                continue
            qualified_by = ObjectView(live).annotations.get(QUALIFY_RUN)
            why = drift_reason(fingerprint, now=now, qualified_by=qualified_by)
            if why is None:
                continue  # the cached node lagged its judgement's annotation
            await self.client.patch(
                NODES, name, retaint_patch(live, taint=trigger.taint, owner=owner),
                patch_type=PatchType.JSON,
            )  # fmt: skip
            log.info("node re-tainted on drift", schedule=owner, node=name, why=why)
            await self._emit(
                live,
                "QualifyRetainted",
                "Warning",
                f"{trigger.taint} placed by schedule {owner} to qualify the node again: {why}",
            )

    async def _event(self, node: Mapping[str, Any], decision: Decision) -> None:
        if decision.untaint:
            await self._emit(node, "QualifyTaintRemoved", "Normal", decision.message)
        else:
            await self._emit(
                node, "QualifyTaintKept", "Warning", f"{decision.reason}: {decision.message}"
            )

    async def _emit(self, node: Mapping[str, Any], reason: str, type_: str, message: str) -> None:
        view = ObjectView(node)
        stamp = format_time(self.now)
        body = {
            "metadata": {"generateName": f"{view.name}.", "namespace": "default"},
            "involvedObject": {"apiVersion": "v1", "kind": "Node", "name": view.name,
                               "uid": view.uid or None},
            "reason": reason,
            "message": message[:1000],
            "type": type_,
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
            "source": {"component": "glimmer-qualify"},
        }  # fmt: skip
        with contextlib.suppress(ApiError, OSError, TimeoutError, aiohttp.ClientError):
            await self.client.create(EVENTS, body, namespace="default")


def _store(status: JSON, qual: JSON) -> None:
    if qual:
        status["qualification"] = qual
    else:
        status.pop("qualification", None)

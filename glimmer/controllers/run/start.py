"""Starting a run: resolve, admission, plan validation, pin, Running (E2-E6).

Nothing is held before the plan is pinned: a run refused here has cordoned nothing,
and its refusal is a synthetic Error result (``resolve``/``admission``), never Failed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import structlog

from glimmer.api import format_time, parse_time
from glimmer.api.vocabulary import ConditionStatus
from glimmer.controllers.kit import checkpoint, names
from glimmer.controllers.kit.conditions import upsert_condition
from glimmer.controllers.kit.cordon import prior_for_capture
from glimmer.controllers.kit.core_view import NodeView
from glimmer.controllers.kit.view import ObjectView, RunView
from glimmer.controllers.run import kube, refusals, repairs, wire
from glimmer.controllers.run.admission import find_conflict, holds, precedence_key
from glimmer.controllers.run.context import Part
from glimmer.controllers.run.delivery import Delivery, Reason
from glimmer.engine import NODES, ApiError, Result
from glimmer.plan import (
    PinnedPlan,
    PlanRefusal,
    build_plan,
    describe_findings,
    unsound_findings,
)
from glimmer.sinks.fanout import SINKS
from glimmer.verdict import Phase

log = structlog.get_logger("glimmer.controllers.run")

JSON = dict[str, Any]
FINGERPRINT_LABELS: Final = ("nvidia.com/gpu.product", "glimmer.ai/gpu-arch", "glimmer.ai/hw-class")


class ConfigError(Exception):
    """A resolve failure that is the author's to fix (subject to E2's grace)."""


class NotAdmittedError(ConfigError):
    """A missing reference or unusable target (E23, E24): said at once, re-checked."""

    def __init__(self, refusal: refusals.Refusal) -> None:
        super().__init__(refusal.message)
        self.refusal = refusal


class InvalidTargetError(ConfigError):
    """A target the apiserver can never resolve (a malformed nodeSelector): refused at
    once, like E4's plan validation, since waiting cannot make it valid."""


def _already_said(view: RunView, refusal: refusals.Refusal) -> bool:
    """Whether ``Admitted=False`` already says exactly this refusal (no second Event)."""
    return any(
        c.get("reason") == refusal.reason and c.get("message") == refusal.message
        for c in view.conditions_of("Admitted", str(ConditionStatus.FALSE))
    )


@dataclass(frozen=True)
class Refused:
    """Refused at start: the run (with its conditions) and its synthetic result."""

    run: JSON
    result: JSON
    sinks: tuple[str, ...] = ()


@dataclass(frozen=True)
class Pinned:
    """Admitted and pinned: the run as written and its plan."""

    run: JSON
    plan: PinnedPlan


def fingerprint_of(node: Mapping[str, Any]) -> str:
    view = NodeView(node)
    info, node_labels = view.node_info, view.labels
    text = (
        f"kernel={info.get('kernelVersion', '')} os={info.get('osImage', '')} "
        f"arch={info.get('architecture', '')}"
    )
    for label in FINGERPRINT_LABELS:
        if label in node_labels:
            text += f" {label}={node_labels[label]}"
    return text


class Starter(Part):
    """From a new run to a pinned, Running one; or to a refusal that holds nothing."""

    async def _resolve_targets(self, view: RunView) -> list[str]:
        listed = view.node_names
        if listed:
            return listed
        selector = view.node_selector
        if not selector:
            raise ConfigError("spec.target selects no nodes: set nodeNames or nodeSelector")
        try:
            # I22: built from validated terms, so a "," or "!=" in a value cannot
            # change what is selected.
            text = names.equality_selector(selector, field="spec.target.nodeSelector")
        except names.InvalidLabelError as err:
            raise InvalidTargetError(str(err)) from err
        try:
            # Cached (E2 resolves once, and no rule needs a consistent target list).
            nodes = await self.reads.list(NODES, label_selector=text)
        except ApiError as err:
            if not kube.refusal(err):
                raise
            raise InvalidTargetError(
                f"spec.target.nodeSelector {text}: the apiserver refused it: "
                f"{checkpoint.api_message(err)}"
            ) from err
        if not nodes:
            raise NotAdmittedError(refusals.no_matching_nodes(text))
        return [ObjectView(n).name for n in nodes]

    async def _resolve(self, view: RunView) -> tuple[JSON, dict[str, JSON], list[str]]:
        namespace = view.namespace
        profile_name = view.profile_ref
        profile = await self.reads.get(names.PROFILES, profile_name, namespace=namespace)
        if profile is None:
            raise NotAdmittedError(
                refusals.missing_reference(
                    field="spec.profileRef",
                    kind="BurnInProfile",
                    name=profile_name,
                    namespace=namespace,
                )
            )
        profile_spec = dict(ObjectView(profile).spec)
        tests: dict[str, JSON] = {}
        for index, entry in enumerate(profile_spec.get("tests") or []):
            ref = entry.get("testRef") if isinstance(entry, Mapping) else None
            if not ref or ref in tests:
                continue
            test = await self.reads.get(names.TESTS, str(ref), namespace=namespace)
            if test is None:
                # E23: at once, not after E2's grace (build_plan would say it too).
                raise NotAdmittedError(
                    refusals.missing_reference(
                        field=f"BurnInProfile {profile_name} spec.tests[{index}].testRef",
                        kind="BurnInTest",
                        name=str(ref),
                        namespace=namespace,
                    )
                )
            tests[str(ref)] = dict(ObjectView(test).spec)
        targets = await self._resolve_targets(view)
        refusal = refusals.target_refusal(
            targets, await self._admission_nodes(targets), run_tolerations=view.tolerations
        )
        if refusal is not None:
            raise NotAdmittedError(refusal)
        return profile_spec, tests, targets

    async def _missing_sinks(self, view: RunView, profile: Mapping[str, Any]) -> list[str]:
        """E26: the profile's sinks with no BurnInSink in the run's namespace."""
        missing = []
        for sink in profile.get("sinks") or []:
            found = await self.reads.get(SINKS, str(sink), namespace=view.namespace)
            if found is None:
                missing.append(str(sink))
        return missing

    async def _admission_nodes(self, targets: Sequence[str]) -> dict[str, JSON | None]:
        """E24, E28: each target's Node (cached, a miss confirmed live), None when absent."""
        if len(targets) > self.options.node_list_threshold:
            named = {ObjectView(n).name: n for n in await self.reads.list(NODES)}
            return {node: named.get(node) for node in targets}
        return {node: await self.reads.get(NODES, node) for node in targets}

    async def _not_admitted(self, run: JSON, refusal: refusals.Refusal) -> Result | Refused:
        """E23/E24: ``Admitted=False`` naming the fix and a Warning Event, in the first
        pass; re-checked every ``resolve_retry_seconds`` (the missing object may be
        created, the node may join); after E2's grace, the run ends Error with it."""
        view = RunView(run)
        said = _already_said(view, refusal)
        upsert_condition(
            view.status,
            type_="Admitted",
            status_=ConditionStatus.FALSE,
            reason=refusal.reason,
            message=refusal.message,
            now=self.now(),
        )
        if not self._within_grace(view):
            return self._refuse(run, name="resolve", message=refusal.message)
        if not said:
            run = await checkpoint.write_status(
                self.client, run, budget=self.options.status_budget_bytes
            )
            await kube.record_event(
                self.client, run, type_="Warning", reason=refusal.reason, message=refusal.message
            )
        return Result(requeue_after=self.options.resolve_retry_seconds)

    def _within_grace(self, view: RunView) -> bool:
        created = view.created_at
        if not created:
            return False
        age = (self.now() - parse_time(str(created))).total_seconds()
        return age < self.options.resolve_grace_seconds

    async def _targets_of(self, other: JSON) -> list[str]:
        view = RunView(other)
        plan = view.readable_plan()
        if plan is not None:
            return list(plan.targets)
        try:
            return await self._resolve_targets(view)
        except ConfigError:
            return []

    async def start(self, run: JSON) -> Result | Refused | Pinned:
        """E2 resolve, E3 admission, E4 validation, E5 pin; nothing is held before the pin."""
        view = RunView(run)
        try:
            profile, tests, targets = await self._resolve(view)
        except InvalidTargetError as err:
            upsert_condition(
                view.status,
                type_="Admitted",
                status_=ConditionStatus.FALSE,
                reason="InvalidNodeSelector",
                message=str(err),
                now=self.now(),
            )
            return self._refuse(run, name="resolve", message=str(err))
        except NotAdmittedError as err:
            return await self._not_admitted(run, err.refusal)
        except ConfigError as err:
            if self._within_grace(view):
                return Result(requeue_after=self.options.resolve_retry_seconds)
            return self._refuse(run, name="resolve", message=str(err))
        # E3: admission, against a live list of every run in every namespace (a run
        # started a moment ago and missing from the cache would let two take a node).
        ours = precedence_key(run)
        others: list[tuple[JSON, list[str]]] = []
        for other in await self.reads.live_list(names.RUNS):
            if RunView(other).uid == view.uid:
                continue
            if holds(other) and precedence_key(other) < ours:
                others.append((other, await self._targets_of(other)))
        conflict = find_conflict(run, targets=targets, others=others)
        now = self.now()
        status = view.status
        if conflict is not None and not view.force:
            upsert_condition(
                status,
                type_="Admitted",
                status_=ConditionStatus.FALSE,
                reason="TargetsBusy",
                message=conflict.message(),
                now=now,
            )
            return self._refuse(
                run, name="admission", message=conflict.message(), sinks=profile.get("sinks")
            )
        reason = "AdmittedByForce" if conflict is not None else "TargetsAvailable"
        message = (
            f"admitted despite overlap: {conflict.message()}"
            if conflict is not None
            else f"no active run holds any of the {len(targets)} target node(s)"
        )
        plan = build_plan(
            profile=profile,
            tests=tests,
            targets=targets,
            baseline=view.baseline,
            max_concurrent_nodes=view.max_concurrent_nodes,
            several_pairs=repairs.config(view.spec) is not None,
        )
        if isinstance(plan, PlanRefusal):
            if plan.unresolved_refs and self._within_grace(view):
                return Result(requeue_after=self.options.resolve_retry_seconds)
            return self._refuse(
                run, name="resolve", message=plan.message, sinks=profile.get("sinks")
            )
        log.info("run admitted", reason=reason, tests=len(plan.tests), nodes=len(plan.targets))
        upsert_condition(
            status,
            type_="Admitted",
            status_=ConditionStatus.TRUE,
            reason=reason,
            message=message,
            now=now,
        )
        # E26: a missing sink is said at once but refuses nothing (L5: a broken sink
        # never blocks acceptance; its deliveries fail and are recorded in sinkStatus).
        missing = await self._missing_sinks(view, profile)
        sinks = refusals.missing_sinks(missing, profile=view.profile_ref, namespace=view.namespace)
        if missing:
            upsert_condition(
                status,
                type_=refusals.SINKS_CONDITION,
                status_=ConditionStatus.FALSE,
                reason=sinks.reason,
                message=sinks.message,
                now=now,
            )
        run = await checkpoint.write_status(
            self.client, run, budget=self.options.status_budget_bytes
        )
        if missing:
            await kube.record_event(
                self.client, run, type_="Warning", reason=sinks.reason, message=sinks.message
            )
        # E5: plan and finalizer in one metadata write.
        finalizers = RunView(run).finalizers
        if names.FINALIZER not in finalizers:
            finalizers.append(names.FINALIZER)
        annotations = {names.PLAN_ANNOTATION: plan.to_annotation()}
        run = await kube.patch_metadata(
            self.client, run, {"annotations": annotations, "finalizers": finalizers}
        )
        return Pinned(run=run, plan=plan)

    def _refuse(
        self, run: JSON, *, name: str, message: str, sinks: Sequence[str] | None = None
    ) -> Refused:
        log.info("run refused", run=RunView(run).name, cause=name, message=message)
        # L4: a refused run's terminal envelope goes to the profile's sinks if it resolved.
        return Refused(
            run=run,
            result=wire.synthetic_result(name, message),
            sinks=tuple(s for s in sinks or () if isinstance(s, str)),
        )

    async def _target_nodes(self, targets: Sequence[str]) -> dict[str, JSON]:
        """Live reads of the targets (E6, E22: the prior schedulability to restore must
        predate our own cordons): one get each for a few, one list for many (a thousand
        gets at the client's rate limit would outlast a reconcile)."""
        if len(targets) > self.options.node_list_threshold:
            wanted = set(targets)
            named = ((ObjectView(n).name, n) for n in await self.reads.live_list(NODES))
            return {name: n for name, n in named if name in wanted}
        found: dict[str, JSON] = {}
        for node in targets:
            current = await self.reads.live_get(NODES, node)
            if current is not None:
                found[node] = current
        return found

    async def mark_running(self, run: JSON, plan: PinnedPlan) -> JSON:
        view = RunView(run)
        status = view.status
        prior = view.prior_unschedulable
        fingerprint = view.fingerprint
        nodes = await self._target_nodes(plan.targets)
        for node in plan.targets:
            current = nodes.get(node)
            if current is None:
                fingerprint.setdefault(node, "node object unavailable at run start")
                continue
            if node not in prior:
                prior[node] = prior_for_capture(current)
            fingerprint.setdefault(node, fingerprint_of(current))
        now = self.now()
        generation = view.generation
        status.update(
            phase=str(Phase.RUNNING),
            startedAt=view.started_at or format_time(now),
            priorUnschedulable=prior,
            fingerprint=fingerprint,
        )
        if generation is not None:
            status["observedGeneration"] = generation
        findings = unsound_findings(plan)
        if findings:
            upsert_condition(
                status,
                type_="ThresholdsSound",
                status_=ConditionStatus.FALSE,
                reason="UnsoundThresholds",
                message=describe_findings(findings),
                now=now,
            )
        else:
            upsert_condition(
                status,
                type_="ThresholdsSound",
                status_=ConditionStatus.TRUE,
                reason="Reviewed",
                message="every planned threshold can be judged",
                now=now,
            )
        if plan.expanded_variants:
            upsert_condition(
                status,
                type_="PlanExpanded",
                status_=ConditionStatus.TRUE,
                reason="VariantsExpanded",
                message=f"{len(plan.tests)} planned executions x {len(plan.targets)} nodes",
                now=now,
            )
        # E6: deliver the Running envelope, then write status.
        await self.deliverer.deliver(
            Delivery(Reason.RUN_PHASE_CHANGED, str(Phase.RUNNING), run, plan.sinks)
        )
        # I9: a fleet's fingerprint is written once and read only by reports, so a
        # large one lives in an owned shard, created before the status names it.
        await checkpoint.offload_fingerprint(self.client, run)
        run = await checkpoint.write_status(
            self.client, run, budget=self.options.status_budget_bytes
        )
        await kube.record_event(self.client, run, type_="Normal", reason="Started",
                                message=f"running {len(plan.tests)} test(s) on "
                                f"{len(plan.targets)} node(s)")  # fmt: skip
        return run

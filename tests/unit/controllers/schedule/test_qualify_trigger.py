"""Qualify on join (J6-J9): a BurnInSchedule with trigger.nodeJoined against the in-memory
apiserver, time injected."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from glimmer.api import format_time
from glimmer.controllers.kit.names import FINGERPRINTS, PLAN_ANNOTATION, RUNS
from glimmer.controllers.schedule import SCHEDULES, ScheduleReconciler, schedule_controller
from glimmer.controllers.schedule.qualify import (
    BATCH_LABEL,
    QUALIFIED,
    QUALIFY_REASON,
    QUALIFY_RUN,
    TAINTED_BY,
    batch_run_name,
    judgement_patch,
)
from glimmer.engine import (
    EVENTS,
    NODES,
    ApiError,
    FakeClient,
    InformerEvent,
    InformerFactory,
    Readers,
)
from glimmer.engine.reader import CachedReader, NotCachedError
from glimmer.plan import PinnedPlan, PlannedTest
from glimmer.verdict.qualify import Decision, KeepReason, Outcome
from glimmer.verdict.taints import Taint

NS = "lab"
T0 = datetime(2026, 3, 4, 12, 0, tzinfo=UTC)
KEY = "burnin.glimmer.ai/unqualified"
TAINT = {"key": KEY, "effect": "NoSchedule"}
OTHER = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


class Clock:
    def __init__(self) -> None:
        self.at = T0

    def __call__(self) -> datetime:
        return self.at


async def setup(
    fake: FakeClient, clock: Clock, *nodes: str, taints: list[Any] | None = None, **joined: Any
) -> tuple[ScheduleReconciler, str]:
    for node in nodes:
        body = {
            "metadata": {"name": node, "labels": {"pool": "gpu"}},
            "spec": {
                "taints": [dict(t) for t in (taints if taints is not None else [OTHER, TAINT])]
            },
        }
        await fake.create(NODES, body)
    trigger = {"taint": TAINT, "batchWindowSeconds": 30, **joined}
    await fake.create(
        SCHEDULES,
        {
            "metadata": {"name": "join", "namespace": NS},
            "spec": {
                "profileRef": "acceptance",
                "target": {"nodeSelector": {"pool": "gpu"}},
                "trigger": {"nodeJoined": trigger},
                "runTemplate": {"maxConcurrentNodes": 2},
            },
        },
        namespace=NS,
    )
    reconciler = ScheduleReconciler(
        client=fake,
        readers=Readers.over(fake, InformerFactory(fake)),
        schedules=SCHEDULES,
        operator_namespace="glimmer-system",
        now=clock,
    )
    return reconciler, f"{NS}/join"


async def status(fake: FakeClient) -> dict[str, Any]:
    return dict((await fake.get(SCHEDULES, "join", namespace=NS)).get("status") or {})


def condition(st: dict[str, Any], type_: str) -> dict[str, Any]:
    (found,) = [c for c in st["conditions"] if c["type"] == type_]
    return dict(found)


async def finish(
    fake: FakeClient, name: str, outcomes: dict[str, tuple[str, str]], phase: str = "Failed"
) -> None:
    """The run terminal: per node (phase, provenance) of its one required gpu-burn test."""
    run = await fake.get(RUNS, name, namespace=NS)
    nodes = tuple(run["spec"]["target"]["nodeNames"])
    plan = PinnedPlan(
        targets=nodes,
        tests=(
            PlannedTest(name="burn", required=True, spec={"kind": "gpu-burn", "scope": "Node"}),
        ),
    )
    run["metadata"].setdefault("annotations", {})[PLAN_ANNOTATION] = plan.to_annotation()
    run = await fake.replace(RUNS, run, namespace=NS)
    run["status"] = {
        "phase": phase,
        "finishedAt": format_time(T0 + timedelta(minutes=10)),
        "results": [
            {"name": "burn", "kind": "gpu-burn", "phase": p, "nodes": [n], "provenance": prov}
            for n, (p, prov) in outcomes.items()
        ],
    }
    await fake.replace(RUNS, run, namespace=NS, subresource="status")


def taints(fake: FakeClient, node: str) -> list[dict[str, Any]]:
    (found,) = [n for n in fake.objects(NODES) if n["metadata"]["name"] == node]
    return list(found["spec"].get("taints") or [])


def annotations(fake: FakeClient, node: str) -> dict[str, str]:
    (found,) = [n for n in fake.objects(NODES) if n["metadata"]["name"] == node]
    return dict(found["metadata"].get("annotations") or {})


async def test_J6_nodes_in_one_window_share_one_run_tolerating_exactly_the_taint() -> None:
    fake, clock = FakeClient(), Clock()
    rec, key = await setup(fake, clock, "n1", "n2", "n3")
    await rec.reconcile(key)
    assert fake.objects(RUNS) == []  # the window opened
    assert (await status(fake))["qualification"]["windowOpenedAt"] == format_time(T0)
    clock.at = T0 + timedelta(seconds=30)
    await rec.reconcile(key)
    (run,) = fake.objects(RUNS)
    assert run["spec"]["target"]["nodeNames"] == ["n1", "n2"]  # maxConcurrentNodes = 2
    assert run["spec"]["target"]["tolerations"] == [
        {"key": KEY, "operator": "Equal", "value": "", "effect": "NoSchedule"}
    ]
    assert run["metadata"]["labels"][BATCH_LABEL] == "1"
    qual = (await status(fake))["qualification"]
    assert (qual["batch"], qual["phase"], qual["nodes"]) == (1, "Running", ["n1", "n2"])
    assert qual["runName"] == run["metadata"]["name"]
    # While batch 1 runs, nothing else starts; n3 waits for the next batch.
    clock.at += timedelta(minutes=5)
    await rec.reconcile(key)
    assert len(fake.objects(RUNS)) == 1


async def test_J7_a_certified_pass_untaints_a_fail_keeps_the_taint_condition_and_event() -> None:
    fake, clock = FakeClient(), Clock()
    rec, key = await setup(fake, clock, "n1", "n2", batchWindowSeconds=0)
    await rec.reconcile(key)
    (run,) = fake.objects(RUNS)
    name = run["metadata"]["name"]
    await finish(fake, name, {"n1": ("Passed", "silicon"), "n2": ("Failed", "silicon")})
    clock.at += timedelta(minutes=10)
    await rec.reconcile(key)
    assert taints(fake, "n1") == [OTHER]  # only the configured taint went
    assert taints(fake, "n2") == [OTHER, TAINT]
    assert annotations(fake, "n1")[QUALIFY_RUN] == f"{NS}/{name}"
    assert annotations(fake, "n2")[QUALIFY_REASON] == "Failed"
    st = await status(fake)
    cond = condition(st, QUALIFIED)
    assert (cond["status"], cond["reason"]) == ("False", "TaintKept")
    assert "n2 (Failed)" in cond["message"] and "failed: burn" in cond["message"]
    outcomes = {o["node"]: (o["outcome"], o["reason"]) for o in st["qualification"]["outcomes"]}
    assert outcomes == {"n1": ("Untainted", "Qualified"), "n2": ("Kept", "Failed")}
    events = {(e["involvedObject"]["name"], e["reason"]) for e in fake.objects(EVENTS)}
    assert events == {("n1", "QualifyTaintRemoved"), ("n2", "QualifyTaintKept")}
    (kept,) = [e for e in fake.objects(EVENTS) if e["involvedObject"]["name"] == "n2"]
    assert kept["message"].startswith("Failed: ") and kept["type"] == "Warning"
    # A judged node is not batched again, and a second pass writes nothing new.
    clock.at += timedelta(minutes=10)
    await rec.reconcile(key)
    assert len(fake.objects(RUNS)) == 1 and taints(fake, "n2") == [OTHER, TAINT]


@pytest.mark.parametrize(
    ("result", "reason"),
    [
        (("Passed", "sim"), "Simulated"),
        (("Error", "silicon"), "NotJudged"),
        (("Passed", "unknown"), "NotJudged"),
    ],
)
async def test_J7_simulated_or_unjudged_keeps_the_taint(
    result: tuple[str, str], reason: str
) -> None:
    fake, clock = FakeClient(), Clock()
    rec, key = await setup(fake, clock, "n1", batchWindowSeconds=0)
    await rec.reconcile(key)
    (run,) = fake.objects(RUNS)
    await finish(fake, run["metadata"]["name"], {"n1": result}, phase="Passed")
    await rec.reconcile(key)
    assert taints(fake, "n1") == [OTHER, TAINT]
    (outcome,) = (await status(fake))["qualification"]["outcomes"]
    assert (outcome["outcome"], outcome["reason"]) == ("Kept", reason)
    if reason == "Simulated":
        assert "simulated GPU only" in outcome["message"]


async def test_J7_a_taint_changed_during_the_run_is_not_removed() -> None:
    fake, clock = FakeClient(), Clock()
    rec, key = await setup(fake, clock, "n1", batchWindowSeconds=0)
    await rec.reconcile(key)
    (run,) = fake.objects(RUNS)
    changed = {**TAINT, "value": "by-hand"}
    await fake.patch(NODES, "n1", {"spec": {"taints": [OTHER, changed]}})
    await finish(fake, run["metadata"]["name"], {"n1": ("Passed", "silicon")}, phase="Passed")
    await rec.reconcile(key)
    assert taints(fake, "n1") == [OTHER, changed]
    (outcome,) = (await status(fake))["qualification"]["outcomes"]
    assert outcome["reason"] == "TaintChanged"


async def test_J9_a_crash_between_cursor_and_create_loses_the_batch_never_doubles_it() -> None:
    fake, clock = FakeClient(), Clock()
    rec, key = await setup(fake, clock, "n1", batchWindowSeconds=0)
    # The manager dies between the cursor write and the run's create.
    fake.inject_error("create", RuntimeError("killed after the cursor write"))
    with pytest.raises(RuntimeError):
        await rec.reconcile(key)
    qual = (await status(fake))["qualification"]
    assert (qual["batch"], qual["phase"]) == (1, "Running") and fake.objects(RUNS) == []
    await rec.reconcile(key)  # restarted: batch 1 is Lost, its node joins batch 2
    st = await status(fake)
    assert st["qualification"]["batch"] == 2
    (run,) = fake.objects(RUNS)
    schedule = await fake.get(SCHEDULES, "join", namespace=NS)
    assert run["metadata"]["name"] == batch_run_name(schedule, 2)
    for _ in range(3):  # passes after that create nothing more for batch 2
        await rec.reconcile(key)
    assert len(fake.objects(RUNS)) == 1


async def test_J8_drift_retaints_a_qualified_node_with_ownership_and_requalifies_it() -> None:
    fake, clock = FakeClient(), Clock()
    rec, key = await setup(fake, clock, "n1", batchWindowSeconds=0, retaintOnDrift=True)
    await rec.reconcile(key)
    (run,) = fake.objects(RUNS)
    first = run["metadata"]["name"]
    await finish(fake, first, {"n1": ("Passed", "silicon")}, phase="Passed")
    await rec.reconcile(key)
    assert taints(fake, "n1") == [OTHER]
    # The fingerprint still shows the verdict of an older run: not caught up, no drift.
    verdict = {"runNamespace": NS, "runName": "older", "phase": "Passed",
               "finishedAt": format_time(T0), "digest": "glimmer-v1:before"}  # fmt: skip
    fingerprint = {
        "metadata": {"name": "n1"},
        "spec": {"nodeName": "n1"},
        "status": {"digest": "glimmer-v1:after", "verdict": verdict},
    }
    await fake.create(FINGERPRINTS, fingerprint, namespace="glimmer-system")
    clock.at += timedelta(hours=1)
    await rec.reconcile(key)
    assert taints(fake, "n1") == [OTHER]
    # Now the fingerprint holds this trigger's verdict, measured before a part was swapped.
    current = await fake.get(FINGERPRINTS, "n1", namespace="glimmer-system")
    current["status"]["verdict"]["runName"] = first
    await fake.replace(FINGERPRINTS, current, namespace="glimmer-system", subresource="status")
    await rec.reconcile(key)
    assert taints(fake, "n1") == [OTHER, TAINT]
    marks = annotations(fake, "n1")
    assert marks[TAINTED_BY] == f"{NS}/join" and QUALIFY_RUN not in marks
    retainted = [e for e in fake.objects(EVENTS) if e["reason"] == "QualifyRetainted"]
    assert retainted and "glimmer-v1:before" in retainted[0]["message"]
    runs = fake.objects(RUNS)
    assert len(runs) == 2  # the same pass batched it again (window 0)
    second = max(runs, key=lambda r: r["metadata"]["labels"][BATCH_LABEL])
    await finish(fake, second["metadata"]["name"], {"n1": ("Passed", "silicon")}, phase="Passed")
    await rec.reconcile(key)
    assert taints(fake, "n1") == [OTHER] and TAINTED_BY not in annotations(fake, "n1")


async def test_J8_without_retaintOnDrift_nothing_is_retainted() -> None:
    fake, clock = FakeClient(), Clock()
    rec, key = await setup(fake, clock, "n1", taints=[OTHER], batchWindowSeconds=0)
    verdict = {"runNamespace": NS, "runName": "older", "phase": "Passed",
               "finishedAt": format_time(T0), "digest": "glimmer-v1:before"}  # fmt: skip
    await fake.create(
        FINGERPRINTS,
        {"metadata": {"name": "n1"}, "spec": {"nodeName": "n1"},
         "status": {"digest": "glimmer-v1:after", "verdict": verdict}},
        namespace="glimmer-system",
    )  # fmt: skip
    await rec.reconcile(key)
    assert taints(fake, "n1") == [OTHER] and fake.objects(RUNS) == []


async def test_J6_a_suspended_trigger_judges_its_open_batch_but_starts_none() -> None:
    fake, clock = FakeClient(), Clock()
    rec, key = await setup(fake, clock, "n1", batchWindowSeconds=0)
    await rec.reconcile(key)
    (run,) = fake.objects(RUNS)
    schedule = await fake.get(SCHEDULES, "join", namespace=NS)
    schedule["spec"]["suspend"] = True
    await fake.replace(SCHEDULES, schedule, namespace=NS)
    await fake.create(NODES, {"metadata": {"name": "n2", "labels": {"pool": "gpu"}},
                              "spec": {"taints": [TAINT]}})  # fmt: skip
    await finish(fake, run["metadata"]["name"], {"n1": ("Passed", "silicon")}, phase="Passed")
    clock.at += timedelta(minutes=5)
    await rec.reconcile(key)
    assert taints(fake, "n1") == [OTHER]  # judged
    assert len(fake.objects(RUNS)) == 1  # n2 waits for the schedule to resume
    assert "windowOpenedAt" not in (await status(fake))["qualification"]


def test_J7_the_judgement_patch_fails_on_a_changed_node_and_removes_only_our_entry() -> None:
    import jsonpatch

    node = {
        "metadata": {"name": "n1", "resourceVersion": "7"},
        "spec": {"taints": [OTHER, TAINT, {"key": "late", "effect": "NoExecute"}]},
    }
    untaint = Decision("n1", Outcome.UNTAINT, KeepReason.QUALIFIED, "certified")
    patch = judgement_patch(node, untaint, taint=Taint.of(TAINT), run="lab/q")
    done = jsonpatch.apply_patch(node, patch)
    assert done["spec"]["taints"] == [OTHER, {"key": "late", "effect": "NoExecute"}]
    assert done["metadata"]["annotations"] == {QUALIFY_RUN: "lab/q", QUALIFY_REASON: "Qualified"}
    moved = {**node, "metadata": {**node["metadata"], "resourceVersion": "8"}}
    with pytest.raises(jsonpatch.JsonPatchTestFailed):
        jsonpatch.apply_patch(moved, patch)  # someone wrote the node since it was read
    reordered = {**node, "spec": {"taints": [TAINT, OTHER]}}
    with pytest.raises(jsonpatch.JsonPatchTestFailed):
        jsonpatch.apply_patch(reordered, patch)  # the entry at that index is not ours now


async def test_J9_an_open_batchs_run_is_not_collected_before_it_is_judged() -> None:
    fake, clock = FakeClient(), Clock()
    rec, key = await setup(fake, clock, "n1", batchWindowSeconds=0)
    schedule = await fake.get(SCHEDULES, "join", namespace=NS)
    schedule["spec"].update(successfulRunsHistoryLimit=0, failedRunsHistoryLimit=0)
    await fake.replace(SCHEDULES, schedule, namespace=NS)
    await rec.reconcile(key)
    (run,) = fake.objects(RUNS)
    await finish(fake, run["metadata"]["name"], {"n1": ("Passed", "silicon")}, phase="Passed")
    fake.inject_error("patch", RuntimeError("the node write failed; the pass is retried"))
    with pytest.raises(RuntimeError):
        await rec.reconcile(key)
    assert len(fake.objects(RUNS)) == 1  # history left the unjudged batch's run alone
    await rec.reconcile(key)
    assert taints(fake, "n1") == [OTHER]  # judged, not Lost to the history limit
    assert (await status(fake))["qualification"]["phase"] == "Judged"


async def test_J9_a_judgement_interrupted_before_its_status_write_is_not_repeated() -> None:
    fake, clock = FakeClient(), Clock()
    rec, key = await setup(fake, clock, "n1", batchWindowSeconds=0)
    await rec.reconcile(key)
    (run,) = fake.objects(RUNS)
    await finish(fake, run["metadata"]["name"], {"n1": ("Failed", "silicon")})
    fake.inject_error("replace", RuntimeError("killed before the status write"))
    with pytest.raises(RuntimeError):
        await rec.reconcile(key)  # the node was judged and evented, the status was not
    assert len(fake.objects(EVENTS)) == 1
    await rec.reconcile(key)
    assert len(fake.objects(EVENTS)) == 1  # judged once
    (outcome,) = (await status(fake))["qualification"]["outcomes"]
    assert (outcome["outcome"], outcome["reason"]) == ("Kept", "Failed")


async def test_J6_only_nodes_carrying_a_triggers_taint_key_enqueue_its_schedule() -> None:
    fake = FakeClient()
    registration = schedule_controller(
        client=fake, readers=Readers.over(fake, InformerFactory(fake)),
        operator_namespace="glimmer-system",
    )  # fmt: skip
    node_watch = registration.watches[-1]
    assert node_watch.resource == NODES
    registration.reconciler.trigger_keys["lab/join"] = KEY
    tainted = {"metadata": {"name": "n1"}, "spec": {"taints": [OTHER, TAINT]}}
    plain = {"metadata": {"name": "n2"}, "spec": {"taints": [OTHER]}}
    assert list(node_watch.to_keys(InformerEvent("add", tainted))) == ["lab/join"]
    assert list(node_watch.to_keys(InformerEvent("add", plain))) == []


async def test_J7_a_foreign_run_under_the_batch_name_judges_nothing_and_loses_the_batch() -> None:
    fake, clock = FakeClient(), Clock()
    rec, key = await setup(fake, clock, "n1", batchWindowSeconds=0)
    schedule = await fake.get(SCHEDULES, "join", namespace=NS)
    forged = batch_run_name(schedule, 1)
    await fake.create(
        RUNS,
        {"metadata": {"name": forged, "namespace": NS, "labels": {BATCH_LABEL: "1"}},
         "spec": {"target": {"nodeNames": ["n1"]}},
         "status": {"phase": "Passed", "results": [
             {"name": "burn", "kind": "gpu-burn", "phase": "Passed", "nodes": ["n1"],
              "provenance": "silicon"}]}},
        namespace=NS,
    )  # fmt: skip
    await rec.reconcile(key)  # batch 1's create meets the forged run (AlreadyExists)
    await rec.reconcile(key)  # not this schedule's: batch 1 is Lost, batch 2 starts
    assert taints(fake, "n1") == [OTHER, TAINT]
    qual = (await status(fake))["qualification"]
    assert (qual["batch"], qual["phase"]) == (2, "Running")
    assert condition(await status(fake), QUALIFIED)["reason"] == "Qualifying"
    assert {r["metadata"]["name"] for r in fake.objects(RUNS)} == {
        forged,
        batch_run_name(schedule, 2),
    }


class FrozenNodes(CachedReader):
    """A node cache frozen at one moment (a watch lagging the writes); other kinds are not
    cached, so they are read live."""

    def __init__(self, nodes: list[dict[str, Any]]) -> None:
        super().__init__(InformerFactory(FakeClient()))
        self.nodes = {n["metadata"]["name"]: copy.deepcopy(n) for n in nodes}

    async def get(self, resource: Any, name: str, **kw: Any) -> Any:
        if resource != NODES:
            raise NotCachedError(str(resource))
        if name not in self.nodes:
            raise ApiError(status=404, reason="NotFound")
        return copy.deepcopy(self.nodes[name])

    async def list(self, resource: Any, **kw: Any) -> Any:
        if resource != NODES:
            raise NotCachedError(str(resource))
        return [copy.deepcopy(n) for n in self.nodes.values()]


async def test_J6_a_lagging_node_cache_never_rebatches_a_node_just_judged() -> None:
    fake, clock = FakeClient(), Clock()
    rec, key = await setup(fake, clock, "n1", batchWindowSeconds=0)
    await rec.reconcile(key)
    (run,) = fake.objects(RUNS)
    await finish(fake, run["metadata"]["name"], {"n1": ("Failed", "silicon")})
    # From now on the cache shows n1 as it was before its judgement (no annotation).
    frozen = FrozenNodes(fake.objects(NODES))
    rec.reads.readers = Readers(cached=frozen, live=rec.reads.readers.live)
    rec.qualify.reads = rec.reads
    for _ in range(3):
        clock.at += timedelta(minutes=1)
        await rec.reconcile(key)
    assert len(fake.objects(RUNS)) == 1  # kept, and not burned in again
    assert annotations(fake, "n1")[QUALIFY_REASON] == "Failed"


async def test_J7_a_node_written_concurrently_is_decided_again_on_a_fresh_read() -> None:
    fake, clock = FakeClient(), Clock()
    rec, key = await setup(fake, clock, "n1", batchWindowSeconds=0)
    await rec.reconcile(key)
    (run,) = fake.objects(RUNS)
    await finish(fake, run["metadata"]["name"], {"n1": ("Passed", "silicon")}, phase="Passed")
    # The run's cordon release lands between our read and our patch: the test op fails.
    fake.inject_error("patch", ApiError(status=422, reason="test operation failed"))
    await rec.reconcile(key)
    assert taints(fake, "n1") == [OTHER]
    assert [e["reason"] for e in fake.objects(EVENTS)] == ["QualifyTaintRemoved"]


async def test_J9_a_stale_schedule_whose_cursor_write_conflicts_creates_no_run() -> None:
    fake, clock = FakeClient(), Clock()
    rec, key = await setup(fake, clock, "n1", batchWindowSeconds=0)
    fake.inject_error("replace", ApiError(status=409, reason="Conflict"))
    result = await rec.reconcile(key)
    assert fake.objects(RUNS) == [] and result.requeue_after == 1.0
    await rec.reconcile(key)  # on a fresh read the batch starts, once
    (run,) = fake.objects(RUNS)
    assert (await status(fake))["qualification"]["runName"] == run["metadata"]["name"]

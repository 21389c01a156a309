"""The run's index of open units (openunits.py) is a cache of the status (E1, H): kept
between passes, it must equal the index built from the stored status after every
pass, and a run reconciled by managers that keep it must reach exactly the decisions
of one that builds it from the status before every pass (a restarted manager)."""

from __future__ import annotations

import asyncio
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from glimmer.api import status_layout
from glimmer.controllers.kit import checkpoint, names
from glimmer.controllers.kit.view import RunView
from glimmer.controllers.run import sweep
from glimmer.controllers.run.openunits import OpenUnits, PlanShape
from glimmer.controllers.run.reconciler import RunReconciler

from .harness import Cluster, custom_test

#: Per step: which manager reconciles (0 or 1: a restart or a handover), then one
#: outcome per live pod in (node, name) order: None runs on, else its exit code
#: (0 Passed, 1 Failed, 3 Error).
STEPS = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=1),
        st.lists(st.sampled_from([None, 0, 0, 0, 1, 3]), max_size=8),
    ),
    min_size=1,
    max_size=24,
)


TERMINAL = ("Passed", "Failed", "Error")


def decisions(run: dict[str, Any], pods: list[dict[str, Any]]) -> Any:
    """What a pass decided, without names that carry a run's UID or the wall clock."""
    status = run.get("status") or {}
    results = sorted(
        (
            str(r.get("name")),
            tuple(r.get("nodes") or []),
            str(r.get("phase")),
            r.get("errorRetries"),
            r.get("repeatsCompleted"),
        )
        for r in status_layout.status_results(status)
    )
    made = sorted(
        (p["metadata"]["name"].rsplit("-", 1)[0].split("-t", 1)[1],
         p["metadata"]["labels"][names.NODE_LABEL],
         (p.get("status") or {}).get("phase"))
        for p in pods
    )  # fmt: skip
    counts = tuple(status.get(k) for k in ("passed", "failed", "errored", "skipped"))
    return status.get("phase"), results, sorted(status.get("cordonedNodes") or []), counts, made


def same_index(kept: OpenUnits, built: OpenUnits) -> None:
    assert kept.version == built.version
    assert kept.pending == built.pending
    assert kept.reads_all == built.reads_all
    assert {k: (s.phase, s.required) for k, s in kept.packed.items()} == {
        k: (s.phase, s.required) for k, s in built.packed.items()
    }
    pending_pods = {n: at for n, at in kept.first_pods.items() if at[1] in kept.pending[at[0]]}
    assert pending_pods == built.first_pods


async def _setup(nodes: int, cap: int, fail_fast: bool) -> Cluster:
    cluster = Cluster(nodes=nodes)
    await cluster.setup(tests={"a": custom_test("x"), "b": custom_test("y")})
    await cluster.create_run(maxConcurrentNodes=cap, retryOnErrorLimit=1, failFast=fail_fast)
    return cluster


async def _kubelet(cluster: Cluster, outcomes: list[int | None]) -> None:
    live = sorted(
        cluster.live_pods(),
        key=lambda p: (p["metadata"]["labels"][names.NODE_LABEL], p["metadata"]["name"][:-9]),
    )
    for pod, code in zip(live, outcomes, strict=False):
        name = pod["metadata"]["name"]
        if code is None:
            await cluster.kubelet(name, exit_code=None)
        else:
            await cluster.kubelet(name, exit_code=code, log=f"bw={code}\n")


async def _scenario(nodes: int, cap: int, fail_fast: bool, steps: list[Any]) -> None:
    kept = await _setup(nodes, cap, fail_fast)  # two managers in turn, each keeping its index
    managers = [kept.reconciler, kept.new_reconciler()]
    built = await _setup(nodes, cap, fail_fast)  # one that builds it from status every pass
    tail = [(0, [0] * 8)] * (4 * nodes + 4)  # then every pod passes, to the verdict
    for who, outcomes in [*steps, *tail]:
        if ((await kept.run()).get("status") or {}).get("phase") in TERMINAL:
            break
        kept.reconciler = managers[who]
        await kept.reconcile()
        built.reconciler.sweeper.forget((await built.run())["metadata"]["uid"])
        await built.reconcile()
        run = await kept.run()
        assert decisions(run, kept.pods()) == decisions(await built.run(), built.pods())
        index = managers[who].sweeper.open_units._runs.get(run["metadata"]["uid"])
        plan = RunView(run).pinned_plan()
        if index is not None and plan is not None and index.describes(run):
            same_index(index, OpenUnits.build(run, PlanShape.of(plan)))
        await _kubelet(kept, outcomes)
        await _kubelet(built, outcomes)
        kept.advance(1)
        built.advance(1)
    assert (await kept.run())["status"].get("phase") in TERMINAL


@settings(max_examples=40, deadline=None)
@given(
    nodes=st.integers(min_value=2, max_value=5),
    cap=st.integers(min_value=1, max_value=5),
    fail_fast=st.booleans(),
    steps=STEPS,
)
def test_E1_H_a_kept_index_equals_the_status_and_decides_as_a_restarted_manager(
    nodes: int, cap: int, fail_fast: bool, steps: list[Any]
) -> None:
    # Shards and packed records from the first results on, so packing is exercised.
    with (
        mock.patch.object(checkpoint, "SHARD_AT_BYTES", 1024),
        mock.patch.object(checkpoint, "SHARD_MIN_BYTES", 256),
        mock.patch.object(checkpoint, "PACK_AT_BYTES", 128),
    ):
        asyncio.run(_scenario(nodes, cap, fail_fast, steps))


async def test_E1_a_status_written_by_anyone_else_is_read_again() -> None:
    cluster = await _setup(4, 2, False)
    await cluster.reconcile()
    sweeper = cluster.reconciler.sweeper
    built = sweeper.open_units.built
    await cluster.reconcile()  # nothing changed: the kept index describes the run
    assert sweeper.open_units.built == built
    other = RunReconciler(client=cluster.client, options=cluster.reconciler.ctx.options,
                          now=lambda: cluster.clock)  # fmt: skip
    await _kubelet(cluster, [0, 0])
    await other.reconcile("team/r1")  # another manager harvests both and launches on
    await cluster.reconcile()
    assert sweeper.open_units.built == built + 1  # another resourceVersion: read again
    run = await cluster.run()
    assert run["status"]["passed"] == 2


async def test_I9_a_pass_steps_its_open_units_not_the_plan() -> None:
    cluster = await _setup(40, 4, False)
    stepped: list[Any] = []
    original = sweep.Sweeper._unit

    async def counted(self: Any, work: Any, index: int, test: Any, unit: Any, **kw: Any) -> Any:
        stepped.append(unit.nodes)
        return await original(self, work, index, test, unit, **kw)

    with mock.patch.object(sweep.Sweeper, "_unit", counted):
        for _ in range(30):
            stepped.clear()
            await cluster.reconcile()
            # E9: four in flight; a held-back launch is one visit, never the other 36.
            assert len(stepped) <= 4 + 4 + 1, stepped
            await _kubelet(cluster, [0] * 4)
            if (await cluster.run())["status"].get("phase") == "Passed":
                break
    run = await cluster.run()
    assert run["status"]["phase"] == "Passed"
    assert run["status"]["passed"] == 80

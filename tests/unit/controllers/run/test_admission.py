"""E3: who holds a node first; refused, never queued."""

from __future__ import annotations

from typing import Any

from glimmer.controllers.kit import names
from glimmer.controllers.run.admission import find_conflict


def run(
    name: str,
    *,
    created: str,
    uid: str,
    started: bool = False,
    phase: str = "",
    finalizer: bool = False,
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": "ns",
        "creationTimestamp": created,
        "uid": uid,
    }
    if finalizer:
        meta["finalizers"] = [names.FINALIZER]
    status: dict[str, Any] = {"phase": phase}
    if started:
        status["startedAt"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta, "status": status}


ME = run("me", created="2026-01-01T00:00:05Z", uid="m")


def test_E3_a_started_run_precedes_an_unstarted_one_even_if_created_later() -> None:
    other = run("other", created="2026-01-01T00:00:09Z", uid="z", started=True, phase="Running")
    conflict = find_conflict(ME, targets=["a"], others=[(other, ["a", "b"])])
    assert conflict is not None and conflict.name == "other" and conflict.nodes == ("a",)


def test_E3_an_older_unstarted_run_precedes_and_a_newer_one_does_not() -> None:
    older = run("older", created="2026-01-01T00:00:01Z", uid="x")
    newer = run("newer", created="2026-01-01T00:00:09Z", uid="a")
    assert find_conflict(ME, targets=["a"], others=[(newer, ["a"])]) is None
    assert find_conflict(ME, targets=["a"], others=[(older, ["a"])]) is not None


def test_E3_a_creation_tie_is_broken_by_the_smaller_uid() -> None:
    tie_small = run("small", created="2026-01-01T00:00:05Z", uid="a")
    tie_big = run("big", created="2026-01-01T00:00:05Z", uid="z")
    assert find_conflict(ME, targets=["n"], others=[(tie_small, ["n"])]) is not None
    assert find_conflict(ME, targets=["n"], others=[(tie_big, ["n"])]) is None


def test_E3_a_terminal_run_holds_only_while_it_keeps_its_cordon_finalizer() -> None:
    done = run("done", created="2026-01-01T00:00:01Z", uid="d", phase="Passed")
    cleaning = run(
        "cleaning", created="2026-01-01T00:00:01Z", uid="c", phase="Passed", finalizer=True
    )
    assert find_conflict(ME, targets=["n"], others=[(done, ["n"])]) is None
    assert find_conflict(ME, targets=["n"], others=[(cleaning, ["n"])]) is not None


def test_E3_no_overlap_no_conflict_and_the_earliest_conflicter_is_named() -> None:
    first = run("first", created="2026-01-01T00:00:01Z", uid="1")
    second = run("second", created="2026-01-01T00:00:02Z", uid="2")
    assert find_conflict(ME, targets=["x"], others=[(first, ["n"])]) is None
    conflict = find_conflict(ME, targets=["n"], others=[(second, ["n"]), (first, ["n"])])
    assert conflict is not None and conflict.name == "first"


async def test_E3_E22_admission_reads_every_run_live_once_and_no_process_memory() -> None:
    """The first pass of a fresh process over a new run lists runs live exactly once
    (admission, E22) and lists no nodes for a run that names its nodes: no start-up
    rebuild of an in-memory interlock precedes it, because no decision reads one."""
    from tests.unit.controllers.run.harness import Cluster, custom_test

    cluster = Cluster(nodes=4)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run("r1", target={"nodeNames": ["n0", "n1"]})
    await cluster.reconcile("r1")
    await cluster.create_run("r2", target={"nodeNames": ["n0"]})
    cluster.reconciler = cluster.new_reconciler()  # a fresh process
    mark = len(cluster.client.requests)
    await cluster.reconcile("r2")
    lists = [r.resource for r in cluster.client.requests[mark:] if r.verb == "list"]
    assert lists.count(str(names.RUNS)) == 1
    assert "nodes" not in lists
    refused = (await cluster.run("r2"))["status"]
    assert refused["phase"] == "Error"  # refused on that one live list: r1 holds n0
    assert refused["results"][0]["name"] == "admission"

"""Link blame's re-pairs (F10-F13) on the fake apiserver, with a hand-driven kubelet.

Four nodes, one Pair test paired in order, (n0, n1) and (n2, n3). The kubelet below ends
each link's two pods together, Passed or Failed as ``ok(server, client)`` says, so each
test is one fault: a bad node, a bad budget, a missing partner, a short deadline, a link
that was never measured."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from glimmer.controllers.kit.names import PROFILES, RUNS, TESTS
from glimmer.controllers.run.passes import REPAIR_SUFFIX
from glimmer.engine import NODES, PODS
from glimmer.plan.env import PEER_NODE
from glimmer.verdict.blame import BUDGET, DEADLINE, NO_PARTNER
from tests.unit.controllers.run.harness import NS, Cluster, custom_test

Ok = Callable[[str, str], bool]
TERMINAL = ("Passed", "Failed", "Error", "Cancelled")


def node_of(pod: dict[str, Any]) -> str:
    return str(pod["spec"]["nodeSelector"]["kubernetes.io/hostname"])


def peer_of(pod: dict[str, Any]) -> str:
    env = {e["name"]: e.get("value", "") for e in pod["spec"]["containers"][0]["env"]}
    return str(env[PEER_NODE])


async def start(cluster: Cluster, *, required: bool = True, **spec: Any) -> None:
    await cluster.setup(tests={})
    await cluster.client.create(
        TESTS, {"metadata": {"name": "link"}, "spec": custom_test("x", scope="Pair")},
        namespace=NS,
    )  # fmt: skip
    await cluster.client.create(
        PROFILES,
        {"metadata": {"name": "blame"},
         "spec": {"tests": [{"testRef": "link", "required": required}]}},
        namespace=NS,
    )  # fmt: skip
    await cluster.create_run(profileRef="blame", maxConcurrentNodes=4, **spec)


async def kubelet_round(cluster: Cluster, ok: Ok, *, exit_code: int | None = None) -> None:
    """Servers run Ready; then one link whose client exists ends (both pods), ``bw=100``
    exit 0 when ``ok``, else ``bw=1`` exit 1 (``exit_code`` overrides: e.g. 3, a crash).
    One link a round, so some write holds one settled re-pair beside an open one."""
    live = cluster.live_pods()
    for pod in live:
        name, host = pod["metadata"]["name"], pod["spec"].get("hostname")
        if host == "server" and (pod.get("status") or {}).get("phase") != "Running":
            await cluster.kubelet(name, exit_code=None)
            ready = {"type": "Ready", "status": "True"}
            current = await cluster.client.get(PODS, name, namespace=NS)
            status = dict(current["status"], conditions=[ready])
            await cluster.client.patch(PODS, name, {"status": status}, namespace=NS,
                                       subresource="status")  # fmt: skip
    for client in [p for p in live if p["spec"].get("hostname") == "client"][:1]:
        server_node, client_node = peer_of(client), node_of(client)
        good = ok(server_node, client_node)
        code = exit_code if exit_code is not None else (0 if good else 1)
        log = "bw=100\n" if good else "bw=1\n"
        servers = [p for p in live if p["spec"].get("hostname") == "server"
                   and node_of(p) == server_node and peer_of(p) == client_node]  # fmt: skip
        for pod in (client, *servers):
            await cluster.kubelet(pod["metadata"]["name"], exit_code=code, log=log)
    cluster.advance(1)


async def drive(cluster: Cluster, ok: Ok, *, exit_code: int | None = None) -> dict[str, Any]:
    """Reconcile and play the kubelet (:func:`kubelet_round`) until the run is terminal."""
    for _ in range(80):
        await cluster.reconcile()
        run = await cluster.run()
        status = run.get("status") or {}
        # Every write's counters are the planned results' own (a re-pair is none).
        counted = sum(status.get(k) or 0 for k in ("passed", "failed", "errored", "skipped"))
        assert counted <= len(status.get("results") or []), status
        if status.get("phase") in TERMINAL:
            return run
        await kubelet_round(cluster, ok, exit_code=exit_code)
    raise AssertionError("the run never ended")


def bad_node(node: str) -> Ok:
    return lambda a, b: node not in (a, b)


def servers_created(cluster: Cluster) -> int:
    return len(
        {
            r.name
            for r in cluster.client.requests
            if r.verb == "create"
            and r.resource == str(PODS)
            and (r.body or {}).get("spec", {}).get("hostname") == "server"
        }
    )


def only_entry(run: dict[str, Any]) -> dict[str, Any]:
    [entry] = run["status"]["linkBlame"]
    return dict(entry)


def released(cluster: Cluster) -> bool:
    return not any(n["spec"].get("unschedulable") for n in cluster.client.objects(NODES))


async def test_F11_a_bad_node_is_named_and_its_re_pairs_are_never_results() -> None:
    cluster = Cluster(nodes=4)
    await start(cluster, linkBlame={"maxExtraPairs": 2})
    run = await drive(cluster, bad_node("n0"))
    status = run["status"]
    assert status["phase"] == "Failed" and status["failed"] == 1 and status["passed"] == 1
    assert [r["nodes"] for r in status["results"]] == [["n0", "n1"], ["n2", "n3"]]
    entry = only_entry(run)
    assert entry["blame"] == "node/n0", entry
    got = [(r["node"], r["partner"], r["result"]["phase"]) for r in entry["repairs"]]
    assert got == [("n0", "n2", "Failed"), ("n1", "n3", "Passed")]
    assert all(r["result"]["name"] == "link" + REPAIR_SUFFIX for r in entry["repairs"])
    assert servers_created(cluster) == 4  # the two planned links and the two re-pairs
    assert released(cluster)
    # TestCompleted only for the planned units: a re-pair is no result of the run.
    completed = [d.event_key for d in cluster.delivered.sent if d.reason == "TestCompleted"]
    assert sorted(completed) == ["link/n0+n1", "link/n2+n3"], completed


async def test_F11_a_bad_link_is_named_when_both_ends_pass_elsewhere() -> None:
    cluster = Cluster(nodes=4)
    await start(cluster, linkBlame={})
    run = await drive(cluster, lambda a, b: {a, b} != {"n0", "n1"})
    assert only_entry(run)["blame"] == "link"


async def test_F10_a_failed_re_pair_of_a_not_required_pair_does_not_fail_the_run() -> None:
    # The re-pair (n0, n2) Fails; were it required (or counted), the run would be Failed
    # and n2 would have a Failed result.
    cluster = Cluster(nodes=4)
    await start(cluster, required=False, linkBlame={})
    run = await drive(cluster, bad_node("n0"))
    status = run["status"]
    assert only_entry(run)["blame"] == "node/n0"
    assert status["phase"] == "Passed", status
    assert status["failed"] == 1 and status["passed"] == 1
    assert all(not r["name"].endswith(REPAIR_SUFFIX) for r in status["results"])


async def test_F12_a_budget_too_small_for_both_sides_runs_nothing() -> None:
    cluster = Cluster(nodes=4)
    await start(cluster, linkBlame={"maxExtraPairs": 1})
    run = await drive(cluster, bad_node("n0"))
    entry = only_entry(run)
    assert entry["blame"] == "undetermined" and BUDGET in entry["reason"], entry
    assert [r.get("skipped") for r in entry["repairs"]] == [BUDGET, BUDGET]
    assert servers_created(cluster) == 2


async def test_F13_no_partner_on_the_same_topology_value_is_undetermined() -> None:
    cluster = Cluster(nodes=4)
    await start(cluster, linkBlame={"topologyLabel": "leaf"})
    for name, leaf in (("n0", "l1"), ("n1", "l2"), ("n2", "l3"), ("n3", "l2")):
        await cluster.client.patch(NODES, name, {"metadata": {"labels": {"leaf": leaf}}})
    run = await drive(cluster, bad_node("n0"))
    entry = only_entry(run)
    assert entry["blame"] == "undetermined", entry
    from glimmer.controllers.run.repairs import ALONE

    assert [r.get("skipped") for r in entry["repairs"]] == [NO_PARTNER, ALONE]
    assert servers_created(cluster) == 2  # n1 alone could re-pair (with n3): not run


async def test_F12_a_re_pair_that_could_outlast_the_deadline_is_not_run() -> None:
    cluster = Cluster(nodes=4)
    # 5 s window: a re-pair may run 5 + 120 + 300 s, plus 30 s for the server's report.
    await start(cluster, linkBlame={}, deadlineSeconds=400)
    run = await drive(cluster, bad_node("n0"))
    entry = only_entry(run)
    assert entry["blame"] == "undetermined" and DEADLINE in entry["reason"], entry
    assert run["status"]["phase"] == "Failed"
    assert servers_created(cluster) == 2


async def test_F10_a_pair_that_errored_is_not_re_paired() -> None:
    cluster = Cluster(nodes=4)
    await start(cluster, linkBlame={})
    run = await drive(cluster, bad_node("n0"), exit_code=3)
    assert "linkBlame" not in run["status"] or not run["status"]["linkBlame"]
    assert servers_created(cluster) == 2


async def test_F12_a_run_cancelled_while_re_pairs_run_ends_with_the_blame_undetermined() -> None:
    cluster = Cluster(nodes=4)
    await start(cluster, linkBlame={}, cancelPolicy="Immediate")
    ok = bad_node("n0")
    for _ in range(40):  # until the re-pairs' servers are running
        await cluster.reconcile()
        entries = (await cluster.run()).get("status", {}).get("linkBlame") or []
        phases = [(r.get("result") or {}).get("phase") for e in entries for r in e["repairs"]]
        if phases == ["Running", "Running"]:
            break
        await kubelet_round(cluster, ok)
    else:
        raise AssertionError("the re-pairs never started")
    await cluster.client.patch(RUNS, "r1", {"spec": {"cancel": True}}, namespace=NS)
    run = await drive(cluster, ok)
    assert run["status"]["phase"] == "Cancelled"
    entry = only_entry(run)
    assert entry["blame"] == "undetermined" and "unjudged evidence" in entry["reason"], entry
    assert [r["result"]["phase"] for r in entry["repairs"]] == ["Cancelled", "Cancelled"]
    assert all(not r["name"].endswith(REPAIR_SUFFIX) for r in run["status"]["results"])


async def test_F10_a_restarted_manager_adopts_the_re_pairs_it_finds_and_makes_no_twin() -> None:
    cluster = Cluster(nodes=4)
    await start(cluster, linkBlame={})
    ok = bad_node("n0")
    for _ in range(40):  # until the re-pairs' servers exist, then a fresh manager
        await cluster.reconcile()
        entries = (await cluster.run()).get("status", {}).get("linkBlame") or []
        if entries and servers_created(cluster) == 4:
            break
        await kubelet_round(cluster, ok)
    else:
        raise AssertionError("the re-pairs never launched")
    cluster.reconciler = cluster.new_reconciler()
    await kubelet_round(cluster, ok)
    run = await drive(cluster, ok)
    assert only_entry(run)["blame"] == "node/n0"
    creates = [r.name for r in cluster.client.requests if r.verb == "create"
               and r.resource == str(PODS)]  # fmt: skip
    assert len(creates) == len(set(creates)) == 8, creates  # 4 servers, 4 clients, once each
    assert released(cluster)


# --- Group bisection (I44) ---------------------------------------------------------------


async def start_group(cluster: Cluster, **spec: Any) -> None:
    await cluster.setup(tests={})
    test = custom_test("x", scope="Group")
    test["runner"]["image"] = "example.com/ring:1"
    await cluster.client.create(TESTS, {"metadata": {"name": "ring"}, "spec": test}, namespace=NS)
    await cluster.client.create(
        PROFILES, {"metadata": {"name": "blame"}, "spec": {"tests": [{"testRef": "ring"}]}},
        namespace=NS,
    )  # fmt: skip
    await cluster.create_run(profileRef="blame", maxConcurrentNodes=4, **spec)


async def group_round(cluster: Cluster, bad: str) -> None:
    """Rank 0 of each group runs Ready; a group whose every rank exists ends together,
    Failed when ``bad`` is among its nodes."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for pod in cluster.live_pods():
        groups.setdefault(str(pod["spec"].get("subdomain")), []).append(pod)
    for pods in groups.values():
        env = {e["name"]: e.get("value", "") for e in pods[0]["spec"]["containers"][0]["env"]}
        for pod in pods:
            running = (pod.get("status") or {}).get("phase") == "Running"
            if pod["spec"].get("hostname") == "rank-0" and not running:
                name = pod["metadata"]["name"]
                await cluster.kubelet(name, exit_code=None)
                current = await cluster.client.get(PODS, name, namespace=NS)
                status = dict(current["status"], conditions=[{"type": "Ready", "status": "True"}])
                await cluster.client.patch(PODS, name, {"status": status}, namespace=NS,
                                           subresource="status")  # fmt: skip
        if len(pods) == int(env["BURNIN_NRANKS"]):
            good = bad not in {node_of(p) for p in pods}
            for pod in pods:
                await cluster.kubelet(pod["metadata"]["name"], exit_code=0 if good else 1,
                                      log="bw=100\n" if good else "bw=1\n")  # fmt: skip
    cluster.advance(1)


async def drive_group(cluster: Cluster, bad: str) -> dict[str, Any]:
    for _ in range(120):
        await cluster.reconcile()
        run = await cluster.run()
        if (run.get("status") or {}).get("phase") in TERMINAL:
            return run
        await group_round(cluster, bad)
    raise AssertionError("the run never ended")


async def test_group_bisection_names_the_rank_and_its_probes_are_never_results() -> None:
    cluster = Cluster(nodes=4)
    await start_group(cluster, linkBlame={"maxExtraPairs": 4})
    run = await drive_group(cluster, "n2")
    status = run["status"]
    assert status["phase"] == "Failed" and status["failed"] == 1
    assert [r["nodes"] for r in status["results"]] == [["n0", "n1", "n2", "n3"]]
    entry = only_entry(run)
    assert entry["blame"] == "node/n2", entry
    probes = [(r["nodes"], r["result"]["phase"]) for r in entry["repairs"]]
    assert probes == [(["n0", "n1"], "Passed"), (["n2", "n3"], "Failed"),
                      (["n2", "n0"], "Failed"), (["n3", "n0"], "Passed")]  # fmt: skip
    assert released(cluster)


async def test_group_bisection_stops_undetermined_when_the_budget_is_spent() -> None:
    cluster = Cluster(nodes=4)
    await start_group(cluster, linkBlame={"maxExtraPairs": 3})
    run = await drive_group(cluster, "n2")
    entry = only_entry(run)
    assert entry["blame"] == "undetermined" and BUDGET in entry["reason"], entry
    assert [r.get("skipped") for r in entry["repairs"]] == [None, None, None, BUDGET]

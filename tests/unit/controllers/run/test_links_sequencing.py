"""Pair and Group sequencing (F1-F9) on the fake apiserver, with a hand-driven kubelet.

Each test is named after the rule it pins and reads the fake's recorded requests
where the rule is about order (what was created, written or deleted before what)."""

from __future__ import annotations

from typing import Any

import pytest

from glimmer.controllers.kit import names as kit_names
from glimmer.controllers.kit.names import RUNS
from glimmer.controllers.kit.ref import RunRef
from glimmer.controllers.run.services import build_service
from glimmer.engine import NODES, PODS
from glimmer.plan import PinnedPlan, pod_name, service_name
from glimmer.verdict.links import SERVER_REPORT_GRACE_SECONDS
from tests.unit.controllers.run.harness import NS, Cluster, custom_test

GATE = [{"metric": "bw", "comparison": "GreaterThanOrEqual", "value": "10"}]
GROUP_IMAGE = "example.com/ring:1"


def pair_test(**extra: Any) -> dict[str, Any]:
    return custom_test("echo", scope="Pair", **extra)


def group_test(**extra: Any) -> dict[str, Any]:
    spec = custom_test("echo", scope="Group", **extra)
    spec["runner"]["image"] = GROUP_IMAGE
    return spec


async def start(cluster: Cluster, test: dict[str, Any], **spec: Any) -> dict[str, Any]:
    await cluster.setup(tests={"t": test})
    spec.setdefault("maxConcurrentNodes", len(cluster.node_names))
    await cluster.create_run(**spec)
    await cluster.reconcile()
    return await cluster.run()


def pod_by_role(cluster: Cluster, role: str) -> dict[str, Any] | None:
    """The live or terminated pod whose hostname is ``role`` (server, client, rank-i)."""
    for pod in cluster.pods():
        if pod["spec"].get("hostname") == role:
            return pod
    return None


def name_of(cluster: Cluster, role: str) -> str:
    pod = pod_by_role(cluster, role)
    assert pod is not None, (
        f"no {role} pod; pods: {[p['metadata']['name'] for p in cluster.pods()]}"
    )
    return str(pod["metadata"]["name"])


async def running(cluster: Cluster, role: str, *, ready: bool = True) -> None:
    """The pod runs, and is Ready when ``ready`` (the PodReady condition, F1)."""
    name = name_of(cluster, role)
    await cluster.kubelet(name, exit_code=None)
    condition = {"type": "Ready", "status": "True" if ready else "False"}
    pod = await cluster.client.get(PODS, name, namespace=NS)
    status = dict(pod["status"], conditions=[condition])
    await cluster.client.patch(PODS, name, {"status": status}, namespace=NS, subresource="status")


async def ends(cluster: Cluster, role: str, *, exit_code: int, log: str, reason: str = "") -> None:
    await cluster.kubelet(name_of(cluster, role), exit_code=exit_code, log=log, reason=reason)


def env_of(pod: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e.get("value", "") for e in pod["spec"]["containers"][0]["env"]}


def result_of(run: dict[str, Any]) -> dict[str, Any]:
    [result] = run["status"]["results"]
    return dict(result)


def nothing_cordoned(cluster: Cluster) -> bool:
    for node in cluster.client.objects(NODES):
        if node["spec"].get("unschedulable"):
            return False
        if kit_names.CORDON_OWNER in (node["metadata"].get("annotations") or {}):
            return False
    return True


def services(cluster: Cluster) -> list[str]:
    return sorted(s["metadata"]["name"] for s in cluster.client.objects(kit_names.SERVICES))


def index_of(cluster: Cluster, predicate: Any) -> int:
    for i, request in enumerate(cluster.client.requests):
        if predicate(request):
            return i
    raise AssertionError("no such request")


def is_pod_create(role: str) -> Any:
    return lambda r: (
        r.verb == "create"
        and r.resource == str(PODS)
        and ((r.body or {}).get("spec", {}).get("hostname") == role)
    )


def is_status_write(r: Any) -> bool:
    return bool(r.verb == "replace" and r.subresource == "status")


def is_pod_delete(name: str) -> Any:
    return lambda r: r.verb == "delete" and r.resource == str(PODS) and r.name == name


# --- F1: Service, cordons, server, client once Ready ---------------------------------


async def test_F1_pair_service_then_cordons_then_server_and_no_client_yet() -> None:
    cluster = Cluster(nodes=2)
    run = await start(cluster, pair_test())
    [svc] = cluster.client.objects(kit_names.SERVICES)
    assert svc["spec"] == {
        "clusterIP": "None",
        "publishNotReadyAddresses": True,
        "selector": svc["metadata"]["labels"],
    }
    assert "ports" not in svc["spec"]
    assert svc["metadata"]["ownerReferences"][0]["uid"] == run["metadata"]["uid"]
    assert svc["metadata"]["name"] == service_name(
        run_name="r1", run_uid=run["metadata"]["uid"], test_index=0, attempt=1
    )
    service = index_of(
        cluster, lambda r: r.verb == "create" and r.resource == str(kit_names.SERVICES)
    )
    cordons = [
        i
        for i, r in enumerate(cluster.client.requests)
        if r.verb == "patch"
        and r.resource == str(NODES)
        and (r.body or {}).get("spec", {}).get("unschedulable")
    ]
    server = index_of(cluster, is_pod_create("server"))
    status = max(i for i, r in enumerate(cluster.client.requests[:server]) if is_status_write(r))
    assert len(cordons) == 2
    assert service < min(cordons) and max(cordons) < status < server
    assert cluster.client.requests[status].body["status"]["cordonedNodes"] == ["n0", "n1"]
    assert pod_by_role(cluster, "client") is None
    server_pod = pod_by_role(cluster, "server")
    assert server_pod is not None
    assert server_pod["spec"]["nodeSelector"]["kubernetes.io/hostname"] == "n0"
    assert server_pod["spec"]["subdomain"] == svc["metadata"]["name"]
    env = env_of(server_pod)
    assert env["BURNIN_ROLE"] == "server"
    assert env["BURNIN_PEER_HOST"] == f"client.{svc['metadata']['name']}.{NS}.svc"
    assert env["BURNIN_PEER_NODE"] == "n1"


async def test_F1_the_client_is_created_only_once_the_server_is_ready() -> None:
    cluster = Cluster(nodes=2)
    await start(cluster, pair_test())
    await running(cluster, "server", ready=False)
    await cluster.reconcile()
    await cluster.reconcile()
    assert pod_by_role(cluster, "client") is None  # running is not Ready
    await running(cluster, "server", ready=True)
    await cluster.reconcile()
    client = pod_by_role(cluster, "client")
    assert client is not None
    assert client["spec"]["nodeSelector"]["kubernetes.io/hostname"] == "n1"
    env = env_of(client)
    assert env["BURNIN_ROLE"] == "client"
    assert env["BURNIN_PEER_HOST"].startswith("server.bp-r1-t0-a1-")
    assert env["BURNIN_PEER_NODE"] == "n0"


async def test_E18_suspended_pair_never_creates_the_client() -> None:
    cluster = Cluster(nodes=2)
    await start(cluster, pair_test())
    await cluster.client.patch(RUNS, "r1", {"spec": {"suspend": True}}, namespace=NS)
    await running(cluster, "server")
    await cluster.reconcile()
    assert pod_by_role(cluster, "client") is None


# --- F2/F3/F9: settlement -------------------------------------------------------------


async def test_F3_F9_a_pair_passes_with_one_result_naming_both_nodes_recorded_on_the_server() -> (
    None
):
    cluster = Cluster(nodes=2)
    await start(cluster, pair_test(thresholds=GATE))
    await running(cluster, "server")
    await cluster.reconcile()
    await running(cluster, "client")
    await ends(cluster, "server", exit_code=0, log="serverSide=1\nSERVER_PASS\n")
    await ends(cluster, "client", exit_code=0, log="bw=12\nCLIENT_PASS\n")
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Passed", run["status"]
    result = result_of(run)
    assert result["nodes"] == ["n0", "n1"]
    assert result["metrics"] == {"bw": "12", "serverSide": "1"}
    [attempt] = result["attempts"]
    assert attempt["node"] == "n0"
    assert attempt["podName"] == name_of(cluster, "server")
    assert "n0" in result["message"] and "n1" in result["message"]
    assert nothing_cordoned(cluster)
    assert services(cluster) == []


async def test_F3_a_low_client_measurement_fails_the_pair() -> None:
    cluster = Cluster(nodes=2)
    await start(cluster, pair_test(thresholds=GATE))
    await running(cluster, "server")
    await cluster.reconcile()
    await ends(cluster, "server", exit_code=0, log="bw=50\n")
    await ends(cluster, "client", exit_code=0, log="bw=3\n")
    await cluster.reconcile()
    run = await cluster.run()
    assert result_of(run)["phase"] == "Failed"  # the client wins the shared key
    assert result_of(run)["metrics"]["bw"] == "3"
    assert nothing_cordoned(cluster)


async def test_F2_the_client_settles_a_live_server_did_not_report_deleted_after_the_write() -> None:
    cluster = Cluster(nodes=2)
    # A second test keeps the run going: what is unloaded here is the attempt's doing,
    # not the terminal unload's.
    await cluster.setup(tests={"t": pair_test(thresholds=GATE), "later": pair_test()})
    await cluster.create_run(maxConcurrentNodes=2)
    await cluster.reconcile()
    first_service = services(cluster)
    await running(cluster, "server")
    await cluster.reconcile()
    await ends(cluster, "client", exit_code=0, log="bw=12\n")
    server = name_of(cluster, "server")
    await cluster.reconcile()  # within the server's grace: not settled yet
    cluster.advance(SERVER_REPORT_GRACE_SECONDS)
    before = len(cluster.client.requests)
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Running"
    result = next(r for r in run["status"]["results"] if r["name"] == "t")
    assert result["phase"] == "Passed", result
    assert "did not report" in result["message"]
    assert result["provenance"] == "unknown"  # a silent server is never vouched for
    tail = cluster.client.requests[before:]
    write = next(
        i for i, r in enumerate(tail) if is_status_write(r) and r.body["status"].get("results")
    )
    kill = next(i for i, r in enumerate(tail) if is_pod_delete(server)(r))
    assert write < kill
    assert not any(r.verb == "log" and r.name == server for r in tail)
    assert first_service[0] not in services(cluster)  # the settled attempt's Service went


async def test_F2_a_client_missing_from_a_lagging_cache_is_confirmed_before_an_early_settle() -> (
    None
):
    cluster = Cluster(nodes=2)
    await start(cluster, pair_test())
    await running(cluster, "server")
    await cluster.reconcile()
    client = name_of(cluster, "client")
    await running(cluster, "client")
    await ends(cluster, "server", exit_code=0, log="bw=1\n")
    run = await cluster.run()
    plan = PinnedPlan.from_annotation(run["metadata"]["annotations"][kit_names.PLAN_ANNOTATION])
    sweeper = cluster.reconciler.sweeper
    work = await sweeper.new_pass(run, plan)
    work.pods.pop(client)  # the cache has not seen the client yet
    await sweeper.sweep(work, launch=True)
    result = work.result("t", ("n0", "n1"))
    assert result is not None and result["phase"] == "Running", result  # not settled early
    assert client in work.pods


async def test_F2_a_crashed_client_is_error_never_failed() -> None:
    cluster = Cluster(nodes=2)
    await start(cluster, pair_test(thresholds=GATE))
    await running(cluster, "server")
    await cluster.reconcile()
    await ends(cluster, "server", exit_code=0, log="bw=50\n")
    await ends(cluster, "client", exit_code=139, log="Segmentation fault\n")
    await cluster.reconcile()
    run = await cluster.run()
    assert result_of(run)["phase"] == "Error"
    assert run["status"]["phase"] == "Error"
    assert nothing_cordoned(cluster)


async def test_F2_a_server_pass_before_the_client_exists_is_error() -> None:
    cluster = Cluster(nodes=2)
    await start(cluster, pair_test())
    await running(cluster, "server", ready=False)
    await cluster.reconcile()
    await ends(cluster, "server", exit_code=0, log="SERVER_DONE\n")
    await cluster.reconcile()
    run = await cluster.run()
    assert result_of(run)["phase"] == "Error", result_of(run)
    assert pod_by_role(cluster, "client") is None
    assert nothing_cordoned(cluster)


async def test_F2_a_server_skip_before_the_client_exists_skips_the_pair() -> None:
    cluster = Cluster(nodes=2)
    await start(cluster, pair_test())
    await ends(cluster, "server", exit_code=2, log="TCP_SKIP: no second NIC\n")
    await cluster.reconcile()
    run = await cluster.run()
    assert result_of(run)["phase"] == "Skipped", result_of(run)
    assert pod_by_role(cluster, "client") is None


async def test_F2_E16_a_server_overdue_before_ready_is_error_and_killed_after_the_write() -> None:
    cluster = Cluster(nodes=2)
    await start(cluster, pair_test())
    await running(cluster, "server", ready=False)
    await cluster.reconcile()
    server = name_of(cluster, "server")
    cluster.advance(5 + 120 + 300 + 1)
    before = len(cluster.client.requests)
    await cluster.reconcile()
    run = await cluster.run()
    result = result_of(run)
    assert result["phase"] == "Error"
    assert "never finished" in result["message"]
    tail = cluster.client.requests[before:]
    write = next(i for i, r in enumerate(tail) if is_status_write(r))
    assert write < next(i for i, r in enumerate(tail) if is_pod_delete(server)(r))
    assert pod_by_role(cluster, "client") is None


async def test_F2_a_client_overdue_kills_both() -> None:
    cluster = Cluster(nodes=2)
    await cluster.setup(tests={"t": pair_test(), "later": pair_test()})  # the run goes on
    await cluster.create_run(maxConcurrentNodes=2)
    await cluster.reconcile()
    await running(cluster, "server")
    await cluster.reconcile()
    await running(cluster, "client")
    pair = [name_of(cluster, "server"), name_of(cluster, "client")]
    cluster.advance(5 + 120 + 300 + 1)
    before = len(cluster.client.requests)
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Running"
    result = next(r for r in run["status"]["results"] if r["name"] == "t")
    assert result["phase"] == "Error"
    tail = cluster.client.requests[before:]
    write = next(i for i, r in enumerate(tail) if is_status_write(r))
    for name in pair:
        assert write < next(i for i, r in enumerate(tail) if is_pod_delete(name)(r)), name


async def test_E14_an_unresolvable_server_image_is_error_with_nothing_cordoned() -> None:
    cluster = Cluster(nodes=2)
    spec = custom_test("echo", scope="Pair")
    del spec["runner"]["image"]
    spec["kind"] = "custom"  # no default image: every node unresolvable
    await cluster.setup(tests={"t": spec})
    await cluster.create_run(maxConcurrentNodes=2)
    await cluster.reconcile()
    run = await cluster.run()
    # Server unresolvable too: Error, nothing cordoned (E14).
    assert result_of(run)["phase"] == "Error"
    assert pod_by_role(cluster, "server") is None
    assert nothing_cordoned(cluster)


async def test_F2_quirk_client_image_unresolved_leaves_the_running_server() -> None:
    cluster = Cluster(nodes=2)
    spec = custom_test("echo", scope="Pair")
    spec["runner"] = {
        "command": ["sh", "-c", "echo"],
        "imagesByVendor": [{"vendor": "nvidia", "image": "example.com/tcp:1"}],
    }
    spec["kind"] = "custom"  # no default image: the amd client's node has none
    await cluster.setup(tests={"t": spec})
    for node, vendor in (("n0", "nvidia"), ("n1", "amd")):  # the client's has no image
        await cluster.client.create(
            kit_names.FINGERPRINTS,
            {"metadata": {"name": node}, "spec": {"nodeName": node},
             "status": {"digest": f"glimmer-v1:{node}", "gpus": [{"vendor": vendor}]}},
            namespace="glimmer-system",
        )  # fmt: skip
    await cluster.create_run(maxConcurrentNodes=2, retryOnErrorLimit=1)
    await cluster.reconcile()
    await running(cluster, "server")
    server = name_of(cluster, "server")
    await cluster.reconcile()
    result = result_of(await cluster.run())
    assert result["errorRetries"] == 1
    assert result["attempts"][0]["phase"] == "Error"
    assert "left to run" in result["attempts"][0]["message"]
    assert not any(is_pod_delete(server)(r) for r in cluster.client.requests)
    servers = [p["metadata"]["name"] for p in cluster.pods() if p["spec"]["hostname"] == "server"]
    assert len(servers) == 2 and server in servers  # the retry's server starts beside it
    assert pod_by_role(cluster, "client") is None


async def test_I17_an_evicted_server_makes_the_pair_error() -> None:
    cluster = Cluster(nodes=2)
    await start(cluster, pair_test(thresholds=GATE))
    await running(cluster, "server")
    await cluster.reconcile()
    await ends(cluster, "client", exit_code=0, log="bw=12\n")
    server = name_of(cluster, "server")
    await cluster.kubelet(server, exit_code=0, log="bw=40\n")
    await cluster.client.patch(
        PODS, server,
        {"status": {"phase": "Failed", "reason": "Evicted", "message": "node pressure"}},
        namespace=NS, subresource="status",
    )  # fmt: skip
    await cluster.reconcile()
    result = result_of(await cluster.run())
    assert result["phase"] == "Error", result
    assert "Evicted" in result["message"]


async def test_D3_a_pair_retry_uses_new_names_and_the_old_service_goes() -> None:
    cluster = Cluster(nodes=2)
    await start(cluster, pair_test(), retryOnErrorLimit=1)
    first = services(cluster)
    await ends(cluster, "server", exit_code=3, log="SERVER_ERROR: no NIC\n")
    await cluster.reconcile()
    run = await cluster.run()
    result = result_of(run)
    assert result["phase"] == "Running" and result["errorRetries"] == 1
    now = services(cluster)
    assert len(now) == 1 and now != first  # attempt 2's Service only
    servers = [p for p in cluster.pods() if p["spec"].get("hostname") == "server"]
    assert len(servers) == 2 and len({p["metadata"]["name"] for p in servers}) == 2


# --- E13/I18: adoption, foreign pods -------------------------------------------------


async def test_E13_a_restarted_manager_adopts_the_pair_and_creates_no_twin() -> None:
    cluster = Cluster(nodes=2)
    await start(cluster, pair_test(thresholds=GATE))
    await running(cluster, "server")
    await cluster.reconcile()
    cluster.reconciler = cluster.new_reconciler()
    await cluster.reconcile()
    await cluster.reconcile()
    assert len(cluster.pods()) == 2
    creates = [r for r in cluster.client.requests if r.verb == "create" and r.resource == str(PODS)]
    assert len(creates) == 2
    await ends(cluster, "server", exit_code=0, log="bw=11\n")
    await ends(cluster, "client", exit_code=0, log="bw=11\n")
    await cluster.reconcile()
    assert (await cluster.run())["status"]["phase"] == "Passed"


async def test_I18_a_foreign_client_under_our_name_is_error_and_never_read() -> None:
    cluster = Cluster(nodes=2)
    run = await start(cluster, pair_test(thresholds=GATE))
    await running(cluster, "server")
    server = await cluster.client.get(PODS, name_of(cluster, "server"), namespace=NS)
    # Someone pre-creates the client under its deterministic name, on the server's node.
    fake = {
        "metadata": {
            "name": _client_name(run),
            "labels": server["metadata"]["labels"],
            "ownerReferences": server["metadata"]["ownerReferences"],
        },
        "spec": dict(server["spec"], hostname="client"),
    }
    await cluster.client.create(PODS, fake, namespace=NS)
    await cluster.kubelet(_client_name(run), exit_code=0, log="bw=99\n")
    await cluster.reconcile()
    result = result_of(await cluster.run())
    assert result["phase"] == "Error", result
    assert "foreign pod" in result["message"]
    assert not any(r.verb == "log" and r.name == _client_name(run) for r in cluster.client.requests)


def _client_name(run: dict[str, Any]) -> str:
    return pod_name(
        run_name="r1", run_uid=run["metadata"]["uid"], test_index=0, node="n1", attempt=1,
        role="client",
    )  # fmt: skip


@pytest.mark.parametrize("who", ["another-selector", "no-owner"])
async def test_F1_a_foreign_service_under_our_name_is_error_and_left_alone(who: str) -> None:
    cluster = Cluster(nodes=2)
    await cluster.setup(tests={"t": pair_test()})
    run = await cluster.create_run(maxConcurrentNodes=2, suspend=True)
    await cluster.reconcile()
    run = await cluster.run()
    name = service_name(run_name="r1", run_uid=run["metadata"]["uid"], test_index=0, attempt=1)
    ours = build_service(run=RunRef.of(run), name=name, test="t", attempt=1)
    if who == "another-selector":
        ours["spec"]["selector"] = {"app": "evil"}
    else:
        del ours["metadata"]["ownerReferences"]
    await cluster.client.create(kit_names.SERVICES, ours, namespace=NS)
    await cluster.client.patch(RUNS, "r1", {"spec": {"suspend": False}}, namespace=NS)
    await cluster.reconcile()
    result = result_of(await cluster.run())
    assert result["phase"] == "Error"
    assert "cannot be used" in result["message"]
    if who == "no-owner":
        assert services(cluster) == [name]  # never deleted: it is not the run's
    # (One that names this run as its controller goes with the run, as a foreign pod
    # that claims it does; it was never used.)
    assert pod_by_role(cluster, "server") is None
    assert nothing_cordoned(cluster)


# --- E18: cancel ----------------------------------------------------------------------


async def test_E18_graceful_cancel_does_not_wait_for_a_ready_server_without_a_client() -> None:
    cluster = Cluster(nodes=2)
    await start(cluster, pair_test())
    await cluster.client.patch(RUNS, "r1", {"spec": {"suspend": True}}, namespace=NS)
    await running(cluster, "server")
    await cluster.reconcile()
    await cluster.client.patch(RUNS, "r1", {"spec": {"cancel": True}}, namespace=NS)
    await cluster.reconcile()
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Cancelled"
    assert cluster.live_pods() == [] or all(
        p["metadata"].get("deletionTimestamp") for p in cluster.live_pods()
    )
    assert nothing_cordoned(cluster)
    assert services(cluster) == []


# --- F4/F5/F6/F9: Group ---------------------------------------------------------------


async def test_F4_group_rank_0_first_then_every_worker_together_with_rank_env() -> None:
    cluster = Cluster(nodes=3)
    await start(cluster, group_test())
    assert [p["spec"]["hostname"] for p in cluster.pods()] == ["rank-0"]
    await running(cluster, "rank-0", ready=False)
    await cluster.reconcile()
    assert len(cluster.pods()) == 1
    await running(cluster, "rank-0")
    await cluster.reconcile()
    pods = {p["spec"]["hostname"]: p for p in cluster.pods()}
    assert sorted(pods) == ["rank-0", "rank-1", "rank-2"]
    for rank, node in enumerate(cluster.node_names):
        pod = pods[f"rank-{rank}"]
        env = env_of(pod)
        assert "BURNIN_ROLE" not in env
        assert env["BURNIN_RANK"] == str(rank)
        assert env["BURNIN_NRANKS"] == "3"
        assert env["BURNIN_ROOT_HOST"].startswith("rank-0.bp-r1-t0-a1-")
        assert env["BURNIN_ROOT_NODE"] == "n0"
        assert pod["spec"]["nodeSelector"]["kubernetes.io/hostname"] == node
        assert pod["spec"]["activeDeadlineSeconds"] == 5 + 120 + 300
        assert pod["metadata"]["labels"][kit_names.RANK_LABEL] == str(rank)


async def group_running(cluster: Cluster) -> None:
    await running(cluster, "rank-0")
    await cluster.reconcile()
    for rank in (1, 2):
        await running(cluster, f"rank-{rank}")


async def test_F5_F6_a_group_waits_for_every_rank_then_passes_over_three_nodes() -> None:
    cluster = Cluster(nodes=3)
    await start(cluster, group_test(thresholds=GATE))
    await group_running(cluster)
    await ends(cluster, "rank-0", exit_code=0, log="bw=20\n")
    await ends(cluster, "rank-1", exit_code=0, log="bw=20\n")
    await cluster.reconcile()
    assert result_of(await cluster.run())["phase"] == "Running"  # rank 2 still runs
    await ends(cluster, "rank-2", exit_code=0, log="bw=20\n")
    await cluster.reconcile()
    run = await cluster.run()
    result = result_of(run)
    assert result["phase"] == "Passed", result
    assert result["nodes"] == ["n0", "n1", "n2"]
    assert result["attempts"][0]["podName"] == name_of(cluster, "rank-0")
    assert nothing_cordoned(cluster)
    assert services(cluster) == []


async def test_F6_a_group_fails_naming_the_failing_rank() -> None:
    cluster = Cluster(nodes=3)
    await start(cluster, group_test(thresholds=GATE))
    await group_running(cluster)
    await ends(cluster, "rank-0", exit_code=0, log="bw=20\n")
    await ends(cluster, "rank-1", exit_code=1, log="RING_FAIL: miscompare\n")
    await ends(cluster, "rank-2", exit_code=0, log="bw=20\n")
    await cluster.reconcile()
    result = result_of(await cluster.run())
    assert result["phase"] == "Failed"
    assert "rank 1 (n1)" in result["message"]


async def test_F6_a_crashed_rank_makes_the_group_error_naming_it() -> None:
    cluster = Cluster(nodes=3)
    await start(cluster, group_test(thresholds=GATE))
    await group_running(cluster)
    await ends(cluster, "rank-0", exit_code=0, log="bw=20\n")
    await ends(cluster, "rank-1", exit_code=0, log="bw=20\n")
    await ends(cluster, "rank-2", exit_code=137, log="", reason="OOMKilled")
    await cluster.reconcile()
    result = result_of(await cluster.run())
    assert result["phase"] == "Error"
    assert "rank 2 (n2)" in result["message"]


async def test_F7_one_ranks_na_makes_the_key_unmeasurable() -> None:
    cluster = Cluster(nodes=3)
    await start(cluster, group_test(thresholds=GATE))
    await group_running(cluster)
    await ends(cluster, "rank-0", exit_code=0, log="bw=20\n")
    await ends(cluster, "rank-1", exit_code=0, log="bw=n/a\n")
    await ends(cluster, "rank-2", exit_code=0, log="bw=20\n")
    await cluster.reconcile()
    result = result_of(await cluster.run())
    assert "bw" in result.get("unmeasurable", [])
    assert "bw" not in (result.get("metrics") or {})
    assert result["phase"] != "Passed"


async def test_F5_F9_rank_0_ending_before_workers_exist_settles_without_artifacts() -> None:
    cluster = Cluster(nodes=3)
    await start(cluster, group_test())
    artifact = (
        "-----BEGIN BURNIN ARTIFACT ring.json application/json-----\n{}\n"
        "-----END BURNIN ARTIFACT-----\nRING_FAIL: no peers\n"
    )
    await ends(cluster, "rank-0", exit_code=1, log=artifact)
    await cluster.reconcile()
    result = result_of(await cluster.run())
    assert result["phase"] == "Failed"
    assert not result.get("artifacts")
    assert len(cluster.pods()) == 1


async def test_F9_pair_artifacts_are_kept_from_both_sides() -> None:
    cluster = Cluster(nodes=2)
    await start(cluster, pair_test())
    await running(cluster, "server")
    await cluster.reconcile()

    def fence(name: str) -> str:
        return (
            f"-----BEGIN BURNIN ARTIFACT {name} application/json-----\n{{}}\n"
            "-----END BURNIN ARTIFACT-----\n"
        )

    await ends(cluster, "server", exit_code=0, log=fence("s.json") + "ok=1\n")
    await ends(cluster, "client", exit_code=0, log=fence("c.json") + "ok=1\n")
    await cluster.reconcile()
    result = result_of(await cluster.run())
    names = sorted(a["name"] for a in result["artifacts"])
    assert names == ["c.json", "s.json"]
    keys = {a["key"] for a in result["artifacts"]}
    assert any(name_of(cluster, "server") in k for k in keys)
    assert any(name_of(cluster, "client") in k for k in keys)


async def test_F5_an_overdue_group_names_the_rank_that_never_started_and_kills_all() -> None:
    cluster = Cluster(nodes=3)
    await start(cluster, group_test())
    await running(cluster, "rank-0")
    await cluster.reconcile()
    await running(cluster, "rank-1")  # rank 2 stays Pending
    await ends(cluster, "rank-0", exit_code=0, log="bw=1\n")
    cluster.advance(5 + 120 + 300 + 1)
    await cluster.reconcile()
    result = result_of(await cluster.run())
    assert result["phase"] == "Error"
    assert "rank 2 (n2) never started" in result["message"], result["message"]
    assert "rank 1 (n1) never finished" in result["message"]
    assert all(
        p["status"].get("phase") in ("Succeeded", "Failed") for p in cluster.live_pods()
    ) or (cluster.live_pods() == [])
    assert not result.get("artifacts")
    assert nothing_cordoned(cluster)


async def test_F9_the_checkpoint_reads_the_client_not_the_server() -> None:
    cluster = Cluster(nodes=2)
    await start(cluster, pair_test(checkpointIntervalSeconds=10))
    await running(cluster, "server")
    await cluster.reconcile()
    await running(cluster, "client")
    cluster.client.set_pod_log(name_of(cluster, "server"), namespace=NS, text="bw=1\n")
    cluster.client.set_pod_log(name_of(cluster, "client"), namespace=NS, text="bw=7\n")
    cluster.advance(11)
    await cluster.reconcile()
    result = result_of(await cluster.run())
    assert result["metrics"] == {"bw": "7"}
    assert result["phase"] == "Running"

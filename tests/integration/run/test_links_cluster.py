"""Pair and Group runs end to end: real apiserver, simulated kubelets, real bytes between pods.

The Pair runner is ``tcp-baseline`` (real TCP traffic from the client pod to the server
pod, the server reached by its Service name), the Group runner ``ring-allreduce`` (a
verified ring all-reduce over TCP between every rank); the failure paths use small
shell runners so that each one is exactly the fault it names."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from glimmer.contract.envelope import decode, delivery_id
from glimmer.controllers.kit import names
from glimmer.controllers.kit.names import PROFILES, RUNS, TESTS
from glimmer.controllers.run.links import Links
from glimmer.engine import CONFIGMAPS, NODES, PODS, ApiServerClient
from glimmer.sinks.fanout import SINKS
from tests.integration.run.conftest import Operator, apply_profile, create_run, terminal_run

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(300)]

TCP_IMAGE = "ghcr.io/glimmer-ai/glimmer-runner-tcp-baseline:v0.1.0"
RING_IMAGE = "ghcr.io/glimmer-ai/glimmer-runner-ring-allreduce:v0.1.0"
SHELL_IMAGE = "example.com/custom:1"
#: This checkout's runners for the simulated kubelet's processes (the kubelet gives a pod
#: only the pod's environment, so the interpreter's own install decides what
#: ``runners`` means; a worktree beside another checkout must name its own).
REPO_ROOT = Path(__file__).resolve().parents[3]
RUNNER_IMAGES = (
    r"ghcr\.io/(?:glimmer-ai/glimmer-runner|baldwinspc/glimmer-burnin)-(?P<kind>[a-z0-9-]+):[^@]*"
    "={python} -c \"import sys,runpy; sys.path.insert(0,'" + str(REPO_ROOT) + "'); "
    "runpy.run_module('runners.{kind_module}',None,'__main__',True)\""
)


def link_nodes(sim_nodes: Any, count: int) -> Any:
    """Simulated nodes that run this checkout's runner images."""
    return sim_nodes(count=count, extra_args=[f"--image-map={RUNNER_IMAGES}"])


def tcp_pair(**extra: Any) -> dict[str, Any]:
    return {
        "kind": "tcp-baseline",
        "scope": "Pair",
        "durationSeconds": 30,
        "runner": {
            "image": TCP_IMAGE,
            "env": [{"name": "BURNIN_TCP_BASELINE_SECONDS", "value": "1"}],
            "readinessProbe": {"tcpSocket": {"port": 18520}, "periodSeconds": 1},
        },
        **extra,
    }


def ring_group(**extra: Any) -> dict[str, Any]:
    return {
        "kind": "custom",
        "scope": "Group",
        "durationSeconds": 30,
        "runner": {
            "image": RING_IMAGE,
            "env": [
                {"name": "BURNIN_RING_ALLREDUCE_ELEMENTS", "value": "4096"},
                {"name": "BURNIN_RING_ALLREDUCE_ITERATIONS", "value": "2"},
            ],
            "readinessProbe": {"tcpSocket": {"port": 18530}, "periodSeconds": 1},
        },
        **extra,
    }


def shell(scope: str, script: str, **extra: Any) -> dict[str, Any]:
    runner: dict[str, Any] = {"image": SHELL_IMAGE, "command": ["sh", "-c", script]}
    runner.update(extra.pop("runner", {}))
    return {"kind": "custom", "scope": scope, "durationSeconds": 20, "runner": runner, **extra}


@contextlib.asynccontextmanager
async def pod_audit(
    kube: ApiServerClient, namespace: str
) -> AsyncIterator[list[tuple[str, str, str, bool]]]:
    """Every pod watch event in ``namespace`` as ``(type, name, hostname, ready)``, from
    a watch opened before the run exists (a watch that died fails the test)."""
    seen: list[tuple[str, str, str, bool]] = []
    version = str((await kube.list(PODS, namespace=namespace))["metadata"]["resourceVersion"])

    async def watch() -> None:
        stream = kube.watch(PODS, namespace=namespace, resource_version=version,
                            timeout_seconds=300)  # fmt: skip
        async with contextlib.aclosing(stream) as events:
            async for event in events:
                pod = event.object
                conditions = (pod.get("status") or {}).get("conditions") or []
                ready = any(
                    c.get("type") == "Ready" and c.get("status") == "True" for c in conditions
                )
                host = (pod.get("spec") or {}).get("hostname", "")
                seen.append((event.type, pod["metadata"]["name"], host, ready))

    task = asyncio.create_task(watch())
    try:
        yield seen
    finally:
        assert not task.done(), task.exception() if task.done() else None
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def assert_nothing_left(kube: ApiServerClient, namespace: str, nodes: list[str]) -> None:
    for name in nodes:
        node = await kube.get(NODES, name)
        assert not node["spec"].get("unschedulable"), name
        assert names.CORDON_OWNER not in (node["metadata"].get("annotations") or {}), name
    for _ in range(50):  # the Service delete follows the verdict write
        if not (await kube.list(names.SERVICES, namespace=namespace))["items"]:
            return
        await asyncio.sleep(0.2)
    raise AssertionError("a rendezvous Service was left behind")


def only_result(run: dict[str, Any]) -> dict[str, Any]:
    [result] = run["status"]["results"]
    return dict(result)


async def test_F1_F3_a_pair_passes_over_real_tcp_naming_both_nodes_client_after_server_ready(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = link_nodes(sim_nodes, 2)
    gate = [{"metric": "tcpThroughputGbps", "comparison": "GreaterThanOrEqual", "value": "0.001"}]
    await apply_profile(kube, namespace, {"tcp": tcp_pair(thresholds=gate)})
    async with pod_audit(kube, namespace) as seen:
        await create_run(kube, namespace, "pair", nodes.names)
        run = await terminal_run(kube, namespace, "pair", timeout=120)
    result = only_result(run)
    assert result["phase"] == "Passed", result["message"]
    assert run["status"]["phase"] == "Passed"
    assert result["nodes"] == nodes.names
    assert float(result["metrics"]["tcpThroughputGbps"]) > 0
    assert nodes.names[0] in result["message"] and nodes.names[1] in result["message"]
    [attempt] = result["attempts"]
    assert attempt["node"] == nodes.names[0] and "-server-" in attempt["podName"]
    # F1 audited through a watch: the client is ADDED only after a Ready server was seen.
    added = [i for i, (kind, _, host, _) in enumerate(seen) if kind == "ADDED" and host == "client"]
    ready = [i for i, (_, _, host, ok) in enumerate(seen) if host == "server" and ok]
    assert len(added) == 1, seen
    assert ready and min(ready) < added[0], seen
    assert len({name for _, name, _, _ in seen}) == 2  # no duplicate pods
    await assert_nothing_left(kube, namespace, nodes.names)


async def test_F1_the_terminal_unload_sweeps_a_service_the_settling_pass_left_behind(
    operator: Operator,
    kube: ApiServerClient,
    namespace: str,
    sim_nodes: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A manager killed between the verdict write and the settling pass's Service delete
    # (chaos CI, seed 3905459115): the next manager only converges the terminal run, so
    # the unload itself must delete the run's Services, or one is left for ever.
    async def lost(self: Any, work: Any, name: str) -> None:
        return None

    monkeypatch.setattr(Links, "delete_service", lost)
    nodes = link_nodes(sim_nodes, 2)
    gate = [{"metric": "tcpThroughputGbps", "comparison": "GreaterThanOrEqual", "value": "0.001"}]
    await apply_profile(kube, namespace, {"tcp": tcp_pair(thresholds=gate)})
    await create_run(kube, namespace, "lost-delete", nodes.names)
    run = await terminal_run(kube, namespace, "lost-delete", timeout=120)
    assert only_result(run)["phase"] == "Passed", only_result(run)
    await assert_nothing_left(kube, namespace, nodes.names)


async def test_F3_a_pair_fails_on_a_low_client_measurement(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = link_nodes(sim_nodes, 2)
    gate = [{"metric": "tcpThroughputGbps", "comparison": "GreaterThanOrEqual", "value": "1e9"}]
    await apply_profile(kube, namespace, {"tcp": tcp_pair(thresholds=gate)})
    await create_run(kube, namespace, "slow", nodes.names)
    run = await terminal_run(kube, namespace, "slow", timeout=120)
    result = only_result(run)
    assert result["phase"] == "Failed", result
    assert [v["metric"] for v in result["violations"]] == ["tcpThroughputGbps"]
    await assert_nothing_left(kube, namespace, nodes.names)


async def test_F3_a_crashed_client_is_error_never_failed(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = link_nodes(sim_nodes, 2)
    # $$$$ is the shell's $$: the kubelet turns $$ into $ in command and args.
    script = 'if [ "$BURNIN_ROLE" = server ]; then sleep 15; echo bw=9; else kill -SEGV $$$$; fi'
    gate = [{"metric": "bw", "comparison": "GreaterThanOrEqual", "value": "1"}]
    await apply_profile(kube, namespace, {"crash": shell("Pair", script, thresholds=gate)})
    await create_run(kube, namespace, "crash", nodes.names)
    run = await terminal_run(kube, namespace, "crash", timeout=120)
    result = only_result(run)
    assert result["phase"] == "Error", result
    assert run["status"]["phase"] == "Error"
    assert "client" in result["message"] and "server" in result["message"]
    await assert_nothing_left(kube, namespace, nodes.names)


async def test_F2_a_server_skip_before_the_client_exists_skips_the_pair(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = link_nodes(sim_nodes, 2)
    never_ready = {"readinessProbe": {"exec": {"command": ["false"]}, "periodSeconds": 1}}
    script = "echo TCP_SKIP: no test interface; exit 2"
    await apply_profile(kube, namespace, {"skip": shell("Pair", script, runner=never_ready)})
    await create_run(kube, namespace, "skip", nodes.names)
    run = await terminal_run(kube, namespace, "skip", timeout=120)
    assert only_result(run)["phase"] == "Skipped", only_result(run)
    pods = (await kube.list(PODS, namespace=namespace))["items"]
    assert [p["spec"]["hostname"] for p in pods] == ["server"]
    await assert_nothing_left(kube, namespace, nodes.names)


async def test_F1_F2_a_server_that_never_becomes_ready_is_error(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = link_nodes(sim_nodes, 2)
    never_ready = {"readinessProbe": {"exec": {"command": ["false"]}, "periodSeconds": 1}}
    await apply_profile(
        kube, namespace, {"deaf": shell("Pair", "sleep 4; echo listened", runner=never_ready)}
    )
    await create_run(kube, namespace, "deaf", nodes.names)
    run = await terminal_run(kube, namespace, "deaf", timeout=120)
    result = only_result(run)
    assert result["phase"] == "Error", result  # a server Pass with no client: no traffic
    pods = (await kube.list(PODS, namespace=namespace))["items"]
    assert [p["spec"]["hostname"] for p in pods] == ["server"]
    await assert_nothing_left(kube, namespace, nodes.names)


async def test_F4_F6_a_group_of_three_passes_with_one_result_over_three_nodes(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = link_nodes(sim_nodes, 3)
    gate = [{"metric": "miscompares", "comparison": "Equal", "value": "0"}]
    await apply_profile(kube, namespace, {"ring": ring_group(thresholds=gate)})
    async with pod_audit(kube, namespace) as seen:
        await create_run(kube, namespace, "ring", nodes.names)
        run = await terminal_run(kube, namespace, "ring", timeout=150)
    result = only_result(run)
    assert result["phase"] == "Passed", result
    assert result["nodes"] == nodes.names
    assert result["metrics"]["miscompares"] == "0"
    assert float(result["metrics"]["busBandwidthGBs"]) > 0
    root_ready = [i for i, (_, _, host, ok) in enumerate(seen) if host == "rank-0" and ok]
    for rank in (1, 2):
        [added] = [
            i
            for i, (kind, _, host, _) in enumerate(seen)
            if kind == "ADDED" and host == f"rank-{rank}"
        ]
        assert root_ready and min(root_ready) < added
    await assert_nothing_left(kube, namespace, nodes.names)


GROUP_SCRIPT = (
    'if [ "$BURNIN_RANK" = 0 ]; then sleep 8; else sleep 2; fi; '
    'case "$BURNIN_RANK" in {cases} esac; echo bw=20'
)


async def group_run(
    kube: ApiServerClient, namespace: str, nodes: list[str], cases: str, name: str
) -> dict[str, Any]:
    gate = [{"metric": "bw", "comparison": "GreaterThanOrEqual", "value": "10"}]
    script = GROUP_SCRIPT.replace("{cases}", cases)
    await apply_profile(kube, namespace, {"g": shell("Group", script, thresholds=gate)})
    await create_run(kube, namespace, name, nodes)
    run = await terminal_run(kube, namespace, name, timeout=120)
    await assert_nothing_left(kube, namespace, nodes)
    return only_result(run)


async def test_F6_a_group_fails_naming_the_failing_rank(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = link_nodes(sim_nodes, 3)
    result = await group_run(
        kube, namespace, nodes.names, "1) echo RING_FAIL: miscompare; exit 1;;", "gfail"
    )
    assert result["phase"] == "Failed", result
    assert f"rank 1 ({nodes.names[1]})" in result["message"]


async def test_F6_a_group_with_a_crashed_rank_is_error_naming_it(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = link_nodes(sim_nodes, 3)
    # $$$$ is the shell's $$: the kubelet turns $$ into $ in command and args.
    result = await group_run(kube, namespace, nodes.names, "2) kill -KILL $$$$;;", "gcrash")
    assert result["phase"] == "Error", result
    assert f"rank 2 ({nodes.names[2]})" in result["message"]


async def test_F7_one_ranks_na_makes_the_key_unmeasurable(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = link_nodes(sim_nodes, 3)
    result = await group_run(kube, namespace, nodes.names, "1) echo bw=n/a; exit 0;;", "gna")
    assert "bw" in result["unmeasurable"], result
    assert "bw" not in (result.get("metrics") or {})
    assert result["phase"] != "Passed"


DEV_SAMPLES = REPO_ROOT / "manifests" / "samples" / "dev-links"
DEV_RUNS = sorted((REPO_ROOT / "manifests" / "samples" / "runs").glob("dev-links-*.yaml"))


async def test_the_dev_links_samples_run_to_verdict_on_simulated_nodes(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    """manifests/samples/dev-links, then its runs (runs/dev-links-*.yaml), as
    ``glimmer dev up --sim-nodes 5`` runs them (sim-i is the i-th simulated node here,
    and the test's namespace stands for glimmer-runs)."""
    nodes = link_nodes(sim_nodes, 5)
    rename = {f"sim-{i}": name for i, name in enumerate(nodes.names)}
    kinds = {"BurnInTest": TESTS, "BurnInProfile": PROFILES, "BurnInSink": SINKS}
    listed = yaml.safe_load((DEV_SAMPLES / "kustomization.yaml").read_text())["resources"]
    for file in listed:
        for doc in yaml.safe_load_all((DEV_SAMPLES / file).read_text()):
            await kube.create(kinds[doc["kind"]], doc, namespace=namespace)
    runs: list[str] = []
    for path in DEV_RUNS:
        (doc,) = yaml.safe_load_all(path.read_text())
        assert doc["kind"] == "BurnInRun", path.name
        doc["metadata"]["namespace"] = namespace
        target = doc["spec"]["target"]
        target["nodeNames"] = [rename[n] for n in target["nodeNames"]]
        runs.append(doc["metadata"]["name"])
        await kube.create(RUNS, doc, namespace=namespace)
    assert sorted(runs) == ["group-ring", "pair-tcp"]
    uids = {}
    for name in runs:
        run = await terminal_run(kube, namespace, name, timeout=180)
        assert run["status"]["phase"] == "Passed", run["status"]
        uids[name] = run["metadata"]["uid"]
    await assert_nothing_left(kube, namespace, nodes.names)
    # The samples' sinks deliver (L4): each run's terminal envelope is in the
    # ConfigMap sink, keyed by its deliveryId, and says Passed.
    stored = await kube.get(CONFIGMAPS, "burnin-verdicts", namespace=namespace)
    assert stored is not None, "the ConfigMap sink delivered nothing"
    envelopes = [decode(v.encode()) for v in stored.get("data", {}).values()]
    for name, uid in uids.items():
        key = delivery_id(uid, "RunPhaseChanged", "Passed")
        assert key in stored["data"], (name, sorted(stored["data"]))
        [terminal] = [
            e
            for e in envelopes
            if e.run.uid == uid and e.reason == "RunPhaseChanged" and e.phase == "Passed"
        ]
        assert [r.phase for r in terminal.results] == ["Passed"]

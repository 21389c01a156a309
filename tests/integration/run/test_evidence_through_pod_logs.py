"""The evidence rules (I10) end to end: the manager in-process, the real apiserver and the
simulated kubelet, runner output read through ``pods/log`` as in production.

I11 the whole retained log decides (a tail cut at 1 MiB would keep an old value);
I12 lines before an orphan artifact END are never metrics;
I13 an over-long line is Error, never a pass on the value before it;
I14 a simulated node makes the result sim whatever the log still holds;
I19 invalid UTF-8 is data, not a crash loop;
I17 a pod the kubelet stopped is Error even when its runner exited 0.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

from glimmer.controllers.kit import names
from glimmer.engine import CONFIGMAPS, NODES, PODS, ApiServerClient
from glimmer.sim.config import EVICT_ANNOTATION
from tests.integration.run.conftest import (
    Operator,
    apply_profile,
    create_run,
    custom,
    terminal_run,
    wait_for,
)

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(240)]

GATE = [{"metric": "bw", "comparison": "GreaterThanOrEqual", "value": "10"}]
#: 2000 lines of 700 bytes (1.4 MiB) printed by the runner itself.
CHATTER = "python -c \"import sys; sys.stdout.write(('.' * 699 + chr(10)) * 2000)\""


BURIED = f"echo provenance=sim; {CHATTER}; echo provenance=silicon; echo bw=12"


def only_result(run: dict[str, Any]) -> dict[str, Any]:
    [result] = run["status"]["results"]
    return dict(result)


async def assert_released(kube: ApiServerClient, node: str) -> None:
    current = await kube.get(NODES, node)
    assert not current["spec"].get("unschedulable")
    assert names.CORDON_OWNER not in (current["metadata"].get("annotations") or {})


async def test_I11_the_decisive_metric_after_a_mib_of_chatter_decides(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = sim_nodes(count=1)
    runner = f"echo bw=12; {CHATTER}; echo bw=3"
    await apply_profile(kube, namespace, {"t": custom(runner, thresholds=GATE)})
    await create_run(kube, namespace, "chatty", nodes.names)
    result = only_result(await terminal_run(kube, namespace, "chatty"))
    # The last 2000 lines are > 1 MiB: a tailLines+limitBytes read kept bw=12 and passed.
    assert result["phase"] == "Failed", result
    assert result["metrics"]["bw"] == "3"
    assert result["violations"][0]["metric"] == "bw"


async def test_I14_a_buried_sim_declaration_and_a_silent_runner_are_never_silicon(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    with_gpu = sim_nodes(count=1)
    without_gpu = sim_nodes(count=1, gpus_per_node=0)
    await apply_profile(
        kube,
        namespace,
        {
            # Declared sim first, then megabytes, then a claim of silicon.
            "buried": custom(BURIED, thresholds=GATE),
            # No declaration at all.
            "silent": custom("echo bw=12", thresholds=GATE),
        },
    )
    await create_run(kube, namespace, "prov", [with_gpu.names[0], without_gpu.names[0]])
    run = await terminal_run(kube, namespace, "prov", timeout=150)
    status = run["status"]
    assert status["phase"] == "Passed", status["results"]
    assert len(status["results"]) == 4
    for result in status["results"]:
        assert result["provenance"] == "sim", result
        assert all(a["provenance"] == "sim" for a in result["attempts"])
    assert status["provenance"] == "sim" and status["certifiesSilicon"] is False


async def test_I19_invalid_utf8_output_settles_the_run_and_releases_the_node(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = sim_nodes(count=1)
    runner = (
        r"printf '\377\376 not utf-8 \303\n'; "
        r"printf -- '-----BEGIN BURNIN ARTIFACT raw.bin application/octet-stream-----\n'; "
        r"printf '\211PNG\377\000\001\n'; "
        r"printf -- '-----END BURNIN ARTIFACT-----\n'; "
        r"printf 'bw=12\nRESULT: done \351\n'"
    )
    await apply_profile(kube, namespace, {"t": custom(runner, thresholds=GATE)})
    await create_run(kube, namespace, "bytes", nodes.names)
    run = await terminal_run(kube, namespace, "bytes")
    result = only_result(run)
    assert run["status"]["phase"] == "Passed", result
    assert result["metrics"]["bw"] == "12"
    await assert_released(kube, nodes.names[0])
    store = await kube.get(CONFIGMAPS, "bytes-artifacts", namespace=namespace)
    [(key, value)] = store["binaryData"].items()
    assert key.endswith(".raw.bin")
    assert base64.b64decode(value) == b"\x89PNG\xff\x00\x01\n"


#: Traps SIGTERM and exits 0 with a passing metric: only the kubelet's account tells.
TRAPS_TERM = "trap 'echo bw=12; exit 0' TERM; echo bw=12; sleep 100 & wait"


async def running_pod(kube: ApiServerClient, namespace: str) -> str:
    async def check() -> str | None:
        for pod in (await kube.list(PODS, namespace=namespace))["items"]:
            state = ((pod.get("status") or {}).get("containerStatuses") or [{}])[0].get("state")
            if (state or {}).get("running"):
                return str(pod["metadata"]["name"])
        return None

    name: str = await wait_for(check, what="a running runner pod")
    return name


async def test_I17_an_evicted_pod_whose_runner_exited_0_is_error(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = sim_nodes(count=1)
    await apply_profile(kube, namespace, {"t": custom(TRAPS_TERM, thresholds=GATE)})
    await create_run(kube, namespace, "evicted", nodes.names)
    pod = await running_pod(kube, namespace)
    await kube.patch(
        PODS, pod,
        {"metadata": {"annotations": {EVICT_ANNOTATION: "The node was low on resource: memory."}}},
        namespace=namespace,
    )  # fmt: skip
    run = await terminal_run(kube, namespace, "evicted")
    result = only_result(run)
    assert result["phase"] == "Error", result
    assert 'reason "Evicted"' in result["message"]
    assert "exit 0" in result["message"]
    assert result["attempts"][-1]["exitCode"] == 0
    await assert_released(kube, nodes.names[0])


async def test_I17_a_node_shutdown_whose_runner_exited_0_is_error(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = sim_nodes(count=1)
    # No gates: with the log gone with the node, only the kubelet's account can say Error.
    await apply_profile(kube, namespace, {"t": custom(TRAPS_TERM)})
    await create_run(kube, namespace, "shutdown", nodes.names)
    await running_pod(kube, namespace)
    nodes.stop()  # graceful node shutdown: the kubelet stops every pod, then the node goes
    result = only_result(await terminal_run(kube, namespace, "shutdown"))
    assert result["phase"] == "Error", result
    assert 'reason "Terminated"' in result["message"], result


#: A line of 1 MiB + 16 bytes (over the contract's line limit) carrying a newer value.
OVERLONG = "python -c \"import sys; sys.stdout.write('bw=3' + ' ' * (1 << 20) + chr(10))\""


async def test_I13_an_overlong_line_through_pods_log_is_error_never_the_older_value(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = sim_nodes(count=1)
    await apply_profile(kube, namespace, {"t": custom(f"echo bw=12; {OVERLONG}", thresholds=GATE)})
    await create_run(kube, namespace, "long", nodes.names)
    run = await terminal_run(kube, namespace, "long")
    result = only_result(run)
    # The older bw=12 would pass the gate; the unreadable line may have superseded it.
    assert result["phase"] == "Error", result
    assert "output line exceeds the readable limit" in result["message"]
    assert run["status"]["phase"] == "Error"
    await assert_released(kube, nodes.names[0])


async def test_I12_lines_before_an_orphan_end_through_pods_log_are_never_metrics(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = sim_nodes(count=1)
    # The stream begins inside a payload: bw=12 before the END is payload, not a metric.
    runner = "echo bw=12; echo -----END BURNIN ARTIFACT-----; echo done"
    await apply_profile(kube, namespace, {"t": custom(runner, thresholds=GATE)})
    await create_run(kube, namespace, "orphan", nodes.names)
    result = only_result(await terminal_run(kube, namespace, "orphan"))
    assert result["phase"] == "Error", result  # nothing measured after the END (A10)
    assert "bw" not in (result.get("metrics") or {})
    dropped = [a for a in result.get("artifacts") or [] if a.get("dropped")]
    assert dropped and "no open fence" in dropped[0]["dropped"]
    await assert_released(kube, nodes.names[0])

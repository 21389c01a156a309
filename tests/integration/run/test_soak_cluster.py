"""Segmented soaks in the cluster (G1-G6): real apiserver, simulated kubelets, the
embedded operator, custom shell runners that print one window's metrics per segment.

The CRD schema holds ``segmentSeconds`` to at least 300 (api §2), so these soaks are
planned as 300 s windows (``BURNIN_DURATION_SECONDS`` says 300, the pod deadline is
sized to it) while the test runners print their window and exit at once: the
operator's segment rules do not depend on how long a window really took.
``BURNIN_ATTEMPT`` tells a runner which attempt (hence which window) it is.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml

from glimmer.controllers.kit.names import PROFILES, RUNS, TESTS
from glimmer.engine import PODS, ApiError, ApiServerClient, is_not_found
from glimmer.plan import pod_name
from tests.integration.run.conftest import (
    Operator,
    apply_profile,
    create_run,
    custom,
    terminal_run,
    wait_for,
)
from tests.integration.run.test_links_cluster import link_nodes, shell

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(240)]

#: One window: xidEvents (Sum), gpuTempC (Max), sustainedClockPct (Min), elapsedS (Sum),
#: and the window length the pod was given (unregistered: Last).
WINDOW = (
    "echo xidEvents=0; echo gpuTempC=$((60 + BURNIN_ATTEMPT)); "
    "echo sustainedClockPct=$((100 - BURNIN_ATTEMPT)); echo elapsedS=300; "
    "echo windowS=$BURNIN_DURATION_SECONDS; echo CUSTOM_PASS: window $BURNIN_ATTEMPT"
)

GATES = [
    {"metric": "xidEvents", "comparison": "LessThanOrEqual", "value": "0"},
    {"metric": "gpuTempC", "comparison": "LessThanOrEqual", "value": "90"},
    # 1800 s over the soak: no single 300 s window could pass this gate, the fold does.
    {"metric": "elapsedS", "comparison": "GreaterThanOrEqual", "value": "1800"},
]


def soak_test(script: str, *, segments: int = 6, **extra: Any) -> dict[str, Any]:
    soak = {"segmentSeconds": 300, **extra.pop("soak", {})}
    return custom(script, durationSeconds=300 * segments, soak=soak, **extra)


async def test_G1_G3_a_six_segment_soak_passes_on_the_aggregate(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = sim_nodes(count=1)
    await apply_profile(kube, namespace, {"soak": soak_test(WINDOW, thresholds=GATES)})
    await create_run(kube, namespace, "six", nodes.names)
    run = await terminal_run(kube, namespace, "six", timeout=180)
    [result] = run["status"]["results"]
    assert result["phase"] == "Passed", result
    assert (result["segmentsRequired"], result["segmentsCompleted"], result["segmentSeconds"]) == (
        6,
        6,
        300,
    )
    assert result["aggregatedMetrics"] == {
        "elapsedS": "1800",
        "gpuTempC": "66",
        "sustainedClockPct": "94",
        "windowS": "300",
        "xidEvents": "0",
    }
    assert result["metrics"] == result["aggregatedMetrics"]
    assert result["message"].startswith("6 segment(s) of 300s completed")
    assert result["repeatsCompleted"] == result["repeatsRequired"] == 1
    assert [a["trigger"] for a in result["attempts"]] == ["Initial"] + ["Segment"] * 5
    assert [a["metrics"]["gpuTempC"] for a in result["attempts"]] == [
        str(60 + i) for i in range(1, 7)
    ]
    assert run["status"]["phase"] == "Passed"


async def test_G2_a_fail_in_segment_4_settles_failed_with_that_windows_metrics(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = sim_nodes(count=1)
    script = (
        'if [ "$BURNIN_ATTEMPT" = 4 ]; then echo gpuTempC=99; echo elapsedS=120; '
        "echo CUSTOM_FAIL: overheated; exit 1; fi; " + WINDOW
    )
    await apply_profile(kube, namespace, {"soak": soak_test(script, thresholds=GATES)})
    await create_run(kube, namespace, "fails", nodes.names)
    run = await terminal_run(kube, namespace, "fails", timeout=180)
    [result] = run["status"]["results"]
    assert result["phase"] == "Failed", result
    assert result["metrics"] == {"elapsedS": "120", "gpuTempC": "99"}
    assert result["segmentsCompleted"] == 3
    assert result["aggregatedMetrics"]["elapsedS"] == "900"  # the three clean windows
    assert "segment 4/6" in result["message"] and "overheated" in result["message"]
    assert len(result["attempts"]) == 4
    assert "violations" not in result  # an exit-1 Fail points at no gate (C3)


async def test_G2_an_evicted_segment_retries_the_same_index_and_contributes_nothing(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = sim_nodes(count=1)
    # Attempt 2 (segment 2's first try) prints a window, then hangs until it is deleted;
    # a checkpoint reads what it printed (evidence, never folded).
    script = (
        'if [ "$BURNIN_ATTEMPT" = 2 ]; then echo elapsedS=300; echo xidEvents=5; '
        "sleep 120; fi; " + WINDOW
    )
    await apply_profile(
        kube,
        namespace,
        {"soak": soak_test(script, segments=3, checkpointIntervalSeconds=1)},
    )
    created = await create_run(kube, namespace, "evict", nodes.names, retryOnErrorLimit=1)
    victim = pod_name(
        run_name="evict",
        run_uid=created["metadata"]["uid"],
        test_index=0,
        node=nodes.names[0],
        attempt=2,
    )

    async def running() -> bool:
        try:
            pod = await kube.get(PODS, victim, namespace=namespace)
        except ApiError as err:
            if is_not_found(err):
                return False
            raise
        return bool(pod["status"].get("phase") == "Running")

    await wait_for(running, timeout=90, what=f"pod {victim} running")
    await asyncio.sleep(2.5)  # one checkpoint reads its window (H1)
    await kube.delete(PODS, victim, namespace=namespace)
    run = await terminal_run(kube, namespace, "evict", timeout=180)
    [result] = run["status"]["results"]
    assert result["phase"] == "Passed", result
    assert result["segmentsCompleted"] == 3
    assert result["aggregatedMetrics"]["elapsedS"] == "900"
    assert result["aggregatedMetrics"]["xidEvents"] == "0"
    attempts = result["attempts"]
    assert [(a["trigger"], a["phase"]) for a in attempts] == [
        ("Initial", "Passed"),
        ("Segment", "Error"),
        ("ErrorRetry", "Passed"),
        ("Segment", "Passed"),
    ]
    assert attempts[1]["podName"] == victim
    assert result["errorRetries"] == 1


async def test_G4_abort_early_stops_on_a_provable_sum_violation_never_on_a_retractable_one(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = sim_nodes(count=1)
    doomed = 'if [ "$BURNIN_ATTEMPT" = 2 ]; then echo xidEvents=1; else echo xidEvents=0; fi'
    # gpuTempC is a Max: a floor on it is retractable (a hotter window may come), so a
    # cool first window must not abort the soak that later reaches 75.
    warming = 'if [ "$BURNIN_ATTEMPT" = 1 ]; then echo gpuTempC=60; else echo gpuTempC=75; fi'
    await apply_profile(
        kube,
        namespace,
        {
            "doomed": soak_test(
                doomed,
                soak={"abortEarly": True},
                thresholds=[{"metric": "xidEvents", "comparison": "LessThanOrEqual", "value": "0"}],
            ),
            "warming": soak_test(
                warming,
                segments=3,
                soak={"abortEarly": True},
                thresholds=[
                    {"metric": "gpuTempC", "comparison": "GreaterThanOrEqual", "value": "70"}
                ],
            ),
        },
    )
    await create_run(kube, namespace, "abort", nodes.names)
    run = await terminal_run(kube, namespace, "abort", timeout=180)
    results = {r["name"]: r for r in run["status"]["results"]}
    stopped = results["doomed"]
    assert stopped["phase"] == "Failed", stopped
    assert stopped["segmentsCompleted"] == 2 and len(stopped["attempts"]) == 2
    assert [v["metric"] for v in stopped["violations"]] == ["xidEvents"]
    assert "abortEarly" in stopped["message"]
    assert stopped["metrics"]["xidEvents"] == "1"
    carried_on = results["warming"]
    assert carried_on["phase"] == "Passed", carried_on
    assert carried_on["segmentsCompleted"] == 3
    assert carried_on["aggregatedMetrics"]["gpuTempC"] == "75"


async def test_G2_F_a_pair_soak_folds_each_combined_segment(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = link_nodes(sim_nodes, 2)
    # The server waits for its client; each side prints its window.
    script = (
        'if [ "$BURNIN_ROLE" = server ]; then sleep 3; fi; echo elapsedS=300; '
        "echo linkErrorEvents=0; echo CUSTOM_PASS: $BURNIN_ROLE window $BURNIN_ATTEMPT"
    )
    gates = [
        {"metric": "elapsedS", "comparison": "GreaterThanOrEqual", "value": "900"},
        {"metric": "linkErrorEvents", "comparison": "LessThanOrEqual", "value": "0"},
    ]
    spec = shell("Pair", script, thresholds=gates, durationSeconds=900,
                 soak={"segmentSeconds": 300})  # fmt: skip
    await apply_profile(kube, namespace, {"pair-soak": spec})
    await create_run(kube, namespace, "pairsoak", nodes.names)
    run = await terminal_run(kube, namespace, "pairsoak", timeout=180)
    [result] = run["status"]["results"]
    assert result["phase"] == "Passed", result
    assert result["nodes"] == nodes.names
    assert result["segmentsCompleted"] == 3
    assert result["aggregatedMetrics"]["elapsedS"] == "900"
    assert [a["trigger"] for a in result["attempts"]] == ["Initial", "Segment", "Segment"]


async def test_the_soak_samples_are_accepted_by_the_apiserver(
    kube: ApiServerClient, namespace: str
) -> None:
    samples = Path(__file__).resolve().parents[3] / "manifests" / "samples"
    resources = {"BurnInTest": TESTS, "BurnInProfile": PROFILES, "BurnInRun": RUNS}
    run = samples / "runs" / "long-real-load-thermal-week-soak-7d.yaml"
    for path in [*sorted((samples / "soak").glob("soak-*.yaml")), run]:
        for document in yaml.safe_load_all(path.read_text()):
            # The test's namespace stands for glimmer-runs, which the run file names.
            document["metadata"]["namespace"] = namespace
            created = await kube.create(resources[document["kind"]], document, namespace=namespace)
            assert created["metadata"]["name"] == "thermal-week"

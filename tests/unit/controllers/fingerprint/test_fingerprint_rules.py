"""NodeFingerprint rules K1-K5, E21 inside the pass, and verdicts that expire."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import attrs
import pytest

from glimmer.api import format_time
from glimmer.controllers.fingerprint import (
    SCHEME,
    FingerprintOptions,
    FingerprintPendingError,
    FingerprintReconciler,
    VerdictMetrics,
    digest,
    observe,
    vendor_of,
)
from glimmer.controllers.fingerprint.observe import is_salient
from glimmer.controllers.fingerprint.setup import node_keys
from glimmer.controllers.fingerprint.verdict import PLAN_ANNOTATION
from glimmer.controllers.kit.names import FINGERPRINTS, RUNS, VERDICT_LABEL
from glimmer.controllers.kit.reaper import StampReaper
from glimmer.engine import (
    EVENTS,
    NODES,
    ApiError,
    FakeClient,
    InformerEvent,
    InformerFactory,
    Readers,
)
from glimmer.plan import PinnedPlan, PlannedTest
from glimmer.plan.images import resolve_image

OPS = "glimmer-system"
T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)

NVIDIA = {
    "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
    "nvidia.com/gpu.count": "8",
    "nvidia.com/gpu.memory": "81559",
    "nvidia.com/cuda.driver.major": "550",
    "nvidia.com/cuda.driver.minor": "54",
    "nvidia.com/cuda.driver.rev": "15",
    "kubernetes.io/arch": "amd64",
}


def node(name: str = "n1", labels: dict[str, str] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": dict(NVIDIA if labels is None else labels)},
        "status": {"nodeInfo": {"osImage": "Ubuntu 22.04", "kernelVersion": "6.5.0"}},
        **extra,
    }


class Clock:
    def __init__(self) -> None:
        self.at = T0

    def __call__(self) -> datetime:
        return self.at


def reconciler(
    fake: FakeClient, clock: Clock, *, metrics: VerdictMetrics | None = None, **options: Any
) -> FingerprintReconciler:
    readers = Readers.over(fake, InformerFactory(fake))
    return FingerprintReconciler(
        client=fake,
        readers=readers,
        options=FingerprintOptions(operator_namespace=OPS, **options),
        reaper=StampReaper(client=fake, readers=readers),
        metrics=metrics,
        now=clock,
    )


async def fingerprint(fake: FakeClient, name: str = "n1") -> dict[str, Any]:
    return await fake.get(FINGERPRINTS, name, namespace=OPS)


def condition(fp: dict[str, Any], type_: str) -> dict[str, Any]:
    return next(c for c in fp["status"]["conditions"] if c["type"] == type_)


async def relabel(fake: FakeClient, name: str, labels: dict[str, str | None]) -> None:
    await fake.patch(NODES, name, {"metadata": {"labels": labels}})


def pinned_plan(targets: tuple[str, ...], *tests: tuple[str, str]) -> str:
    """A pinned plan annotation: each (name, kind) a required Node test over ``targets``."""
    planned = tuple(
        PlannedTest(name=name, required=True, spec={"kind": kind, "scope": "Node"})
        for name, kind in tests
    )
    return PinnedPlan(targets=targets, tests=planned).to_annotation()


async def passed_run(
    fake: FakeClient, *, started: datetime, finished: datetime, provenance: str = "silicon",
    phase: str = "Passed", name: str = "acceptance",
) -> None:  # fmt: skip
    await fake.create(
        RUNS,
        {
            "metadata": {
                "name": name,
                "namespace": "lab",
                "annotations": {PLAN_ANNOTATION: pinned_plan(("n1",), ("burn", "gpu-burn"))},
            },
            "spec": {"profileRef": "p"},
            "status": {
                "phase": phase,
                "startedAt": format_time(started),
                "finishedAt": format_time(finished),
                "results": [
                    {
                        "name": "burn",
                        "kind": "gpu-burn",
                        "phase": phase,
                        "nodes": ["n1"],
                        "startedAt": format_time(started),
                        "provenance": provenance,
                    },
                ],
            },
        },
        namespace="lab",
    )


# --- K2 / K3 / K4 (pure) ----------------------------------------------------------------


@pytest.mark.parametrize(
    "key",
    [VERDICT_LABEL, "burnin.glimmer.ai/gpu.count", "x.burnin.glimmer.ai/gpu.product",
     "example.com/burnin-state", "example.com/gpu-burnin", "example.com/gpu.burnin"],
)  # fmt: skip
def test_K2_the_operators_own_labels_are_never_salient(key: str) -> None:
    assert not is_salient(key)


def test_K2_hardware_labels_are_salient_and_the_rest_are_not() -> None:
    assert is_salient("nvidia.com/gpu.product")
    assert is_salient("node.kubernetes.io/instance-type")
    assert is_salient("feature.node.kubernetes.io/kernel-version.full")
    assert not is_salient("topology.kubernetes.io/zone")
    assert not is_salient("kubernetes.io/hostname")


def test_K3_gpus_from_labels_with_count_memory_and_driver() -> None:
    obs = observe(node())
    assert len(obs.gpus) == 8
    gpu = obs.gpus[3]
    assert (gpu.index, gpu.vendor, gpu.model) == (3, "nvidia", "NVIDIA-H100-80GB-HBM3")
    assert gpu.memory_bytes == 81559 * 1024 * 1024
    assert gpu.driver_version == "550.54.15"


def test_K3_amd_vendor_comes_from_the_label_domain() -> None:
    obs = observe(node(labels={"amd.com/gpu.product": "MI300X", "amd.com/gpu.count": "8",
                               "amd.com/gpu.vram": "192Gi"}))  # fmt: skip
    assert {g.vendor for g in obs.gpus} == {"amd"}
    assert obs.gpus[0].memory_bytes == 192 * 1024**3


def test_K3_unattributed_labels_fill_the_one_vendor_group() -> None:
    labels = {"nvidia.com/gpu.product": "A100", "glimmer.ai/gpu-arch": "ampere"}
    (gpu,) = observe(node(labels=labels)).gpus
    assert (gpu.vendor, gpu.arch) == ("nvidia", "ampere")


def test_K3_gpus_fall_back_to_allocatable_with_index_and_vendor_only() -> None:
    obs = observe(node(labels={}, status={"allocatable": {"gpu.intel.com/i915": "2", "cpu": "64"}}))
    assert [(g.index, g.vendor, g.model) for g in obs.gpus] == [(0, "intel", ""), (1, "intel", "")]


def test_K3_nics_from_labels_sorted_by_device() -> None:
    labels = {
        "net.example.com/nic.mlx5_1.speed-mbps": "400000",
        "net.example.com/nic.mlx5_0.linklayer": "InfiniBand",
        "net.example.com/nic.mlx5_0.mtu": "4096",
    }
    nics = observe(node(labels=labels)).nics
    assert [(n.name, n.link_layer, n.mtu, n.speed_mbps) for n in nics] == [
        ("mlx5_0", "InfiniBand", 4096, None),
        ("mlx5_1", "", None, 400000),
    ]


def test_K4_digest_has_our_scheme_prefix_and_ignores_label_order() -> None:
    one = digest(observe(node()))
    other = digest(observe(node(labels=dict(reversed(list(NVIDIA.items()))))))
    assert one == other
    assert one.startswith(f"{SCHEME}:")
    assert not one.startswith("v1:")  # K4: not the upstream scheme
    assert digest(observe(node(labels={**NVIDIA, VERDICT_LABEL: "Passed"}))) == one


# --- K1 / K5 through the reconciler -----------------------------------------------------


async def test_K1_creates_one_fingerprint_per_node_and_captures_a_baseline() -> None:
    fake, clock = FakeClient(), Clock()
    await fake.create(NODES, node("n1"))
    result = await reconciler(fake, clock).reconcile("n1")
    fp = await fingerprint(fake)
    assert fp["spec"] == {"nodeName": "n1"}
    assert fp["metadata"]["labels"]["burnin.glimmer.ai/node"] == "n1"
    assert "ownerReferences" not in fp["metadata"]  # api §7: not deleted with the node
    assert fp["status"]["digest"] == digest(observe(node("n1")))
    assert condition(fp, "Drifted")["reason"] == "BaselineCaptured"
    assert result.requeue_after is not None


async def test_K1_a_fingerprint_naming_another_node_is_left_alone() -> None:
    fake, clock = FakeClient(), Clock()
    await fake.create(NODES, node("n1"))
    await fake.create(
        FINGERPRINTS, {"metadata": {"name": "n1"}, "spec": {"nodeName": "n2"}}, namespace=OPS
    )
    await reconciler(fake, clock).reconcile("n1")
    assert "status" not in await fingerprint(fake)


async def test_K5_a_gpu_label_change_sets_sticky_drift_and_an_event() -> None:
    fake, clock = FakeClient(), Clock()
    await fake.create(NODES, node("n1"))
    rec = reconciler(fake, clock)
    await rec.reconcile("n1")
    await passed_run(fake, started=T0 + timedelta(minutes=1), finished=T0 + timedelta(minutes=30))
    clock.at = T0 + timedelta(hours=1)
    await relabel(fake, "n1", {"nvidia.com/gpu.count": "7"})
    await rec.reconcile("n1")
    drifted = condition(await fingerprint(fake), "Drifted")
    assert (drifted["status"], drifted["reason"]) == ("True", "DigestChanged")
    assert "gpus" in drifted["message"] and "nvidia.com/gpu.count 8 -> 7" in drifted["message"]
    (event,) = fake.objects(EVENTS)
    assert (event["reason"], event["type"]) == ("HardwareDrift", "Warning")
    clock.at = T0 + timedelta(hours=2)
    await rec.reconcile("n1")  # stable now: the condition stays True (sticky)
    fp = await fingerprint(fake)
    assert condition(fp, "Drifted")["status"] == "True"
    assert fp["status"]["capturedAt"] == format_time(T0 + timedelta(hours=1))
    assert len(fake.objects(EVENTS)) == 1


async def test_K7_the_first_capture_of_a_new_node_is_its_baseline_without_a_warning() -> None:
    fake, clock = FakeClient(), Clock()
    await fake.create(NODES, node("n1"))
    await reconciler(fake, clock).reconcile("n1")
    drifted = condition(await fingerprint(fake), "Drifted")
    assert (drifted["status"], drifted["reason"]) == ("False", "BaselineCaptured")
    assert fake.objects(EVENTS) == []


async def test_K7_a_new_nodes_identity_settling_before_any_run_moves_the_baseline() -> None:
    """The kubelet reports nodeInfo after registering and feature discovery labels the
    node later: before anything measured the node, that is the baseline still forming."""
    fake, clock = FakeClient(), Clock()
    bare = node("n1", labels={"kubernetes.io/arch": "amd64"})
    bare["status"] = {}
    await fake.create(NODES, bare)
    rec = reconciler(fake, clock)
    await rec.reconcile("n1")
    clock.at = T0 + timedelta(minutes=3)
    settled = node("n1")
    current = await fake.get(NODES, "n1")
    current["metadata"]["labels"] = settled["metadata"]["labels"]
    current = await fake.replace(NODES, current)
    current["status"] = settled["status"]
    await fake.replace(NODES, current, subresource="status")
    await rec.reconcile("n1")
    fp = await fingerprint(fake)
    drifted = condition(fp, "Drifted")
    assert (drifted["status"], drifted["reason"]) == ("False", "BaselineCaptured")
    assert "nvidia.com/gpu.count" in drifted["message"]
    assert fp["status"]["digest"] == digest(observe(settled))
    assert fp["status"]["capturedAt"] == format_time(T0 + timedelta(minutes=3))
    assert fake.objects(EVENTS) == []
    # Once a run has measured the node, the next change is drift, with its Warning.
    await passed_run(fake, started=T0 + timedelta(minutes=4), finished=T0 + timedelta(hours=1))
    clock.at = T0 + timedelta(hours=2)
    await relabel(fake, "n1", {"nvidia.com/gpu.count": "7"})
    await rec.reconcile("n1")
    drifted = condition(await fingerprint(fake), "Drifted")
    assert (drifted["status"], drifted["reason"]) == ("True", "DigestChanged")
    (event,) = fake.objects(EVENTS)
    assert (event["reason"], event["type"]) == ("HardwareDrift", "Warning")


async def test_K5_an_upstream_scheme_digest_is_re_baselined_silently() -> None:
    fake, clock = FakeClient(), Clock()
    await fake.create(NODES, node("n1"))
    await fake.create(
        FINGERPRINTS,
        {
            "metadata": {"name": "n1"},
            "spec": {"nodeName": "n1"},
            "status": {"digest": "v1:0123", "capturedAt": format_time(T0)},
        },
        namespace=OPS,
    )
    await reconciler(fake, clock).reconcile("n1")
    drifted = condition(await fingerprint(fake), "Drifted")
    assert (drifted["status"], drifted["reason"]) == ("False", "DigestSchemeChanged")
    assert fake.objects(EVENTS) == []


async def test_K5_the_operators_verdict_label_never_causes_drift() -> None:
    fake, clock = FakeClient(), Clock()
    await fake.create(NODES, node("n1"))
    rec = reconciler(fake, clock)
    await rec.reconcile("n1")
    labels = (await fake.get(NODES, "n1"))["metadata"]["labels"]
    assert labels[VERDICT_LABEL] == "Missing"
    await relabel(fake, "n1", {VERDICT_LABEL: "Passed", "example.com/burnin-note": "x"})
    await rec.reconcile("n1")
    assert condition(await fingerprint(fake), "Drifted")["reason"] == "DigestStable"


def test_K1_heartbeats_enqueue_nothing_and_hardware_changes_do() -> None:
    old = node("n1", status={"conditions": [{"type": "Ready", "lastHeartbeatTime": "a"}]})
    beat = node("n1", status={"conditions": [{"type": "Ready", "lastHeartbeatTime": "b"}]})
    old["status"]["nodeInfo"] = beat["status"]["nodeInfo"] = {"kernelVersion": "6.5"}
    assert node_keys(InformerEvent("update", beat, old)) == []
    relabelled = node("n1", labels={**NVIDIA, "nvidia.com/gpu.count": "4"})
    assert node_keys(InformerEvent("update", relabelled, node("n1"))) == ["n1"]
    stamped = node("n1")
    stamped["metadata"]["annotations"] = {"burnin.glimmer.ai/cordon-owner": "a/b/c"}
    assert node_keys(InformerEvent("update", stamped, node("n1"))) == ["n1"]


# --- E21 inside the pass ----------------------------------------------------------------


async def test_E21_the_fingerprint_pass_reaps_a_stamp_naming_a_vanished_run() -> None:
    fake, clock = FakeClient(), Clock()
    stamped = node("n1", spec={"unschedulable": True})
    stamped["metadata"]["annotations"] = {
        "burnin.glimmer.ai/cordon-owner": "lab/gone/uid-1",
        "burnin.glimmer.ai/prior-unschedulable": "false",
    }
    await fake.create(NODES, stamped)
    await reconciler(fake, clock).reconcile("n1")
    after = await fake.get(NODES, "n1")
    assert not after["spec"].get("unschedulable")
    assert "burnin.glimmer.ai/cordon-owner" not in (after["metadata"].get("annotations") or {})


# --- verdicts that expire ---------------------------------------------------------------


async def test_verdict_a_gpu_change_expires_the_verdict_label_condition_and_metric() -> None:
    fake, clock = FakeClient(), Clock()
    metrics = VerdictMetrics()
    await fake.create(NODES, node("n1"))
    rec = reconciler(fake, clock, metrics=metrics)
    await rec.reconcile("n1")
    await passed_run(fake, started=T0 + timedelta(minutes=1), finished=T0 + timedelta(hours=1))
    clock.at = T0 + timedelta(hours=1, minutes=1)
    await rec.reconcile("n1")
    fp = await fingerprint(fake)
    current = condition(fp, "VerdictCurrent")
    assert (current["status"], current["reason"]) == ("True", "DigestMatches")
    assert fp["status"]["verdict"]["digest"] == fp["status"]["digest"]
    assert (await fake.get(NODES, "n1"))["metadata"]["labels"][VERDICT_LABEL] == "Passed"
    assert metrics.state("n1") == "Passed"

    clock.at = T0 + timedelta(days=1)
    await relabel(fake, "n1", {"nvidia.com/gpu.product": "NVIDIA-H200"})
    await rec.reconcile("n1")
    current = condition(await fingerprint(fake), "VerdictCurrent")
    assert (current["status"], current["reason"]) == ("False", "FingerprintChanged")
    assert "NVIDIA-H200" in current["message"] and "lab/acceptance" in current["message"]
    assert (await fake.get(NODES, "n1"))["metadata"]["labels"][VERDICT_LABEL] == "Expired"
    assert metrics.state("n1") == "Expired"
    clock.at = T0 + timedelta(days=2)
    await rec.reconcile("n1")  # a later stable pass keeps naming what changed
    assert "NVIDIA-H200" in condition(await fingerprint(fake), "VerdictCurrent")["message"]


async def test_verdict_measured_before_the_last_observed_change_is_not_bound() -> None:
    fake, clock = FakeClient(), Clock()
    await fake.create(NODES, node("n1"))
    rec = reconciler(fake, clock)
    await rec.reconcile("n1")  # captured at T0
    await passed_run(fake, started=T0, finished=T0 + timedelta(hours=1))  # same second: unbound
    clock.at = T0 + timedelta(hours=2)
    await rec.reconcile("n1")
    fp = await fingerprint(fake)
    assert "digest" not in fp["status"]["verdict"]
    assert condition(fp, "VerdictCurrent")["reason"] == "FingerprintChanged"


async def test_verdict_expires_by_age_and_the_pass_requeues_at_expiry() -> None:
    fake, clock = FakeClient(), Clock()
    await fake.create(NODES, node("n1"))
    rec = reconciler(fake, clock, max_verdict_age_seconds=86400, resync_seconds=10**6)
    await rec.reconcile("n1")
    await passed_run(fake, started=T0 + timedelta(seconds=5), finished=T0 + timedelta(hours=1))
    clock.at = T0 + timedelta(hours=2)
    result = await rec.reconcile("n1")
    assert result.requeue_after == pytest.approx(23 * 3600)
    clock.at = T0 + timedelta(hours=25)
    await rec.reconcile("n1")
    current = condition(await fingerprint(fake), "VerdictCurrent")
    assert (current["status"], current["reason"]) == ("False", "VerdictTooOld")


@pytest.mark.parametrize(("provenance", "phase"), [("unknown", "Passed"), ("silicon", "Error")])
async def test_verdict_unknown_or_error_results_give_no_verdict(
    provenance: str, phase: str
) -> None:
    fake, clock = FakeClient(), Clock()
    await fake.create(NODES, node("n1"))
    rec = reconciler(fake, clock)
    await rec.reconcile("n1")
    await passed_run(fake, started=T0 + timedelta(seconds=5), finished=T0 + timedelta(hours=1),
                     provenance=provenance, phase=phase)  # fmt: skip
    clock.at = T0 + timedelta(hours=2)
    await rec.reconcile("n1")
    fp = await fingerprint(fake)
    assert "verdict" not in fp["status"]
    assert (await fake.get(NODES, "n1"))["metadata"]["labels"][VERDICT_LABEL] == "Missing"


async def test_node_verdict_a_node_tested_only_on_the_simulator_reads_simulated() -> None:
    """Not Missing (never tested) and never Passed: the label says it was simulated."""
    fake, clock = FakeClient(), Clock()
    await fake.create(NODES, node("n1"))
    rec = reconciler(fake, clock)
    await rec.reconcile("n1")
    await passed_run(fake, started=T0 + timedelta(seconds=5), finished=T0 + timedelta(hours=1),
                     provenance="sim")  # fmt: skip
    clock.at = T0 + timedelta(hours=2)
    await rec.reconcile("n1")
    fp = await fingerprint(fake)
    assert fp["status"]["verdict"]["phase"] == "Simulated"
    current = condition(fp, "VerdictCurrent")
    assert (current["status"], current["reason"]) == ("False", "SimulatedOnly")
    assert (await fake.get(NODES, "n1"))["metadata"]["labels"][VERDICT_LABEL] == "Simulated"


async def test_node_verdict_a_fail_fast_run_never_labels_an_untested_node_passed() -> None:
    """failFast stopped the run when smoke Failed on n2: n1 has one Passed result and
    none for the tests that never ran, so it is not judged (the label stays Missing)."""
    fake, clock = FakeClient(), Clock()
    await fake.create(NODES, node("n1"))
    rec = reconciler(fake, clock)
    await rec.reconcile("n1")
    started, finished = T0 + timedelta(seconds=5), T0 + timedelta(hours=1)
    plan = pinned_plan(("n1", "n2"), ("smoke", "compute-smoke"), ("burn", "gpu-burn"),
                       ("memory", "memory-bw"))  # fmt: skip
    results = [
        {"name": "smoke", "kind": "compute-smoke", "phase": phase, "nodes": [n],
         "startedAt": format_time(started), "provenance": "silicon"}
        for n, phase in (("n1", "Passed"), ("n2", "Failed"))
    ]  # fmt: skip
    await fake.create(
        RUNS,
        {
            "metadata": {"name": "ff", "namespace": "lab", "annotations": {PLAN_ANNOTATION: plan}},
            "spec": {"profileRef": "p", "failFast": True},
            "status": {
                "phase": "Failed",
                "startedAt": format_time(started),
                "finishedAt": format_time(finished),
                "results": results,
            },
        },
        namespace="lab",
    )
    clock.at = T0 + timedelta(hours=2)
    await rec.reconcile("n1")
    fp = await fingerprint(fake)
    assert "verdict" not in fp["status"]
    current = condition(fp, "VerdictCurrent")
    assert (current["status"], current["reason"]) == ("False", "NewestRunDidNotJudge")
    assert "the newest, lab/ff, did not: never ran: burn, memory" in current["message"]
    assert (await fake.get(NODES, "n1"))["metadata"]["labels"][VERDICT_LABEL] == "Missing"


async def probe_run(
    fake: FakeClient, *, name: str, identity: str, started: datetime, finished: datetime,
    with_burn: bool = False,
) -> None:  # fmt: skip
    """A run of fingerprint-probe (and, with ``with_burn``, a gated test) on n1."""
    tests = [("probe", "fingerprint-probe")] + ([("burn", "gpu-burn")] if with_burn else [])
    results = [
        {"name": test, "kind": kind, "phase": "Passed", "nodes": ["n1"],
         "startedAt": format_time(started), "finishedAt": format_time(finished),
         "provenance": "silicon",
         "metrics": {"hardwareIdentity": identity, "gpuUuids": identity[-4:]}
         if kind == "fingerprint-probe" else {}}
        for test, kind in tests
    ]  # fmt: skip
    await fake.create(
        RUNS,
        {
            "metadata": {
                "name": name,
                "namespace": "lab",
                "annotations": {PLAN_ANNOTATION: pinned_plan(("n1",), *tests)},
            },
            "spec": {"profileRef": "p"},
            "status": {
                "phase": "Passed",
                "startedAt": format_time(started),
                "finishedAt": format_time(finished),
                "results": results,
            },
        },
        namespace="lab",
    )


async def test_node_verdict_a_like_for_like_gpu_swap_seen_by_a_probe_expires_the_verdict() -> None:
    """Labels are identical before and after (same model, count, memory, driver); only
    the probe's hardwareIdentity moves, and the Passed verdict measured on the old parts
    expires, naming what changed."""
    fake, clock = FakeClient(), Clock()
    metrics = VerdictMetrics()
    await fake.create(NODES, node("n1"))
    rec = reconciler(fake, clock, metrics=metrics)
    await rec.reconcile("n1")
    start, end = T0 + timedelta(minutes=1), T0 + timedelta(hours=1)
    await probe_run(fake, name="accept", identity="hw1:aaaa", with_burn=True,
                    started=start, finished=end)  # fmt: skip
    clock.at = T0 + timedelta(hours=1, minutes=1)
    await rec.reconcile("n1")
    fp = await fingerprint(fake)
    assert fp["status"]["verdict"]["hardwareIdentity"] == "hw1:aaaa"
    assert condition(fp, "VerdictCurrent")["reason"] == "DigestMatches"
    start, end = T0 + timedelta(days=1), T0 + timedelta(days=1, minutes=5)
    await probe_run(fake, name="nightly", identity="hw1:bbbb", started=start, finished=end)
    clock.at = T0 + timedelta(days=1, hours=1)
    await rec.reconcile("n1")
    fp = await fingerprint(fake)
    current = condition(fp, "VerdictCurrent")
    assert (current["status"], current["reason"]) == ("False", "HardwareIdentityChanged")
    assert "hw1:aaaa" in current["message"] and "hw1:bbbb" in current["message"]
    assert fp["status"]["hardwareIdentity"]["identity"] == "hw1:bbbb"
    assert (await fake.get(NODES, "n1"))["metadata"]["labels"][VERDICT_LABEL] == "Expired"
    assert metrics.state("n1") == "Expired"


async def test_node_verdict_a_simulated_pass_never_replaces_a_silicon_verdict() -> None:
    fake, clock = FakeClient(), Clock()
    await fake.create(NODES, node("n1"))
    rec = reconciler(fake, clock)
    await rec.reconcile("n1")
    await passed_run(fake, started=T0 + timedelta(seconds=5), finished=T0 + timedelta(hours=1),
                     phase="Failed")  # fmt: skip
    await passed_run(fake, started=T0 + timedelta(hours=2), finished=T0 + timedelta(hours=3),
                     provenance="sim", name="later")  # fmt: skip
    clock.at = T0 + timedelta(hours=4)
    await rec.reconcile("n1")  # both runs there: the judgement is the newest that counts
    assert (await fingerprint(fake))["status"]["verdict"]["phase"] == "Failed"
    await fake.delete(RUNS, "acceptance", namespace="lab")
    await rec.reconcile("n1")  # only the stored verdict remembers the judgement now
    verdict = (await fingerprint(fake))["status"]["verdict"]
    assert (verdict["runName"], verdict["phase"]) == ("acceptance", "Failed")
    assert (await fake.get(NODES, "n1"))["metadata"]["labels"][VERDICT_LABEL] == "Failed"


async def test_verdict_a_later_error_run_does_not_replace_a_pass() -> None:
    fake, clock = FakeClient(), Clock()
    await fake.create(NODES, node("n1"))
    rec = reconciler(fake, clock)
    await rec.reconcile("n1")
    await passed_run(fake, started=T0 + timedelta(seconds=5), finished=T0 + timedelta(hours=1))
    await passed_run(fake, started=T0 + timedelta(hours=2), finished=T0 + timedelta(hours=3),
                     phase="Error", name="later")  # fmt: skip
    clock.at = T0 + timedelta(hours=4)
    await rec.reconcile("n1")
    assert (await fingerprint(fake))["status"]["verdict"]["runName"] == "acceptance"


# --- E14 interface ----------------------------------------------------------------------


async def test_E14_an_amd_node_resolves_the_rocm_image_through_its_fingerprint() -> None:
    fake, clock = FakeClient(), Clock()
    await fake.create(NODES, node("n1", labels={"amd.com/gpu.product": "MI300X",
                                                "amd.com/gpu.count": "8"}))  # fmt: skip
    await reconciler(fake, clock).reconcile("n1")
    vendor = vendor_of(await fingerprint(fake), node="n1")
    runner = {"imagesByVendor": [{"vendor": "nvidia", "image": "x/cuda:1"},
                                 {"vendor": "amd", "image": "x/rocm:1"}]}  # fmt: skip
    assert vendor == "amd"
    assert resolve_image(kind="gpu-burn", runner=runner, node_vendor=vendor) == "x/rocm:1"


def test_E14_a_node_without_a_captured_fingerprint_is_pending_not_unknown() -> None:
    with pytest.raises(FingerprintPendingError, match="does not exist"):
        vendor_of(None, node="n1")
    with pytest.raises(FingerprintPendingError, match="not been captured"):
        vendor_of({"spec": {"nodeName": "n1"}}, node="n1")
    assert (
        vendor_of({"status": {"digest": "d", "gpus": [{"index": 0, "vendor": "unknown"}]}}) is None
    )


class _LaggingCache:
    """A cache that has not seen any NodeFingerprint yet (answers NotFound), beside a
    live apiserver that holds one."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def get(self, resource: Any, name: str, *, namespace: str | None = None) -> Any:
        if resource == FINGERPRINTS:
            raise ApiError(status=404, reason="NotFound")
        return await self.inner.get(resource, name, namespace=namespace)

    def __getattr__(self, name: str) -> Any:  # every other read as the real cache
        return getattr(self.inner, name)


async def test_K1_a_cache_lagging_an_existing_fingerprint_adopts_it_never_a_second() -> None:
    # At fleet scale: a cache miss goes straight to the create; the apiserver's AlreadyExists
    # (the cache lagged) is answered by a live read, and that fingerprint is the one used.
    fake, clock = FakeClient(), Clock()
    await fake.create(NODES, node("n1"))
    await fake.create(
        FINGERPRINTS, {"metadata": {"name": "n1"}, "spec": {"nodeName": "n1"}}, namespace=OPS
    )
    lagging = reconciler(fake, clock)
    lagging.reads.readers = attrs.evolve(
        lagging.reads.readers, cached=_LaggingCache(lagging.reads.readers.cached)
    )
    fake.requests.clear()
    await lagging.reconcile("n1")
    fp = await fingerprint(fake)
    assert fp["status"]["digest"] == digest(observe(node("n1")))
    verbs = [r.verb for r in fake.requests if r.resource.startswith("nodefingerprints")]
    assert verbs[:2] == ["create", "get"], verbs  # refused create, then the live read
    assert verbs.count("create") == 1

"""A fleet run to report on: eight nodes, Node/Pair/Group results of every phase.

Built the way the operator builds it: a BurnInRun object (status results in the api
§4.3 shape, a pinned plan annotation), and its envelopes made by the sinks' own
builder (``glimmer.sinks.build.build_envelope``) at the moments L4 names: Running,
each TestCompleted (cumulative), a Checkpoint, and the terminal phase.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from glimmer.contract.envelope import (
    REASON_CHECKPOINT,
    REASON_RUN_PHASE_CHANGED,
    REASON_TEST_COMPLETED,
    Envelope,
    event_key_for_result,
    to_json,
)
from glimmer.plan import PinnedPlan, PlannedTest
from glimmer.sinks.build import build_envelope

JSON = dict[str, Any]
NAMESPACE = "burnin"
RUN_NAME = "fleet-acceptance"
RUN_UID = "6d1f2c3a-0000-4000-8000-00000000f1ee"
NODES = tuple(f"gpu-node-{i:02d}" for i in range(1, 9))
T0 = datetime(2026, 11, 30, 8, 0, 0, tzinfo=UTC)

GATES: dict[str, list[JSON]] = {
    "gpu-burn": [
        {"metric": "miscompares", "comparison": "LessThanOrEqual", "value": "0"},
        {"metric": "sustainedThroughputTflops", "comparison": "GreaterThanOrEqual", "value": "600"},
    ],
    "memory-bw": [
        {"metric": "hostToDeviceBandwidthGBs", "comparison": "GreaterThanOrEqual", "value": "50"},
    ],
    "clockprobe": [
        {
            "metric": "sustainedClockSpreadPct",
            "comparison": "LessThanOrEqual",
            "value": "5",
            "applicability": "RequiredIfMeasurable",
        },
    ],
}
KINDS = {
    "gpu-burn": "gpu-burn",
    "memory-bw": "memory-bw",
    "clockprobe": "clockprobe",
    "nccl-pair": "nccl",
    "nccl-group": "nccl",
    "ib-link": "ib-write-bw",
}
SCOPES = {"nccl-pair": "Pair", "nccl-group": "Group", "ib-link": "Pair"}


def stamp(minutes: float) -> str:
    return (T0 + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def result(
    name: str,
    nodes: Sequence[str],
    phase: str,
    *,
    metrics: dict[str, str] | None = None,
    message: str = "",
    violations: Sequence[JSON] = (),
    not_evaluated: Sequence[JSON] = (),
    unmeasurable: Sequence[str] = (),
    artifacts: Sequence[JSON] = (),
    provenance: str = "silicon",
    start: float = 0,
    minutes: float = 12,
) -> JSON:
    entry: JSON = {
        "name": name,
        "kind": KINDS.get(name, name),
        "scope": SCOPES.get(name, "Node"),
        "phase": phase,
        "nodes": list(nodes),
        "startedAt": stamp(start),
        "finishedAt": stamp(start + minutes),
        "metrics": metrics or {},
        "message": message,
        "provenance": provenance,
    }
    for key, value in (
        ("violations", list(violations)),
        ("notEvaluated", list(not_evaluated)),
        ("unmeasurable", list(unmeasurable)),
        ("artifacts", list(artifacts)),
    ):
        if value:
            entry[key] = value
    return entry


def fleet_results(*, provenance: str = "silicon") -> list[JSON]:
    """Every phase: Passed, Failed (gate), Error, Skipped, a Pair, a Group."""
    out: list[JSON] = []
    tflops = ["671.2", "668.9", "664.0", "670.3", "", "669.5", "612.4", "673.0"]
    for i, node in enumerate(NODES):
        if i == 4:
            out.append(
                result(
                    "gpu-burn",
                    [node],
                    "Error",
                    provenance=provenance,
                    start=i,
                    message='runner terminated abnormally (exit 137, reason "OOMKilled")',
                )
            )
            continue
        miscompares = "4" if i == 2 else "0"
        violations = (
            [
                {
                    "index": 0,
                    "metric": "miscompares",
                    "cause": "Measurement",
                    "kind": "Unsatisfied",
                    "reason": "miscompares: got 4, need LessThanOrEqual 0",
                }
            ]
            if i == 2
            else []
        )
        out.append(
            result(
                "gpu-burn",
                [node],
                "Failed" if i == 2 else "Passed",
                metrics={"miscompares": miscompares, "sustainedThroughputTflops": tflops[i]},
                message=(
                    "miscompares: got 4, need LessThanOrEqual 0 [GPU_BURN_FAIL: miscompares]"
                    if i == 2
                    else "GPU_BURN_PASS"
                ),
                violations=violations,
                provenance=provenance,
                start=i,
            )
        )
    h2d = ["55.1", "41.2", "55.3", "54.9", "55.0", "", "55.2", "54.8"]
    for i, node in enumerate(NODES):
        if i == 5:
            out.append(
                result(
                    "memory-bw",
                    [node],
                    "Skipped",
                    message="MEMORY_BW_SKIP: no peer path",
                    provenance=provenance,
                    start=20 + i,
                )
            )
            continue
        failed = i == 1
        out.append(
            result(
                "memory-bw",
                [node],
                "Failed" if failed else "Passed",
                metrics={"hostToDeviceBandwidthGBs": h2d[i]},
                message=(
                    "hostToDeviceBandwidthGBs: got 41.2, need GreaterThanOrEqual 50"
                    if failed
                    else "MEMORY_BW_PASS"
                ),
                violations=[
                    {
                        "index": 0,
                        "metric": "hostToDeviceBandwidthGBs",
                        "cause": "Measurement",
                        "kind": "Unsatisfied",
                        "reason": "hostToDeviceBandwidthGBs: got 41.2, need GreaterThanOrEqual 50",
                    }
                ]
                if failed
                else [],
                artifacts=[
                    {
                        "name": "bandwidth-matrix.json",
                        "mediaType": "application/json",
                        "sizeBytes": 400000,
                        "dropped": "oversized",
                    }
                ]
                if i == 3
                else [],
                provenance=provenance,
                start=20 + i,
            )
        )
    for i, node in enumerate(NODES):
        single = i == 6
        out.append(
            result(
                "clockprobe",
                [node],
                "Passed",
                metrics={} if single else {"sustainedClockSpreadPct": "1.5"},
                message="CLOCKPROBE_PASS",
                not_evaluated=[
                    {"metric": "sustainedClockSpreadPct", "reason": "unmeasurable on this hardware"}
                ]
                if single
                else [],
                unmeasurable=["sustainedClockSpreadPct"] if single else [],
                provenance=provenance,
                start=40 + i,
            )
        )
    out.append(
        result(
            "nccl-pair",
            NODES[:2],
            "Passed",
            metrics={"busBandwidthGBs": "182.5"},
            message="link gpu-node-01 -> gpu-node-02: server pass (exit 0); client pass (exit 0)",
            provenance=provenance,
            start=60,
        )
    )
    out.append(
        result(
            "ib-link",
            NODES[6:],
            "Failed",
            metrics={"bandwidthGbps": "180.4"},
            message="bandwidthGbps: got 180.4, need GreaterThanOrEqual 350",
            violations=[
                {
                    "index": 0,
                    "metric": "bandwidthGbps",
                    "cause": "Measurement",
                    "kind": "Unsatisfied",
                    "reason": "bandwidthGbps: got 180.4, need GreaterThanOrEqual 350",
                }
            ],
            provenance=provenance,
            start=62,
        )
    )
    out.append(
        result(
            "nccl-group",
            NODES,
            "Error",
            message="group of 8 about the COLLECTIVE: rank 5 (gpu-node-06) never started",
            provenance=provenance,
            start=64,
        )
    )
    return out


def plan(*, sinks: Sequence[str] = ("verdicts",), baseline: bool = False) -> PinnedPlan:
    tests = []
    for name, kind in KINDS.items():
        spec: JSON = {"kind": kind, "scope": SCOPES.get(name, "Node")}
        if name in GATES and not baseline:
            spec["thresholds"] = GATES[name]
        tests.append(PlannedTest(name=name, required=True, spec=spec))
    return PinnedPlan(targets=NODES, sinks=tuple(sinks), baseline=baseline, tests=tuple(tests))


def run_object(
    results: Sequence[JSON],
    *,
    phase: str,
    provenance: str = "silicon",
    baseline: bool = False,
    sinks: Sequence[str] = ("verdicts",),
    uid: str = RUN_UID,
) -> JSON:
    return {
        "apiVersion": "burnin.glimmer.ai/v1alpha1",
        "kind": "BurnInRun",
        "metadata": {
            "namespace": NAMESPACE,
            "name": RUN_NAME,
            "uid": uid,
            "annotations": {
                "burnin.glimmer.ai/plan": plan(sinks=sinks, baseline=baseline).to_annotation()
            },
        },
        "spec": {
            "profileRef": "node-acceptance",
            "target": {"nodeNames": list(NODES)},
            "baseline": baseline,
        },
        "status": {
            "phase": phase,
            "results": [copy.deepcopy(r) for r in results],
            "provenance": provenance,
            "certifiesSilicon": False,
            "fingerprint": {n: "kernel=6.8.0 os=Ubuntu 24.04 arch=amd64" for n in NODES},
        },
    }


def envelopes(
    results: Sequence[JSON] | None = None,
    *,
    terminal: str | None = "Failed",
    provenance: str = "silicon",
    baseline: bool = False,
    checkpoints: Sequence[int] = (3, 1),
    uid: str = RUN_UID,
) -> list[Envelope]:
    """Running, a TestCompleted per result (cumulative), checkpoints (given out of
    order), then the terminal RunPhaseChanged unless ``terminal`` is None."""
    results = list(fleet_results(provenance=provenance) if results is None else results)
    out = [
        build_envelope(
            run_object([], phase="Running", provenance=provenance, baseline=baseline, uid=uid),
            reason=REASON_RUN_PHASE_CHANGED,
            event_key="Running",
            sent_at=T0,
            baseline=baseline,
        )
    ]
    for sequence in checkpoints:
        out.append(
            build_envelope(
                run_object(
                    [dict(results[0], phase="Running")],
                    phase="Running",
                    provenance=provenance,
                    baseline=baseline,
                    uid=uid,
                ),
                reason=REASON_CHECKPOINT,
                event_key=str(sequence),
                sent_at=T0 + timedelta(seconds=30 * sequence),
                baseline=baseline,
            )
        )
    for index, entry in enumerate(results):
        out.append(
            build_envelope(
                run_object(
                    results[: index + 1],
                    phase="Running",
                    provenance=provenance,
                    baseline=baseline,
                    uid=uid,
                ),
                reason=REASON_TEST_COMPLETED,
                event_key=event_key_for_result(entry["name"], entry["nodes"]),
                sent_at=T0 + timedelta(minutes=index + 1),
                baseline=baseline,
            )
        )
    if terminal is not None:
        out.append(
            build_envelope(
                run_object(
                    results, phase=terminal, provenance=provenance, baseline=baseline, uid=uid
                ),
                reason=REASON_RUN_PHASE_CHANGED,
                event_key=terminal,
                sent_at=T0 + timedelta(hours=2),
                baseline=baseline,
            )
        )
    return out


def as_json(items: Sequence[Envelope]) -> list[JSON]:
    return [to_json(e) for e in items]

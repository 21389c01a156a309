"""Run status bytes per result, before and after evidence shards (I9). Prints a table.

    .venv/bin/python bench/status/measure.py [--counts 100,900,1000,3000,6000]

A run of N settled single-node results is written through ``checkpoint.write_status`` on a
FakeClient, in batches of 100 as a mid-run pass settles them, with a batch of 100 open
results riding along (what maxConcurrentNodes 100 leaves in flight). "before" writes
with sharding off (the status as it was before this change: every result in full);
"after" with the default thresholds. Sizes are the whole run object as the JSON a write
sends, which the 1 MiB status budget and etcd's ~1.5 MiB request limit apply to.

Two result shapes: ``kwok`` is what the bench fleet's custom test writes (two metrics,
one attempt, a one-line message); ``rich`` is a silicon result with a dozen metrics, an
Error retry before the deciding attempt, a violation and a 300-byte message.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import time
from datetime import UTC, datetime
from typing import Any

from glimmer.api import status_layout
from glimmer.controllers.kit import checkpoint, names
from glimmer.engine import CONFIGMAPS, FakeClient
from glimmer.sinks import build

TESTS = ("gpu-burn", "memory-bw", "nccl-allreduce", "dcgm-diag", "host-health", "clock-probe")
NS = "bench"


def kwok_result(test: str, index: int) -> dict[str, Any]:
    node = f"kwok-node-{index:04d}"
    return {
        "name": test, "kind": "custom", "scope": "Node", "phase": "Passed", "nodes": [node],
        "startedAt": "2026-12-01T12:00:00Z", "finishedAt": "2026-12-01T12:00:09Z",
        "metrics": {"exit_code": "0", "duration_seconds": "9"},
        "message": f"{test} passed on {node}",
        "repeatsRequired": 1, "repeatsCompleted": 1, "errorRetries": 0,
        "attempts": [{"attempt": 1, "trigger": "Initial", "phase": "Passed", "exitCode": 0,
                      "node": node, "podName": f"r-{test}-{node}-a1-x7k2q",
                      "podUID": f"6f1c2a9e-0000-4000-8000-{index:012d}",
                      "startedAt": "2026-12-01T12:00:00Z",
                      "finishedAt": "2026-12-01T12:00:09Z", "deciding": True,
                      "provenance": "unknown"}],
        "provenance": "unknown",
    }  # fmt: skip


def rich_result(test: str, index: int) -> dict[str, Any]:
    result = kwok_result(test, index)
    node = result["nodes"][0]
    metrics = {f"gpu{g}_{m}": f"{100 + g}.{index % 97}" for g in range(4)
               for m in ("tflops", "temp_c", "xid")}  # fmt: skip
    retry = dict(result["attempts"][0]) | {"phase": "Error", "exitCode": 137,
             "message": "OOMKilled: " + "x" * 120, "metrics": {"exit_code": "137"}}  # fmt: skip
    retry.pop("deciding")
    deciding = dict(result["attempts"][0]) | {"attempt": 2, "trigger": "ErrorRetry",
                                              "provenance": "silicon"}  # fmt: skip
    return result | {
        "metrics": metrics, "message": f"{test} on {node}: " + "y" * 300,
        "errorRetries": 1, "attempts": [retry, deciding], "provenance": "silicon",
        "violations": [{"index": 0, "metric": "gpu0_temp_c", "cause": "Hardware",
                        "kind": "AboveMax", "reason": "87 > 85"}],
    }  # fmt: skip


def open_result(index: int) -> dict[str, Any]:
    node = f"kwok-node-{index:04d}"
    return {
        "name": TESTS[0], "kind": "custom", "scope": "Node", "phase": "Running", "nodes": [node],
        "repeatsRequired": 1, "repeatsCompleted": 0, "errorRetries": 0,
        "attempts": [{"attempt": 1, "trigger": "Initial", "phase": "Running", "exitCode": 0,
                      "node": node, "podName": f"r-{TESTS[0]}-{node}-a1-x7k2q",
                      "podUID": f"6f1c2a9e-0000-4000-8000-{index:012d}"}],
    }  # fmt: skip


async def trial(count: int, *, shape: Any, sharded: bool) -> dict[str, Any]:
    client = FakeClient()
    run = await client.create(
        names.RUNS, {"metadata": {"name": "r"}, "spec": {"profileRef": "p"}, "status": {}},
        namespace=NS,
    )  # fmt: skip
    expected = [shape(TESTS[i % len(TESTS)], i // len(TESTS)) for i in range(count)]
    off = 1 << 40
    peak, written, refused_at = 0, 0, None
    started = time.process_time()
    for start in range(0, count, 100):
        settled = [dict(r) for r in status_layout.status_results(run["status"])]  # packed too
        settled += copy.deepcopy(expected[start : start + 100])
        run["status"]["results"] = settled + [open_result(n) for n in range(100)]
        try:
            run = await checkpoint.write_status(client, run, shard_at=None if sharded else off)
        except checkpoint.StatusTooLargeError:
            refused_at = len(settled)
            break
        peak = max(peak, checkpoint.encoded_size(run))
        written = len(settled)
        run["status"]["results"] = [
            r for r in run["status"]["results"] if r.get("phase") != "Running"
        ]
    cpu = time.process_time() - started
    final = checkpoint.encoded_size(run)
    label = checkpoint.SHARD_LABEL
    shard_objects = [c for c in client.objects(CONFIGMAPS)
                     if (c["metadata"].get("labels") or {}).get(label)]  # fmt: skip
    readable = 0
    if refused_at is None:
        envelope = build.build_envelope(
            run, reason="Checkpoint", event_key="c", sent_at=datetime.now(UTC),
            baseline=False, shards=await build.read_evidence(client, run),
        )  # fmt: skip
        readable = sum(r.phase == "Passed" for r in envelope.results)
    return {
        "written": written, "refused_at": refused_at, "peak": peak,
        "per_result": final / max(written, 1), "shards": len(shard_objects),
        "shard_bytes": sum(checkpoint.encoded_size(c) for c in shard_objects),
        "readable": readable, "cpu": cpu,
    }  # fmt: skip


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--counts", default="100,900,1000,3000,6000,30000")
    args = parser.parse_args()
    counts = [int(c) for c in args.counts.split(",")]
    print(
        f"status budget {checkpoint.STATUS_BUDGET_BYTES} B; shard at {checkpoint.SHARD_AT_BYTES} B"
    )
    print(
        "| shape | results | mode | written | refused at | peak status B | status B/result "
        "| shards | shard B | readable Passed | write CPU s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for shape_name, shape in (("kwok", kwok_result), ("rich", rich_result)):
        for count in counts:
            for sharded in (False, True):
                t = await trial(count, shape=shape, sharded=sharded)
                print(
                    f"| {shape_name} | {count} | {'after' if sharded else 'before'} "
                    f"| {t['written']} | {t['refused_at'] or '-'} | {t['peak']} "
                    f"| {t['per_result']:.0f} | {t['shards']} | {t['shard_bytes']} "
                    f"| {t['readable']} | {t['cpu']:.1f} |"
                )


if __name__ == "__main__":
    asyncio.run(main())

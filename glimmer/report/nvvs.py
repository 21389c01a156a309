"""NVVS-schema JSON (``diag-<node>.json`` + ``diag-unassigned.json``, M3).

Tools built to read DCGM's ``dcgmi diag -j`` document can read these: the same
``test_categories[] -> tests[] -> results[]`` shape with NVVS status words. Nothing
DCGM-specific is invented: no ``error_id``, no DCGM error codes, no NVIDIA plugin
names, no DCGM version; ``provenance`` says ``NVVS-compatible`` so nobody mistakes
the file for DCGM output. Pair/Group results and synthetic refusals belong to no one
node, so they are in ``diag-unassigned.json``.

Mapping: Passed -> Pass (a baseline's Passed -> Skip: it measured, it did not judge),
Failed -> Fail, Skipped -> Skip, everything else -> Not Run. A node's Overall Result
is Fail if any test failed (Fail beats Not Run), else Not Run if anything did not
run, else Pass if anything passed, else Skip; and when the summary counts more results
than the input carries, every Overall Result is Not Run (a missing result could be
the failing one).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

from glimmer.local.filenames import file_stem
from glimmer.report.facts import detail_lines, flag_lines, unit_label
from glimmer.report.model import Report, ResultView
from glimmer.verdict import Cause, Phase

UNASSIGNED: Final = "unassigned"
STRESS: Final = frozenset({"gpu-burn", "thermal-soak", "clockprobe", "memory-bw", "gemm-sweep"})
INTEGRATION: Final = frozenset(
    {"ib-write-bw", "gpudirect-rdma", "nccl", "fabric-soak", "tcp-baseline"}
)
SEVERITY: Final[dict[Cause, str]] = {
    Cause.MEASUREMENT: "error",
    Cause.EVIDENCE: "warning",
    Cause.AUTHORING: "info",
}
CATEGORY_ORDER: Final = ("Hardware", "Stress", "Integration")


def category(kind: str) -> str:
    if kind in STRESS:
        return "Stress"
    if kind in INTEGRATION:
        return "Integration"
    return "Hardware"


def nvvs_status(result: ResultView, *, baseline: bool) -> str:
    phase = result.phase
    if phase is Phase.PASSED:
        return "Skip" if baseline else "Pass"
    if phase is Phase.FAILED:
        return "Fail"
    if phase is Phase.SKIPPED:
        return "Skip"
    return "Not Run"


def overall(statuses: Sequence[str], *, missing: bool) -> str:
    if missing or not statuses:
        return "Not Run"
    if "Fail" in statuses:
        return "Fail"
    if "Not Run" in statuses:
        return "Not Run"
    return "Pass" if "Pass" in statuses else "Skip"


def _entry(result: ResultView, *, baseline: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"status": nvvs_status(result, baseline=baseline)}
    warnings = [
        {
            "warning": v.reason or f"{v.metric}: {v.kind}",
            "severity": SEVERITY[v.who_acts],
            "cause": v.cause,
            "metric": v.metric,
        }
        for v in result.violations
    ]
    if warnings:
        entry["warnings"] = warnings
    info = [f"glimmer phase: {result.phase_word}"]
    if result.message:
        info.append(result.message)
    info += detail_lines(result)
    if result.nodes and result.link:
        info.append(f"{result.scope} over {' + '.join(result.nodes)}")
    entry["info"] = info
    return entry


def document(report: Report, *, node: str, results: Sequence[ResultView]) -> dict[str, Any]:
    categories: dict[str, list[dict[str, Any]]] = {}
    statuses: list[str] = []
    for result in results:
        entry = _entry(result, baseline=report.baseline)
        statuses.append(entry["status"])
        categories.setdefault(category(result.kind), []).append(
            {"name": unit_label(result), "results": [entry]}
        )
    return {
        "DCGM GPU Diagnostic": {
            "test_categories": [
                {"category": name, "tests": categories[name]}
                for name in CATEGORY_ORDER
                if name in categories
            ],
        },
        "Overall Result": overall(statuses, missing=report.missing_results > 0),
        "provenance": "NVVS-compatible",
        "node": node,
        "glimmer": {
            "run": {"namespace": report.namespace, "name": report.name, "uid": report.uid},
            "phase": report.phase_word,
            "baseline": report.baseline,
            "incomplete": report.incomplete or report.missing_results > 0,
            "measuredOn": str(report.provenance),
            "simulated": report.simulated,
            "flags": flag_lines(report),
        },
    }


def file_name(node: str) -> str:
    stem = file_stem(node)
    if stem == UNASSIGNED:  # a node literally named "unassigned" keeps its own file
        stem = file_stem(node + "/")
    return f"diag-{stem}.json"


def render_nvvs(report: Report) -> dict[str, str]:
    """File name -> content: one file per node, plus the unassigned file."""
    files: dict[str, str] = {}
    for node in report.nodes:
        results = [r for r in report.node_results if node in r.nodes]
        files[file_name(node)] = (
            json.dumps(document(report, node=node, results=results), indent=2, ensure_ascii=False)
            + "\n"
        )
    unassigned = [r for r in report.node_results if not r.nodes]
    unassigned += [*report.link_results, *report.run_results]
    files[f"diag-{UNASSIGNED}.json"] = (
        json.dumps(
            document(report, node=UNASSIGNED, results=unassigned), indent=2, ensure_ascii=False
        )
        + "\n"
    )
    return files

"""NVVS-schema JSON (``diag-<node>.json``, and ``diag-unassigned.json`` when needed, M3).

Tools built to read DCGM's ``dcgmi diag -j`` document can read these: the same
``test_categories[] -> tests[] -> results[]`` shape with NVVS status words. Nothing
DCGM-specific is invented: no ``error_id``, no DCGM error codes, no NVIDIA plugin
names, no DCGM version; ``provenance`` says ``NVVS-compatible`` so nobody mistakes
the file for DCGM output.

Such a tool reads one file per node, so a Pair or Group result goes, whole, into the
document of every node it names: never split into per-node verdicts (M2), its entry
naming the link (``Pair: a + b``) and carrying its scope and nodes under ``glimmer``.
It counts in each member's Overall Result as it counts in that node's verdict
(``glimmer.verdict.nodes``): a node whose link failed never reads Pass. Only what names
no node (a result with no nodes, a synthetic refusal of the run) goes to
``diag-unassigned.json``, which is written only when it has something to say.

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
    if result.link:
        entry["glimmer"] = {"scope": result.scope, "nodes": list(result.nodes)}
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


def _links(report: Report) -> list[ResultView]:
    """Pair and Group results (a synthetic refusal is about the run, whatever its scope)."""
    return [r for r in report.link_results if not r.synthetic]


def _member_nodes(report: Report) -> tuple[str, ...]:
    """Every node a result names: Node-scope results' nodes first, then the links'."""
    seen: dict[str, None] = dict.fromkeys(report.nodes)
    for result in _links(report):
        seen.update(dict.fromkeys(result.nodes))
    return tuple(seen)


def _json(body: dict[str, Any]) -> str:
    return json.dumps(body, indent=2, ensure_ascii=False) + "\n"


def render_nvvs(report: Report) -> dict[str, str]:
    """File name -> content: one file per node a result names (its Node results, then
    each link it is a member of), plus ``diag-unassigned.json`` only when some result
    names no node."""
    files: dict[str, str] = {}
    for node in _member_nodes(report):
        results = [r for r in report.node_results if node in r.nodes]
        results += [r for r in _links(report) if node in r.nodes]
        files[file_name(node)] = _json(document(report, node=node, results=results))
    unassigned = [r for r in (*report.node_results, *_links(report)) if not r.nodes]
    unassigned += report.run_results
    if unassigned:
        files[f"diag-{UNASSIGNED}.json"] = _json(
            document(report, node=UNASSIGNED, results=unassigned)
        )
    return files

"""A ``glimmer run`` results directory's ``run.json`` -> :class:`Report`.

Read only, and through the one result codec (:mod:`glimmer.verdict.codec`): the
phases, metrics, violations, not-evaluated gates, unmeasurable names and provenance of
each result are exactly what ``result_from_json`` makes of them (an unreadable phase is
Error, absent provenance is unknown). What the codec does not own (scope, nodes,
times, artifacts, axes) is read here with its type checked; a document that is not a
``BurnInLocalRun`` of this API version is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from glimmer.report.assemble import check_summary, evidence_gates
from glimmer.report.model import (
    ArtifactView,
    Gate,
    NotEvaluatedView,
    Report,
    ResultView,
    Summary,
    ViolationView,
)
from glimmer.report.reading import ReportInputError, read_json_file
from glimmer.verdict import Phase
from glimmer.verdict.codec import provenance_from_json, result_from_json

#: The document ``glimmer run`` writes (glimmer/local/results.py).
LOCAL_RUN_KIND: Final = "BurnInLocalRun"
API_VERSION: Final = "burnin.glimmer.ai/v1alpha1"
RUN_JSON: Final = "run.json"


def _str(value: Any, *, where: str, optional: bool = True) -> str:
    if value is None and optional:
        return ""
    if not isinstance(value, str):
        raise ReportInputError(f"{where}: expected a string, got {type(value).__name__}")
    return value


def _strs(value: Any, *, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ReportInputError(f"{where}: expected a list, got {type(value).__name__}")
    return tuple(_str(v, where=f"{where}[{i}]", optional=False) for i, v in enumerate(value))


def _str_map(value: Any, *, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ReportInputError(f"{where}: expected an object, got {type(value).__name__}")
    return {k: _str(v, where=f"{where}.{k}", optional=False) for k, v in value.items()}


def _count(value: Any, *, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ReportInputError(f"{where}: expected a count, got {value!r:.40}")
    return value


def _artifact(entry: Any, *, where: str) -> ArtifactView:
    if not isinstance(entry, dict):
        raise ReportInputError(f"{where}: expected an object")
    size = entry.get("sizeBytes")
    if size is not None:
        size = _count(size, where=f"{where}.sizeBytes")
    return ArtifactView(
        name=_str(entry.get("name"), where=f"{where}.name", optional=False),
        media_type=_str(entry.get("mediaType"), where=f"{where}.mediaType"),
        size_bytes=size,
        digest=_str(entry.get("digest"), where=f"{where}.digest"),
        config_map=_str(entry.get("configMap"), where=f"{where}.configMap"),
        key=_str(entry.get("key"), where=f"{where}.key"),
        dropped=_str(entry.get("dropped"), where=f"{where}.dropped"),
        file=_str(entry.get("file"), where=f"{where}.file"),
    )


def _when(entry: Mapping[str, Any], key: str, *, where: str) -> str | None:
    """The millisecond time run.json keeps beside the whole-second one (M6), else that."""
    precise = _str(entry.get(f"{key}Precise"), where=f"{where}.{key}Precise")
    return precise or _str(entry.get(key), where=f"{where}.{key}") or None


def _result(entry: Any, *, index: int) -> ResultView:
    where = f"run.json results[{index}]"
    if not isinstance(entry, dict):
        raise ReportInputError(f"{where}: expected an object")
    required = entry.get("required")
    if not isinstance(required, bool):
        raise ReportInputError(f"{where}.required: expected true or false")
    phase = entry.get("phase")
    _str(phase, where=f"{where}.phase", optional=False)
    state = result_from_json(entry, required=required)
    artifacts = entry.get("artifacts") or []
    if not isinstance(artifacts, list):
        raise ReportInputError(f"{where}.artifacts: expected a list")
    return ResultView(
        name=state.name,
        kind=state.kind,
        # The codec reads an unknown phase as Error; the report keeps that reading.
        phase_word=str(state.phase),
        scope=_str(entry.get("scope"), where=f"{where}.scope"),
        nodes=_strs(entry.get("nodes"), where=f"{where}.nodes"),
        started_at=_when(entry, "startedAt", where=where),
        finished_at=_when(entry, "finishedAt", where=where),
        metrics=dict(state.metrics),
        message=state.message,
        violations=tuple(
            ViolationView(v.index, v.metric, str(v.cause), str(v.kind), v.reason)
            for v in state.violations
        ),
        not_evaluated=tuple(NotEvaluatedView(n.metric, n.reason) for n in state.not_evaluated),
        unmeasurable=state.unmeasurable,
        artifacts=tuple(
            _artifact(a, where=f"{where}.artifacts[{i}]") for i, a in enumerate(artifacts)
        ),
        variant_axes=_str_map(entry.get("variantAxes"), where=f"{where}.variantAxes"),
        provenance=state.provenance,
        suspect=state.suspect,
        required=required,
    )


def run_json_path(path: Path) -> Path:
    """``path`` itself, or the ``run.json`` inside a results directory."""
    return path / RUN_JSON if path.is_dir() else path


def _gates(value: Any, *, source: str) -> tuple[Gate, ...] | None:
    """M6: the plan's gates as run.json carries them; ``None`` when an older run.json
    does not (then only gates named by the results are known)."""
    if value is None:
        return None
    if not isinstance(value, list):
        raise ReportInputError(f"{source}: gates: expected a list")
    gates = []
    for index, entry in enumerate(value):
        where = f"{source}: gates[{index}]"
        if not isinstance(entry, Mapping):
            raise ReportInputError(f"{where}: expected an object")
        gates.append(
            Gate(
                test=_str(entry.get("test"), where=f"{where}.test", optional=False),
                metric=_str(entry.get("metric"), where=f"{where}.metric", optional=False),
                comparison=_str(entry.get("comparison"), where=f"{where}.comparison"),
                value=_str(entry.get("value"), where=f"{where}.value"),
                applicability=_str(entry.get("applicability"), where=f"{where}.applicability"),
            )
        )
    return tuple(gates)


def report_from_document(document: Any, *, source: str) -> Report:
    if not isinstance(document, dict):
        raise ReportInputError(f"{source}: expected a JSON object")
    kind, version = document.get("kind"), document.get("apiVersion")
    if kind != LOCAL_RUN_KIND or version != API_VERSION:
        raise ReportInputError(
            f"{source}: not a glimmer run result (kind {kind!r}, apiVersion {version!r}; "
            f"expected {LOCAL_RUN_KIND} {API_VERSION})"
        )
    run = document.get("run")
    if not isinstance(run, Mapping):
        raise ReportInputError(f"{source}: run: expected an object")
    entries = document.get("results")
    if not isinstance(entries, list):
        raise ReportInputError(f"{source}: results: expected a list")
    results = tuple(_result(e, index=i) for i, e in enumerate(entries))
    counters = document.get("summary")
    if not isinstance(counters, Mapping):
        raise ReportInputError(f"{source}: summary: expected an object")
    summary = Summary(
        *(
            _count(counters.get(k), where=f"{source}: summary.{k}")
            for k in ("passed", "failed", "errored", "skipped")
        )
    )
    missing = check_summary(summary, results, where=source)
    phase = _str(document.get("phase"), where=f"{source}: phase", optional=False)
    stopped = _str(document.get("stopped"), where=f"{source}: stopped")
    baseline = document.get("baseline", False)
    if not isinstance(baseline, bool):
        raise ReportInputError(f"{source}: baseline: expected true or false")
    certifies = document.get("certifiesSilicon", False)
    if not isinstance(certifies, bool):
        raise ReportInputError(f"{source}: certifiesSilicon: expected true or false")
    incomplete = bool(stopped) or not Phase.is_terminal_text(phase)
    plan_gates = _gates(document.get("gates"), source=source)
    return Report(
        namespace=_str(run.get("namespace"), where=f"{source}: run.namespace") or "local",
        name=_str(run.get("name"), where=f"{source}: run.name", optional=False),
        uid="",
        profile=_str(run.get("profile"), where=f"{source}: run.profile"),
        phase_word=phase,
        incomplete=incomplete,
        baseline=baseline,
        results=results,
        summary=summary,
        source=source,
        started_at=_when(document, "startedAt", where=source),
        finished_at=_when(document, "finishedAt", where=source),
        gates=evidence_gates(results) if plan_gates is None else plan_gates,
        gates_from_plan=plan_gates is not None,
        provenance=provenance_from_json(document.get("provenance")),
        certifies_silicon=certifies and not incomplete,
        simulated_gpu=_str(document.get("simulatedGpu"), where=f"{source}: simulatedGpu"),
        stopped=stopped,
        missing_results=missing,
    )


def load_run_json(path: Path) -> Report:
    target = run_json_path(path)
    return report_from_document(read_json_file(target), source=str(target))

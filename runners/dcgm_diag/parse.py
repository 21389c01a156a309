"""Reading ``dcgmi diag -j`` documents, in both layouts seen in the field.

Why defensive: DCGM publishes no stable schema (external-formats.md). Anything that does
not have the expected shape raises :class:`UnexpectedDocumentError`, which the runner turns
into exit 3: an unreadable diagnostic is never a pass.

Layouts: current ``{"DCGM Diagnostic": {"test_categories": [{"category", "tests":
[{"name", "results": [{"entity_id", "status", "warnings": [...]}]}]}], "runtime_error"},
"metadata": {"version", "Driver Version Detected"}}``; older ``{"DCGM GPU Diagnostic":
{"test_categories": [{"category", "tests": [{"name", "results": [{"gpu_ids", "status",
"warnings"}]}]}]}, "Driver Version Detected", "version"}``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

STATUSES = frozenset({"Pass", "Skip", "Warn", "Fail", "Not Run"})
_XID = re.compile(r"\bXID[ :]+(\d+)", re.IGNORECASE)


class UnexpectedDocumentError(ValueError):
    """The diagnostic output does not have a shape this parser knows."""


@dataclass(frozen=True)
class TestOutcome:
    name: str
    category: str
    statuses: tuple[str, ...]
    warnings: tuple[str, ...]

    @property
    def status(self) -> str:
        """The worst result of the test across entities."""
        for status in ("Fail", "Warn", "Pass", "Skip", "Not Run"):
            if status in self.statuses:
                return status
        return "Not Run"


@dataclass(frozen=True)
class DiagReport:
    layout: str
    tests: tuple[TestOutcome, ...]
    runtime_error: str | None
    driver_version: str | None
    dcgm_version: str | None
    gpus: frozenset[str]

    def count(self, status: str) -> int:
        return sum(1 for test in self.tests if test.status == status)

    @property
    def last_xid(self) -> int | None:
        codes = [int(m.group(1)) for t in self.tests for w in t.warnings for m in _XID.finditer(w)]
        return codes[-1] if codes else None


def _expect(value: Any, kind: type, where: str) -> Any:
    if not isinstance(value, kind):
        raise UnexpectedDocumentError(
            f"{where}: expected {kind.__name__}, got {type(value).__name__}"
        )
    return value


def _warnings(raw: Any, where: str) -> list[str]:
    if raw is None:
        return []
    if isinstance(raw, str):
        return [raw] if raw else []
    texts = []
    for index, item in enumerate(_expect(raw, list, where)):
        if isinstance(item, str):
            texts.append(item)
        else:
            entry = _expect(item, dict, f"{where}[{index}]")
            texts.append(str(entry.get("warning", "")))
    return texts


def _entities(result: dict[str, Any]) -> list[str]:
    if "entity_id" in result:
        return [str(result["entity_id"])]
    ids = result.get("gpu_ids", result.get("gpu_id"))
    if ids is None:
        return []
    if isinstance(ids, list):
        return [str(i) for i in ids]
    return [part.strip() for part in str(ids).split(",") if part.strip()]


def parse_diag(text: str) -> DiagReport:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as error:
        raise UnexpectedDocumentError(f"not JSON: {error}") from None
    doc = _expect(doc, dict, "document")
    if "DCGM Diagnostic" in doc:
        layout, body = "current", doc["DCGM Diagnostic"]
        meta = doc.get("metadata") or {}
    elif "DCGM GPU Diagnostic" in doc:
        layout, body = "legacy", doc["DCGM GPU Diagnostic"]
        meta = doc
    else:
        raise UnexpectedDocumentError(f"no diagnostic section (keys: {sorted(doc)[:6]})")
    body = _expect(body, dict, layout)
    meta = _expect(meta, dict, "metadata")
    runtime_error = body.get("runtime_error") or doc.get("runtime_error")
    tests: list[TestOutcome] = []
    gpus: set[str] = set()
    categories = _expect(body.get("test_categories", []), list, "test_categories")
    for ci, raw_category in enumerate(categories):
        category = _expect(raw_category, dict, f"test_categories[{ci}]")
        cname = str(category.get("category", ""))
        for ti, raw_test in enumerate(_expect(category.get("tests"), list, f"{cname}.tests")):
            test = _expect(raw_test, dict, f"{cname}.tests[{ti}]")
            name = _expect(test.get("name"), str, f"{cname}.tests[{ti}].name")
            statuses: list[str] = []
            warnings: list[str] = []
            results = _expect(test.get("results"), list, f"{name}.results")
            for ri, raw_result in enumerate(results):
                result = _expect(raw_result, dict, f"{name}.results[{ri}]")
                status = result.get("status")
                if status not in STATUSES:
                    raise UnexpectedDocumentError(f"{name}: unknown status {status!r}")
                statuses.append(status)
                gpus.update(_entities(result))
                warnings.extend(_warnings(result.get("warnings"), f"{name}.warnings"))
            if not statuses:
                summary = (test.get("test_summary") or {}).get("status")
                if summary not in STATUSES:
                    raise UnexpectedDocumentError(f"{name}: no results and no summary status")
                statuses.append(summary)
            tests.append(
                TestOutcome(
                    name=name, category=cname, statuses=tuple(statuses), warnings=tuple(warnings)
                )
            )
    driver = meta.get("Driver Version Detected") or doc.get("Driver Version Detected")
    version = meta.get("version") or doc.get("version")
    return DiagReport(
        layout=layout,
        tests=tuple(tests),
        runtime_error=str(runtime_error) if runtime_error else None,
        driver_version=str(driver) if driver else None,
        dcgm_version=str(version) if version else None,
        gpus=frozenset(gpus),
    )

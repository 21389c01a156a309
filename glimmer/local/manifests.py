"""Reading BurnInTest / BurnInProfile manifests from YAML files for the CLI.

Bad input gets one clear line naming the file and the field, and the fix; never a
traceback. The operator gets the same guarantees from the CRD schema and the
apiserver's strict field validation; this is the bare-host equivalent, and the one
reader ``evaluate``, ``lint`` and ``run`` share: duplicate keys, unknown fields and
runaway nesting are refused here (:mod:`glimmer.local.strict_yaml`,
:mod:`glimmer.local.schema`), never read as something plausible.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from glimmer.local.schema import unknown_fields
from glimmer.local.strict_yaml import StrictYAMLError, load_all
from glimmer.verdict import Threshold


class ManifestError(Exception):
    """A problem with an input file; ``str()`` is the one line shown to the user."""


@dataclass(frozen=True, slots=True)
class Document:
    path: Path
    index: int
    body: Mapping[str, Any]

    @property
    def kind(self) -> str:
        return str(self.body.get("kind", ""))

    @property
    def name(self) -> str:
        metadata = self.body.get("metadata")
        if isinstance(metadata, Mapping):
            return str(metadata.get("name", ""))
        return ""

    @property
    def where(self) -> str:
        label = f"{self.kind} {self.name}".strip() or f"document {self.index + 1}"
        return f"{self.path}: {label}"


def load_documents(path: Path) -> list[Document]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ManifestError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(f"{path}: cannot read: {exc}") from None
    try:
        bodies = load_all(text)
    except StrictYAMLError as exc:
        raise ManifestError(f"{path}: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ManifestError(f"{path}: invalid YAML{where}: {problem}") from None
    documents: list[Document] = []
    for index, body in enumerate(bodies):
        if body is None:
            continue
        if not isinstance(body, Mapping):
            raise ManifestError(
                f"{path}: document {index + 1} is a {type(body).__name__}, not a manifest"
            )
        document = Document(path=path, index=index, body=body)
        unknown = unknown_fields(body)
        if unknown:
            listed = ", ".join(f'unknown field "{name}"' for name in unknown)
            raise ManifestError(f"{document.where}: {listed}")
        documents.append(document)
    return documents


def iter_kind(documents: Sequence[Document], kind: str) -> Iterator[Document]:
    for document in documents:
        if document.kind == kind:
            yield document


def spec_of(document: Document) -> Mapping[str, Any]:
    spec = document.body.get("spec")
    if not isinstance(spec, Mapping):
        raise ManifestError(f"{document.where}: spec is required (a mapping)")
    return spec


def test_kind(spec: Mapping[str, Any], *, where: str, field: str = "spec") -> str:
    kind = spec.get("kind")
    if not isinstance(kind, str) or not kind:
        raise ManifestError(
            f"{where}: {field}.kind is required (e.g. kind: memory-stress, or custom)"
        )
    return kind


def thresholds_of(
    spec: Mapping[str, Any], *, where: str, field: str = "spec.thresholds"
) -> list[Threshold]:
    raw = spec.get("thresholds")
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ManifestError(f"{where}: {field} must be a list of thresholds")
    thresholds: list[Threshold] = []
    for index, item in enumerate(raw):
        at = f"{field}[{index}]"
        if not isinstance(item, Mapping):
            raise ManifestError(f"{where}: {at} must be a mapping with metric/comparison/value")
        values: dict[str, str] = {}
        for key in ("metric", "comparison", "value"):
            value = item.get(key)
            if value is None:
                raise ManifestError(f"{where}: {at}.{key} is required")
            if not isinstance(value, str):
                raise ManifestError(
                    f'{where}: {at}.{key} must be a string (quote it: {key}: "{value}")'
                )
            values[key] = value
        applicability = item.get("applicability", "Required")
        if not isinstance(applicability, str):
            raise ManifestError(f"{where}: {at}.applicability must be a string")
        thresholds.append(
            Threshold(
                metric=values["metric"],
                comparison=values["comparison"],
                value=values["value"],
                applicability=applicability,
            )
        )
    return thresholds

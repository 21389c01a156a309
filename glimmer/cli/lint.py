"""``glimmer lint``: find gates that cannot mean what their author intends (C4)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import click

from glimmer.cli._common import BAD_INPUT, OUTPUT_FORMAT, fail, no_traceback
from glimmer.local.manifests import (
    Document,
    ManifestError,
    load_documents,
    spec_of,
    test_kind,
    thresholds_of,
)
from glimmer.local.serialize import finding_json
from glimmer.verdict import Severity, Threshold, lint_thresholds


def _gated_tests(document: Document) -> Iterator[tuple[str, str, list[Threshold]]]:
    """(planned test name, kind, thresholds) for every gate set a document carries."""
    spec = spec_of(document)
    if document.kind == "BurnInTest":
        kind = test_kind(spec, where=document.where)
        yield document.name, kind, thresholds_of(spec, where=document.where)
        return
    tests = spec.get("tests")
    if not isinstance(tests, list):
        raise ManifestError(f"{document.where}: spec.tests is required (a list)")
    for index, entry in enumerate(tests):
        if not isinstance(entry, Mapping):
            raise ManifestError(f"{document.where}: spec.tests[{index}] must be a mapping")
        inline = entry.get("inline")
        if not isinstance(inline, Mapping):
            continue  # a testRef: linted where the BurnInTest itself is
        field = f"spec.tests[{index}].inline"
        kind = test_kind(inline, where=document.where, field=field)
        name = f"inline-{index}-{kind}"
        yield name, kind, thresholds_of(inline, where=document.where, field=f"{field}.thresholds")
        yield from _variant_gates(document, entry, index=index, parent=name, kind=kind)


def _variant_gates(
    document: Document, entry: Mapping[str, Any], *, index: int, parent: str, kind: str
) -> Iterator[tuple[str, str, list[Threshold]]]:
    variants = entry.get("variants") or []
    if not isinstance(variants, list):
        raise ManifestError(f"{document.where}: spec.tests[{index}].variants must be a list")
    for v_index, variant in enumerate(variants):
        if isinstance(variant, Mapping) and variant.get("thresholds") is not None:
            field = f"spec.tests[{index}].variants[{v_index}].thresholds"
            yield (
                f"{parent}-{variant.get('name', v_index)}",
                kind,
                thresholds_of(variant, where=document.where, field=field),
            )


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--output", "output_format", type=OUTPUT_FORMAT, default="text")
@click.option("--strict", is_flag=True, help="Exit 1 on Unsound findings too.")
@no_traceback(code=BAD_INPUT)
def lint(files: tuple[Path, ...], output_format: str, strict: bool) -> None:
    """Lint the thresholds of every BurnInTest and inline profile test in FILES.

    Exit status: 0 clean (or only Unsound), 1 any Malformed (or, with --strict, any
    finding), 2 bad input (or an internal error).
    """
    findings: list[dict[str, Any]] = []
    try:
        for path in files:
            for document in load_documents(path):
                if document.kind not in ("BurnInTest", "BurnInProfile"):
                    continue
                for name, kind, thresholds in _gated_tests(document):
                    findings.extend(
                        finding_json(f, file=str(path), test=name)
                        for f in lint_thresholds(kind, thresholds)
                    )
    except ManifestError as exc:
        fail(str(exc))
    if output_format == "json":
        click.echo(json.dumps(findings, indent=2))
    else:
        for f in findings:
            colour = "red" if f["severity"] == Severity.MALFORMED else "yellow"
            severity = click.style(f["severity"], fg=colour, bold=True)
            click.echo(f"{f['file']}: {f['test']}: {f['metric']}: {severity}: {f['reason']}")
        if not findings:
            click.echo("no findings")
    malformed = any(f["severity"] == Severity.MALFORMED for f in findings)
    raise SystemExit(1 if malformed or (strict and findings) else 0)

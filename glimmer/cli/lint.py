"""``glimmer lint``: find gates that cannot mean what their author intends (C4).

It reviews every threshold a run would evaluate, with the one function ``glimmer run``
and the operator review a plan with (:func:`glimmer.plan.gates.lint_tests`): each
BurnInTest as written, and each profile expanded as the plan expands it
(:func:`glimmer.plan.variants.expand_profile`): inline tests, tests named by
``testRef`` and every variant cell of either, whose thresholds replace the parent's
(I1). A ``testRef`` whose BurnInTest is in none of the files cannot be reviewed, so
lint says so and exits 2 rather than report a clean profile it did not see.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import click

from glimmer.cli import exits
from glimmer.cli._common import BAD_INPUT, OUTPUT_FORMAT, fail, no_traceback
from glimmer.contract.kinds import is_builtin
from glimmer.contract.names import grammar_ok
from glimmer.contract.registry import REGISTRY
from glimmer.local.manifests import (
    Document,
    ManifestError,
    load_documents,
    spec_of,
    test_kind,
    thresholds_of,
)
from glimmer.plan import PlannedTest
from glimmer.plan import spec as specs
from glimmer.plan.gates import GateFinding, lint_tests
from glimmer.plan.variants import expand_profile, normalise_spec
from glimmer.verdict import Severity

_LINTED_KINDS = ("BurnInTest", "BurnInProfile")


def _read_gates(document: Document) -> None:
    """Refuse, as bad input, a threshold list the apiserver's schema would refuse (I28):
    the same strict reading ``glimmer evaluate`` and ``glimmer run`` apply."""
    spec = spec_of(document)
    if document.kind == "BurnInTest":
        test_kind(spec, where=document.where)
        thresholds_of(spec, where=document.where)
        return
    tests = spec.get("tests")
    if not isinstance(tests, list):
        raise ManifestError(f"{document.where}: spec.tests is required (a list)")
    for index, entry in enumerate(tests):
        if not isinstance(entry, Mapping):
            raise ManifestError(f"{document.where}: spec.tests[{index}] must be a mapping")
        inline = entry.get("inline")
        if isinstance(inline, Mapping):
            field = f"spec.tests[{index}].inline"
            test_kind(inline, where=document.where, field=field)
            thresholds_of(inline, where=document.where, field=f"{field}.thresholds")
        variants = entry.get("variants") or []
        if not isinstance(variants, list):
            raise ManifestError(f"{document.where}: spec.tests[{index}].variants must be a list")
        for v_index, variant in enumerate(variants):
            if isinstance(variant, Mapping):
                field = f"spec.tests[{index}].variants[{v_index}].thresholds"
                thresholds_of(variant, where=document.where, field=field)


def _burnin_tests(documents: list[Document]) -> dict[str, Mapping[str, Any]]:
    """Each BurnInTest spec by name; a name defined twice is refused, as ``glimmer run``
    refuses it (which one a profile meant cannot be known)."""
    found: dict[str, Document] = {}
    for document in documents:
        if document.kind != "BurnInTest" or not document.name:
            continue
        first = found.setdefault(document.name, document)
        if first is not document and (first.path.resolve(), first.index) != (
            document.path.resolve(),
            document.index,
        ):
            raise ManifestError(
                f"{document.where}: BurnInTest {document.name!r} is defined twice "
                f"(also in {first.path}); keep one"
            )
    return {name: spec_of(document) for name, document in found.items()}


def _reviewed(
    document: Document, tests: Mapping[str, Mapping[str, Any]], unresolved: list[str]
) -> Iterator[PlannedTest]:
    """The planned tests whose gates ``document`` contributes to a run."""
    spec = spec_of(document)
    if document.kind == "BurnInTest":
        yield PlannedTest(name=document.name, required=True, spec=normalise_spec(spec))
        return
    try:
        expansion = expand_profile(profile=spec, tests=tests)
    except specs.SpecError as err:
        raise ManifestError(f"{document.where}: {err}") from None
    unresolved += [
        f"{document.where}: testRef {ref!r} names a BurnInTest in none of the given files, "
        "so its thresholds and its variants' cannot be reviewed; give its file too"
        for ref in expansion.unresolved
    ]
    for entry in expansion.entries:
        for test in entry.tests:
            if entry.test_ref and not test.parent:
                continue  # the BurnInTest itself, reviewed where it is defined
            yield test


def can_only_fail(finding: GateFinding, *, kinds: Mapping[str, str]) -> bool:
    """A gate lint says can only fail (N10): a well-formed name the built-in kind never
    prints (the same facts :func:`glimmer.verdict.lint_thresholds` words it from). It is
    Unsound, not Malformed, but no run can pass it, so lint exits 1 on it even without
    ``--strict``."""
    kind = kinds.get(finding.test, "")
    return (
        finding.severity == Severity.UNSOUND
        and grammar_ok(finding.metric)
        and is_builtin(kind)
        and finding.metric not in REGISTRY
    )


def _finding_json(finding: GateFinding, *, file: str, fails: bool) -> dict[str, Any]:
    return {
        "file": file,
        "test": finding.test,
        "index": finding.index,
        "metric": finding.metric,
        "severity": finding.severity,
        "reason": finding.reason,
        "canOnlyFail": fails,
    }


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--output", "output_format", type=OUTPUT_FORMAT, default="text")
@click.option("--strict", is_flag=True, help="Exit 1 on Unsound findings too.")
@no_traceback(code=BAD_INPUT)
def lint(files: tuple[Path, ...], output_format: str, strict: bool) -> None:
    """Lint every threshold a run of FILES would evaluate: each BurnInTest, and each
    BurnInProfile's inline tests, tests by testRef and their variants.

    Exit status: 0 clean (or only Unsound), 1 any Malformed or any gate that can only
    fail (or, with --strict, any finding), 2 bad input, a testRef whose BurnInTest is in
    none of FILES, or an internal error.
    """
    findings: list[dict[str, Any]] = []
    unresolved: list[str] = []
    try:
        documents = [d for path in files for d in load_documents(path) if d.kind in _LINTED_KINDS]
        for document in documents:
            _read_gates(document)
        tests = _burnin_tests(documents)
        for document in documents:
            reviewed = list(_reviewed(document, tests, unresolved))
            kinds = {test.name: test.kind for test in reviewed}
            findings += [
                _finding_json(f, file=str(document.path), fails=can_only_fail(f, kinds=kinds))
                for f in lint_tests(reviewed)
            ]
    except ManifestError as exc:
        fail(str(exc))
    if output_format == "json":
        click.echo(json.dumps(findings, indent=2))
    else:
        for f in findings:
            colour = "red" if f["severity"] == Severity.MALFORMED else "yellow"
            severity = click.style(f["severity"], fg=colour, bold=True)
            click.echo(f"{f['file']}: {f['test']}: {f['metric']}: {severity}: {f['reason']}")
        if not findings and not unresolved:
            click.echo("no findings")
    if unresolved:
        fail("; ".join(unresolved))
    failing = any(f["severity"] == Severity.MALFORMED or f["canOnlyFail"] for f in findings)
    raise SystemExit(exits.FAILED if failing or (strict and findings) else exits.OK)

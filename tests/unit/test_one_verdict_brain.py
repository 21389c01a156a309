"""One verdict brain: no module outside ``glimmer.verdict`` decides a phase or a
provenance with its own spelling of the words.

A controller, sink, report or command that compares status text with ``"Passed"`` or
``"silicon"``, counts it, or keeps its own set of phase words, is a second copy of a
rule, and copies drift (five terminal-phase sets once disagreed on Skipped; a node label
once read Passed from the results that happened to exist). The words live in
``glimmer.verdict.phases`` (``Phase``, ``Provenance``) and every decision in
``glimmer.verdict``; everything else classifies raw text through them.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Final

GLIMMER: Final = Path(__file__).resolve().parents[2] / "glimmer"

#: The verdict vocabulary (phases and provenances) as bare strings.
WORDS: Final = frozenset(
    {"Passed", "Failed", "Error", "Skipped", "Cancelled", "silicon", "sim", "unknown"}
)
#: Packages that own the words: the pure core, the API schema (enum declarations) and
#: the runner contract (its wire). ``glimmer.sim`` is the simulated kubelet, speaking
#: the Kubernetes pod phases (``Succeeded``/``Failed``), not verdicts.
OWNERS: Final = ("verdict/", "api/", "contract/", "sim/")
#: Words that mean something else where they appear, each with why.
ALLOWED: Final = {
    # A container's termination reason: the kubelet's word (pod phases are PodPhase).
    ("controllers/run/podstate.py", "Error"),
}


def _literals(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in WORDS:
        return [node.value]
    if isinstance(node, ast.Tuple | ast.Set | ast.List):
        return [w for e in node.elts for w in _literals(e)]
    return []


def offences(root: Path = GLIMMER) -> list[str]:
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(OWNERS):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            words: list[str] = []
            if isinstance(node, ast.Compare):
                for side in (node.left, *node.comparators):
                    words += _literals(side)
            elif isinstance(node, ast.Tuple | ast.Set | ast.List):
                # A pod-phase pair (Succeeded, Failed) is the kubelet's vocabulary.
                values = {getattr(e, "value", None) for e in node.elts}
                if "Succeeded" not in values:
                    words += _literals(node)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "count"
            ):
                for arg in node.args:
                    words += _literals(arg)
            for word in sorted(set(words)):
                if (rel, word) not in ALLOWED:
                    line = getattr(node, "lineno", 0)
                    found.append(f"glimmer/{rel}:{line}: {word!r} in {ast.unparse(node)[:80]}")
    return found


def test_no_module_outside_glimmer_verdict_spells_a_phase_or_provenance_in_a_decision() -> None:
    assert offences() == [], (
        "use glimmer.verdict (Phase, Provenance, Phase.parse_or_none, Phase.is_terminal_text, "
        "or a verdict function) instead of the words:\n" + "\n".join(offences())
    )


def test_the_scan_catches_a_re_spelled_verdict(tmp_path: Path) -> None:
    """The guard itself: a comparison, a set and a count of the words are all found."""
    (tmp_path / "controllers").mkdir()
    (tmp_path / "controllers" / "x.py").write_text(
        'DONE = {"Passed", "Failed"}\n'
        'def ok(r):\n    return r["phase"] == "Passed" and r["provenance"] != "sim"\n'
        'def n(p):\n    return p.count("Skipped")\n',
        encoding="utf-8",
    )
    (tmp_path / "verdict").mkdir()
    (tmp_path / "verdict" / "y.py").write_text('X = "Passed" == "Passed"\n', encoding="utf-8")
    found = offences(tmp_path)
    assert all(f.startswith("glimmer/controllers/x.py") for f in found)
    assert {f.split(":")[1] for f in found} == {"1", "3", "5"}

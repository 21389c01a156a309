"""Every rule ID the repository cites is defined in docs/rules.md, and every entry there is cited.

Code, docs and test names cite rules by ID (``E10``, ``I14``, bare ``H``); a citation
whose rule is defined nowhere inside the repository sends a reader outside it, and an
entry nothing cites is a rule nobody enforces. So, over glimmer/, runners/, tests/, docs/
and README.md:

- a citation in text is a capital A-P and one or two digits (``E10``, ``I31``),
  standing alone as a word (not inside ``FP8``, ``A5.00.01``,
  ``test_E10_x`` or ``rules.md#e10``); a few words shaped like IDs that name hardware
  (GPU part numbers in a list, GPU performance states) are told apart by their context;
- a citation in a test name is a token of a ``def test_...`` name: ``E10``, a bare family
  letter used as a rule (``test_H_...``);
- an entry is an ``<a id="e10"></a>`` anchor directly above an ``### E10 ...`` heading,
  and it names where the rule is enforced and a test that checks it; every
  ``path.py:name`` and ``path.py::test_name`` an entry names must exist.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CATALOGUE = REPO / "docs" / "rules.md"
CITING_TREES = ("glimmer", "runners", "tests", "docs")

_ID = r"[A-P]\d{1,2}"
_TEXT_CITATION = re.compile(rf"(?<![\w.\-/#])({_ID})(?![\w\-]|\.\d)")
#: A range, ``K1-K6``, cites every rule from its first to its last.
_RANGE = re.compile(r"(?<![\w.\-/#])([A-P])(\d{1,2})-\1?(\d{1,2})(?![\w\-]|\.\d)")
#: Words shaped like rule IDs that name hardware, blanked out before citations are read.
_LOOKALIKES = (
    # GPU part numbers in a list led by a three-digit one: "A100, A10, A40".
    re.compile(r"\b[A-Z]{1,2}\d{3}[A-Z]?(?:, [A-Z]{1,2}\d{1,3}[A-Z]?)+"),
    # GPU performance states: "a P-state above P0", "read as P8", "stays in P8".
    re.compile(r"\b(?:above|below|in|as) P\d{1,2}\b"),
)
_NAME_TOKEN = re.compile(r"[A-P]\d{0,2}")
_TEST_DEF = re.compile(r"^\s*(?:async\s+)?def\s+(test_\w+)", re.MULTILINE)

_ANCHOR = re.compile(r'^<a id="([^"]+)"></a>\s*$')
_ENTRY_HEADING = re.compile(rf"^### ({_ID}|[A-P])\b")
_CODE_REFERENCE = re.compile(r"`((?:glimmer|runners|tests)/[\w/.-]+\.py):([A-Za-z_][\w.]*)`")
_TEST_REFERENCE = re.compile(r"`((?:tests|runners)/[\w/.-]+\.py)::(test_\w+)`")
_PATH_REFERENCE = re.compile(r"`((?:glimmer|runners|tests|manifests|charts|hack|docs)/[\w/.*-]+)`")


#: The catalogue defines rather than cites, and this file's examples cite nothing.
_NOT_CITING = frozenset({CATALOGUE, Path(__file__).resolve()})


def citations_in_text(text: str) -> set[str]:
    """Rule IDs cited in prose, comments or docstrings."""
    for lookalike in _LOOKALIKES:
        text = lookalike.sub(lambda m: " " * len(m.group(0)), text)
    found = set(_TEXT_CITATION.findall(text))
    for family, first, last in _RANGE.findall(text):
        found.update(f"{family}{n}" for n in range(int(first), int(last) + 1))
    return found


def citations_in_test_name(name: str) -> set[str]:
    """Rule IDs in a test's name: ``test_I6_E10_x`` cites I6 and E10."""
    return {token for token in name.split("_")[1:] if _NAME_TOKEN.fullmatch(token)}


def citing_files(root: Path) -> Iterator[Path]:
    for tree in CITING_TREES:
        for path in sorted((root / tree).rglob("*")):
            if path.suffix in {".py", ".md"} and path.is_file() and path not in _NOT_CITING:
                yield path
    yield root / "README.md"


@cache
def cited_ids() -> dict[str, list[str]]:
    """Every rule ID cited in the repository, with the files that cite it."""
    where: dict[str, list[str]] = {}
    for path in citing_files(REPO):
        text = path.read_text(errors="replace")
        ids = citations_in_text(text)
        if path.suffix == ".py":
            for name in _TEST_DEF.findall(text):
                ids |= citations_in_test_name(name)
        for rule in ids:
            where.setdefault(rule, []).append(path.relative_to(REPO).as_posix())
    return where


def entries(text: str) -> dict[str, str]:
    """The catalogue's entries: rule ID -> the entry's text (up to the next heading)."""
    lines = text.splitlines()
    found: dict[str, str] = {}
    for number, line in enumerate(lines):
        anchor = _ANCHOR.match(line)
        if not anchor:
            continue
        heading = _ENTRY_HEADING.match(lines[number + 1]) if number + 1 < len(lines) else None
        assert heading, f"rules.md:{number + 1}: an anchor must sit directly above an entry"
        rule = heading.group(1)
        assert anchor.group(1) == rule.lower(), f"rules.md:{number + 1}: anchor is not {rule}"
        assert rule not in found, f"rules.md:{number + 1}: {rule} has two entries"
        body: list[str] = []
        for following in lines[number + 2 :]:
            if following.startswith("#") or _ANCHOR.match(following):
                break
            body.append(following)
        found[rule] = "\n".join(body)
    return found


@cache
def defined_names(path: Path) -> set[str]:
    """Dotted names (``Class.method``, ``function``) defined in a Python file."""
    names: set[str] = set()

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(prefix + child.name)
                walk(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.Assign | ast.AnnAssign):
                targets = child.targets if isinstance(child, ast.Assign) else [child.target]
                names.update(prefix + t.id for t in targets if isinstance(t, ast.Name))
            else:
                walk(child, prefix)

    walk(ast.parse(path.read_text()), "")
    return names


def unresolved_references(body: str, *, root: Path) -> list[str]:
    """The ``path:name``, ``path::test`` and path references in an entry that do not exist."""
    problems: list[str] = []
    for file, name in [*_CODE_REFERENCE.findall(body), *_TEST_REFERENCE.findall(body)]:
        path = root / file
        if not path.is_file():
            problems.append(f"{file}: no such file")
        elif name not in defined_names(path):
            problems.append(f"{file}: defines no {name}")
    for file in _PATH_REFERENCE.findall(body):
        if not any(root.glob(file)):
            problems.append(f"{file}: no such path")
    return problems


def catalogue() -> dict[str, str]:
    return entries(CATALOGUE.read_text())


def test_every_cited_rule_id_has_an_entry_in_the_catalogue() -> None:
    defined = catalogue()
    missing = {rule: files[:3] for rule, files in cited_ids().items() if rule not in defined}
    assert missing == {}, "cited but not defined in docs/rules.md (add an entry)"


def test_every_entry_in_the_catalogue_is_cited_somewhere() -> None:
    cited = cited_ids()
    dead = sorted(rule for rule in catalogue() if rule not in cited)
    assert dead == [], "entries in docs/rules.md that nothing cites (remove them)"


def test_every_entry_names_its_guard_and_a_test_and_they_exist() -> None:
    problems: dict[str, list[str]] = {}
    for rule, body in catalogue().items():
        found = unresolved_references(body, root=REPO)
        if "**Enforced:**" not in body:
            found.append("says nowhere where it is enforced (**Enforced:**)")
        if not _TEST_REFERENCE.search(body):
            found.append("names no test (`tests/...py::test_name`)")
        if found:
            problems[rule] = found
    assert problems == {}


def test_the_collector_reads_real_citations_and_skips_lookalikes() -> None:
    """The check can fail: each citation form is found, hardware names and code are not."""
    text = (
        "cordon first (E10); rule I31, I9 and G1; K1-K3. Parts A100, A10, A40; a "
        "P-state above P0 read as P8; FP8, A5.00.01, test_E11_x, rules.md#e12, L40S; sm_C1."
    )
    assert sorted(citations_in_text(text)) == ["E10", "G1", "I31", "I9", "K1", "K2", "K3"]
    assert sorted(citations_in_test_name("test_I6_E10_the_H_path_K_x_120_plus")) == [
        "E10",
        "H",
        "I6",
        "K",
    ]
    assert citations_in_test_name("test_G5_a_300_segment_soak") == {"G5"}


def test_the_catalogue_check_reads_entries_and_finds_a_broken_reference(tmp_path: Path) -> None:
    """The check can fail: a removed entry is no longer read, a missing test is reported."""
    e10 = (
        '<a id="e10"></a>\n### E10 cordon first\n\n- **Enforced:** `glimmer/x.py:f`\n'
        "- **Tested by:** `tests/t.py::test_E10_x`\n\n"
    )
    h = '<a id="h"></a>\n### H restarts\n'
    assert set(entries(e10 + h)) == {"E10", "H"}
    assert set(entries(h)) == {"H"}
    (tmp_path / "glimmer").mkdir()
    (tmp_path / "glimmer" / "x.py").write_text("def f():\n    pass\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "t.py").write_text("def test_E10_y():\n    pass\n")
    assert unresolved_references(entries(e10)["E10"], root=tmp_path) == [
        "tests/t.py: defines no test_E10_x"
    ]

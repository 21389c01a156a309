"""Nothing in the repository is named or described by a backlog number.

A backlog number ("issue 19", "19.8", "perf2 item 3", "h16amd") means something only to
whoever kept the backlog, and only for as long as it is kept. Files, test names,
sections, comments and docstrings name their subject and, where one applies, the rule ID
(``docs/rules.md``; ``test_rule_ids_resolve.py`` keeps those resolving). So, over the
tracked files in glimmer/, runners/, tests/, docs/, hack/, bench/ (not bench/results/,
historical figures), charts/, manifests/, .ci/ and README.md, this fails naming
``file:line`` on:

- a path whose folder or file name carries a backlog token: ``issue12``, ``perf2``,
  ``h16amd``, ``h16rccl``, or a module suffixed ``_i17.py``, ``_i19_8.py``, ``_I19.py``
  (GPU names such as ``h100`` or ``h200`` are not tokens);
- a test name (``def test_...``) with an ``issue``, ``issue12``, ``perf2`` or ``h16...``
  token;
- text naming ``issue 19``, ``issue #19`` or ``issue-18`` (an upstream tracker's own
  ``upstream issue #404``, or a URL, is an external reference and stays), ``perf2``,
  ``h16...``, or a bare backlog item in one of the forms prose gives it: the whole of a
  parenthesis (``(19.8)``, ``(19.14-19.16)``), a line's first word before a colon or a
  section header's first word (``# 19.11: ...``, ``\"\"\"19.8: ...``, ``# --- 19.8 ...``),
  after a rule ID and a slash (``E13/19.8``), or dotted onto a rule ID (``I19.3``).
  Version numbers, metric values and durations (``CUDA 12.8``, ``default=15.0``,
  ``(15.0, 10.0, 2.0)``, ``12.5 MB/s``) match none of these.

Files under a ``fixtures/`` folder other than its README are what a tool printed, kept
byte for byte, and are not read for text.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable, Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCANNED = ("glimmer", "runners", "tests", "docs", "hack", "bench", "charts", "manifests", ".ci")
NOT_SCANNED = ("bench/results/",)
SCANNED_FILES = ("README.md",)
_THIS_FILE = Path(__file__).resolve().relative_to(REPO).as_posix()

_PATH_TOKENS = (
    re.compile(r"(?i)issue[-_]?\d"),
    re.compile(r"(?i)perf\d"),
    re.compile(r"(?i)h1\d(?:amd|rccl)"),
    re.compile(r"_i\d+(?:_\d+)?\.py$"),
    re.compile(r"_I\d+\.py$"),
)

_TEST_DEF = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(test_\w+)", re.MULTILINE)
_NAME_TOKEN = re.compile(r"(?i)issue\d*|perf\d+|h16[a-z]*\d*")

_ITEM = r"1[2-9]\.\d{1,2}"
#: ``issue 19``, ``Issue 12.3``, ``issue #19``, ``issue-18``, ``issue`` at the end of a
#: comment line with its number on the next (``#: 18``).
_ISSUE = re.compile(r"(?i)\bissues?(?:[ \t\-]+|\s*\n\s*(?:#+:?|//)?[ \t]*)?#?\d+")
_UPSTREAM = re.compile(r"(?i)\bupstream\s+$")
_TEXT_TOKENS = (
    _ISSUE,
    re.compile(r"(?i)\bperf\d\b"),
    re.compile(r"(?i)\bh16\w*"),
    # The whole of a parenthesis: "(19.8)", "(19.14-19.16)".
    re.compile(rf"\({_ITEM}(?:\s*-\s*{_ITEM})?\)"),
    # A line's first word before a colon, or a section header's first word.
    re.compile(rf"(?m)^[ \t]*(?:#+:?[ \t]*|//[ \t]*|\"\"\"|''')?{_ITEM}(?:\s*-\s*{_ITEM})?:"),
    re.compile(rf"(?m)^[ \t]*#+[ \t]*-{{3,}}[ \t]*{_ITEM}\b"),
    # After a rule ID and a slash, or dotted onto a rule ID.
    re.compile(rf"\b[A-P]\d{{1,2}}/{_ITEM}\b"),
    re.compile(rf"\bI{_ITEM}\b"),
)


def tracked_files(root: Path) -> list[str]:
    """The repository's tracked files, relative to ``root`` (every file if git is absent)."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True
        ).stdout.decode()
        return [name for name in listed.split("\0") if name]
    except (OSError, subprocess.CalledProcessError):
        return [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()]


def scanned(paths: Iterable[str]) -> Iterator[str]:
    for path in paths:
        top = path.split("/", 1)[0]
        if path == _THIS_FILE or path.startswith(NOT_SCANNED):
            continue
        if path in SCANNED_FILES or (top in SCANNED and "/" in path):
            yield path


def path_problems(path: str) -> list[str]:
    """A folder or file name in ``path`` that carries a backlog token."""
    return [f"{path}: name carries {m.group(0)!r}" for t in _PATH_TOKENS if (m := t.search(path))]


def backlog_test_names(text: str) -> list[tuple[int, str]]:
    """(line, test name) for each ``def test_...`` with a backlog token."""
    found: list[tuple[int, str]] = []
    for match in _TEST_DEF.finditer(text):
        name = match.group(1)
        if any(_NAME_TOKEN.fullmatch(token) for token in name.split("_")[1:]):
            found.append((text.count("\n", 0, match.start(1)) + 1, name))
    return found


def text_problems(text: str) -> list[tuple[int, str]]:
    """(line, matched text) for each backlog number named in prose, comments or code, in
    the order they appear."""
    found: list[tuple[int, str]] = []
    for pattern in _TEXT_TOKENS:
        for match in pattern.finditer(text):
            before = text[max(0, match.start() - 20) : match.start()]
            if pattern is _ISSUE and _UPSTREAM.search(before):
                continue
            words = match.group(0)
            start = match.start() + len(words) - len(words.lstrip())
            found.append((start, " ".join(words.split())))
    return [(text.count("\n", 0, start) + 1, what) for start, what in sorted(found)]


def is_recorded_output(path: str) -> bool:
    return "/fixtures/" in f"/{path}" and not path.endswith("README.md")


def problems(root: Path, paths: Iterable[str]) -> list[str]:
    found: list[str] = []
    for path in scanned(paths):
        found += path_problems(path)
        file = root / path
        if is_recorded_output(path) or not file.is_file():
            continue
        raw = file.read_bytes()
        if b"\0" in raw:
            continue
        text = raw.decode(errors="replace")
        for line, what in text_problems(text):
            found.append(f"{path}:{line}: names {what!r}")
        if path.endswith(".py"):
            found += [f"{path}:{line}: test name {name}" for line, name in backlog_test_names(text)]
    return found


def test_nothing_names_a_backlog_number() -> None:
    found = problems(REPO, tracked_files(REPO))
    assert found == [], "name the subject and its rule ID (docs/rules.md) instead:\n" + "\n".join(
        found
    )


def test_the_scan_finds_backlog_numbers_and_skips_lookalikes(tmp_path: Path) -> None:
    """The scan can fail: each backlog form is found; GPU names, versions and values are not."""
    flagged = [
        "tests/unit/test_issue19_rules.py",
        "tests/unit/perf2/test_cache.py",
        "runners/tests/test_h16amd2.py",
        "tests/local/test_h16rccl_paths.py",
        "tests/unit/test_sweep_i19_8.py",
        "tests/unit/test_sweep_I19.py",
        "tests/unit/test_issue_17.py",
    ]
    clean = [
        "runners/sdk/simgpu/profiles_h100.py",
        "docs/vendors/h200.md",
        "runners/nccl/tests/fixtures/all_reduce_perf-2node-ib.txt",
        "tests/unit/test_api_i18n.py",
    ]
    assert [p for p in flagged if not path_problems(p)] == []
    assert [p for p in clean if path_problems(p)] == []

    text = "\n".join(
        [
            '"""Issue 19 rules held by the verdict (I19.3-I19.6)."""',  # 1
            "# --- issue 17 item 1: one attempt constructor ---",  # 2
            "#: the served namespaces (issue",  # 3
            "#: 18, RunReads.pods_of): read them.",  # 4
            "# 19.11: unclamped, so a status over budget ends the run Error",  # 5
            '    """19.8: an Error attempt naming the pod."""',  # 6
            "# --- 19.14 ---------------------------------------------",  # 7
            "exactly as a Node pod (19.8); see (19.14-19.16).",  # 8
            "# --- E13/19.8: adoption, foreign pods ---",  # 9
            "the bench's issue-18 table; perf2 item 3; on AMD (h16amd2).",  # 10
            "profile can override it (upstream behaviour, upstream issue #404).",  # 11
            "see https://github.com/golang/go/issues/404 and ``#123`` issue references",  # 12
            "default=15.0, CUDA 12.8, (15.0, 10.0, 2.0), 12.5 MB/s, 3.33 s, (12.3-14.3 s)",  # 13
            "H100, H200, h100_sxm, bf16; the CA issued it; ca.issue(name); issues: none",  # 14
            "design: 14.6). the per-item 5 ms; I19 and E10 are rule IDs",  # 15
        ]
    )
    found = text_problems(text)
    assert sorted({line for line, _ in found}) == [1, 2, 3, 5, 6, 7, 8, 9, 10]
    assert [what for line, what in found if line in (1, 3, 8, 10)] == [
        "Issue 19",
        "I19.3",
        "I19.6",
        "issue #: 18",
        "(19.8)",
        "(19.14-19.16)",
        "issue-18",
        "perf2",
        "h16amd2",
    ]

    names = "def test_issue19_x():\n    pass\nasync def test_E10_perf2_y():\n"
    names += "def test_I18_h16amd_z():\ndef test_H100_and_issued_certs():\ndef test_I9_x():\n"
    assert backlog_test_names(names) == [
        (1, "test_issue19_x"),
        (3, "test_E10_perf2_y"),
        (4, "test_I18_h16amd_z"),
    ]

    (tmp_path / "glimmer").mkdir()
    (tmp_path / "glimmer" / "x.py").write_text("x = 1\n# issue 19\n")
    (tmp_path / "bench" / "results").mkdir(parents=True)
    (tmp_path / "bench" / "results" / "r.md").write_text("issue 18's figures\n")
    assert problems(tmp_path, ["glimmer/x.py", "bench/results/r.md", "other/y.py"]) == [
        "glimmer/x.py:2: names 'issue 19'"
    ]

"""The runner contract as named clauses: what ``glimmer conformance`` prints, one row each.

Every problem the suites find belongs to exactly one clause, and each clause carries the
sentence that fixes it. :func:`run_findings` holds the rules every execution keeps (the
suite's :func:`~runners.conformance.execution.contract_problems` is its details), and
:func:`case_findings` adds what one case expects (its exit code, the healthy metrics, the
faulty device, no metric after a crash). :func:`card` runs every case of a kind (in
parallel, up to the cores) and folds the findings into one row per clause. The suites
and the CLI share this one engine: there is no second rule set.

Clauses the engine does not check yet would be rows too, reported as ``not checked``
(never as a pass): :data:`UNCHECKED` names them (none today).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Final

from glimmer.contract import REGISTRY, RunnerReport, ThresholdUse, parse_go_float, unit_of
from runners.catalog import RunnerSpec

#: The ``duration-deadline`` case's budget, and how long past it the process may take to
#: end (start-up and printing; the pod deadline allows the window plus 120 s).
DURATION_CASE_BUDGET_S: Final = 20.0
DURATION_CASE_SLACK_S: Final = 30.0

#: Row status words (a clause's state on the card, not a test phase).
PASS: Final = "pass"
FAIL: Final = "fail"
NOT_CHECKED: Final = "not checked"
NOT_REACHED: Final = "not reached"

#: Clause id -> (what the runner must do, the fix when it does not). Fault rows
#: (``fault:<case>``) are added per kind by :func:`clause_text`.
CLAUSES: Final[dict[str, tuple[str, str]]] = {
    "exit-codes": (
        "exits 0 (pass), 1 (fail), 2 (declared skip) or 3 (error), nothing else",
        "map every outcome to 0..3; catch crashes and exit 3 (runners.sdk.entry does)",
    ),
    "provenance": (
        "a measurement (exit 0/1) declares provenance=sim (silicon for host-only runners)",
        "print `provenance=sim` on the simulated GPU (`provenance=silicon` when it reads "
        "no GPU) before its verdict",
    ),
    "skip-marker": (
        "exit 2 only with its <PREFIX>_SKIP marker",
        "print `<PREFIX>_SKIP: <reason>` as the last line before exiting 2, or exit 3 "
        "when the runner cannot skip",
    ),
    "metric-grammar": (
        "every metric name keeps the grammar (lowerCamel, registered shape)",
        "rename the metric to lowerCamelCase (docs/runner-contract.md, Metric names)",
    ),
    "non-finite": (
        "no NaN or infinite value is printed",
        "print `name=n/a` for a value that was not measured, never nan or inf",
    ),
    "fail-marker": (
        "exit 1 ends with the <PREFIX>_FAIL: marker",
        "print `<PREFIX>_FAIL: <reason>` as the last line before exiting 1",
    ),
    "error-marker": (
        "exit 3 ends with the <PREFIX>_ERROR: marker",
        "print `<PREFIX>_ERROR: <reason>` as the last line before exiting 3",
    ),
    "pass-line": (
        "exit 0 ends with the kind's pass line",
        "print the kind's pass line (e.g. `<PREFIX>_PASS`) as the last line before exiting 0",
    ),
    "artifact-fences": (
        "every artifact fence is well formed (none dropped)",
        "open and close each artifact with matching fences within the size bounds "
        "(docs/runner-contract.md, Artifacts)",
    ),
    "healthy-metrics": (
        "a healthy run prints every metric the kind registers (a value or n/a)",
        "print each registered metric on a healthy run, `name=n/a` where it cannot measure",
    ),
    "crash-no-metrics": (
        "an injected crash (GLIMMER_SIM_GPU=<profile>:crash) prints no metric",
        "on a crash print only the <PREFIX>_ERROR: line: no measurement may stand beside an Error",
    ),
    "missing-dependency": (
        "a missing dependency (driver, tool) exits 3",
        "check the runner's dependency first and exit 3 with <PREFIX>_ERROR: naming it",
    ),
    "declared-skip": (
        "where the kind declares a skip, it exits 2",
        "detect the unsupported case and skip with <PREFIX>_SKIP (exit 2)",
    ),
    "unknown-fault": (
        "an unknown simulated fault is refused with exit 3",
        "refuse a GLIMMER_SIM_GPU it cannot parse with exit 3 (runners.sdk.simgpu does)",
    ),
    "finishes": (
        "every case ends within the suite's bound (60 s a case on the simulated GPU)",
        "finish inside BURNIN_DURATION_SECONDS; a simulated run needs no real load time",
    ),
    "units": (
        "a metric whose name carries a unit, or that is a registered measurement, prints "
        "a plain number: the unit lives in the name",
        "print `memoryBandwidthGBs=3200`, never `3200 GB/s` or `85%`; a word that is not "
        "a number needs a name without a unit suffix (docs/runner-contract.md, Names)",
    ),
    "n/a": (
        "on a part that has every feature (the healthy h200x2 case), no measurement is "
        "`n/a`: n/a says the part cannot give it",
        "measure it, or exit 3 when it could not be read: an `n/a` on a part that has the "
        "feature silently skips every RequiredIfMeasurable gate on it",
    ),
    "duration-deadline": (
        f"honours BURNIN_DURATION_SECONDS: given {DURATION_CASE_BUDGET_S:g} s, its own "
        f"elapsedS stays within it and it ends within {DURATION_CASE_SLACK_S:g} s more",
        "bound the measurement window by BURNIN_DURATION_SECONDS (runners.sdk's "
        "env.window_s does), keeping start-up and printing inside the pod deadline",
    ),
}

#: Clauses with no check in the engine: always shown, always ``not checked``.
UNCHECKED: Final[tuple[str, ...]] = ()


@dataclass(frozen=True)
class Finding:
    """One problem, the clause it breaks, and where (the case label, or '')."""

    clause: str
    detail: str
    case: str = ""


def clause_text(clause: str) -> tuple[str, str]:
    """What the clause asks and its fix; a ``fault:<case>`` row is told from its case."""
    if clause in CLAUSES:
        return CLAUSES[clause]
    if clause.startswith("healthy:"):
        profile = clause.removeprefix("healthy:")
        return (
            f"healthy {profile}: the fault matrix's exit code",
            "measure the simulated GPU through runners.sdk and exit as the fault matrix "
            "(runners/fault_matrix.py) says for this profile",
        )
    if clause.startswith("refuses:"):
        refusal = clause.removeprefix("refuses:")
        return (
            f"{refusal}: a Pair or Group side given variables it cannot use exits 3, its "
            "last line naming what it refused",
            "check the rendezvous variables (BURNIN_ROLE, BURNIN_RANK, ...) before anything "
            "else and exit 3 with <PREFIX>_ERROR: naming the one that is wrong",
        )
    fault = clause.removeprefix("fault:")
    return (
        f"{fault}: the fault matrix's exit code; a failure names the faulty device (on a "
        "link, the peer it could not reach)",
        f"read the device or link state the fault {fault} changes and exit as "
        "runners/fault_matrix.py says; name the faulty device in worstDeviceIndex, or the "
        "unreachable peer's address and node in the last line",
    )


def run_clauses(spec: RunnerSpec, exit_code: int) -> set[str]:
    """The clauses one execution with this exit code is judged on."""
    judged = {"exit-codes", "metric-grammar", "non-finite", "artifact-fences", "units"}
    if exit_code == 0 and spec.pass_line is not None:
        judged.add("pass-line")
    judged |= {1: {"fail-marker"}, 2: {"skip-marker"}, 3: {"error-marker"}}.get(exit_code, set())
    if exit_code in (0, 1):
        judged.add("provenance")
    return judged


def run_findings(spec: RunnerSpec, exit_code: int, report: RunnerReport) -> list[Finding]:
    """Rules every execution must keep, whatever its exit code (one clause each)."""
    found: list[Finding] = []
    if exit_code not in (0, 1, 2, 3):
        found.append(
            Finding("exit-codes", f"exit {exit_code} is outside the runner contract's 0..3")
        )
    if report.invalid_names:
        found.append(
            Finding("metric-grammar", f"invalid metric names printed: {list(report.invalid_names)}")
        )
    if exit_code == 2 and not report.skip_declared:
        found.append(Finding("skip-marker", "exit 2 without a declared <PREFIX>_SKIP marker"))
    if exit_code == 1 and not report.message.startswith(spec.fail_prefix):
        found.append(Finding("fail-marker", f"exit 1 but last line is {report.message!r}"))
    if exit_code == 3 and not report.message.startswith(spec.error_prefix):
        found.append(Finding("error-marker", f"exit 3 but last line is {report.message!r}"))
    if exit_code == 0 and spec.pass_line is not None and report.message != spec.pass_line:
        found.append(Finding("pass-line", f"exit 0 but last line is {report.message!r}"))
    if exit_code in (0, 1):
        expected = spec.conformance_provenance
        if report.provenance != expected:
            found.append(
                Finding("provenance", f"provenance {report.provenance!r}, expected {expected!r}")
            )
    for name, value in report.metrics.items():
        if value.strip().lower() in ("nan", "inf", "-inf", "+inf"):
            found.append(Finding("non-finite", f"non-finite value printed: {name}={value}"))
        elif _numeric(name) and parse_go_float(value) is None:
            found.append(Finding("units", f"{name}={value}: not a plain number"))
    if report.dropped_artifacts:
        found.append(
            Finding("artifact-fences", f"{len(report.dropped_artifacts)} artifact(s) dropped")
        )
    return found


def _numeric(name: str) -> bool:
    """A name whose value must be a number: it carries a unit, or is a registered
    measurement (thresholds gate it)."""
    spec = REGISTRY.get(name)
    return unit_of(name) != "" or (spec is not None and spec.use == ThresholdUse.ACCEPTANCE)


def na_findings(report: RunnerReport) -> list[Finding]:
    """The ``n/a`` clause on a part with every feature: no registered measurement n/a."""
    declared = sorted(
        name
        for name in report.unmeasurable
        if (spec := REGISTRY.get(name)) is not None and spec.use == ThresholdUse.ACCEPTANCE
    )
    if not declared:
        return []
    return [Finding("n/a", f"declared n/a on a part that has the feature: {declared}")]


def duration_findings(report: RunnerReport, *, wall_s: float) -> list[Finding]:
    """The ``duration-deadline`` clause, given :data:`DURATION_CASE_BUDGET_S`."""
    found = []
    elapsed = parse_go_float(report.metrics.get("elapsedS", ""))
    if elapsed is not None and elapsed > DURATION_CASE_BUDGET_S:
        found.append(
            Finding(
                "duration-deadline",
                f"elapsedS={elapsed:g} overran the {DURATION_CASE_BUDGET_S:g} s budget",
            )
        )
    if wall_s > DURATION_CASE_BUDGET_S + DURATION_CASE_SLACK_S:
        found.append(
            Finding(
                "duration-deadline",
                f"took {wall_s:.0f} s of wall time on a {DURATION_CASE_BUDGET_S:g} s budget",
            )
        )
    return found


#: Link and fabric cases where a side is handed rendezvous variables it must refuse
#: (exit 3): each is a ``refuses:<label>`` row.
REFUSAL_LABELS: Final = frozenset(
    {
        "group-scope-refused",
        "pair-scope-refused",
        "bad-role",
        "rank-out-of-range",
        "unknown-measurand",
    }
)


def case_clause(label: str) -> str:
    """The clause whose row a case's exit code is judged on (a Node, link or fabric
    case: ``fault:<label>``, ``healthy:<profile>``, ``refuses:<label>`` or a named one)."""
    if label in ("missing-dependency", "declared-skip", "unknown-fault"):
        return label
    if label in REFUSAL_LABELS:
        return f"refuses:{label}"
    if label == "duration":
        return "duration-deadline"
    if label.startswith("healthy-"):
        return f"healthy:{label.removeprefix('healthy-')}"
    return f"fault:{label}"


def is_crash_case(label: str) -> bool:
    return label in ("crash", "amd-crash")


@dataclass(frozen=True)
class Row:
    clause: str
    status: str
    asks: str
    fix: str
    #: Cases the clause was judged on.
    cases: int
    #: Every problem found, ``case: detail``.
    problems: tuple[str, ...]


@dataclass(frozen=True)
class Card:
    kind: str
    command: tuple[str, ...]
    rows: tuple[Row, ...]
    #: What the header must say beside the command (a second command, the network).
    notes: tuple[str, ...] = ()

    @property
    def failed(self) -> tuple[str, ...]:
        return tuple(r.clause for r in self.rows if r.status == FAIL)


#: One case -> its findings, and the clauses it was judged on.
CaseRun = Callable[[], tuple[list[Finding], set[str]]]


def fold(
    kind: str,
    command: Sequence[str],
    results: Sequence[tuple[list[Finding], set[str]]],
    *,
    notes: Sequence[str] = (),
) -> Card:
    """One row per clause: fail with every problem, pass where judged and clean, else
    ``not reached`` (no case exercised it) or ``not checked`` (no check exists)."""
    judged: dict[str, int] = {}
    problems: dict[str, list[str]] = {}
    for found, clauses in results:
        for clause in clauses:
            judged[clause] = judged.get(clause, 0) + 1
        for finding in found:
            judged.setdefault(finding.clause, 1)
            problems.setdefault(finding.clause, []).append(
                f"{finding.case}: {finding.detail}" if finding.case else finding.detail
            )
    order = [c for c in CLAUSES if c not in UNCHECKED]
    order += sorted(c for c in judged if c not in CLAUSES)
    rows = []
    for clause in order:
        asks, fix = clause_text(clause)
        if clause in problems:
            status = FAIL
        elif judged.get(clause):
            status = PASS
        else:
            status = NOT_REACHED
        rows.append(
            Row(clause, status, asks, fix, judged.get(clause, 0), tuple(problems.get(clause, ())))
        )
    for clause in UNCHECKED:
        asks, fix = CLAUSES[clause]
        rows.append(Row(clause, NOT_CHECKED, asks, fix, 0, ()))
    return Card(kind=kind, command=tuple(command), rows=tuple(rows), notes=tuple(notes))


def run_all(
    runs: Sequence[CaseRun], *, jobs: int | None = None
) -> list[tuple[list[Finding], set[str]]]:
    """Run every case, up to ``jobs`` at once (default: the cores)."""
    workers = max(1, jobs or os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda run: run(), runs))

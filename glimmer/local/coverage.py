"""Which modelled faults a profile catches: ``glimmer run`` once per simulated fault (N13).

Why subprocesses of ``glimmer run`` and not a verdict of our own: coverage must say what a
run *would* conclude, so it asks the one brain. Every case is ``glimmer run PROFILE --sim
<profile>:<fault> -o json`` in its own results directory, and a case's outcome is read
back from the ``run.json`` it wrote, through the one result codec
(:func:`glimmer.verdict.codec.result_from_json`): the run phase, the failing tests and the
gate each violated are the run's, never re-decided here. A case that wrote no
``run.json`` was not judged, and coverage says so rather than guessing.

Why the healthy control: a profile that fails a healthy simulated node "catches" every
fault and measures nothing, so the control runs beside the faults and its failure makes
the whole coverage report void (the CLI refuses to print a matrix for it).

Why host-real runners are left out of most cases: memory-stress and disk-io load the
real host even under ``--sim`` (docs/simulated-gpu.md), and no GPU fault reaches them
(their cell in the fault matrix is "not read"). Running them once per fault would load
the host eleven times to learn nothing, so a case runs a derived profile without the
host-real tests the simulator's fault does not reach (for the control too: the real
host is not what coverage measures); they run only where a modelled fault reaches them
(``crash``, which ends them before they load anything).

Why threads over subprocesses: each case is its own ``glimmer run`` process; the threads
only wait on them, so ``jobs`` cases run at once on the machine's cores.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from glimmer.contract.kinds import HARDWARE_INDEPENDENT_KINDS
from glimmer.local.manifests import Document, spec_of
from glimmer.verdict import Phase
from glimmer.verdict.codec import result_from_json
from runners.catalog import sim_spec_problem
from runners.fault_matrix import (
    ERROR,
    FAILED,
    FAULT_STORIES,
    FAULTS,
    MATRIX_PROFILE,
    FaultStory,
    fault_matrix_for,
)

HEALTHY: Final = "healthy"
#: The simulated part coverage runs on when ``--sim`` names none: two devices, so every
#: fault lands on device 1 and a fold must find it (the fault matrix's own profile).
DEFAULT_SIM: Final = MATRIX_PROFILE
#: A case's wall-clock bound: the simulator's clock makes long windows cheap, so a case
#: still running after this is stuck, not slow.
CASE_TIMEOUT_S: Final = 600.0
#: Why a host-real test is left out of a case.
HOST_REAL_NOTE: Final = "a real-host test this fault does not reach"


@dataclass(frozen=True)
class Case:
    """One ``glimmer run``: a simulated part and one fault (or ``healthy``)."""

    sim: str
    fault: str

    @property
    def spec(self) -> str:
        """The ``--sim`` value of the run."""
        return self.sim if self.fault == HEALTHY else f"{self.sim}:{self.fault}"

    @property
    def label(self) -> str:
        return self.fault

    @property
    def story(self) -> FaultStory:
        return FAULT_STORIES[self.fault]


@dataclass(frozen=True)
class PlannedTest:
    """A test of the profile's plan (after variants): a column of the matrix."""

    name: str
    kind: str
    required: bool


@dataclass(frozen=True)
class TestCell:
    """One test's result in one case, as the run recorded it."""

    __test__ = False  # not a pytest test class, despite the name

    name: str
    kind: str
    #: The result's phase word, or ``None`` when the case left the test out.
    phase: str | None
    required: bool
    #: What decided a Fail or Error: the first violated gate, else the runner's verdict.
    gate: str = ""
    message: str = ""


@dataclass(frozen=True)
class CaseOutcome:
    case: Case
    #: The run's phase from its run.json, or ``None`` when it wrote none (not judged).
    phase: str | None
    exit_code: int
    cells: tuple[TestCell, ...]
    #: Why the case was not judged ("" when it was).
    problem: str = ""
    seconds: float = 0.0

    @property
    def caught(self) -> bool:
        """The run would not Pass: it Failed or Errored."""
        return self.phase in (str(Phase.FAILED), str(Phase.ERROR))

    @property
    def catchers(self) -> tuple[TestCell, ...]:
        """The required tests whose Fail or Error made the run not Pass."""
        return tuple(c for c in self.cells if c.required and c.phase in (FAILED, ERROR))


@dataclass(frozen=True)
class Coverage:
    profile: str
    sims: tuple[str, ...]
    control: tuple[CaseOutcome, ...]
    faults: tuple[CaseOutcome, ...]
    tests: tuple[PlannedTest, ...]
    seconds: float
    jobs: int

    @property
    def control_passed(self) -> bool:
        return all(o.phase == str(Phase.PASSED) for o in self.control)

    @property
    def unjudged(self) -> tuple[CaseOutcome, ...]:
        return tuple(o for o in (*self.control, *self.faults) if o.phase is None)

    @property
    def missed(self) -> tuple[CaseOutcome, ...]:
        return tuple(o for o in self.faults if not o.caught)

    def label(self, outcome: CaseOutcome) -> str:
        """The fault's name, with its part when more than one part was covered."""
        if len(self.sims) > 1:
            return f"{outcome.case.sim}:{outcome.case.fault}"
        return outcome.case.fault

    def summary_line(self) -> str:
        caught = len(self.faults) - len(self.missed)
        line = f"catches {caught} of {len(self.faults)} modelled faults"
        if self.missed:
            line += "; misses: " + ", ".join(self.label(o) for o in self.missed)
        return line


def modelled_faults(sim: str) -> tuple[str, ...]:
    """The Node faults of the simulator's matrix that this part can have: the
    simulator's own parser refuses the others (an Xid on an AMD part)."""
    return tuple(f for f in FAULTS if f != HEALTHY and sim_spec_problem(f"{sim}:{f}") is None)


def sim_profiles_problem(sims: Sequence[str]) -> str | None:
    """Why ``--sim PROFILE,...`` cannot be covered, or None."""
    if not sims:
        return "give at least one simulated profile, e.g. h200x2"
    for sim in sims:
        if ":" in sim:
            return (
                f"{sim!r}: name the part only (e.g. h200x2); coverage runs every fault "
                "of the matrix on it"
            )
        problem = sim_spec_problem(sim)
        if problem is not None:
            return f"{sim!r}: {problem}"
    return None


def cases_for(sims: Sequence[str]) -> list[Case]:
    """The control of every part first, then its faults in the matrix's order."""
    cases = [Case(sim, HEALTHY) for sim in sims]
    cases += [Case(sim, fault) for sim in sims for fault in modelled_faults(sim)]
    return cases


def nothing_to_cover(tests: Sequence[PlannedTest]) -> str | None:
    """Why a plan has nothing coverage can measure (only real-host tests), or None."""
    if tests and all(t.kind in HARDWARE_INDEPENDENT_KINDS for t in tests):
        kinds = ", ".join(sorted({t.kind for t in tests}))
        return (
            f"every test of the profile loads the real host ({kinds}): no simulated GPU "
            "fault reaches them, so coverage has nothing to measure; cover a profile with "
            "GPU tests"
        )
    return None


def _entry_kind(entry: Mapping[str, Any], tests: Mapping[str, Mapping[str, Any]]) -> str:
    inline = entry.get("inline")
    if isinstance(inline, Mapping):
        return str(inline.get("kind", ""))
    return str(tests.get(str(entry.get("testRef", "")), {}).get("kind", ""))


def host_real_left_out(kind: str, case: Case) -> bool:
    """Whether a case leaves a test of ``kind`` out: a host-real runner the case's
    simulated fault does not reach (every cell of its matrix row but Error/Failed)."""
    if kind not in HARDWARE_INDEPENDENT_KINDS:
        return False
    cell = fault_matrix_for(case.sim).get(kind, {}).get(case.fault)
    return cell not in (ERROR, FAILED)


def derived_documents(documents: Sequence[Document], case: Case) -> list[dict[str, Any]]:
    """The documents a case runs: every BurnInProfile without the host-real tests the
    case's fault does not reach; everything else as given (each object once)."""
    tests: dict[str, Mapping[str, Any]] = {
        d.name: spec_of(d) for d in documents if d.kind == "BurnInTest" and d.name
    }
    seen: set[tuple[Path, int]] = set()
    bodies: list[dict[str, Any]] = []
    for document in documents:
        where = (document.path.resolve(), document.index)
        if where in seen:
            continue
        seen.add(where)
        body: dict[str, Any] = json.loads(json.dumps(document.body))
        spec = body.get("spec")
        if document.kind == "BurnInProfile" and isinstance(spec, dict):
            entries = spec.get("tests")
            if isinstance(entries, list):
                spec["tests"] = [
                    e
                    for e in entries
                    if not (
                        isinstance(e, Mapping) and host_real_left_out(_entry_kind(e, tests), case)
                    )
                ]
        bodies.append(body)
    return bodies


def glimmer_command() -> list[str]:
    """This interpreter's ``glimmer``: the same code as the command that runs coverage."""
    return [sys.executable, "-c", "from glimmer.cli import main; main()"]


def _gate(state_violations: Sequence[Any], *, phase: str, message: str) -> str:
    if state_violations:
        first = state_violations[0]
        reason = str(first.reason)
        return reason if reason.startswith(first.metric) else f"{first.metric}: {reason}"
    if phase in (FAILED, ERROR):
        code = message.split(":", 1)[0].strip()
        return f"runner verdict {code}" if code else "runner verdict"
    return ""


def read_outcome(
    case: Case, *, report_dir: Path, exit_code: int, stderr: str, seconds: float
) -> CaseOutcome:
    """A case's outcome from the run.json its run wrote, through the result codec."""
    path = report_dir / "run.json"
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        tail = " ".join(stderr.strip().splitlines()[-3:])
        return CaseOutcome(
            case=case,
            phase=None,
            exit_code=exit_code,
            cells=(),
            problem=f"glimmer run exited {exit_code} and wrote no readable run.json "
            f"({exc.__class__.__name__}){': ' + tail if tail else ''}",
            seconds=seconds,
        )
    cells: list[TestCell] = []
    for entry in document.get("results") or []:
        if not isinstance(entry, Mapping):
            continue
        required = entry.get("required") is True
        state = result_from_json(entry, required=required)
        phase = str(state.phase)
        cells.append(
            TestCell(
                name=state.name,
                kind=state.kind,
                phase=phase,
                required=required,
                gate=_gate(state.violations, phase=phase, message=state.message),
                message=state.message,
            )
        )
    return CaseOutcome(
        case=case,
        phase=str(document.get("phase", "")) or None,
        exit_code=exit_code,
        cells=tuple(cells),
        seconds=seconds,
    )


def run_case(
    case: Case,
    *,
    documents: Sequence[Document],
    profile_name: str | None,
    work_dir: Path,
    timeout_s: float = CASE_TIMEOUT_S,
) -> CaseOutcome:
    """``glimmer run`` of the case's derived profile, read back from its run.json."""
    case_dir = work_dir / case.sim / case.fault.replace(":", "-")
    case_dir.mkdir(parents=True, exist_ok=True)
    profile_file = case_dir / "profile.yaml"
    profile_file.write_text(
        yaml.safe_dump_all(derived_documents(documents, case), sort_keys=False),
        encoding="utf-8",
    )
    report_dir = case_dir / "report"
    command = [
        *glimmer_command(),
        "run",
        str(profile_file),
        "--sim",
        case.spec,
        "--report-dir",
        str(report_dir),
        "-o",
        "json",
        *(["--profile", profile_name] if profile_name else []),
    ]
    started = time.monotonic()
    try:
        done = subprocess.run(
            command,
            cwd=case_dir,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
            env={**os.environ, "NO_COLOR": "1"},
        )
        exit_code, stderr = done.returncode, done.stderr
    except subprocess.TimeoutExpired:
        exit_code, stderr = -1, f"timed out after {timeout_s:.0f} s"
    return read_outcome(
        case,
        report_dir=report_dir,
        exit_code=exit_code,
        stderr=stderr,
        seconds=time.monotonic() - started,
    )


def _with_left_out(outcome: CaseOutcome, *, tests: Sequence[PlannedTest]) -> CaseOutcome:
    """Every planned test in the profile's order; those the case left out as such."""
    by_name = {c.name: c for c in outcome.cells}
    if outcome.phase is None:
        return outcome
    cells = tuple(
        by_name.get(t.name)
        or TestCell(
            name=t.name, kind=t.kind, phase=None, required=t.required, message=HOST_REAL_NOTE
        )
        for t in tests
    )
    planned = {t.name for t in tests}
    extra = tuple(c for c in outcome.cells if c.name not in planned)
    return CaseOutcome(
        case=outcome.case,
        phase=outcome.phase,
        exit_code=outcome.exit_code,
        cells=cells + extra,
        problem=outcome.problem,
        seconds=outcome.seconds,
    )


def cover(
    *,
    documents: Sequence[Document],
    profile: str,
    profile_name: str | None,
    tests: Sequence[PlannedTest],
    sims: Sequence[str],
    work_dir: Path,
    jobs: int,
    on_done: Callable[[CaseOutcome], None] | None = None,
) -> Coverage:
    """Every case of ``sims`` at once, ``jobs`` at a time.

    ``tests`` is the profile's plan, in order: the rows of the matrix,
    so a test a case left out is still shown.
    """
    started = time.monotonic()
    cases = cases_for(sims)

    def one(case: Case) -> CaseOutcome:
        outcome = run_case(case, documents=documents, profile_name=profile_name, work_dir=work_dir)
        if on_done is not None:
            on_done(outcome)
        return outcome

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        outcomes = list(pool.map(one, cases))
    outcomes = [_with_left_out(o, tests=tests) for o in outcomes]
    return Coverage(
        profile=profile,
        sims=tuple(sims),
        control=tuple(o for o in outcomes if o.case.fault == HEALTHY),
        faults=tuple(o for o in outcomes if o.case.fault != HEALTHY),
        tests=tuple(tests),
        seconds=time.monotonic() - started,
        jobs=max(1, jobs),
    )


def default_jobs() -> int:
    """The machine's cores (the cases are CPU-bound processes)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1

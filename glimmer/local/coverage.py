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

Why Pair and Group cases are real sides on this host: a link's verdict is decided by the
client (Pair, folding the server's record) or by ``glimmer merge`` (Group), so a link case
runs what a bare-host user runs: a ``--role server`` and a ``--role client`` process over
127.0.0.1 (or every ``--rank`` and then ``glimmer merge``), the fault in the ``--sim`` of
the side ``runners.fault_matrix.FABRIC_FAULT_SIDE`` names, and reads the client's (or the
merge's) run.json through the same codec. ``dead-peer`` is real: that side is never
started. Each link case gets ports of its own (so cases run at once) and a bounded
rendezvous wait (the peer is on this host: one that has not come in
:data:`LINK_CONNECT_S` is not coming). A Group's ``dead-peer`` is not a case: ``glimmer
merge`` refuses a partial turnout before any test is judged (F6), so no profile can miss
it on a bare host.

Why threads over subprocesses: each case is its own ``glimmer run`` process; the threads
only wait on them, so ``jobs`` cases run at once on the machine's cores.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from glimmer.contract.kinds import HARDWARE_INDEPENDENT_KINDS
from glimmer.local.manifests import Document, spec_of
from glimmer.local.records import SERVER_RECORD_PATH, new_session, rank_record_path
from glimmer.plan import spec as specs
from glimmer.plan.variants import inline_name
from glimmer.verdict import Phase
from glimmer.verdict.codec import result_from_json
from runners.catalog import RUNNERS, sim_spec_problem
from runners.fault_matrix import (
    ERROR,
    FABRIC_FAULT_SIDE,
    FABRIC_FAULTS,
    FAILED,
    FAULT_STORIES,
    FAULTS,
    LINK_FAULTS,
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
NODE: Final = "Node"
PAIR: Final = "Pair"
GROUP: Final = "Group"
#: The scopes in the order coverage runs and shows them.
SCOPES: Final = (NODE, PAIR, GROUP)
#: The fault whose side is never started (no ``--sim`` fault: a process that is not there).
DEAD_PEER: Final = "dead-peer"
#: How many ranks a Group case runs: two hold every side the fault matrix names (rank 0,
#: and the last rank as the worker / the one that never joins).
GROUP_RANKS: Final = 2
#: Every rendezvous wait of a link case, in seconds: both sides are on this host, so a
#: peer that has not come by then is not coming (the test's own wait may be minutes).
LINK_CONNECT_S: Final = 10
#: The exit status of a side that decides nothing (a Pair server, a Group rank) once it
#: has written its record whole (N4's "nothing judged"); any other is a side that did
#: not run as the case meant, so the case is not judged.
SIDE_RECORDED: Final = 2
#: The node names a link case's sides record.
SERVER_NODE: Final = "coverage-server"
CLIENT_NODE: Final = "coverage-client"


@dataclass(frozen=True)
class Case:
    """One ``glimmer run`` (or one link: its sides), a simulated part and one fault (or
    ``healthy``), over the profile's tests of one scope."""

    sim: str
    fault: str
    scope: str = NODE

    @property
    def spec(self) -> str:
        """The ``--sim`` value of the run (of the faulty side, for a link)."""
        if self.fault in (HEALTHY, DEAD_PEER):
            return self.sim
        return f"{self.sim}:{self.fault}"

    @property
    def label(self) -> str:
        return self.fault

    @property
    def story(self) -> FaultStory:
        return story_of(self.fault)

    @property
    def sides(self) -> int:
        """How many processes a full turnout of the case has."""
        return 1 if self.scope == NODE else 2 if self.scope == PAIR else GROUP_RANKS

    @property
    def faulty_side(self) -> int | None:
        """Which side carries the fault (Pair: 0 the server, 1 the client, as
        ``FABRIC_FAULT_SIDE`` names it, the link runners' faults the server's; Group:
        the rank); None when healthy."""
        if self.fault == HEALTHY:
            return None
        if self.scope == NODE:
            return 0
        if self.scope == PAIR:
            return 0 if FABRIC_FAULT_SIDE.get(self.fault, "server") == "server" else 1
        # A Group's fault is rank 0's (where nccl's simulated tool runs), one that never
        # joins the last rank's: as the fabric conformance cases place them.
        return self.sides - 1 if self.fault == "no-rendezvous" else 0

    def side_sim(self, side: int) -> str | None:
        """The ``--sim`` of one side, or None for the side ``dead-peer`` never starts."""
        if side != self.faulty_side:
            return self.sim
        return None if self.fault == DEAD_PEER else self.spec

    @property
    def where(self) -> str:
        """The case in words: its ``--sim`` and, for a link, which side has the fault."""
        if self.scope == NODE or self.faulty_side is None:
            return self.spec if self.scope == NODE else f"{self.scope} {self.spec}"
        names = ("server", "client") if self.scope == PAIR else None
        side = names[self.faulty_side] if names else f"rank {self.faulty_side}"
        if self.fault == DEAD_PEER:
            return f"{self.scope} {self.sim}, the {side} never started"
        return f"{self.scope} {self.spec} on the {side}"


def story_of(fault: str) -> FaultStory:
    """What the fault models and what catches it (``FAULT_STORIES``); a fault of the
    matrices that has no story yet says so in those words rather than stopping the run
    (``tests/local/test_coverage_N13.py`` holds every covered fault to having one)."""
    told = FAULT_STORIES.get(fault)
    if told is not None:
        return told
    return FaultStory(
        models=f"(not told yet: {fault} has no entry in runners/fault_matrix.py:FAULT_STORIES)",
        caught_by="(not told yet)",
    )


@dataclass(frozen=True)
class PlannedTest:
    """A test of the profile's plan (after variants): a column of the matrix."""

    name: str
    kind: str
    required: bool
    scope: str = NODE


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
class Section:
    """One scope's part of the coverage: its tests (the matrix's columns), its healthy
    control and its faults. A section whose control did not Pass is void."""

    scope: str
    tests: tuple[PlannedTest, ...]
    control: tuple[CaseOutcome, ...]
    faults: tuple[CaseOutcome, ...]

    @property
    def control_passed(self) -> bool:
        return all(o.phase == str(Phase.PASSED) for o in self.control)


@dataclass(frozen=True)
class Coverage:
    profile: str
    sims: tuple[str, ...]
    #: Every scope's healthy control, and every fault case (a section's only when its
    #: control Passed, or it is void: see :attr:`counted`).
    control: tuple[CaseOutcome, ...]
    faults: tuple[CaseOutcome, ...]
    tests: tuple[PlannedTest, ...]
    seconds: float
    jobs: int

    @property
    def sections(self) -> tuple[Section, ...]:
        """The scopes covered, Node first: each with its tests, control and faults."""
        found = []
        for scope in SCOPES:
            control = tuple(o for o in self.control if o.case.scope == scope)
            if not control:
                continue
            found.append(
                Section(
                    scope=scope,
                    tests=tuple(t for t in self.tests if t.scope == scope),
                    control=control,
                    faults=tuple(o for o in self.faults if o.case.scope == scope),
                )
            )
        return tuple(found)

    @property
    def control_passed(self) -> bool:
        return all(o.phase == str(Phase.PASSED) for o in self.control)

    @property
    def counted(self) -> tuple[CaseOutcome, ...]:
        """The fault cases of every section whose control Passed: a void section (its
        healthy control did not Pass) measures nothing, so none of its rows count."""
        return tuple(o for s in self.sections if s.control_passed for o in s.faults)

    @property
    def unjudged(self) -> tuple[CaseOutcome, ...]:
        return tuple(o for o in (*self.control, *self.faults) if o.phase is None)

    @property
    def missed(self) -> tuple[CaseOutcome, ...]:
        return tuple(o for o in self.counted if not o.caught)

    def label(self, outcome: CaseOutcome) -> str:
        """The fault's name, with its part when more than one part was covered, and its
        scope when the fault is a case of more than one scope (a Pair's and a Group's)."""
        name = outcome.case.fault
        if len(self.sims) > 1 and outcome.case.scope == NODE:
            name = f"{outcome.case.sim}:{name}"
        scopes = {o.case.scope for o in self.faults if o.case.fault == outcome.case.fault}
        return f"{name} ({outcome.case.scope})" if len(scopes) > 1 else name

    def summary_line(self) -> str:
        counted = self.counted
        caught = len(counted) - len(self.missed)
        line = f"catches {caught} of {len(counted)} modelled faults"
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


def link_faults(sim: str, scope: str) -> tuple[str, ...]:
    """Every fault of the link and fabric matrices (``LINK_FAULTS``, ``FABRIC_FAULTS``) a
    Pair or Group on this part can have: the simulator's parser decides, and
    ``dead-peer`` (a side never started) is a Pair's only: a Group's partial turnout is
    refused by ``glimmer merge`` before any test is judged."""
    found = []
    for fault in dict.fromkeys((*FABRIC_FAULTS, *LINK_FAULTS)):
        if fault == HEALTHY:
            continue
        if fault == DEAD_PEER:
            if scope == PAIR:
                found.append(fault)
        elif sim_spec_problem(f"{sim}:{fault}") is None:
            found.append(fault)
    return tuple(found)


def scopes_of(tests: Sequence[PlannedTest]) -> tuple[str, ...]:
    """The scopes the plan has tests of, in :data:`SCOPES` order."""
    held = {t.scope for t in tests}
    return tuple(s for s in SCOPES if s in held)


def faults_of(sims: Sequence[str], scopes: Sequence[str]) -> list[str]:
    """Every fault coverage runs for these parts and scopes (for ``--require``)."""
    found = [f for sim in sims for f in modelled_faults(sim)] if NODE in scopes else []
    found += [f for scope in scopes if scope != NODE for f in link_faults(sims[0], scope)]
    return sorted(set(found))


def cases_for(sims: Sequence[str], scopes: Sequence[str] = (NODE,)) -> list[Case]:
    """The control of every part first, then its faults in the matrix's order; then each
    link scope's control and faults, on the first part (a link fault is the NIC's, and
    the simulated NIC is the same on every part)."""
    cases: list[Case] = []
    if NODE in scopes:
        cases += [Case(sim, HEALTHY) for sim in sims]
        cases += [Case(sim, fault) for sim in sims for fault in modelled_faults(sim)]
    for scope in scopes:
        if scope != NODE:
            cases.append(Case(sims[0], HEALTHY, scope))
            cases += [Case(sims[0], fault, scope) for fault in link_faults(sims[0], scope)]
    return cases


def nothing_to_cover(tests: Sequence[PlannedTest]) -> str | None:
    """Why a plan has nothing coverage can measure (only real-host tests), or None."""
    if any(t.scope != NODE for t in tests):
        return None
    if tests and all(t.kind in HARDWARE_INDEPENDENT_KINDS for t in tests):
        kinds = ", ".join(sorted({t.kind for t in tests}))
        return (
            f"every test of the profile loads the real host ({kinds}): no simulated GPU "
            "fault reaches them, so coverage has nothing to measure; cover a profile with "
            "GPU tests"
        )
    return None


def _entry_spec(
    entry: Mapping[str, Any], tests: Mapping[str, Mapping[str, Any]]
) -> Mapping[str, Any]:
    inline = entry.get("inline")
    if isinstance(inline, Mapping):
        return inline
    return tests.get(str(entry.get("testRef", "")), {})


def _entry_kind(entry: Mapping[str, Any], tests: Mapping[str, Mapping[str, Any]]) -> str:
    return str(_entry_spec(entry, tests).get("kind", ""))


def _entry_scope(entry: Mapping[str, Any], tests: Mapping[str, Mapping[str, Any]]) -> str:
    try:
        return specs.scope(_entry_spec(entry, tests))
    except specs.SpecError:
        return NODE  # glimmer run refuses it, naming it (the dry run did not)


def host_real_left_out(kind: str, case: Case) -> bool:
    """Whether a case leaves a test of ``kind`` out: a host-real runner the case's
    simulated fault does not reach (every cell of its matrix row but Error/Failed)."""
    if kind not in HARDWARE_INDEPENDENT_KINDS:
        return False
    cell = fault_matrix_for(case.sim).get(kind, {}).get(case.fault)
    return cell not in (ERROR, FAILED)


def _left_out(entry: Any, tests: Mapping[str, Mapping[str, Any]], case: Case) -> bool:
    """A profile entry a case does not run: one of another scope (its own case runs
    it), or a host-real test the case's fault does not reach."""
    if not isinstance(entry, Mapping):
        return False
    if _entry_scope(entry, tests) != case.scope:
        return True
    return case.scope == NODE and host_real_left_out(_entry_kind(entry, tests), case)


class PortPool:
    """Ports free on this host, each handed out once per coverage run, so link cases
    running at once never share one."""

    def __init__(self) -> None:
        self._taken: set[int] = set()
        self._lock = threading.Lock()

    def take(self, consecutive: int = 1) -> int:
        """A port p with p..p+consecutive-1 free right now and never handed out."""
        with self._lock:
            for _ in range(200):
                with socket.socket() as probe:
                    probe.bind(("127.0.0.1", 0))
                    port = int(probe.getsockname()[1])
                wanted = range(port, port + consecutive)
                if port + consecutive > 65535 or self._taken.intersection(wanted):
                    continue
                try:
                    for each in wanted:
                        with socket.socket() as s:
                            s.bind(("0.0.0.0", each))
                except OSError:
                    continue
                self._taken.update(wanted)
                return port
        raise OSError("no free port on this host for a link case")


#: kind -> the ports its runner listens on (name suffix, how many consecutive) and the
#: name of its rendezvous bound; each name is ``BURNIN_<prefix>_<suffix>`` (runners' docs).
_LINK_ENV: Final[dict[str, tuple[tuple[tuple[str, int], ...], str]]] = {
    "tcp-baseline": ((("PORT", 2),), "CONNECT_SECONDS"),
    "ib-write-bw": ((("PORT", 1), ("PERFTEST_PORT", 1)), "CONNECT_SECONDS"),
    "gpudirect-rdma": ((("PORT", 1), ("PERFTEST_PORT", 1)), "CONNECT_SECONDS"),
    "fabric-soak": ((("PORT", 1), ("PERFTEST_PORT", 1)), "CONNECT_SECONDS"),
    "nccl": ((("PORT", 1),), "RENDEZVOUS_SECONDS"),
}


def ports_own(kind: str) -> bool:
    """Whether coverage can give a link test of ``kind`` ports of its own (a custom
    runner's ports are its own business: its cases run one at a time)."""
    return kind in _LINK_ENV


def link_env(kind: str, ports: PortPool) -> dict[str, str]:
    """The runner env a link case sets for a test of ``kind``: fresh ports, and the
    rendezvous bound :data:`LINK_CONNECT_S` (the peer is on this host)."""
    if kind not in _LINK_ENV:
        return {}
    prefix = RUNNERS[kind].prefix
    listens, bound = _LINK_ENV[kind]
    env = {f"BURNIN_{prefix}_{suffix}": str(ports.take(count)) for suffix, count in listens}
    env[f"BURNIN_{prefix}_{bound}"] = str(LINK_CONNECT_S)
    return env


def _with_env(spec: Any, env: Mapping[str, str]) -> None:
    """Set ``env`` in a test spec's ``runner.env`` (replacing the same names)."""
    if not env or not isinstance(spec, dict):
        return
    runner = spec.setdefault("runner", {})
    if not isinstance(runner, dict):
        return
    given = runner.get("env")
    kept = (
        [e for e in given if not (isinstance(e, Mapping) and e.get("name") in env)]
        if (isinstance(given, list))
        else []
    )
    runner["env"] = [*kept, *({"name": k, "value": v} for k, v in env.items())]


def _name_inline(kept: Sequence[tuple[int, Any]], *, api_version: Any) -> list[dict[str, Any]]:
    """Each kept ``inline`` entry as a BurnInTest of the name it is planned under in the
    whole profile (``inline-<index>-<kind>``), the entry made a ``testRef`` to it: with
    entries left out, its index (so its planned name) would move and its row of the
    matrix would read it as never run."""
    made: list[dict[str, Any]] = []
    for index, entry in kept:
        inline = entry.get("inline") if isinstance(entry, dict) else None
        if not isinstance(inline, dict):
            continue
        name = inline_name(entry_index=index, kind=str(inline.get("kind", "")))
        made.append(
            {
                "apiVersion": api_version or "burnin.glimmer.ai/v1alpha1",
                "kind": "BurnInTest",
                "metadata": {"name": name},
                "spec": inline,
            }
        )
        del entry["inline"]
        entry["testRef"] = name
    return made


def derived_documents(
    documents: Sequence[Document], case: Case, *, ports: PortPool | None = None
) -> list[dict[str, Any]]:
    """The documents a case runs: every BurnInProfile with only the case's scope's
    tests, less the host-real tests the case's fault does not reach; for a link case,
    each test given ports of its own and a bounded rendezvous (``ports``); everything
    else as given (each object once)."""
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
        named: list[dict[str, Any]] = []
        if document.kind == "BurnInProfile" and isinstance(spec, dict):
            entries = spec.get("tests")
            if isinstance(entries, list):
                kept = [(i, e) for i, e in enumerate(entries) if not _left_out(e, tests, case)]
                if len(kept) < len(entries):
                    named = _name_inline(kept, api_version=body.get("apiVersion"))
                spec["tests"] = [e for _, e in kept]
                if ports is not None:
                    for entry in spec["tests"]:
                        inline = entry.get("inline") if isinstance(entry, dict) else None
                        if isinstance(inline, dict):
                            _with_env(inline, link_env(str(inline.get("kind", "")), ports))
        if (
            ports is not None
            and document.kind == "BurnInTest"
            and isinstance(spec, dict)
            and _entry_scope({"inline": spec}, {}) == case.scope
        ):
            _with_env(spec, link_env(str(spec.get("kind", "")), ports))
        for test in named:
            if ports is not None:
                _with_env(test["spec"], link_env(str(test["spec"].get("kind", "")), ports))
        bodies += named
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
    case: Case,
    *,
    report_dir: Path,
    exit_code: int,
    stderr: str,
    seconds: float,
    decider: str = "glimmer run",
) -> CaseOutcome:
    """A case's outcome from the run.json its run (a link's client, a Group's merge:
    ``decider``) wrote, through the result codec."""
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
            problem=f"{decider} exited {exit_code} and wrote no readable run.json "
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
    ports: PortPool | None = None,
) -> CaseOutcome:
    """``glimmer run`` of the case's derived profile, read back from its run.json."""
    if case.scope != NODE:
        return run_link_case(
            case,
            documents=documents,
            profile_name=profile_name,
            work_dir=work_dir,
            timeout_s=timeout_s,
            ports=ports or PortPool(),
        )
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


def _side_command(
    case: Case, side: int, *, profile_file: Path, case_dir: Path, profile_name: str | None
) -> list[str]:
    """``glimmer run`` of one side of a link case, over 127.0.0.1."""
    sim = case.side_sim(side)
    if sim is None:
        raise ValueError(f"{case.where}: side {side} is never started")
    command = [*glimmer_command(), "run", str(profile_file), "--sim", sim]
    if profile_name:
        command += ["--profile", profile_name]
    if case.scope == PAIR:
        mine, other = (SERVER_NODE, CLIENT_NODE) if side == 0 else (CLIENT_NODE, SERVER_NODE)
        command += ["--role", "server" if side == 0 else "client", "--node", mine]
        command += ["--peer", "127.0.0.1", "--peer-node", other]
        command += ["--report-dir", str(case_dir / ("server" if side == 0 else "client"))]
        if side == 1 and case.side_sim(0) is not None:
            record = case_dir / "server" / SERVER_RECORD_PATH
            command += ["--server-record", str(record), "-o", "json"]
        return command
    command += ["--rank", str(side), "--nranks", str(case.sides), "--root", "127.0.0.1"]
    command += ["--node", f"coverage-rank-{side}"]
    if side != 0:
        command += ["--root-node", "coverage-rank-0"]
    return [*command, "--report-dir", str(case_dir / f"rank-{side}")]


def broken_sides(case: Case, outputs: Mapping[int, tuple[int, str]]) -> list[str]:
    """Every side that records (not the Pair client) and did not exit
    :data:`SIDE_RECORDED`: its record is not whole, so the case did not run the link the
    fault models, and whatever the decider concluded measures the harness, not the fault."""
    broken = []
    for side, (code, stderr) in sorted(outputs.items()):
        if (case.scope == PAIR and side == 1) or code == SIDE_RECORDED:
            continue
        name = (
            ("the server" if side == 0 else "the client") if case.scope == PAIR else f"rank {side}"
        )
        tail = " ".join(stderr.strip().splitlines()[-3:])
        broken.append(
            f"{name}'s glimmer run exited {code}, not {SIDE_RECORDED} (its record written "
            f"whole){': ' + tail if tail else ''}"
        )
    return broken


def run_link_case(
    case: Case,
    *,
    documents: Sequence[Document],
    profile_name: str | None,
    work_dir: Path,
    ports: PortPool,
    timeout_s: float = CASE_TIMEOUT_S,
) -> CaseOutcome:
    """The sides of a Pair or Group case at once on this host, one session; the
    client's run.json (Pair) or ``glimmer merge``'s over every rank's record (Group)
    is the case's outcome. The side ``dead-peer`` names is never started; a Pair
    client without a server is given no ``--server-record`` (there is none to wait
    for: its server did not report, as when the server's record is never copied)."""
    case_dir = work_dir / case.scope.lower() / case.sim / case.fault.replace(":", "-")
    if case_dir.exists():
        shutil.rmtree(case_dir)
    case_dir.mkdir(parents=True)
    profile_file = case_dir / "profile.yaml"
    profile_file.write_text(
        yaml.safe_dump_all(derived_documents(documents, case, ports=ports), sort_keys=False),
        encoding="utf-8",
    )
    env = {**os.environ, "NO_COLOR": "1", "GLIMMER_SESSION": new_session()}
    started = time.monotonic()
    give_up = started + timeout_s
    running: list[tuple[int, subprocess.Popen[bytes], Path]] = []
    for side in range(case.sides):
        if case.side_sim(side) is None:
            continue
        command = _side_command(
            case, side, profile_file=profile_file, case_dir=case_dir, profile_name=profile_name
        )
        # Files, not pipes: a side blocked on a full pipe nobody reads would stall its peer.
        log = case_dir / f"side-{side}.err"
        with (case_dir / f"side-{side}.out").open("wb") as out, log.open("wb") as err:
            process = subprocess.Popen(command, cwd=case_dir, stdout=out, stderr=err, env=env)
        running.append((side, process, log))
    outputs: dict[int, tuple[int, str]] = {}
    for side, process, log in running:
        try:
            process.wait(timeout=max(1.0, give_up - time.monotonic()))
            outputs[side] = (process.returncode, log.read_text(encoding="utf-8", errors="replace"))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            outputs[side] = (-1, f"timed out after {timeout_s:.0f} s")
    broken = broken_sides(case, outputs)
    if broken:
        return CaseOutcome(
            case=case,
            phase=None,
            exit_code=-1,
            cells=(),
            problem="; ".join(broken),
            seconds=time.monotonic() - started,
        )
    if case.scope == PAIR:
        exit_code, stderr = outputs.get(1, (-1, "the client never ran"))
        return read_outcome(
            case,
            report_dir=case_dir / "client",
            exit_code=exit_code,
            stderr=stderr,
            seconds=time.monotonic() - started,
            decider="the Pair client's glimmer run",
        )
    merged = case_dir / "merged"
    (merged / "ranks").mkdir(parents=True)
    for side in outputs:
        record = case_dir / f"rank-{side}" / rank_record_path(side)
        if record.exists():
            shutil.copy(record, merged / rank_record_path(side))
    command = [*glimmer_command(), "merge", "--results-dir", str(merged)]
    command += ["--nranks", str(case.sides), "-o", "json"]
    try:
        done = subprocess.run(
            command,
            cwd=case_dir,
            capture_output=True,
            text=True,
            timeout=max(1.0, give_up - time.monotonic()),
            check=False,
            env=env,
        )
        exit_code, stderr = done.returncode, done.stderr
    except subprocess.TimeoutExpired:
        exit_code, stderr = -1, f"timed out after {timeout_s:.0f} s"
    ranks = "; ".join(f"rank {r} exited {code}" for r, (code, _) in sorted(outputs.items()))
    return read_outcome(
        case,
        report_dir=merged,
        exit_code=exit_code,
        stderr=stderr + (f" ({ranks})" if exit_code not in (0, 1, 3) else ""),
        seconds=time.monotonic() - started,
        decider="glimmer merge",
    )


def _with_left_out(outcome: CaseOutcome, *, tests: Sequence[PlannedTest]) -> CaseOutcome:
    """Every planned test in the profile's order; those the case left out as such."""
    by_name = {c.name: c for c in outcome.cells}
    if outcome.phase is None:
        return outcome
    tests = [t for t in tests if t.scope == outcome.case.scope]
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
    cases = cases_for(sims, scopes_of(tests))
    ports = PortPool()
    # A link test coverage cannot give ports of its own (a custom runner's) listens where
    # it says: its scope's cases run one at a time, never two on one port.
    alone = {t.scope for t in tests if t.scope != NODE and not ports_own(t.kind)}
    serial = {scope: threading.Lock() for scope in alone}

    def one(case: Case) -> CaseOutcome:
        lock = serial.get(case.scope)
        if lock is not None:
            with lock:
                outcome = run_case(
                    case,
                    documents=documents,
                    profile_name=profile_name,
                    work_dir=work_dir,
                    ports=ports,
                )
        else:
            outcome = run_case(
                case, documents=documents, profile_name=profile_name, work_dir=work_dir, ports=ports
            )
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

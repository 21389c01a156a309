"""Pair and Group on bare hosts: which side this host plays, and what each side writes (N1-N3).

On a bare host there is no operator to watch every pod, so each host runs one *side*
of the link with ``glimmer run`` and the sides meet only through files:

* Pair (``--role server|client --peer HOST --peer-node NODE``): the **server** records
  what its runner declared in ``sidecar/server-record.json`` and decides nothing; the
  **client** decides. It folds the server's record in when ``--server-record FILE``
  names where that record can be read (a shared or copied directory): after each
  client attempt the client waits up to :data:`SERVER_RECORD_WAIT_SECONDS` for the
  server's matching attempt. Without ``--server-record``, or when the server's attempt
  does not appear in time, the server "did not report" and the client's own verdict
  decides, exactly as in-cluster when the client settles first (F2, F3). A server
  record that is present but unreadable, foreign or of another test is never read as
  "did not report": that attempt is Error.
* Group (``--rank R --nranks N --root HOST``): every rank records its runner's reports
  in ``ranks/rank-NN.json`` and decides nothing; ``glimmer merge`` reads all N records
  and decides (F6/F7), see :mod:`glimmer.local.merge`.

A server that did not report makes the link's provenance ``unknown``
(:func:`glimmer.verdict.links.link_provenance`), so a client run without
``--server-record`` never certifies either node, whatever the client measured.

Every side of one link run shares a *session* (:data:`SESSION_ENV`, or ``--session``):
the Pair server and Group rank 0 create one when given none and print it; the client
(when it reads ``--server-record``) and every other rank must be given it. A record of
another session, or whose attempt did not run beside this one's (windows that do not
overlap), is never folded in: it is refused naming the file.

One invocation runs one scope: without side flags the Node tests, with ``--role`` the
Pair tests, with ``--rank`` the Group tests. A profile that mixes scopes is validated
whole (:func:`host_plan`) and its tests of another scope are *not run here* (N5,
:func:`not_run_here`): each is reported Skipped with the command that runs it, marked
so in a side's record, and never certifies; a profile with nothing of the invocation's
scope is refused (:func:`scope_problem`).

A side that decides nothing has no verdict to give, so its exit status never claims
one: 2 ("nothing judged", N4) when its record was written whole, 3 when it was not.
Pair and Group use host networking on a bare host (N2): the peer and root addresses
are passed to the runner as given.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from glimmer.contract import RunnerReport
from glimmer.local.dispatcher import LinkError
from glimmer.local.records import (
    CLOCK_SKEW_SECONDS,
    RANK,
    RERUN_HINT,
    SERVER,
    SERVER_RECORD_PATH,
    RecordError,
    SideAttempt,
    SideRecord,
    SideTest,
    new_session,
    rank_record_path,
    read_record,
    session_problem,
    test_digest,
    windows_overlap,
    write_record,
)
from glimmer.plan import (
    GroupRendezvous,
    PairRendezvous,
    PinnedPlan,
    PlannedTest,
    PlanRefusal,
    build_plan,
)
from glimmer.plan import spec as specs
from glimmer.plan.units import CLIENT
from glimmer.plan.variants import inline_name
from glimmer.verdict.links import SERVER_REPORT_GRACE_SECONDS, SideReport, combine_pair

#: How long a client waits, after each attempt, for the server's matching attempt to
#: appear in ``--server-record``: the operator's grace for a server pod's report.
SERVER_RECORD_WAIT_SECONDS: Final = SERVER_REPORT_GRACE_SECONDS
_POLL_SECONDS: Final = 0.1
#: The environment variable (and ``--session``'s) that hands a link run's session to
#: every side. A glimmer name, not a runner's: runners never see it.
SESSION_ENV: Final = "GLIMMER_SESSION"


class UsageError(ValueError):
    """A flag combination that cannot mean anything; the message names flag and fix."""


@dataclass(frozen=True)
class PairFlags:
    role: str
    peer_host: str
    peer_node: str
    server_record: Path | None = None
    #: The link run's session: always the server's; the client's when it reads
    #: ``--server-record`` (None only for a client that folds no record in).
    session: str | None = None
    #: This side created the session (it was given none), so it must say it.
    session_created: bool = False


@dataclass(frozen=True)
class GroupFlags:
    rank: int
    nranks: int
    root_host: str
    root_node: str
    session: str = ""
    session_created: bool = False


def link_flags(
    *,
    node: str,
    role: str | None,
    peer: str | None,
    peer_node: str | None,
    server_record: Path | None,
    rank: int | None,
    nranks: int | None,
    root: str | None,
    root_node: str | None,
    session: str | None = None,
    session_required: bool = True,
) -> PairFlags | GroupFlags | None:
    """Validate the side flags (N1) before anything is read or run.

    ``session`` is :data:`SESSION_ENV` / ``--session``: the Pair server and Group rank
    0 create one when it is None; the client with ``--server-record`` and every other
    rank need the one their server / rank 0 printed, unless ``session_required`` is
    False (``--dry-run``: nothing is recorded or folded)."""
    if session is not None:
        problem = session_problem(session)
        if problem is not None:
            raise UsageError(f"{SESSION_ENV} / --session: {problem}")
    if role is not None and rank is not None:
        raise UsageError(
            "--role and --rank cannot be used together: --role server|client runs one end "
            "of a Pair test, --rank R one rank of a Group test; give one of them"
        )
    if role is not None:
        if nranks is not None or root is not None or root_node is not None:
            raise UsageError("--nranks/--root/--root-node go with --rank (Group), not --role")
        if role == CLIENT and not peer:
            raise UsageError("--role client needs --peer HOST: the server's address to connect to")
        if server_record is not None and role != CLIENT:
            raise UsageError(
                "--server-record is read by the client (it decides); the server writes "
                "sidecar/server-record.json itself"
            )
        other = peer_node or peer
        if not other:
            raise UsageError(
                "--role server needs --peer-node NODE (the client's node name, recorded in "
                "the result) or --peer HOST"
            )
        if other == node:
            raise UsageError(
                f"--peer-node {other!r} is this node (--node {node!r}): a link needs two "
                "different nodes; set --node or --peer-node"
            )
        created = False
        if role == SERVER and session is None:
            session, created = new_session(), True
        if role == CLIENT and server_record is not None and session is None and session_required:
            raise UsageError(
                f"--server-record needs the server's session: give the client the session "
                f"the server printed as {SESSION_ENV}=... (or --session), so that only "
                "that server run's record is folded in"
            )
        return PairFlags(
            role=role,
            peer_host=peer or other,
            peer_node=other,
            server_record=server_record,
            session=session,
            session_created=created,
        )
    if peer is not None or peer_node is not None or server_record is not None:
        raise UsageError("--peer/--peer-node/--server-record go with --role server|client (Pair)")
    if rank is None:
        if nranks is not None or root is not None or root_node is not None:
            raise UsageError("--nranks/--root/--root-node need --rank R (this host's rank)")
        return None
    if nranks is None or nranks < 2:
        raise UsageError("--rank needs --nranks N with N >= 2 (how many ranks the group has)")
    if not 0 <= rank < nranks:
        raise UsageError(f"--rank {rank} is outside 0..{nranks - 1} for --nranks {nranks}")
    if not root:
        raise UsageError("--rank needs --root HOST: rank 0's address (rank 0 gives its own)")
    if rank == 0:
        if root_node is not None and root_node != node:
            raise UsageError(
                f"--root-node {root_node!r} on rank 0 must be this node ({node!r}) or left out"
            )
        root_node = node
    elif root_node is None:
        root_node = root
    elif root_node == node:
        raise UsageError(f"--root-node {root_node!r} is this node, but this is rank {rank}")
    created = False
    if session is None:
        if rank != 0 and not session_required:
            session = ""
        elif rank != 0:
            raise UsageError(
                f"--rank {rank} needs the group's session: give every rank the session "
                f"rank 0 printed as {SESSION_ENV}=... (or --session), so that glimmer "
                "merge folds only this group run's records"
            )
        else:
            session, created = new_session(), True
    return GroupFlags(
        rank=rank,
        nranks=nranks,
        root_host=root,
        root_node=root_node,
        session=session,
        session_created=created,
    )


def rendezvous_of(flags: PairFlags | GroupFlags | None) -> PairRendezvous | GroupRendezvous | None:
    """The rendezvous environment this side's runner gets (api §10)."""
    if isinstance(flags, PairFlags):
        return PairRendezvous(role=flags.role, peer_host=flags.peer_host, peer_node=flags.peer_node)
    if isinstance(flags, GroupFlags):
        return GroupRendezvous(
            rank=flags.rank,
            nranks=flags.nranks,
            root_host=flags.root_host,
            root_node=flags.root_node,
        )
    return None


def plan_targets(*, node: str, flags: PairFlags | GroupFlags | None) -> list[str]:
    """The target list the plan is built over, as the operator would order it: Pair
    ``[server, client]``; Group rank order, with ranks this host cannot name marked."""
    if flags is None:
        return [node]
    if isinstance(flags, PairFlags):
        return [node, flags.peer_node] if flags.role == SERVER else [flags.peer_node, node]
    targets = [f"(rank {i})" for i in range(flags.nranks)]
    targets[0] = flags.root_node
    targets[flags.rank] = node
    return targets


def run_scope(flags: PairFlags | GroupFlags | None) -> str:
    """The one scope this invocation runs: Node without side flags, Pair with
    ``--role``, Group with ``--rank``."""
    return "Node" if flags is None else "Pair" if isinstance(flags, PairFlags) else "Group"


#: How each scope is run on bare hosts, after ``glimmer run PROFILE``.
_HOW_TO_RUN: Final = {
    "Node": "run `{command}` (no --role or --rank) on each host",
    "Pair": (
        "run `{command} --role server --peer-node NODE` on one end and "
        "`{command} --role client --peer HOST --peer-node NODE` on the other"
    ),
    "Group": (
        "run `{command} --rank R --nranks N --root HOST` on every rank, then "
        "`glimmer merge --results-dir DIR --nranks N`"
    ),
}
_FLAG_TEXT: Final = {
    "Node": "without --role or --rank (Node scope)",
    "Pair": "with --role (Pair scope)",
    "Group": "with --rank (Group scope)",
}


def not_run_here(
    plan: PinnedPlan, *, flags: PairFlags | GroupFlags | None, command: str
) -> dict[str, str]:
    """N5: every planned test of another scope than this run's, with the reason its
    Skipped result gives: why it is not run here and the command that runs it
    (``command`` is how this run was invoked, e.g. ``glimmer run suite.yaml``)."""
    want = run_scope(flags)
    reasons: dict[str, str] = {}
    for test in plan.tests:
        if test.scope == want:
            continue
        how = _HOW_TO_RUN.get(test.scope, "it cannot run on a bare host").format(command=command)
        reasons[test.name] = (
            f"not run on this host: a {test.scope} test, and this run is {_FLAG_TEXT[want]}; "
            f"{how}. Skipped: not a Pass, it certifies nothing"
        )
    return reasons


def not_run_here_warning(plan: PinnedPlan, *, skipped: Mapping[str, str]) -> str:
    """The one terminal warning for a mixed profile's tests this run does not execute."""
    listed = [f"{t.name} ({t.scope})" for t in plan.tests if t.name in skipped]
    shown = ", ".join(listed[:5]) + (f" and {len(listed) - 5} more" if len(listed) > 5 else "")
    return (
        f"{len(listed)} of the profile's {len(plan.tests)} tests are not run on this host "
        f"and are reported Skipped: {shown}. Each result names the command that runs it. "
        "Skipped is not a Pass: while a required test is not run here, this run certifies "
        "nothing"
    )


def host_plan(
    *,
    profile: Mapping[str, Any],
    tests: Mapping[str, Mapping[str, Any]],
    node: str,
    flags: PairFlags | GroupFlags | None,
) -> PinnedPlan | PlanRefusal:
    """The plan this invocation runs, over :func:`plan_targets`.

    A profile of this run's scope only is planned over those targets, as the operator
    plans it. A mixed profile (N5) is validated as a whole, so that a test not run here
    is still refused when it could not run anywhere: against two distinct targets,
    which every scope accepts (a Pair needs exactly two, a Group at least two), then
    pinned to this run's targets. Its tests of another scope are the ones
    :func:`not_run_here` names."""
    targets = plan_targets(node=node, flags=flags)
    want = run_scope(flags)
    scopes = {scope for _, scope in _declared_tests(profile, tests)}
    if scopes <= {want}:
        return build_plan(
            profile=profile, tests=tests, targets=targets, max_concurrent_nodes=len(targets)
        )
    check = targets[:2] if len(targets) >= 2 else [targets[0], f"(the peer of {targets[0]})"]
    outcome = build_plan(profile=profile, tests=tests, targets=check, max_concurrent_nodes=2)
    if isinstance(outcome, PlanRefusal):
        return outcome
    return replace(outcome, targets=tuple(targets))


def scope_problem(plan: PinnedPlan, *, flags: PairFlags | GroupFlags | None) -> str | None:
    """Refused when no planned test is of the scope the flags run (nothing would run
    here), naming the flags that run them; a mixed profile runs this scope's tests and
    reports the others Skipped (N5, :func:`not_run_here`)."""
    return _scope_problem([(t.name, t.scope) for t in plan.tests], flags=flags)


def declared_scope_problem(
    profile: Mapping[str, Any],
    tests: Mapping[str, Mapping[str, Any]],
    *,
    flags: PairFlags | GroupFlags | None,
) -> str | None:
    """:func:`scope_problem` read from the profile before the plan is built, so a Pair
    profile run without ``--role`` hears about ``--role``, not about target counts the
    plan would measure against the wrong flags. What cannot be read here is left to
    the plan, which words its own refusal."""
    return _scope_problem(_declared_tests(profile, tests), flags=flags)


def declared_scopes(profile: Mapping[str, Any], tests: Mapping[str, Mapping[str, Any]]) -> set[str]:
    """The scopes of the profile's entries whose spec can be read, before planning."""
    return {scope for _, scope in _declared_tests(profile, tests)}


def _declared_tests(
    profile: Mapping[str, Any], tests: Mapping[str, Mapping[str, Any]]
) -> list[tuple[str, str]]:
    """(name, scope) of every profile entry whose spec can be read, before planning."""
    entries = profile.get("tests")
    found: list[tuple[str, str]] = []
    for index, entry in enumerate(entries if isinstance(entries, list) else []):
        if not isinstance(entry, Mapping):
            continue
        ref, inline = entry.get("testRef"), entry.get("inline")
        spec = (
            inline
            if isinstance(inline, Mapping)
            else tests.get(ref)
            if isinstance(ref, str)
            else None
        )
        if not isinstance(spec, Mapping):
            continue
        try:
            scope = specs.scope(spec)
            name = (
                ref
                if isinstance(ref, str) and ref
                else inline_name(entry_index=index, kind=specs.kind(spec))
            )
        except specs.SpecError:
            continue
        found.append((name, scope))
    return found


def _scope_problem(
    tests: Sequence[tuple[str, str]], *, flags: PairFlags | GroupFlags | None
) -> str | None:
    """Only when nothing of this run's scope is planned: a mixed profile runs (N5)."""
    want = run_scope(flags)
    wrong = [(name, scope) for name, scope in tests if scope != want]
    if not wrong or len(wrong) < len(tests):
        return None
    listed = ", ".join(f"{name} ({scope})" for name, scope in wrong[:5])
    more = f" and {len(wrong) - 5} more" if len(wrong) > 5 else ""
    how = {
        "Node": "run it without --role/--rank",
        "Pair": "run it with --role server|client --peer HOST --peer-node NODE on each end",
        "Group": "run it with --rank R --nranks N --root HOST on every rank, then glimmer merge",
    }
    scopes = sorted({scope for _, scope in wrong})
    advice = "; ".join(f"a {s} test: {how.get(s, 'not runnable here')}" for s in scopes)
    return (
        f"{listed}{more}: this run is {_FLAG_TEXT[want]} and runs only {want} tests, and the "
        f"profile has none; {advice}"
    )


@dataclass
class SideRecorder:
    """A side that records and decides nothing: the Pair server, a Group rank."""

    record: SideRecord
    path: Path
    _rendezvous: PairRendezvous | GroupRendezvous
    _nodes: tuple[str, ...]
    _record_node: str

    @property
    def decides(self) -> bool:
        return False

    @property
    def rendezvous(self) -> PairRendezvous | GroupRendezvous:
        return self._rendezvous

    @property
    def nodes(self) -> tuple[str, ...]:
        return self._nodes

    @property
    def record_node(self) -> str:
        return self._record_node

    def fold(self, *, test: PlannedTest, attempt: SideAttempt) -> RunnerReport:
        side = self.record.test(test.name)
        if side is None:
            side = SideTest(test=test)
            self.record.tests.append(side)
        side.attempts.append(attempt)
        write_record(self.record, self.path)
        return attempt.report

    def finish(self, *, stopped: str) -> Path:
        """The last write: the side is done, and says why it stopped early if it did."""
        self.record.complete = True
        self.record.stopped = stopped
        return write_record(self.record, self.path)


def side_recorder(
    *,
    flags: PairFlags | GroupFlags,
    plan: PinnedPlan,
    node: str,
    profile: str,
    sim: str | None,
    retry_on_error_limit: int,
    results_dir: Path,
    skipped: Mapping[str, str] | None = None,
) -> SideRecorder:
    """The recorder for a Pair server or a Group rank; its record is written at once
    (empty), so a stale record from an earlier run can never be read as this one's.
    ``skipped`` (:func:`not_run_here`) marks the tests the side does not run (N5), so
    that whoever decides reports them Skipped, never as a side that did not report."""
    not_run = skipped or {}
    planned = [SideTest(test=t, not_run_here=not_run.get(t.name, "")) for t in plan.tests]
    if isinstance(flags, PairFlags):
        if flags.session is None:  # link_flags gives every server one
            raise UsageError("a Pair server needs a session")
        record = SideRecord(
            role=SERVER,
            node=node,
            peer_host=flags.peer_host,
            peer_node=flags.peer_node,
            profile=profile,
            sim=sim,
            retry_on_error_limit=retry_on_error_limit,
            tests=list(planned),
            session=flags.session,
        )
        path = results_dir / SERVER_RECORD_PATH
        rendezvous: PairRendezvous | GroupRendezvous = PairRendezvous(
            role=SERVER, peer_host=flags.peer_host, peer_node=flags.peer_node
        )
        nodes: tuple[str, ...] = (node, flags.peer_node)
        record_node = node
    else:
        record = SideRecord(
            role=RANK,
            node=node,
            peer_host=flags.root_host,
            peer_node=flags.root_node,
            profile=profile,
            sim=sim,
            retry_on_error_limit=retry_on_error_limit,
            tests=list(planned),
            session=flags.session,
            rank=flags.rank,
            nranks=flags.nranks,
        )
        path = results_dir / rank_record_path(flags.rank)
        rendezvous = GroupRendezvous(
            rank=flags.rank,
            nranks=flags.nranks,
            root_host=flags.root_host,
            root_node=flags.root_node,
        )
        nodes, record_node = tuple(plan_targets(node=node, flags=flags)), flags.root_node
    write_record(record, path)
    return SideRecorder(
        record=record, path=path, _rendezvous=rendezvous, _nodes=nodes, _record_node=record_node
    )


@dataclass
class PairClient:
    """The Pair client: it decides, folding in the server's record when it can read it."""

    node: str
    flags: PairFlags
    profile: str
    #: This client runs against the simulated GPU (``--sim``).
    sim: bool = False
    wait_seconds: float = SERVER_RECORD_WAIT_SECONDS
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    #: Whether a server record ran under ``--sim`` (its side's provenance is sim).
    server_sim: bool = field(default=False, init=False)

    @property
    def decides(self) -> bool:
        return True

    @property
    def rendezvous(self) -> PairRendezvous:
        return PairRendezvous(
            role=CLIENT, peer_host=self.flags.peer_host, peer_node=self.flags.peer_node
        )

    @property
    def nodes(self) -> tuple[str, ...]:
        return (self.flags.peer_node, self.node)

    @property
    def record_node(self) -> str:
        return self.flags.peer_node

    def fold(self, *, test: PlannedTest, attempt: SideAttempt) -> RunnerReport:
        server = self._server_attempt(test, attempt)
        server_report = server.report if server is not None and server.reported else None
        # The server's side: sim when its record ran under --sim, unknown when it did not
        # report (no --server-record, or no attempt in time): never vouched for.
        return combine_pair(
            server=SideReport(
                label=SERVER,
                node=self.flags.peer_node,
                report=server_report,
                simulated=self.server_sim,
            ),
            client=SideReport(
                label=CLIENT,
                node=self.node,
                report=attempt.report if attempt.reported else None,
                simulated=self.sim,
            ),
        )

    def _server_attempt(self, test: PlannedTest, own: SideAttempt) -> SideAttempt | None:
        number = own.attempt
        path = self.flags.server_record
        if path is None:
            return None
        give_up = self.clock() + self.wait_seconds
        while True:
            if path.exists():
                try:
                    record = read_record(path)
                    self._check_identity(record, path=path)
                except RecordError as err:
                    raise LinkError(f"server record unusable, no verdict: {err}") from err
                side = record.test(test.name)
                if side is None or side.digest != test_digest(test):
                    how = "has no test" if side is None else "holds another version of test"
                    raise LinkError(
                        f"server record {path} {how} {test.name!r} (another profile, or "
                        "the test was edited); no verdict"
                    )
                found = side.attempt(number)
                if found is not None:
                    self._check_window(found, own=own, test=test, path=path)
                    return found
                if record.complete:
                    return None
            if self.clock() >= give_up:
                return None
            self.sleep(_POLL_SECONDS)

    def _check_identity(self, record: SideRecord, *, path: Path) -> None:
        problems = []
        if record.role != SERVER:
            problems.append(f"it was written by a {record.role}, not a Pair server")
        if record.node != self.flags.peer_node:
            problems.append(
                f"its server is {record.node!r}, not --peer-node {self.flags.peer_node!r}"
            )
        if record.peer_node != self.node:
            problems.append(f"its client is {record.peer_node!r}, not this node {self.node!r}")
        if record.profile != self.profile:
            problems.append(f"it ran profile {record.profile!r}, not {self.profile!r}")
        if record.session != self.flags.session:
            problems.append(
                f"it ran in session {record.session!r}, not this client's "
                f"{self.flags.session!r} (another server run's record?); {RERUN_HINT}"
            )
        if problems:
            raise RecordError(f"{path}: foreign record: {'; '.join(problems)}")
        self.server_sim = record.sim is not None

    def _check_window(
        self, found: SideAttempt, *, own: SideAttempt, test: PlannedTest, path: Path
    ) -> None:
        """The server's attempt ran beside this one (one session's, not an older run's)."""
        theirs, mine = found.window, own.window
        if (
            theirs is None
            or mine is None
            or not windows_overlap((theirs, mine), slack=CLOCK_SKEW_SECONDS)
        ):
            raise LinkError(
                f"server record unusable, no verdict: {path}: foreign record: its attempt "
                f"{found.attempt} of test {test.name!r} ran {found.started_at}..{found.finished_at}"
                f", this client's {own.started_at}..{own.finished_at}: not one session's "
                f"attempt (windows more than {CLOCK_SKEW_SECONDS:g} s apart); {RERUN_HINT}"
            )

"""Side records: what a Pair server or a Group rank ran on a bare host (N3).

A side that does not decide writes what its runner *declared*, never a verdict: the
Pair server writes ``sidecar/server-record.json`` (the client decides), each Group
rank writes ``ranks/rank-NN.json`` (``glimmer merge`` decides). A record carries the
planned tests it ran (spec, required, axes, and a digest over them), every attempt's
runner report and the side's end (its termination), and who wrote it.

Records cross machines and are copied by hand, so they are read as hostile input:
strict JSON (no duplicate keys, no NaN), an exact key set per object, the version,
kind and role checked, every test's digest recomputed from the spec it came with, a
report whose outcome does not follow from its exit code (A2/A3) refused, and a metric
name the contract would never have read refused. Whatever is refused raises
:class:`RecordError` with the file and the field; nothing is guessed, because a
guessed field (say an outcome read as Pass) could settle a link Passed that nobody
measured.

Artifact payloads stay in the side's own results directory; the record lists their
refs only, so a decoded report has none (a combined verdict never depends on them).

Every record is bound to one *session*: a nonce the Pair server or Group rank 0
creates (or is given) and every other side is given through ``GLIMMER_SESSION``. Only
records of one session are ever folded together, and only attempts whose windows
overlap (:func:`windows_overlap`): yesterday's passing ``rank-01.json`` copied beside
today's rank 0 would otherwise Pass over today's failing rank. A record written before
records carried a session is refused with how to re-run.
"""

from __future__ import annotations

import calendar
import hashlib
import json
import os
import re
import secrets
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from glimmer.api import API_VERSION
from glimmer.contract import Outcome, RunnerReport, is_valid_metric_name, outcome_for_exit
from glimmer.contract.report import MAX_VALUE_BYTES
from glimmer.contract.strict_json import StrictJSONError, loads_strict
from glimmer.plan import PlannedTest
from glimmer.verdict import Provenance, Termination

RECORD_KIND: Final = "BurnInSideRecord"
#: 2: every record carries its ``session``. Version 1 records (no session) are refused.
RECORD_VERSION: Final = 2
#: What a session may look like: long enough to be a nonce, short and plain enough to
#: pass through an environment variable and a message unchanged.
SESSION_PATTERN: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{7,127}")
#: How far apart two hosts' clocks may be when their attempt windows are compared: an
#: attempt of one session overlaps its peers' within this; yesterday's never does.
CLOCK_SKEW_SECONDS: Final = 60.0
#: The record's time stamps (RFC 3339, seconds, UTC).
STAMP_FORMAT: Final = "%Y-%m-%dT%H:%M:%SZ"
#: How to re-run when records are not of one session (every refusal says it).
RERUN_HINT: Final = (
    "re-run every side of the link with this glimmer and one session: the Pair server "
    "or Group rank 0 prints it, give it to every other side as GLIMMER_SESSION"
)
SERVER: Final = "server"
RANK: Final = "rank"
#: A record larger than this is refused unread (a runaway or hostile file).
MAX_RECORD_BYTES: Final = 64 * 1024 * 1024

SERVER_RECORD_PATH: Final = Path("sidecar") / "server-record.json"


def rank_record_path(rank: int) -> Path:
    """``ranks/rank-NN.json`` (two digits at least), relative to the results directory."""
    return Path("ranks") / f"rank-{rank:02d}.json"


class RecordError(ValueError):
    """A side record that cannot be trusted as written; the message names file and field."""


def new_session() -> str:
    """A fresh session nonce (128 random bits, hex)."""
    return secrets.token_hex(16)


def session_problem(session: str) -> str | None:
    """Why ``session`` cannot be a session, or None."""
    if SESSION_PATTERN.fullmatch(session) is None:
        return (
            f"{session!r} is not a session: 8 to 128 characters of letters, digits and "
            "'.', '_', ':', '-', starting with a letter or digit (the Pair server or Group "
            "rank 0 prints one it created)"
        )
    return None


def stamp_seconds(text: str) -> float | None:
    """A record time stamp as seconds since the epoch; None if it is not one."""
    try:
        return float(calendar.timegm(time.strptime(text, STAMP_FORMAT)))
    except ValueError:
        return None


def windows_overlap(windows: Sequence[tuple[float, float]], *, slack: float) -> bool:
    """Whether every window ``(start, finish)`` shares one moment with every other,
    allowing ``slack`` seconds of clock difference (intervals on a line overlap
    pairwise exactly when the latest start is no later than the earliest finish)."""
    if not windows:
        return True
    return max(s for s, _ in windows) <= min(f for _, f in windows) + slack


@dataclass(frozen=True)
class SideAttempt:
    """One attempt of one side: what its runner declared and how it ended."""

    attempt: int
    report: RunnerReport
    termination: Termination
    started_at: str | None = None
    finished_at: str | None = None
    raw_log: str = ""
    artifacts: tuple[Mapping[str, Any], ...] = ()

    @property
    def window(self) -> tuple[float, float] | None:
        """When the attempt ran (seconds since the epoch), or None if it cannot say."""
        if self.started_at is None or self.finished_at is None:
            return None
        start, finish = stamp_seconds(self.started_at), stamp_seconds(self.finished_at)
        if start is None or finish is None:
            return None
        return start, finish

    @property
    def reported(self) -> bool:
        """Whether the runner reached its own end: one cut at its deadline, stopped by
        an interrupt or never started declared nothing that may be folded in."""
        t = self.termination
        return not (t.deadline_exceeded or t.interrupted or t.reason == "StartError")


@dataclass
class SideTest:
    """One planned test as the side ran it, or, with ``not_run_here``, one of a mixed
    profile's tests of another scope that the side did not run (N5): it has no attempt,
    and whoever decides reports it Skipped with that reason, never as a rank or a
    server that did not report."""

    test: PlannedTest
    attempts: list[SideAttempt] = field(default_factory=list)
    not_run_here: str = ""

    @property
    def digest(self) -> str:
        return test_digest(self.test)

    def attempt(self, number: int) -> SideAttempt | None:
        return next((a for a in self.attempts if a.attempt == number), None)


@dataclass
class SideRecord:
    """A whole side record. ``rank``/``nranks`` only for a Group rank; ``peer_host``
    is the Pair peer or the Group root host, ``peer_node`` the peer's or root's node."""

    role: str
    node: str
    peer_host: str
    peer_node: str
    profile: str
    sim: str | None
    retry_on_error_limit: int
    tests: list[SideTest]
    #: The session every side of this link run shares (see the module docstring).
    session: str
    rank: int | None = None
    nranks: int | None = None
    complete: bool = False
    stopped: str = ""

    def test(self, name: str) -> SideTest | None:
        return next((t for t in self.tests if t.test.name == name), None)


def test_digest(test: PlannedTest) -> str:
    """sha256 over the planned test as run: two sides agree on a test only when name,
    required, spec and axes are identical (a mixed-test turnout is refused)."""
    body = {
        "name": test.name,
        "required": test.required,
        "spec": test.spec,
        "axes": dict(test.axes),
        "parent": test.parent,
    }
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


# -- encoding ---------------------------------------------------------------------------


def report_to_json(report: RunnerReport) -> dict[str, Any]:
    return {
        "exitCode": report.exit_code,
        "outcome": str(report.outcome),
        "metrics": dict(sorted(report.metrics.items())),
        "unmeasurable": sorted(report.unmeasurable),
        "invalidNames": list(report.invalid_names),
        "invalidNameCount": report.invalid_name_count,
        "message": report.message,
        "skipDeclared": report.skip_declared,
        "overflowNames": list(report.overflow_names),
        "unreadableLines": report.unreadable_lines,
        "declaredProvenance": report.declared_provenance,
    }


def _termination_json(t: Termination) -> dict[str, Any]:
    return {
        "exitCode": t.exit_code,
        "reason": t.reason,
        "detail": t.detail,
        "deadlineExceeded": t.deadline_exceeded,
        "interrupted": t.interrupted,
    }


def record_to_json(record: SideRecord) -> dict[str, Any]:
    side: dict[str, Any] = {"role": record.role}
    if record.role == RANK:
        side |= {"rank": record.rank, "nranks": record.nranks}
    return {
        "apiVersion": API_VERSION,
        "kind": RECORD_KIND,
        "recordVersion": RECORD_VERSION,
        "session": record.session,
        "side": side,
        "node": record.node,
        "peerHost": record.peer_host,
        "peerNode": record.peer_node,
        "profile": record.profile,
        "simulatedGpu": record.sim,
        "retryOnErrorLimit": record.retry_on_error_limit,
        "complete": record.complete,
        "stopped": record.stopped,
        "tests": [_test_json(t) for t in record.tests],
    }


def _test_json(t: SideTest) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": t.test.name,
        "required": t.test.required,
        "spec": t.test.spec,
        "axes": dict(t.test.axes),
        "parent": t.test.parent,
        "digest": t.digest,
        "attempts": [
            {
                "attempt": a.attempt,
                "startedAt": a.started_at,
                "finishedAt": a.finished_at,
                "rawLog": a.raw_log,
                "artifacts": [dict(x) for x in a.artifacts],
                "termination": _termination_json(a.termination),
                "report": report_to_json(a.report),
            }
            for a in t.attempts
        ],
    }
    if t.not_run_here:
        # Only when set: a record of a profile of one scope reads as before.
        body[_NOT_RUN_HERE] = t.not_run_here
    return body


def write_record(record: SideRecord, path: Path) -> Path:
    """Write whole or not at all: a peer polling the file never reads half a record."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(json.dumps(record_to_json(record), indent=2) + "\n", encoding="utf-8")
    os.replace(partial, path)
    return path


# -- strict decoding --------------------------------------------------------------------


class _Reader:
    """Typed field access that names the file and the path of what is wrong."""

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, path: str, problem: str) -> RecordError:
        return RecordError(f"{self.where}: {path}: {problem}")

    def obj(self, value: Any, path: str, keys: Sequence[str]) -> Mapping[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(path, f"must be an object, got {type(value).__name__}")
        missing = [k for k in keys if k not in value]
        extra = sorted(k for k in value if k not in keys)
        if missing:
            raise self.fail(path, f"missing field(s) {', '.join(missing)}")
        if extra:
            raise self.fail(path, f"unknown field(s) {', '.join(extra)}")
        return value

    def str_(self, value: Any, path: str, *, empty: bool = True) -> str:
        if not isinstance(value, str) or (not empty and not value):
            raise self.fail(path, f"must be a {'' if empty else 'non-empty '}string")
        return value

    def int_(self, value: Any, path: str, *, low: int | None = None) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(path, "must be an integer")
        if low is not None and value < low:
            raise self.fail(path, f"must be at least {low}, got {value}")
        return value

    def bool_(self, value: Any, path: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(path, "must be true or false")
        return value

    def opt_str(self, value: Any, path: str) -> str | None:
        return None if value is None else self.str_(value, path)

    def strs(self, value: Any, path: str) -> list[str]:
        if not isinstance(value, list):
            raise self.fail(path, "must be a list of strings")
        return [self.str_(v, f"{path}[{i}]") for i, v in enumerate(value)]


def load_json(path: Path) -> Any:
    """Strict JSON from ``path``: bounded size, UTF-8, no duplicate keys, no NaN/Infinity."""
    try:
        size = path.stat().st_size
        if size > MAX_RECORD_BYTES:
            raise RecordError(f"{path}: {size} bytes is over the {MAX_RECORD_BYTES}-byte limit")
        text = path.read_bytes().decode("utf-8")
        return loads_strict(text)
    except RecordError:
        raise
    except OSError as exc:
        raise RecordError(f"{path}: cannot be read: {exc.strerror or exc}") from exc
    except (UnicodeDecodeError, StrictJSONError) as exc:
        raise RecordError(f"{path}: not a side record (not strict JSON: {exc})") from exc


_REPORT_KEYS: Final = (
    "exitCode",
    "outcome",
    "metrics",
    "unmeasurable",
    "invalidNames",
    "invalidNameCount",
    "message",
    "skipDeclared",
    "overflowNames",
    "unreadableLines",
    "declaredProvenance",
)
_PROVENANCE_WORDS: Final = (None, *(str(p) for p in Provenance))


def report_from_json(value: Any, *, where: str, path: str = "report") -> RunnerReport:
    r = _Reader(where)
    body = r.obj(value, path, _REPORT_KEYS)
    exit_code = r.int_(body["exitCode"], f"{path}.exitCode")
    skip = r.bool_(body["skipDeclared"], f"{path}.skipDeclared")
    outcome_word = r.str_(body["outcome"], f"{path}.outcome")
    if outcome_word not in {str(o) for o in Outcome}:
        raise r.fail(f"{path}.outcome", f"{outcome_word!r} is not Pass, Fail, Skip or Error")
    outcome = Outcome(outcome_word)
    if outcome is not outcome_for_exit(exit_code, skip_declared=skip):
        # A forged "Pass" beside exit 1 must never be read as a Pass.
        raise r.fail(
            f"{path}.outcome",
            f"{outcome} does not follow from exit {exit_code} "
            f"(skip {'declared' if skip else 'not declared'})",
        )
    metrics_raw = body["metrics"]
    if not isinstance(metrics_raw, dict):
        raise r.fail(f"{path}.metrics", "must be an object")
    metrics: dict[str, str] = {}
    for name, reading in metrics_raw.items():
        if not is_valid_metric_name(name):
            raise r.fail(f"{path}.metrics", f"{name!r} is not a metric name a runner may print")
        text = r.str_(reading, f"{path}.metrics.{name}")
        if len(text.encode("utf-8")) > MAX_VALUE_BYTES:
            raise r.fail(f"{path}.metrics.{name}", "value is over the contract's bound")
        metrics[name] = text
    unmeasurable = r.strs(body["unmeasurable"], f"{path}.unmeasurable")
    for name in unmeasurable:
        if not is_valid_metric_name(name):
            raise r.fail(f"{path}.unmeasurable", f"{name!r} is not a metric name")
    provenance = body["declaredProvenance"]
    if provenance not in _PROVENANCE_WORDS:
        raise r.fail(f"{path}.declaredProvenance", f"{provenance!r} is not sim/unknown/silicon")
    return RunnerReport(
        exit_code=exit_code,
        outcome=outcome,
        metrics=metrics,
        unmeasurable=frozenset(unmeasurable),
        invalid_names=tuple(r.strs(body["invalidNames"], f"{path}.invalidNames")),
        invalid_name_count=r.int_(body["invalidNameCount"], f"{path}.invalidNameCount", low=0),
        message=r.str_(body["message"], f"{path}.message"),
        skip_declared=skip,
        artifacts=(),
        dropped_artifacts=(),
        overflow_names=tuple(r.strs(body["overflowNames"], f"{path}.overflowNames")),
        unreadable_lines=r.int_(body["unreadableLines"], f"{path}.unreadableLines", low=0),
        declared_provenance=provenance,
    )


def _termination_from_json(value: Any, *, r: _Reader, path: str) -> Termination:
    body = r.obj(value, path, ("exitCode", "reason", "detail", "deadlineExceeded", "interrupted"))
    return Termination(
        exit_code=r.int_(body["exitCode"], f"{path}.exitCode"),
        reason=r.str_(body["reason"], f"{path}.reason"),
        detail=r.str_(body["detail"], f"{path}.detail"),
        deadline_exceeded=r.bool_(body["deadlineExceeded"], f"{path}.deadlineExceeded"),
        interrupted=r.bool_(body["interrupted"], f"{path}.interrupted"),
    )


_RECORD_KEYS: Final = (
    "apiVersion",
    "kind",
    "recordVersion",
    "session",
    "side",
    "node",
    "peerHost",
    "peerNode",
    "profile",
    "simulatedGpu",
    "retryOnErrorLimit",
    "complete",
    "stopped",
    "tests",
)
_TEST_KEYS: Final = ("name", "required", "spec", "axes", "parent", "digest", "attempts")
#: N5: a test the side did not run (a mixed profile's test of another scope).
_NOT_RUN_HERE: Final = "notRunHere"
_ATTEMPT_KEYS: Final = (
    "attempt",
    "startedAt",
    "finishedAt",
    "rawLog",
    "artifacts",
    "termination",
    "report",
)


def record_from_json(value: Any, *, where: str) -> SideRecord:
    """Decode a side record, refusing anything not written as this version writes it."""
    r = _Reader(where)
    if isinstance(value, dict):
        # Kind and version first: an older record must hear why, not "missing field".
        if value.get("kind") != RECORD_KIND or value.get("apiVersion") != API_VERSION:
            raise r.fail(
                "kind",
                f"{value.get('apiVersion')!r}/{value.get('kind')!r} is not a {API_VERSION} "
                f"{RECORD_KIND}",
            )
        version = value.get("recordVersion")
        if version == 1 or (version == RECORD_VERSION and "session" not in value):
            raise r.fail(
                "session",
                "missing: this record was written before side records carried a session, "
                f"so it cannot be bound to this run; {RERUN_HINT}",
            )
        if version != RECORD_VERSION:
            raise r.fail(
                "recordVersion",
                f"{version!r} is not {RECORD_VERSION}; write the records with the same "
                "glimmer version on every host",
            )
    body = r.obj(value, "record", _RECORD_KEYS)
    session = r.str_(body["session"], "session")
    problem = session_problem(session)
    if problem is not None:
        raise r.fail("session", problem)
    role_word = body["side"].get("role") if isinstance(body["side"], dict) else None
    if role_word == SERVER:
        r.obj(body["side"], "side", ("role",))
        rank = nranks = None
    elif role_word == RANK:
        side = r.obj(body["side"], "side", ("role", "rank", "nranks"))
        nranks = r.int_(side["nranks"], "side.nranks", low=2)
        rank = r.int_(side["rank"], "side.rank", low=0)
        if rank >= nranks:
            raise r.fail("side.rank", f"{rank} is outside 0..{nranks - 1}")
    else:
        raise r.fail("side.role", f"{role_word!r} is not {SERVER!r} or {RANK!r}")
    tests_raw = body["tests"]
    if not isinstance(tests_raw, list):
        raise r.fail("tests", "must be a list")
    tests = [_test_from_json(t, r=r, path=f"tests[{i}]") for i, t in enumerate(tests_raw)]
    names = [t.test.name for t in tests]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise r.fail("tests", f"test(s) {', '.join(map(repr, repeated))} recorded twice")
    return SideRecord(
        role=str(role_word),
        node=r.str_(body["node"], "node", empty=False),
        peer_host=r.str_(body["peerHost"], "peerHost", empty=False),
        peer_node=r.str_(body["peerNode"], "peerNode", empty=False),
        profile=r.str_(body["profile"], "profile"),
        sim=r.opt_str(body["simulatedGpu"], "simulatedGpu"),
        retry_on_error_limit=r.int_(body["retryOnErrorLimit"], "retryOnErrorLimit", low=0),
        tests=tests,
        session=session,
        rank=rank,
        nranks=nranks,
        complete=r.bool_(body["complete"], "complete"),
        stopped=r.str_(body["stopped"], "stopped"),
    )


def _test_from_json(value: Any, *, r: _Reader, path: str) -> SideTest:
    keys = (
        (*_TEST_KEYS, _NOT_RUN_HERE)
        if isinstance(value, dict) and _NOT_RUN_HERE in value
        else _TEST_KEYS
    )
    body = r.obj(value, path, keys)
    not_run = (
        r.str_(body[_NOT_RUN_HERE], f"{path}.{_NOT_RUN_HERE}", empty=False)
        if _NOT_RUN_HERE in body
        else ""
    )
    spec = body["spec"]
    axes = body["axes"]
    if not isinstance(spec, dict):
        raise r.fail(f"{path}.spec", "must be an object")
    if not isinstance(axes, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in axes.items()
    ):
        raise r.fail(f"{path}.axes", "must map strings to strings")
    test = PlannedTest(
        name=r.str_(body["name"], f"{path}.name", empty=False),
        required=r.bool_(body["required"], f"{path}.required"),
        spec=spec,
        axes=axes,
        parent=r.str_(body["parent"], f"{path}.parent"),
    )
    digest = r.str_(body["digest"], f"{path}.digest")
    if digest != test_digest(test):
        raise r.fail(f"{path}.digest", "does not match the test it came with (edited record?)")
    attempts_raw = body["attempts"]
    if not isinstance(attempts_raw, list):
        raise r.fail(f"{path}.attempts", "must be a list")
    if not_run and attempts_raw:
        # A test the side says it did not run cannot carry attempts to fold in.
        raise r.fail(f"{path}.{_NOT_RUN_HERE}", "set on a test that has attempts")
    attempts: list[SideAttempt] = []
    for index, item in enumerate(attempts_raw):
        at = f"{path}.attempts[{index}]"
        a = r.obj(item, at, _ATTEMPT_KEYS)
        number = r.int_(a["attempt"], f"{at}.attempt", low=1)
        if number != index + 1:
            raise r.fail(f"{at}.attempt", f"is {number}; attempts are numbered 1, 2, ... in order")
        artifacts = a["artifacts"]
        if not isinstance(artifacts, list) or not all(isinstance(x, dict) for x in artifacts):
            raise r.fail(f"{at}.artifacts", "must be a list of objects")
        attempt = SideAttempt(
            attempt=number,
            report=report_from_json(a["report"], where=r.where, path=f"{at}.report"),
            termination=_termination_from_json(a["termination"], r=r, path=f"{at}.termination"),
            started_at=r.opt_str(a["startedAt"], f"{at}.startedAt"),
            finished_at=r.opt_str(a["finishedAt"], f"{at}.finishedAt"),
            raw_log=r.str_(a["rawLog"], f"{at}.rawLog"),
            artifacts=tuple(artifacts),
        )
        window = attempt.window
        if window is None or window[0] > window[1]:
            # An attempt that cannot be placed in time cannot be bound to a session.
            raise r.fail(
                f"{at}.startedAt",
                f"startedAt {attempt.started_at!r} .. finishedAt {attempt.finished_at!r} is "
                f"not a window of {STAMP_FORMAT} times",
            )
        attempts.append(attempt)
    return SideTest(test=test, attempts=attempts, not_run_here=not_run)


def read_record(path: Path) -> SideRecord:
    return record_from_json(load_json(path), where=str(path))

"""Running one runner as a local process, as the kubelet would run its container.

The runner gets a session (and so a process group) of its own. The attempt ends when
its first process exits, as a container ends with its main process: a runner that
leaves a background child holding stdout open (``(sleep 300 &)``, or a child that keeps
printing) is judged on what it printed and its exit code, the same verdict the cluster
reaches. Output already in the pipe is still read in full: after the exit, whatever is
readable is drained (for at most ``DRAIN_AFTER_EXIT_SECONDS``), then the rest of the
group is killed, and what its members wrote before dying is read until the output
closes (for at most ``DRAIN_AFTER_KILL_SECONDS``: a process that left the group can hold
the pipe forever). The exit is noticed through a pidfd (a poll where the kernel has
none), never only when the output closes. Output is read with a timeout, never a
blocking read, so reading can never outlast the deadline.

The deadline mirrors ``activeDeadlineSeconds``: SIGTERM to the group, then SIGKILL
after a grace period, and the attempt is Error whatever the runner exits with (A14),
because a SIGTERM-trapping entrypoint exiting 0 must not pass. The deadline counts as
exceeded when the first process still runs at that instant; if it exits during the
grace, the rest of the group goes with it at once, as in a container.

Output is streamed chunk by chunk into the contract's incremental reader (bounded
memory) and copied to the raw log. When the attempt ends, for whatever reason (its
end, its deadline, an interrupt, a bug of ours), whatever is left of its group is
killed, like the rest of a container when its entrypoint exits. The first process is
reaped only after that, so its pid (the group id) cannot be reused by another
process while the group is signalled.

When the runner is a container, the supervised process is the runtime's client, and
killing it does not stop the container. A :class:`Stopper` then stops the container
itself: asked to begin when the deadline fires or the attempt is cut short, and to
finish (container killed and removed) whenever the client did not end on its own
with a contract exit code.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Final, Protocol

from glimmer.contract import ReportReader, RunnerReport
from glimmer.local import interrupt
from glimmer.verdict import Termination

KILL_GRACE_SECONDS: Final = 10.0
#: Grace between SIGTERM and SIGKILL when ``glimmer run`` itself is interrupted.
INTERRUPT_GRACE_SECONDS: Final = 3.0
#: After SIGKILL, how long output is still read: a process that left the group (its own
#: ``setsid``) can hold the pipe forever, and reading must stay bounded.
DRAIN_AFTER_KILL_SECONDS: Final = 1.0
#: After the first process exits with the output still open, how long what is readable
#: is drained before the rest of the group is killed (a child that keeps printing must
#: not hold the attempt open).
DRAIN_AFTER_EXIT_SECONDS: Final = 1.0
#: Where the kernel gives no pidfd, how often the first process's exit is looked for.
_EXIT_POLL_SECONDS: Final = 0.05
#: How long to wait for the first process to be reaped after SIGKILL.
REAP_SECONDS: Final = 5.0
_POLL_SECONDS: Final = 0.01
_CHUNK: Final = 65_536


class Stopper(Protocol):
    """Stops what the supervised process started elsewhere (a container)."""

    def begin(self, *, grace_seconds: float) -> None:
        """Start stopping it without waiting; a second call does nothing."""
        ...

    def finish(self) -> None:
        """Make sure it is gone; bounded, never raises."""
        ...


#: Exit codes a runner chooses (A2); any other end of the client may leave a container.
_CONTRACT_CODES: Final = frozenset({0, 1, 2, 3})


@dataclass(frozen=True, slots=True)
class ProcessResult:
    report: RunnerReport
    termination: Termination
    started_at: float
    finished_at: float


def run_runner(
    *,
    command: Sequence[str],
    env: Mapping[str, str],
    kind: str,
    deadline_seconds: float,
    raw_log: Path | None,
    on_output: Callable[[bytes], None] | None = None,
    kill_grace_seconds: float = KILL_GRACE_SECONDS,
    stopper: Stopper | None = None,
) -> ProcessResult:
    """Run ``command`` to completion (or its deadline) and read what it declared.

    An exception raised while it runs (:class:`glimmer.local.interrupt.Interrupted`
    included) stops the runner's whole group before it propagates.
    """
    reader = ReportReader(kind=kind)
    started = time.time()
    try:
        with interrupt.deferred():
            proc = subprocess.Popen(
                list(command),
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
    except OSError as exc:
        # Like a container that cannot start: no runner terminated, no verdict.
        return ProcessResult(
            report=reader.finish(exit_code=-1),
            termination=Termination(exit_code=-1, reason="StartError", detail=str(exc)),
            started_at=started,
            finished_at=time.time(),
        )
    group = _Group(
        proc,
        deadline_seconds=deadline_seconds,
        grace_seconds=kill_grace_seconds,
        stopper=stopper,
    )
    try:
        with _raw_log(raw_log) as log:

            def sink(chunk: bytes) -> None:
                reader.feed(chunk)
                log.write(chunk)
                if on_output is not None:
                    on_output(chunk)

            _pump(group, sink)
    except BaseException:
        try:
            if stopper is not None:
                stopper.begin(grace_seconds=INTERRUPT_GRACE_SECONDS)
            group.stop(grace_seconds=INTERRUPT_GRACE_SECONDS)
        finally:
            if stopper is not None:
                stopper.finish()
        raise
    code = group.reap()
    if stopper is not None and (group.expired or code not in _CONTRACT_CODES):
        stopper.finish()
    finished = time.time()
    if code < 0:
        reason, exit_code = signal.Signals(-code).name, 128 - code
    else:
        reason, exit_code = ("Completed" if code == 0 else "Error"), code
    if group.expired:
        reason = "DeadlineExceeded"
    return ProcessResult(
        report=reader.finish(exit_code=exit_code),
        termination=Termination(
            exit_code=exit_code, reason=reason, deadline_exceeded=group.expired
        ),
        started_at=started,
        finished_at=finished,
    )


@contextlib.contextmanager
def _raw_log(path: Path | None) -> Iterator[BinaryIO]:
    with path.open("wb") if path is not None else open(os.devnull, "wb") as handle:
        yield handle


class _Group:
    """The runner's process group and the clock that bounds it."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        *,
        deadline_seconds: float,
        grace_seconds: float,
        stopper: Stopper | None = None,
    ) -> None:
        self.proc = proc
        self.stopper = stopper
        self.deadline = time.monotonic() + deadline_seconds
        self.grace_seconds = grace_seconds
        self.expired = False
        self.kill_at: float | None = None
        self.abandon_at: float | None = None
        #: The first process exited and the rest of the group was killed with it.
        self.ended_with_leader = False
        self._exited = False

    def leader_exited(self) -> bool:
        """Whether the first process has exited, without reaping it (WNOWAIT)."""
        if not self._exited:
            try:
                info = os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                self._exited = True  # already reaped: it has certainly exited
            else:
                self._exited = info is not None
        return self._exited

    def escalate(self, now: float) -> None:
        """SIGTERM at the deadline, SIGKILL after the grace, then stop reading."""
        if self.ended_with_leader:
            return  # the runner ended before the deadline, or during its grace
        if self.kill_at is None:
            if now >= self.deadline:
                self.expired = True
                if self.stopper is not None:
                    self.stopper.begin(grace_seconds=self.grace_seconds)
                self.signal(signal.SIGTERM)
                self.kill_at = now + self.grace_seconds
        elif self.abandon_at is None and now >= self.kill_at:
            self.signal(signal.SIGKILL)
            self.abandon_at = now + DRAIN_AFTER_KILL_SECONDS

    def end_with_leader(self, now: float) -> None:
        """The first process exited: kill the rest of the group, as a container's end
        does, and read what is left for a bounded moment."""
        self.ended_with_leader = True
        self.signal(signal.SIGKILL)
        until = now + DRAIN_AFTER_KILL_SECONDS
        self.abandon_at = until if self.abandon_at is None else min(self.abandon_at, until)

    def next_change(self) -> float:
        for moment in (self.abandon_at, self.kill_at):
            if moment is not None:
                return moment
        return self.deadline

    def abandoned(self, now: float) -> bool:
        return self.abandon_at is not None and now >= self.abandon_at

    def signal(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)

    def stop(self, *, grace_seconds: float) -> None:
        """SIGTERM the group, give it ``grace_seconds``, then SIGKILL and reap."""
        try:
            if not self.leader_exited():
                self.signal(signal.SIGTERM)
                until = time.monotonic() + grace_seconds
                while not self.leader_exited() and time.monotonic() < until:
                    time.sleep(0.05)
        finally:
            self.reap()

    def reap(self) -> int:
        """Kill what is left of the group, then collect the first process's status."""
        self.signal(signal.SIGKILL)
        try:
            return self.proc.wait(timeout=None if self.leader_exited() else REAP_SECONDS)
        except subprocess.TimeoutExpired:
            return -signal.SIGKILL  # unkillable (uninterruptible sleep); reported as killed
        finally:
            if self.proc.stdout is not None:
                self.proc.stdout.close()


def _exit_notice(pid: int) -> int | None:
    """A descriptor that becomes readable when ``pid`` exits, or None without pidfds."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _pump(group: _Group, sink: Callable[[bytes], None]) -> None:
    """Copy output to ``sink`` until the group is done or abandoned: its first process
    has exited and the output closed, or reading is bounded out."""
    assert group.proc.stdout is not None
    fd = group.proc.stdout.fileno()
    notice = _exit_notice(group.proc.pid)
    output_open = True
    exit_handled = False
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            if notice is not None:
                selector.register(notice, selectors.EVENT_READ)
            while True:
                now = time.monotonic()
                if group.abandoned(now) or (not output_open and group.leader_exited()):
                    return
                if output_open and not exit_handled and group.leader_exited():
                    # The main process is gone: its output is final once the pipe
                    # is drained, and the rest of its group goes with it.
                    exit_handled = True
                    if notice is not None:
                        selector.unregister(notice)
                    output_open = _drain(fd, sink)
                    group.end_with_leader(time.monotonic())
                    if not output_open:
                        selector.unregister(fd)
                    continue
                group.escalate(now)
                wait = max(0.0, group.next_change() - now)
                if not output_open:
                    # The output closed first (the usual order on exit, or a runner
                    # that closed it): look for the first process's exit in short steps.
                    time.sleep(min(wait, _POLL_SECONDS))
                    continue
                if notice is None and not exit_handled:
                    wait = min(wait, _EXIT_POLL_SECONDS)
                ready = {key.fd for key, _ in selector.select(timeout=wait)}
                if fd not in ready:
                    continue
                chunk = os.read(fd, _CHUNK)
                if chunk:
                    sink(chunk)
                else:
                    output_open = False
                    selector.unregister(fd)
    finally:
        if notice is not None:
            os.close(notice)


def _drain(fd: int, sink: Callable[[bytes], None]) -> bool:
    """Read what is readable now, for at most ``DRAIN_AFTER_EXIT_SECONDS``; whether the
    output is still open."""
    until = time.monotonic() + DRAIN_AFTER_EXIT_SECONDS
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while time.monotonic() < until:
            if not selector.select(timeout=0):
                return True
            chunk = os.read(fd, _CHUNK)
            if not chunk:
                return False
            sink(chunk)
    return True

"""disk-io: write bandwidth, read bandwidth and 4 KiB read latency under one directory.

The disk is never simulated: even with ``GLIMMER_SIM_GPU`` set this runner measures the
real file system under ``BURNIN_DISK_IO_PATH`` with the real ``fio`` and prints
``provenance=silicon``. It runs fio twice on its own file (``target.py``):

1. ``glimmer-write``: sequential 1 MiB writes over the file, looping for a third of the
   window (``end_fsync`` so cached writes count);
2. ``glimmer-read`` (sequential 1 MiB reads) then ``glimmer-latency`` (random 4 KiB
   reads, one at a time), each a third of the window, over the part phase 1 wrote
   (allocated but unwritten extents read as zeros without touching the disk).

Verdict: any I/O error fio counts is a measured Fail (``ioErrors``), unless its errno
says the setup, not the disk, is wrong (no space, read-only, no O_DIRECT, ...): that and
every unreadable or unexpected fio report is an Error, never a Pass.
"""

from __future__ import annotations

import errno
import os
import signal
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import FrameType

from runners.disk_io.parse import FioReport, Job, UnreadableFioOutputError, parse_fio_json
from runners.disk_io.target import PATH_ENV, SIZE_ENV, TestFile, create_test_file, resolve_target
from runners.disk_io.tool import FIO_PATH_ENV, FioRun, find_fio, run_fio
from runners.sdk.entry import RunnerContext
from runners.sdk.outcome import Failed, Passed, RunnerError, Verdict
from runners.sdk.report import Report

SECONDS_ENV = "BURNIN_DISK_IO_SECONDS"
DIRECT_ENV = "BURNIN_DISK_IO_DIRECT"
DEFAULT_SIZE_MB = 1024
DEFAULT_SECONDS = 30.0
#: Left of the duration budget for allocation, fio's start-up and cleanup.
BUDGET_MARGIN_S = 15.0
#: fio's start, ``end_fsync`` and exit beyond its ``runtime``.
TOOL_OVERHEAD_S = 60.0
BLOCK = 2**20
WRITE_JOB, READ_JOB, LATENCY_JOB = "glimmer-write", "glimmer-read", "glimmer-latency"
#: errnos that name a broken disk; any other errno is a setup problem (Error).
HARDWARE_ERRNOS = frozenset(
    {errno.EIO, errno.ENXIO, errno.ENODEV, errno.EBADMSG, errno.EILSEQ, errno.ENODATA}
    | {errno.EREMOTEIO, errno.ENOMEDIUM, errno.EMEDIUMTYPE}
)


class TerminatedError(RunnerError):
    """SIGTERM (the pod's deadline or a cancel) arrived: clean up, then exit 3."""


@contextmanager
def _terminate_cleanly() -> Iterator[None]:
    def handler(signum: int, frame: FrameType | None) -> None:
        raise TerminatedError(f"terminated by signal {signum} before fio finished")

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _common(test_file: TestFile, *, direct: bool) -> list[str]:
    return [
        "--output-format=json",
        "--eta=never",
        f"--filename={test_file.path}",
        "--allow_file_create=0",
        "--unlink=0",
        "--ioengine=psync",
        # Jobs as threads of the one fio process: a forked job process is its own
        # session, out of reach of the process-group kill that ends a hung or cut run.
        "--thread",
        f"--direct={int(direct)}",
        "--time_based",
        "--continue_on_error=io",
        "--clat_percentiles=1",
        "--percentile_list=99",
    ]


def _job(name: str, *, rw: str, bs: str, size: int, runtime_ms: int) -> list[str]:
    return [
        f"--name={name}",
        f"--rw={rw}",
        f"--bs={bs}",
        f"--size={size}",
        f"--runtime={runtime_ms}ms",
    ]


def _run(fio: str, argv: Sequence[str], *, runtime_ms: int, expected: tuple[str, ...]) -> FioReport:
    done = run_fio(fio, argv, timeout_s=runtime_ms / 1000 + TOOL_OVERHEAD_S)
    try:
        report = parse_fio_json(done.stdout)
    except UnreadableFioOutputError as error:
        raise RunnerError(
            f"fio exit {done.exit_code}, report unreadable ({error})" + _said(done)
        ) from None
    if tuple(report.jobs) != expected:
        raise RunnerError(f"fio reported jobs {list(report.jobs)}, expected {list(expected)}")
    _judge_run(done, report)
    return report


def _said(done: FioRun) -> str:
    line = done.last_stderr_line()
    return f": {line}" if line else ""


def _judge_run(done: FioRun, report: FioReport) -> None:
    """Errors of the setup stop the runner here; I/O errors are left for the verdict."""
    setup = sorted({code for job in report.jobs.values() for code in job.errnos} - HARDWARE_ERRNOS)
    if setup:
        names = ", ".join(f"{errno.errorcode.get(c, c)} ({os.strerror(c)})" for c in setup)
        raise RunnerError(f"fio could not use {PATH_ENV}: {names}" + _said(done))
    errors = sum(job.errors for job in report.jobs.values())
    if errors:
        return  # measured: the verdict prints ioErrors and fails
    if report.noise:
        raise RunnerError(
            f"fio printed {len(report.noise)} unexpected line(s) before its report: "
            f"{report.noise[0][:200]}"
        )
    if done.exit_code != 0:
        raise RunnerError(f"fio exited {done.exit_code} with no error in its report" + _said(done))


def _settings(ctx: RunnerContext) -> tuple[int, float, bool]:
    size_mb = int(ctx.env.number(SIZE_ENV, default=DEFAULT_SIZE_MB, low=1, high=2**20))
    window = ctx.env.window_s(default=DEFAULT_SECONDS, cap=86400, margin=BUDGET_MARGIN_S)
    seconds = ctx.env.number(SECONDS_ENV, default=max(window, 3.0), low=3, high=86400)
    budget = ctx.env.duration_budget_s
    if budget is not None and seconds > budget:
        raise RunnerError(
            f"{SECONDS_ENV}={seconds:g} exceeds BURNIN_DURATION_SECONDS={budget:g}: "
            f"lower {SECONDS_ENV} or raise the test's duration"
        )
    direct = ctx.env.choice(DIRECT_ENV, default="1", allowed=("0", "1")) == "1"
    return size_mb, seconds, direct


def _print_bandwidth(report: Report, name: str, job: Job, *, read: bool) -> None:
    """MB/s (10^6 bytes) from fio's ``bw_bytes``; nothing when the job did no I/O."""
    side = job.read if read else job.write
    if side.total_ios:
        report.metric(name, side.bw_bytes / 1e6)


def measure(ctx: RunnerContext) -> Verdict:
    report = ctx.report
    report.metric("provenance", "silicon")
    directory = resolve_target(ctx.environ.get(PATH_ENV))
    size_mb, seconds, direct = _settings(ctx)
    fio = find_fio(ctx.environ.get(FIO_PATH_ENV, "").strip() or None)
    report.metric("diskIoPath", directory)
    report.metric("diskIoSizeMB", size_mb)
    report.metric("diskIoDirect", direct)
    report.metric("durationRequestedS", seconds)
    phase_ms = max(int(seconds * 1000 / 3), 1000)
    with _terminate_cleanly():
        test_file = create_test_file(directory, size_bytes=size_mb * 2**20)
        try:
            verdict = _measure_file(report, fio, test_file, direct=direct, phase_ms=phase_ms)
        finally:
            left = test_file.remove()
        if left is not None:
            raise RunnerError(left)
    return verdict


def _measure_file(
    report: Report, fio: str, test_file: TestFile, *, direct: bool, phase_ms: int
) -> Verdict:
    common = _common(test_file, direct=direct)
    size = test_file.size_bytes
    write_job = _job(WRITE_JOB, rw="write", bs="1M", size=size, runtime_ms=phase_ms)
    write_argv = [*common, "--end_fsync=1", *write_job]
    written = _run(fio, write_argv, runtime_ms=phase_ms, expected=(WRITE_JOB,))
    report.metric("fioVersion", written.version)
    if not test_file.still_ours():
        raise RunnerError(f"{test_file.path} was replaced while fio wrote it; not measured")
    write = written.jobs[WRITE_JOB]
    readable = min(size, write.write.io_bytes) // BLOCK * BLOCK
    if not write.errors and readable == 0:
        raise RunnerError(f"fio wrote less than 1 MiB to {test_file.path} in {phase_ms} ms")
    jobs: dict[str, Job] = {WRITE_JOB: write}
    if readable:
        read_argv = [
            *common,
            *_job(READ_JOB, rw="read", bs="1M", size=readable, runtime_ms=phase_ms),
            "--stonewall",
            *_job(LATENCY_JOB, rw="randread", bs="4k", size=readable, runtime_ms=phase_ms),
        ]
        read = _run(fio, read_argv, runtime_ms=2 * phase_ms, expected=(READ_JOB, LATENCY_JOB))
        jobs.update(read.jobs)
    return _verdict(report, jobs)


def _verdict(report: Report, jobs: dict[str, Job]) -> Verdict:
    _print_bandwidth(report, "writeBandwidthMBs", jobs[WRITE_JOB], read=False)
    if READ_JOB in jobs:
        _print_bandwidth(report, "readBandwidthMBs", jobs[READ_JOB], read=True)
    latency = jobs[LATENCY_JOB].read if LATENCY_JOB in jobs else None
    if latency is not None and latency.clat_mean_ns is not None:
        report.metric("ioLatencyUs", latency.clat_mean_ns / 1000)
    if latency is not None and latency.clat_p99_ns is not None:
        report.metric("p99LatencyUs", latency.clat_p99_ns / 1000)
    errors = sum(job.errors for job in jobs.values())
    unmeasured = [
        name
        for name in ("writeBandwidthMBs", "readBandwidthMBs", "ioLatencyUs", "p99LatencyUs")
        if name not in report.printed
    ]
    if unmeasured and not errors:
        # No error explains the gap: an ioErrors=0 here would read as a clean disk.
        raise RunnerError(f"fio did no I/O for {', '.join(unmeasured)}")
    report.metric("ioErrors", errors)
    report.metric("elapsedS", sum(job.runtime_ms for job in jobs.values()) / 1000)
    if errors:
        codes = sorted({code for job in jobs.values() for code in job.errnos})
        names = ", ".join(errno.errorcode.get(code, str(code)) for code in codes) or "errno unknown"
        failing = ", ".join(name for name, job in jobs.items() if job.errors)
        return Failed(f"{errors} I/O error(s) ({names}) in {failing}")
    return Passed()

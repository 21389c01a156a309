"""disk-io's verdict for every fio fault: a stand-in fio prints recorded or constructed
reports (fixtures/README.md), hostile output, or nothing; the directory is a real one.

The rule under test: a measured I/O error is Fail (exit 1, ``ioErrors`` printed first);
a setup problem and every report that cannot be read in full is Error (exit 3); nothing
but a clean, complete report is a Pass.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from glimmer.contract import RunnerReport
from runners.disk_io.runner import LATENCY_JOB, READ_JOB, WRITE_JOB
from runners.disk_io.target import FILE_PREFIX, PATH_ENV, SIZE_ENV
from runners.disk_io.tests.fake_fio import FIXTURES, READ, WRITE, argv_log, fake_fio
from runners.tests.fake_tools import run_module

PASS, FAIL, ERROR = 0, 1, 3


def run(tmp_path: Path, fio: Path | str, **extra: str) -> RunnerReport:
    target = tmp_path / "target"
    target.mkdir(exist_ok=True)
    env = {PATH_ENV: str(target), SIZE_ENV: "4", "BURNIN_FIO_PATH": str(fio), **extra}
    report = run_module("runners.disk_io", kind="disk-io", env=env)
    assert [n for n in os.listdir(target) if n.startswith(FILE_PREFIX)] == []
    return report


_WRITE = WRITE.read_text()
_READ = READ.read_text()


def _latency_did_nothing() -> str:
    data = json.loads(_READ)
    data["jobs"][1]["read"]["total_ios"] = 0
    return json.dumps(data, indent=2)


_NOISE = "fio: pid=123, err=5/file:io_u.c:1845, func=io_u error, error=Input/output error\n"

#: label -> (stand-in arguments, exit code, words the last line must carry)
CASES: dict[str, tuple[dict[str, Any], int, tuple[str, ...]]] = {
    "recorded-pass": ({}, PASS, ("DISK_IO_PASS",)),
    "eio-counted-on-write": (
        {"write": FIXTURES / "write-eio-constructed.json", "write_exit": 1},
        FAIL,
        ("3 I/O error(s)", "EIO", WRITE_JOB),
    ),
    "eio-stopped-latency-job": (
        {"read": FIXTURES / "read-eio-stopped-constructed.json", "read_exit": 1},
        FAIL,
        ("1 I/O error(s)", LATENCY_JOB),
    ),
    "eio-with-noise-before-the-report": (
        {"write": _NOISE + (FIXTURES / "write-eio-constructed.json").read_text(), "write_exit": 1},
        FAIL,
        ("EIO",),
    ),
    "enospc-mid-write": (
        {"write": FIXTURES / "write-enospc-constructed.json", "write_exit": 1},
        ERROR,
        ("ENOSPC", PATH_ENV),
    ),
    "truncated-report": ({"write": _WRITE[:2000], "write_exit": 1}, ERROR, ("unreadable",)),
    "noise-before-a-clean-report": ({"write": _NOISE + _WRITE}, ERROR, ("unexpected line",)),
    "nan-in-the-report": (
        {"read": _READ.replace('"mean" : ', '"mean" : NaN, "x" : ', 1)},
        ERROR,
        ("non-finite",),
    ),
    "clean-report-nonzero-exit": (
        {"write_exit": 1, "stderr": "fio: something went wrong\n"},
        ERROR,
        ("exited 1", "something went wrong"),
    ),
    "killed-without-output": ({"write": "", "write_exit": 137}, ERROR, ("no JSON document",)),
    "someone-elses-jobs": ({"read": _WRITE}, ERROR, ("expected", READ_JOB)),
    "latency-job-did-no-io": ({"read": _latency_did_nothing()}, ERROR, ("did no I/O",)),
    "endless-output": ({"endless": True}, ERROR, ("more than",)),
}


@pytest.mark.parametrize("label", list(CASES))
def test_A16_fio_fault_gives_its_phase(tmp_path: Path, label: str) -> None:
    arguments, expected_exit, words = CASES[label]
    report = run(tmp_path, fake_fio(tmp_path, **arguments))
    assert report.exit_code == expected_exit, report.message
    for word in words:
        assert word in report.message, (word, report.message)
    if expected_exit == FAIL:
        assert int(report.metrics["ioErrors"]) > 0
        assert report.message.startswith("DISK_IO_FAIL:")
    if expected_exit == ERROR:
        assert report.message.startswith("DISK_IO_ERROR:")
        assert "ioErrors" not in report.metrics


def test_recorded_reports_give_fios_figures_in_canonical_units(tmp_path: Path) -> None:
    report = run(tmp_path, fake_fio(tmp_path))
    assert report.exit_code == 0, report.message
    assert report.metrics["writeBandwidthMBs"] == "7254.2204"  # bw_bytes 7254220391 / 1e6
    assert report.metrics["readBandwidthMBs"] == "4860.5321"  # bw_bytes 4860532107 / 1e6
    assert report.metrics["ioLatencyUs"] == "1.5085"  # clat mean 1508.496494 ns
    assert report.metrics["p99LatencyUs"] == "1.012"  # clat p99 1012 ns
    assert report.metrics["ioErrors"] == "0"
    assert report.metrics["elapsedS"] == "3.001"  # job_runtime 1001 + 1000 + 1000 ms
    assert report.provenance == "silicon"


def test_A16_missing_fio_is_a_missing_dependency_exit_3(tmp_path: Path) -> None:
    report = run(tmp_path, "/nonexistent/fio")
    assert report.exit_code == 3
    assert "BURNIN_FIO_PATH" in report.message and "install fio" in report.message


def test_A15_fio_gets_the_size_limit_the_window_and_only_the_runners_file(tmp_path: Path) -> None:
    report = run(tmp_path, fake_fio(tmp_path), BURNIN_DURATION_SECONDS="21")
    assert report.exit_code == 0, report.message
    assert report.metrics["durationRequestedS"] == "6"  # the budget less the 15 s margin
    write, read = argv_log(tmp_path)
    for argv in (write, read):
        files = [a for a in argv if a.startswith("--filename=")]
        assert len(files) == 1
        assert Path(files[0].removeprefix("--filename=")).parent == tmp_path / "target"
        assert "--allow_file_create=0" in argv and "--unlink=0" in argv
        assert "--time_based" in argv and "--output-format=json" in argv
    assert f"--size={4 * 2**20}" in write and "--runtime=2000ms" in write
    assert read.count("--runtime=2000ms") == 2
    assert f"--size={4 * 2**20}" in read  # the recorded run wrote more than the file


def test_A15_budget_shorter_than_the_asked_window_is_refused(tmp_path: Path) -> None:
    report = run(
        tmp_path, fake_fio(tmp_path), BURNIN_DURATION_SECONDS="10", BURNIN_DISK_IO_SECONDS="60"
    )
    assert report.exit_code == 3 and "BURNIN_DISK_IO_SECONDS" in report.message
    assert argv_log(tmp_path) == []


@pytest.mark.parametrize(
    ("name", "value"),
    [(SIZE_ENV, "0"), (SIZE_ENV, "lots"), ("BURNIN_DISK_IO_DIRECT", "yes")],
)
def test_bad_setting_is_refused_before_fio_runs(tmp_path: Path, name: str, value: str) -> None:
    report = run(tmp_path, fake_fio(tmp_path), **{name: value})
    assert report.exit_code == 3 and name in report.message
    assert argv_log(tmp_path) == []


def test_A14_sigterm_mid_run_removes_the_file_and_exits_3(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BURNIN_", "GLIMMER_"))}
    env.update({PATH_ENV: str(target), SIZE_ENV: "4", "BURNIN_DISK_IO_SECONDS": "300"})
    process = subprocess.Popen(
        [sys.executable, "-m", "runners.disk_io"], env=env, stdout=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 30
        while not any(n.startswith(FILE_PREFIX) for n in os.listdir(target)):
            assert time.monotonic() < deadline, "the runner never created its file"
            time.sleep(0.05)
        time.sleep(0.5)  # let fio start on it
        process.send_signal(signal.SIGTERM)
        stdout, _ = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        leaked = _processes_naming(target)
        for pid in leaked:  # this test's own runner's fio jobs, ended so none outlives it
            os.kill(pid, signal.SIGKILL)
    assert process.returncode == 3
    assert stdout.decode().rstrip().splitlines()[-1].startswith("DISK_IO_ERROR: terminated")
    assert os.listdir(target) == []
    assert leaked == []  # no fio job left writing


def _processes_naming(directory: Path) -> list[int]:
    """Live processes whose command line names ``directory`` (a leaked fio job)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if str(directory).encode() in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def test_reads_cover_only_what_the_write_phase_wrote(tmp_path: Path) -> None:
    data = json.loads(_WRITE)
    data["jobs"][0]["write"]["io_bytes"] = 2 * 2**20 + 12345  # a slow disk: half the file
    fio = fake_fio(tmp_path, write=json.dumps(data, indent=2))
    report = run(tmp_path, fio)
    assert report.exit_code == 0, report.message
    _, read = argv_log(tmp_path)
    assert read.count(f"--size={2 * 2**20}") == 2  # whole MiB written, never unwritten extents

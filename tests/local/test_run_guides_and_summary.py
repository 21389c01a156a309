"""I3: ``glimmer run`` guides before it runs, and its summary reads whole.

A typo in ``--sim`` is a usage error (exit 2, one line, nothing run); several profiles
without ``--profile`` are refused by name; the summary table wraps messages instead of
cutting them, colours only on a terminal, and says SIMULATED in its title and the run's
line rather than on every row.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from runners.sdk.simgpu.profiles import PROFILES
from runners.sdk.simgpu.spec import FAULTS

GLIMMER = [sys.executable, "-c", "from glimmer.cli import main; main()"]


def glimmer(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR")}
    return subprocess.run(
        [*GLIMMER, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )


def profile_file(path: Path, script: str, *, names: tuple[str, ...] = ("p",)) -> Path:
    test = {"kind": "custom", "runner": {"command": ["sh", "-c", script]}}
    docs = [
        {"kind": "BurnInProfile", "metadata": {"name": n}, "spec": {"tests": [{"inline": test}]}}
        for n in names
    ]
    path.write_text(yaml.safe_dump_all(docs))
    return path


@pytest.mark.parametrize(
    ("sim", "named", "listed"),
    [
        ("h201", "unknown profile 'h201'", [repr(k) for k in PROFILES]),
        ("h200:low-clok", "unknown fault 'low-clok'", [*FAULTS, "xid:<code>"]),
        ("h200:xid:79,nope", "unknown fault 'nope'", [*FAULTS, "xid:<code>"]),
        ("h200x99", "device count 99 outside 1..64", []),
        ("", "empty", []),
    ],
    ids=["profile", "fault", "second-fault", "count", "empty"],
)
def test_I3_bad_sim_is_a_usage_error_before_anything_runs(
    tmp_path: Path, sim: str, named: str, listed: list[str]
) -> None:
    report = tmp_path / "r"
    proc = glimmer("run", "--sim", sim, "--report-dir", str(report), cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == ""  # no runner started, no progress line
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"glimmer: error: --sim {sim!r}: ") and named in line
    assert all(item in line for item in listed)
    assert not report.exists()


def test_I3_good_sim_passes_the_up_front_check(tmp_path: Path) -> None:
    proc = glimmer("run", "--sim", "H200x2:low-clock,xid:79", "--dry-run", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "compute-smoke" in proc.stdout


def test_I3_several_profiles_without_profile_are_refused_by_name(tmp_path: Path) -> None:
    path = profile_file(tmp_path / "suite.yaml", "echo ok", names=("quick", "soak"))
    proc = glimmer("run", str(path), "--dry-run", cwd=tmp_path)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    (line,) = proc.stderr.splitlines()
    assert "'quick'" in line and "'soak'" in line and "--profile" in line
    chosen = glimmer("run", str(path), "--profile", "soak", "--dry-run", cwd=tmp_path)
    assert chosen.returncode == 0, chosen.stderr


def test_I3_a_profile_name_defined_twice_is_refused_with_profile(tmp_path: Path) -> None:
    one = profile_file(tmp_path / "one.yaml", "echo a")
    two = profile_file(tmp_path / "two.yaml", "echo b")
    proc = glimmer(
        "run", str(one), "--tests", str(two), "--profile", "p", "--dry-run", cwd=tmp_path
    )
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "BurnInProfile 'p' is defined twice" in proc.stderr
    assert "one.yaml" in proc.stderr and "two.yaml" in proc.stderr
    again = glimmer("run", str(one), "--tests", str(one), "--dry-run", cwd=tmp_path)
    assert again.returncode == 0, again.stderr  # one file given twice: one profile


LONG = (
    "X_FAIL: [bold]word[/bold] alpha beta gamma delta epsilon zeta eta theta iota kappa "
    "lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega-the-end"
)


def table_of(stdout: str) -> tuple[list[str], list[str], str]:
    """(lines above the header, table lines from the header on, the run's line)."""
    before, _, after = stdout.partition("\nTEST")
    lines = ("TEST" + after).splitlines()
    run_line = next(line for line in lines if line.startswith("run "))
    table = lines[: lines.index(run_line)]
    above = before.split("\n\n")[-1].splitlines() if "\n\n" in before else []
    return above, table, run_line


def test_I3_long_message_wraps_whole_never_cut(tmp_path: Path) -> None:
    path = profile_file(tmp_path / "p.yaml", f"echo '{LONG}'; exit 1")
    proc = glimmer("run", str(path), "--report-dir", str(tmp_path / "r"), cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    message = json.loads((tmp_path / "r" / "run.json").read_text())["results"][0]["message"]
    assert message == LONG
    _, table, _ = table_of(proc.stdout)
    start = table[0].index("MESSAGE")
    cell = " ".join(line[start:].strip() for line in table[1:])
    assert cell == LONG  # every word, in order, markup-looking text kept as text
    assert len(table) > 2 and all(len(line) <= 80 for line in table)  # wrapped at 80 columns
    assert all(line == line.rstrip() for line in table)


def test_I3_simulated_is_said_in_title_and_run_line_not_every_row(tmp_path: Path) -> None:
    path = profile_file(tmp_path / "p.yaml", "echo X_PASS; echo bw=1")
    proc = glimmer(
        "run", str(path), "--sim", "h200", "--report-dir", str(tmp_path / "r"), cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    above, table, run_line = table_of(proc.stdout)
    assert above == ["SIMULATED GPU (h200): no silicon was measured"]
    assert "SIMULATED GPU (h200)" in run_line and "no silicon was measured" in run_line
    assert not any("SIMULATED" in row for row in table)
    progress = [line for line in proc.stdout.splitlines() if line.startswith("[1/1]")]
    assert progress and all(line.endswith("SIMULATED") for line in progress)
    assert proc.stdout.startswith("SIMULATED GPU h200: results prove the plumbing")


def test_I3_colour_only_on_a_terminal(tmp_path: Path) -> None:
    path = profile_file(tmp_path / "p.yaml", "echo X_FAIL: broken; exit 1")
    piped = glimmer("run", str(path), "--report-dir", str(tmp_path / "a"), cwd=tmp_path)
    assert piped.returncode == 1 and "\x1b[" not in piped.stdout
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env["TERM"] = "xterm-256color"
    master, slave = pty.openpty()
    with subprocess.Popen(
        [*GLIMMER, "run", str(path), "--report-dir", str(tmp_path / "b")],
        cwd=tmp_path,
        stdout=slave,
        stderr=slave,
        env=env,
    ) as proc:
        os.close(slave)
        chunks = []
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert proc.wait(timeout=60) == 1
    os.close(master)
    shown = b"".join(chunks).decode()
    table_row = next(line for line in shown.splitlines() if "broken" in line)
    assert "\x1b[1;31mFailed\x1b[0m" in table_row  # the phase is red, in bold, on a terminal

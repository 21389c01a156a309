"""Helpers that stand a recorded tool output in for a real binary (tests only)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from glimmer.contract import RunnerReport, read_report


def fake_tool(tmp_path: Path, *, name: str, stdout_file: Path, exit_code: int) -> Path:
    """An executable that prints ``stdout_file`` and exits ``exit_code``, whatever its args."""
    tool = tmp_path / name
    tool.write_text(f"#!/bin/sh\ncat '{stdout_file}'\nexit {exit_code}\n")
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    return tool


def run_module(module: str, *, kind: str, env: dict[str, str]) -> RunnerReport:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("BURNIN_", "GLIMMER_"))}
    full.update(env)
    done = subprocess.run(
        [sys.executable, "-m", module], env=full, capture_output=True, timeout=60, check=False
    )
    return read_report(done.stdout, kind=kind, exit_code=done.returncode)

"""Helpers for the bare-host Pair/Group tests: profiles, in-process CLI calls, records."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner, Result

from glimmer.cli.merge import merge
from glimmer.cli.run import run


def free_port(pairs: int = 1) -> int:
    """A port p with p..p+pairs free right now (the tcp-baseline server takes p and p+1)."""
    for _ in range(50):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        if port + pairs >= 65535:
            continue
        try:
            for offset in range(pairs + 1):
                with socket.socket() as s:
                    s.bind(("0.0.0.0", port + offset))
        except OSError:
            continue
        return port
    raise RuntimeError("no free port pair")


def profile(
    path: Path,
    *,
    scope: str,
    script: str | None = None,
    command: list[str] | None = None,
    thresholds: list[dict[str, str]] | None = None,
    env: dict[str, str] | None = None,
    name: str = "p",
    extra_tests: list[dict[str, Any]] | None = None,
    repeat: int = 1,
) -> Path:
    runner: dict[str, Any] = {"command": command or ["sh", "-c", script or "exit 0"]}
    if scope == "Group":
        runner["image"] = "example.invalid/group-capable:dev"  # P5: only an image bypasses
    if env:
        runner["env"] = [{"name": k, "value": v} for k, v in env.items()]
    test: dict[str, Any] = {"kind": "custom", "scope": scope, "runner": runner}
    if thresholds:
        test["thresholds"] = thresholds
    if repeat > 1:
        test["repeatCount"] = repeat
    tests = [{"inline": test}, *(extra_tests or [])]
    path.write_text(
        yaml.safe_dump(
            {"kind": "BurnInProfile", "metadata": {"name": name}, "spec": {"tests": tests}}
        )
    )
    return path


#: The session every side of one test's link run is given (GLIMMER_SESSION), as a
#: launcher script would export it on every host.
SESSION = "test-session-0001"


def glimmer_run(*args: str, session: str | None = SESSION) -> Result:
    """``glimmer run`` in-process, with GLIMMER_SESSION set to ``session`` (None: unset)."""
    return CliRunner().invoke(
        run, list(args), catch_exceptions=False, env={"GLIMMER_SESSION": session}
    )


def glimmer_merge(*args: str) -> Result:
    return CliRunner().invoke(merge, list(args), catch_exceptions=False)


def run_json(folder: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((folder / "run.json").read_text())
    return doc


def rank_run(
    profile_path: Path,
    *,
    rank: int,
    nranks: int,
    out: Path,
    node: str = "",
    session: str = SESSION,
) -> Result:
    return glimmer_run(
        str(profile_path),
        "--rank",
        str(rank),
        "--nranks",
        str(nranks),
        "--root",
        "127.0.0.1",
        "--node",
        node or f"n{rank}",
        "--results-dir",
        str(out),
        session=session,
    )

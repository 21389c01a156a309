"""The stand-in container runtime: put it on PATH, choose what its containers print.

:class:`FakeRuntime` installs ``docker``/``podman``/``nerdctl`` wrappers into a folder
of the test's own (prepended to PATH), each running :mod:`fake_runtime` under that
name, and reads back what they were asked to do.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

SCRIPT = Path(__file__).with_name("fake_runtime.py")


@dataclass
class FakeRuntime:
    bin_dir: Path
    state: Path

    def install(self, *names: str) -> None:
        for name in names:
            wrapper = self.bin_dir / name
            wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{SCRIPT}" {name} "$@"\n')
            wrapper.chmod(0o755)

    def play(self, **scenario: Any) -> None:
        """What the next containers print and exit with (see fake_runtime.py)."""
        (self.state / "scenario.json").write_text(json.dumps(scenario))

    def calls(self, verb: str | None = None) -> list[list[str]]:
        path = self.state / "calls.jsonl"
        if not path.exists():
            return []
        found = [json.loads(line)["argv"] for line in path.read_text().splitlines()]
        return [argv for argv in found if verb is None or argv[:1] == [verb]]

    def runtimes_called(self) -> list[str]:
        path = self.state / "calls.jsonl"
        if not path.exists():
            return []
        return [json.loads(line)["runtime"] for line in path.read_text().splitlines()]

    def started_pids(self) -> list[int]:
        """Every container process the stand-in started, whether or not it is gone."""
        path = self.state / "started.pids"
        return [int(line) for line in path.read_text().split()] if path.exists() else []

    def container_pids(self) -> dict[str, int]:
        folder = self.state / "containers"
        if not folder.exists():
            return {}
        return {p.name: int(p.read_text()) for p in folder.iterdir()}


def fake_runtime_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeRuntime:
    """A fresh stand-in: its own bin folder first on PATH, nothing installed yet.

    PATH is otherwise reduced to the system folders, so a real runtime on the host
    (or a stale wrapper) can never answer for the stand-in.
    """
    bin_dir = tmp_path / "fake-bin"
    state = tmp_path / "fake-state"
    bin_dir.mkdir()
    state.mkdir()
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), "/usr/bin", "/bin"]))
    monkeypatch.setenv("FAKE_RUNTIME_STATE", str(state))
    return FakeRuntime(bin_dir=bin_dir, state=state)

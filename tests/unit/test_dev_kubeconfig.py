"""I30: ``glimmer dev up --kubeconfig PATH`` never leaves the admin key readable by others.

The rule is about a window, not the end state (a chmod after the copy also ends at
0600), so it is watched while it happens: an audit hook looks at the target directory at
every audited operation (each open, chmod, copy and rename raises one) and records any
file there that holds the key while group or others may read it.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner

from glimmer.cli import dev
from tests.unit.private_files import exposed, watching

SECRET = b"users:\n- user:\n    client-key-data: c2VjcmV0LWtleQ==\n"
PUBLIC = b"an older file, readable by all\n"


@pytest.fixture
def watched(tmp_path: Path) -> Iterator[Path]:
    """A directory under watch, with umask 0 (the widest a caller can leave it)."""
    with watching(tmp_path / "out") as directory:
        yield directory


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _public(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(PUBLIC)
    path.chmod(0o644)
    return path


def test_I30_kubeconfig_is_0600_before_its_first_byte_even_with_umask_0(
    watched: Path,
) -> None:
    target = watched / "new" / "admin.kubeconfig"
    dev.write_private(target, SECRET)
    assert target.read_bytes() == SECRET
    assert _mode(target) == 0o600
    assert exposed() == []
    assert [p.name for p in target.parent.iterdir()] == ["admin.kubeconfig"]


def test_I30_existing_0644_kubeconfig_ends_0600_and_an_open_reader_never_sees_the_key(
    watched: Path,
) -> None:
    target = _public(watched / "admin.kubeconfig")
    with target.open("rb") as reader:
        dev.write_private(target, SECRET)
        assert reader.read() == PUBLIC
    assert target.read_bytes() == SECRET
    assert _mode(target) == 0o600
    assert exposed() == []


def test_I30_a_failed_write_leaves_no_scratch_file(
    watched: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="disk full"):
        dev.write_private(watched / "admin.kubeconfig", SECRET)
    assert list(watched.iterdir()) == []


class _FakePlane:
    """Just enough of ControlPlane for ``up`` to reach its kubeconfig step."""

    work_dir: Path

    def __init__(self, *, assets: Any, controller_manager: bool) -> None:
        self.kubeconfig_path = self.work_dir / "admin.kubeconfig"
        self.server = "https://127.0.0.1:1"
        self.startup_seconds = 0.0

    def start(self) -> None:
        self.kubeconfig_path.write_bytes(SECRET)

    def stop(self) -> None:
        return None


@pytest.mark.parametrize("existing", [False, True], ids=["new-file", "existing-0644"])
def test_I30_dev_up_writes_the_kubeconfig_privately(
    watched: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, existing: bool
) -> None:
    plane_dir = tmp_path / "plane"
    plane_dir.mkdir(mode=0o700)
    monkeypatch.setattr(_FakePlane, "work_dir", plane_dir, raising=False)
    monkeypatch.setattr(dev, "ControlPlane", _FakePlane)
    monkeypatch.setattr(
        dev, "_assets", lambda *, controller_manager: SimpleNamespace(kubectl="kubectl")
    )

    def stop_at_once(seconds: float) -> None:
        raise dev._StopSignalError("SIGINT")

    monkeypatch.setattr(time, "sleep", stop_at_once)
    target = watched / "new" / "admin.kubeconfig"
    if existing:
        _public(target)
    result = CliRunner().invoke(dev.dev, ["up", "--sim-nodes", "0", "--kubeconfig", str(target)])
    assert result.exit_code == 0, result.output
    assert f"export KUBECONFIG={target}" in result.output
    assert target.read_bytes() == SECRET
    assert _mode(target) == 0o600
    assert exposed() == []


def test_I30_mode_is_exactly_0600_under_a_narrowing_umask(watched: Path) -> None:
    """A umask can take bits from mkstemp's 0600 (0400 here); the file still ends 0600."""
    os.umask(0o277)
    target = watched / "admin.kubeconfig"
    dev.write_private(target, SECRET)
    assert _mode(target) == 0o600

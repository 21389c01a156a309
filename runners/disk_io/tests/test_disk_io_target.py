"""The target directory guard: the runner writes only its own fresh file, only inside the
directory the test names, and deletes only that file (runners/disk_io/target.py)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from runners.disk_io.target import PATH_ENV, SIZE_ENV, create_test_file, resolve_target
from runners.disk_io.tests.mounts import mounted_tmpfs
from runners.sdk.outcome import RunnerError


def test_target_resolves_symlinks_and_dotdot(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "sub").mkdir(parents=True)
    (tmp_path / "link").symlink_to(real)
    assert resolve_target(str(tmp_path / "link" / "sub" / "..")) == str(real.resolve())


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (None, "is not set"),
        ("   ", "is not set"),
        ("relative/dir", "not an absolute path"),
        ("/nonexistent/glimmer-disk-io", "does not resolve"),
        (" /tmp", "surrounding blanks"),
        ("/tmp\nx", "control characters"),
    ],
)
def test_refused_target_is_an_error_naming_the_variable_and_fix(
    value: str | None, says: str
) -> None:
    with pytest.raises(RunnerError) as refused:
        resolve_target(value)
    assert says in str(refused.value)
    assert PATH_ENV in str(refused.value) and "runner.env" in str(refused.value)


def test_target_that_is_a_file_or_a_link_to_one_is_refused(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.write_text("keep me\n")
    (tmp_path / "to-file").symlink_to(plain)
    for value in (plain, tmp_path / "to-file"):
        with pytest.raises(RunnerError, match="is not a directory"):
            resolve_target(str(value))
    assert plain.read_text() == "keep me\n"


def test_dangling_symlink_target_is_refused(tmp_path: Path) -> None:
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    with pytest.raises(RunnerError, match="does not resolve"):
        resolve_target(str(tmp_path / "dangling"))
    assert not (tmp_path / "gone").exists()


def test_test_file_is_created_sized_and_removed(tmp_path: Path) -> None:
    made = create_test_file(str(tmp_path), size_bytes=2**20)
    assert Path(made.path).parent == tmp_path
    assert os.stat(made.path).st_size == 2**20
    assert made.remove() is None
    assert list(tmp_path.iterdir()) == []


def test_exclusive_create_never_overwrites_an_existing_file(tmp_path: Path) -> None:
    existing = tmp_path / "taken.dat"
    existing.write_text("not the runner's\n")
    names = iter(["taken.dat", "fresh.dat"])
    made = create_test_file(str(tmp_path), size_bytes=4096, name_factory=lambda: next(names))
    assert made.name == "fresh.dat"
    assert existing.read_text() == "not the runner's\n"
    made.remove()
    assert existing.read_text() == "not the runner's\n"


def test_exclusive_create_never_follows_a_planted_symlink(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim"
    victim.write_text("precious\n")
    target = tmp_path / "target"
    target.mkdir()
    (target / "planted.dat").symlink_to(victim)
    names = iter(["planted.dat", "own.dat"])
    made = create_test_file(str(target), size_bytes=2**20, name_factory=lambda: next(names))
    assert made.name == "own.dat"
    assert victim.read_text() == "precious\n"
    made.remove()
    assert (target / "planted.dat").is_symlink() and victim.read_text() == "precious\n"


def test_names_with_a_path_in_them_are_refused(tmp_path: Path) -> None:
    for bad in ("../escape.dat", "a/b", "..", "."):
        with pytest.raises(RunnerError, match="path in it"):
            create_test_file(str(tmp_path), size_bytes=4096, name_factory=lambda b=bad: b)
    assert list(tmp_path.iterdir()) == []
    assert not (tmp_path.parent / "escape.dat").exists()


def test_remove_leaves_a_file_that_replaced_the_runners_own(tmp_path: Path) -> None:
    made = create_test_file(str(tmp_path), size_bytes=4096)
    os.unlink(made.path)
    Path(made.path).write_text("someone else's\n")
    problem = made.remove()
    assert problem is not None and "no longer the file this runner created" in problem
    assert Path(made.path).read_text() == "someone else's\n"


def test_no_room_is_an_error_naming_the_size_variable_and_leaves_nothing(tmp_path: Path) -> None:
    with mounted_tmpfs(tmp_path / "tiny", size="1m") as tiny:
        with pytest.raises(RunnerError) as refused:
            create_test_file(str(tiny), size_bytes=8 * 2**20)
        assert SIZE_ENV in str(refused.value) and "No space left" in str(refused.value)
        assert list(tiny.iterdir()) == []


def test_read_only_target_is_an_error_naming_the_variable(tmp_path: Path) -> None:
    with mounted_tmpfs(tmp_path / "ro", size="4m", read_only=True) as ro:
        with pytest.raises(RunnerError) as refused:
            create_test_file(str(ro), size_bytes=2**20)
        assert PATH_ENV in str(refused.value) and "read-only" in str(refused.value)


def test_unwritable_target_is_an_error_naming_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The image runs as uid 65534; a root-owned volume refuses it (EACCES). Root here
    bypasses permissions, so the refusal is stood in for at ``os.open``."""
    real_open = os.open

    def refusing_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & os.O_CREAT:
            raise PermissionError(13, "Permission denied")
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refusing_open)
    with pytest.raises(RunnerError) as refused:
        create_test_file(str(tmp_path), size_bytes=4096)
    assert str(refused.value).startswith(f"{PATH_ENV}={str(tmp_path)!r} is not writable")
    assert "runner.env" in str(refused.value)

"""disk-io with the real fio on real file systems: a tmpfs and a loop-mounted ext4 image
(provenance silicon; the disk is never simulated)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from glimmer.contract import RunnerReport
from runners.disk_io.target import FILE_PREFIX, PATH_ENV, SIZE_ENV
from runners.disk_io.tests.mounts import mounted_ext4_image, mounted_tmpfs
from runners.tests.fake_tools import run_module

KIND = "disk-io"
MEASURED = ("writeBandwidthMBs", "readBandwidthMBs", "ioLatencyUs", "p99LatencyUs")


def _fio() -> str:
    found = shutil.which("fio")
    if found is None:
        pytest.fail("fio is not installed (hack/setup installs the Debian package fio)")
    return found


def run(directory: Path | str, **extra: str) -> RunnerReport:
    env = {
        PATH_ENV: str(directory),
        SIZE_ENV: "8",
        "BURNIN_DISK_IO_SECONDS": "3",
        "BURNIN_FIO_PATH": _fio(),
        **extra,
    }
    return run_module("runners.disk_io", kind=KIND, env=env)


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    with mounted_tmpfs(tmp_path / "tmpfs", size="64m") as where:
        yield where


@pytest.fixture
def ext4(tmp_path: Path) -> Iterator[Path]:
    with mounted_ext4_image(tmp_path / "ext4", image=tmp_path / "disk.img", size_mb=48) as where:
        yield where


def _assert_measured_pass(report: RunnerReport, directory: Path) -> None:
    assert report.exit_code == 0, report.message
    assert report.message == "DISK_IO_PASS"
    assert report.provenance == "silicon"
    for name in MEASURED:
        assert float(report.metrics[name]) > 0, name
    assert report.metrics["ioErrors"] == "0"
    assert report.metrics["diskIoPath"] == str(directory.resolve())
    assert report.metrics["fioVersion"].startswith("fio-3.")
    assert not report.invalid_names


def _runner_files(directory: Path) -> list[str]:
    return [name for name in os.listdir(directory) if name.startswith(FILE_PREFIX)]


def test_real_fio_on_tmpfs_measures_and_cleans_up(tmpfs: Path) -> None:
    sentinel = tmpfs / "keep.txt"
    sentinel.write_text("the site's data\n")
    before = sentinel.stat()
    report = run(tmpfs)
    _assert_measured_pass(report, tmpfs)
    assert _runner_files(tmpfs) == []
    assert sentinel.read_text() == "the site's data\n"
    assert sentinel.stat().st_mtime_ns == before.st_mtime_ns


def test_real_fio_on_a_loop_mounted_ext4_image(ext4: Path) -> None:
    report = run(ext4)
    _assert_measured_pass(report, ext4)
    assert sorted(os.listdir(ext4)) == ["lost+found"]


def test_real_fio_through_a_symlink_and_dotdot_writes_in_the_resolved_directory(
    tmpfs: Path, tmp_path: Path
) -> None:
    (tmpfs / "sub").mkdir()
    link = tmp_path / "link-to-tmpfs"
    link.symlink_to(tmpfs)
    report = run(f"{link}/sub/..")
    _assert_measured_pass(report, tmpfs)
    assert _runner_files(tmpfs) == [] and os.listdir(tmpfs) == ["sub"]


def test_real_fio_buffered_mode_is_declared(tmpfs: Path) -> None:
    report = run(tmpfs, BURNIN_DISK_IO_DIRECT="0")
    _assert_measured_pass(report, tmpfs)
    assert report.metrics["diskIoDirect"] == "false"


def test_A16_read_only_file_system_is_an_error_never_a_verdict(tmp_path: Path) -> None:
    with mounted_tmpfs(tmp_path / "ro", size="8m", read_only=True) as ro:
        report = run(ro)
    assert report.exit_code == 3
    assert report.message.startswith("DISK_IO_ERROR:")
    assert PATH_ENV in report.message and "read-only" in report.message
    assert not set(MEASURED) & set(report.metrics)
    assert "ioErrors" not in report.metrics


def test_A16_full_file_system_is_an_error_naming_the_size_and_leaves_nothing(
    tmp_path: Path,
) -> None:
    with mounted_tmpfs(tmp_path / "tiny", size="2m") as tiny:
        report = run(tiny)
        left = os.listdir(tiny)
    assert report.exit_code == 3
    assert SIZE_ENV in report.message and "No space left" in report.message
    assert left == []
    assert "ioErrors" not in report.metrics


@pytest.mark.parametrize(
    ("value", "says"),
    [("", "is not set"), ("/nonexistent/glimmer-disk-io", "does not resolve")],
)
def test_A16_unusable_path_is_an_error_naming_the_variable(value: str, says: str) -> None:
    report = run(value)
    assert report.exit_code == 3
    assert PATH_ENV in report.message and says in report.message
    assert not Path("/nonexistent/glimmer-disk-io").exists()


def test_path_that_is_a_file_is_an_error_and_the_file_is_untouched(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.write_text("keep\n")
    report = run(plain)
    assert report.exit_code == 3 and "is not a directory" in report.message
    assert plain.read_text() == "keep\n"

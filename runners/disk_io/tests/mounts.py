"""Real, small file systems for disk-io's tests: a tmpfs and a loop-mounted ext4 image.

Why real mounts: the disk is never simulated, so the runner is tested against real file
systems (provenance silicon), including a read-only one and one too small for the file.
Mounting needs root (CAP_SYS_ADMIN) and, for the image, a free loop device; where either
is missing the test *fails* saying which, never skips silently.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def _run(argv: list[str], what: str) -> None:
    tool = shutil.which(argv[0])
    if tool is None:
        pytest.fail(f"cannot {what}: {argv[0]} is not installed (util-linux / e2fsprogs)")
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    if done.returncode != 0:
        pytest.fail(
            f"cannot {what} ({' '.join(argv)} exit {done.returncode}: "
            f"{(done.stderr or done.stdout).strip()}); these tests need root with "
            "CAP_SYS_ADMIN and a free loop device"
        )


@contextmanager
def mounted_tmpfs(where: Path, *, size: str, read_only: bool = False) -> Iterator[Path]:
    """A tmpfs of ``size`` at ``where`` (unmounted afterwards)."""
    where.mkdir(parents=True, exist_ok=True)
    options = f"size={size},mode=0755" + (",ro" if read_only else "")
    _run(
        ["mount", "-t", "tmpfs", "-o", options, "glimmer-disk-io-test", str(where)], "mount a tmpfs"
    )
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], capture_output=True, timeout=60, check=False)


@contextmanager
def mounted_ext4_image(where: Path, *, image: Path, size_mb: int) -> Iterator[Path]:
    """An ext4 file system in a sparse file, loop-mounted at ``where``."""
    where.mkdir(parents=True, exist_ok=True)
    with image.open("wb") as handle:
        handle.truncate(size_mb * 2**20)
    _run(["mkfs.ext4", "-q", "-F", str(image)], "make an ext4 image")
    _run(["mount", "-o", "loop", str(image), str(where)], "loop-mount an ext4 image")
    try:
        yield where
    finally:
        # mount -o loop sets autoclear: unmounting releases the loop device.
        subprocess.run(["umount", str(where)], capture_output=True, timeout=60, check=False)

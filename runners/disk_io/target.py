"""The directory the test names, and the one file this runner writes in it.

Why so careful: the runner writes gigabytes as root on a node's disk. It writes only
inside the directory ``BURNIN_DISK_IO_PATH`` names (symlinks and ``..`` resolved first),
only to a file it created itself (``O_CREAT | O_EXCL | O_NOFOLLOW`` under a fresh name,
through a descriptor of that directory), and it deletes only that file, after checking it
is still the inode it created. fio itself is never trusted with a path to create: it makes
missing parent directories, and it unlinks an existing file that is smaller than the job
size, so the file is created and sized here before fio sees it (and fio runs with
``allow_file_create=0``). Every refusal is an Error naming the variable and the fix.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Callable
from dataclasses import dataclass

from runners.sdk.outcome import RunnerError

PATH_ENV = "BURNIN_DISK_IO_PATH"
SIZE_ENV = "BURNIN_DISK_IO_SIZE_MB"
FILE_PREFIX = ".glimmer-disk-io-"
_NO_ROOM = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def _fix(detail: str) -> RunnerError:
    said = f"{PATH_ENV}{detail}" if detail.startswith("=") else f"{PATH_ENV} {detail}"
    return RunnerError(
        f"{said}: set {PATH_ENV} in runner.env to an existing, writable "
        "directory on the disk under test (a mounted volume); the runner writes only there"
    )


def resolve_target(environ_value: str | None) -> str:
    """The target directory, symlinks and ``..`` resolved; refuses anything else."""
    text = environ_value or ""
    if not text.strip():
        raise _fix("is not set")
    if text != text.strip() or any(ord(ch) < 32 or ord(ch) == 127 for ch in text):
        raise _fix(f"={text!r} has surrounding blanks or control characters")
    if not os.path.isabs(text):
        raise _fix(f"={text!r} is not an absolute path")
    try:
        resolved = os.path.realpath(text, strict=True)
    except OSError as error:
        raise _fix(f"={text!r} does not resolve ({error.strerror or error})") from None
    try:
        mode = os.stat(resolved).st_mode
    except OSError as error:
        raise _fix(f"={text!r} cannot be read ({error.strerror or error})") from None
    if not stat.S_ISDIR(mode):
        raise _fix(f"={text!r} is not a directory (it resolves to {resolved})")
    return resolved


def _fresh_name() -> str:
    return f"{FILE_PREFIX}{os.getpid()}-{secrets.token_hex(8)}.dat"


@dataclass
class TestFile:
    """The runner's own file in the target directory; ``remove`` deletes only it."""

    directory: str
    name: str
    size_bytes: int
    _dir_fd: int
    _fd: int
    _identity: tuple[int, int]

    __test__ = False  # not a pytest class, despite the name

    @property
    def path(self) -> str:
        return os.path.join(self.directory, self.name)

    def still_ours(self) -> bool:
        """Whether the name still points at the inode this runner created."""
        try:
            now = os.stat(self.name, dir_fd=self._dir_fd, follow_symlinks=False)
        except OSError:
            return False
        return stat.S_ISREG(now.st_mode) and (now.st_dev, now.st_ino) == self._identity

    def remove(self) -> str | None:
        """Delete the file if it is still ours; returns why it was left, else None."""
        problem = None
        try:
            if self.still_ours():
                os.unlink(self.name, dir_fd=self._dir_fd)
            elif os.path.lexists(self.path):
                problem = f"{self.path} is no longer the file this runner created; left as is"
        except OSError as error:
            problem = f"could not remove {self.path}: {error.strerror or error}"
        finally:
            for fd in (self._fd, self._dir_fd):
                with contextlib.suppress(OSError):
                    os.close(fd)
        return problem


def create_test_file(
    directory: str, *, size_bytes: int, name_factory: Callable[[], str] = _fresh_name
) -> TestFile:
    """Create and allocate the runner's file under a fresh name in ``directory``."""
    try:
        dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as error:
        raise _fix(f"={directory!r} cannot be opened ({error.strerror or error})") from None
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = -1
    name = ""
    try:
        for _ in range(8):
            name = name_factory()
            if "/" in name or name in ("", ".", ".."):
                raise RunnerError(f"refusing a test file name with a path in it: {name!r}")
            try:
                fd = os.open(name, flags, 0o600, dir_fd=dir_fd)
                break
            except FileExistsError:
                continue  # never touch what is there: try another name
        else:
            raise RunnerError(f"no fresh file name in {directory} after 8 tries")
    except PermissionError as error:
        os.close(dir_fd)
        raise _fix(f"={directory!r} is not writable ({error.strerror})") from None
    except OSError as error:
        os.close(dir_fd)
        if error.errno == errno.EROFS:
            raise _fix(f"={directory!r} is on a read-only file system") from None
        raise _fix(f"={directory!r}: cannot create a file ({error.strerror or error})") from None
    except BaseException:
        os.close(dir_fd)
        raise
    info = os.fstat(fd)
    made = TestFile(directory, name, size_bytes, dir_fd, fd, (info.st_dev, info.st_ino))
    try:
        os.posix_fallocate(fd, 0, size_bytes)
    except OSError as error:
        made.remove()
        if error.errno in _NO_ROOM:
            raise RunnerError(
                f"{PATH_ENV}={directory!r} has no room for {SIZE_ENV}="
                f"{size_bytes // 2**20} MiB ({error.strerror}): lower {SIZE_ENV} or free space"
            ) from None
        raise RunnerError(
            f"could not allocate {size_bytes // 2**20} MiB in {directory}: "
            f"{error.strerror or error}"
        ) from None
    except BaseException:
        made.remove()
        raise
    return made

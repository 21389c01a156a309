"""Host sources on silicon: /dev/kmsg, sysfs, and the site-mounted ``dcgmi``."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from runners.sdk.outcome import RunnerError
from runners.sdk.protocols import ToolMissingError, ToolResult


class FileKmsg:
    """Non-blocking reader for /dev/kmsg (one record per read) or a plain log file."""

    def __init__(self, path: str) -> None:
        self._fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self._pending = b""
        self._dropped = 0

    def drain(self) -> list[str]:
        while True:
            try:
                chunk = os.read(self._fd, 8192)
            except BlockingIOError:
                break
            except BrokenPipeError:
                # /dev/kmsg: records were overwritten before we read them.
                self._dropped += 1
                continue
            if not chunk:
                break
            self._pending += chunk
        *complete, self._pending = self._pending.split(b"\n")
        lines = []
        for raw in complete:
            line = raw.decode("utf-8", errors="replace")
            # Continuation lines (" SUBSYSTEM=pci") belong to the record above.
            if line and not line.startswith(" "):
                lines.append(line)
        return lines

    def dropped(self) -> int:
        return self._dropped

    def close(self) -> None:
        os.close(self._fd)


def open_kmsg(path: str) -> FileKmsg | None:
    try:
        return FileKmsg(path)
    except OSError:
        return None


class HostSysfs:
    def __init__(self, root: str) -> None:
        self._root = Path(root)

    def read_text(self, path: str) -> str | None:
        try:
            return (self._root / path.strip("/")).read_text(errors="replace").strip()
        except OSError:
            return None

    def list_dir(self, path: str) -> list[str] | None:
        try:
            return sorted(os.listdir(self._root / path.strip("/")))
        except OSError:
            return None

    def link_name(self, path: str) -> str | None:
        try:
            return os.path.basename(os.readlink(self._root / path.strip("/")))
        except OSError:
            return None


class HostDcgmi:
    def __init__(self, explicit: str | None) -> None:
        found = explicit or shutil.which("dcgmi")
        if found is None or not os.access(found, os.X_OK):
            raise ToolMissingError(
                "dcgmi not found: DCGM must be mounted by the site (set BURNIN_DCGMI_PATH)"
            )
        self._path = found

    def diag(self, *, level: int, timeout_s: float, parameters: str = "") -> ToolResult:
        # ``diag`` must be argv[1]: dcgmi reads its subsystem from there.
        argv = [self._path, "diag", "-r", str(level)]
        if parameters:
            argv += ["-p", parameters]
        try:
            done = subprocess.run(
                [*argv, "-j"],
                capture_output=True,
                text=True,
                timeout=timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise RunnerError(
                f"dcgmi diag -r {level} did not finish in {timeout_s:.0f} s"
            ) from None
        except OSError as error:
            raise ToolMissingError(f"dcgmi could not be started: {error}") from error
        return ToolResult(done.returncode, done.stdout, done.stderr)


class HostStressapptest:
    def __init__(self, explicit: str | None) -> None:
        found = explicit or shutil.which("stressapptest")
        if found is None or not os.access(found, os.X_OK):
            raise ToolMissingError("stressapptest not found (apt-get install stressapptest)")
        self._path = found

    def run(self, *, argv: Sequence[str], timeout_s: float) -> ToolResult:
        try:
            done = subprocess.run(
                [self._path, *argv], capture_output=True, text=True, timeout=timeout_s, check=False
            )
        except subprocess.TimeoutExpired:
            raise RunnerError(f"stressapptest did not finish in {timeout_s:.0f} s") from None
        except OSError as error:
            raise ToolMissingError(f"stressapptest could not be started: {error}") from error
        return ToolResult(done.returncode, done.stdout, done.stderr)

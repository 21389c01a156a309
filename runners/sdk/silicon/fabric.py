"""The host's RDMA fabric: ports and counters from sysfs, RLIMIT_MEMLOCK, tools on PATH.

Why read the counters from sysfs: ``/sys/class/infiniband/<dev>/ports/<n>/counters/*``
are the HCA's own error counters (the same ``perfquery`` reads), so a delta over a soak
is the hardware's account of the link, not the runner's guess. A counter that cannot be
read makes the whole set ``None``: the runner then says ``n/a``, never 0.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from runners.sdk.outcome import RunnerError
from runners.sdk.protocols import RdmaPort, ToolMissingError, ToolResult

ERROR_COUNTERS = (
    "symbol_error",
    "link_error_recovery",
    "link_downed",
    "port_rcv_errors",
    "local_link_integrity_errors",
    "excessive_buffer_overrun_errors",
)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(errors="replace").strip()
    except OSError:
        return None


def parse_rate_gbps(text: str | None) -> float | None:
    """``400 Gb/sec (4X NDR)`` -> 400.0; None for anything else."""
    if not text:
        return None
    words = text.split()
    if len(words) < 2 or words[1] != "Gb/sec":
        return None
    try:
        return float(words[0])
    except ValueError:
        return None


class HostFabric:
    def __init__(self, *, sysfs_root: str, tools_dir: str | None) -> None:
        self._root = Path(sysfs_root) / "class" / "infiniband"
        self._tools_dir = tools_dir

    def rdma_ports(self) -> list[RdmaPort]:
        ports: list[RdmaPort] = []
        try:
            devices = sorted(os.listdir(self._root))
        except OSError:
            return ports
        for device in devices:
            try:
                numbers = sorted(os.listdir(self._root / device / "ports"), key=str)
            except OSError:
                continue
            for number in numbers:
                if not number.isdecimal():
                    continue
                base = self._root / device / "ports" / number
                state = (_read(base / "state") or "").partition(":")[2].strip() or "UNKNOWN"
                ports.append(
                    RdmaPort(
                        device=device,
                        port=int(number),
                        link_layer=_read(base / "link_layer") or "unknown",
                        state=state,
                        rate_gbps=parse_rate_gbps(_read(base / "rate")),
                    )
                )
        return ports

    def error_counters(self, port: RdmaPort) -> dict[str, int] | None:
        base = self._root / port.device / "ports" / str(port.port) / "counters"
        counters: dict[str, int] = {}
        for name in ERROR_COUNTERS:
            text = _read(base / name)
            if text is None or not text.isdecimal():
                return None
            counters[name] = int(text)
        return counters

    def memlock_limit_bytes(self) -> int | None:
        soft, _hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)
        return None if soft == resource.RLIM_INFINITY else int(soft)

    def _binary(self, name: str) -> str:
        if "/" in name:
            raise ToolMissingError(f"tool {name!r} must be named, not given as a path")
        found = shutil.which(name, path=self._tools_dir) if self._tools_dir else None
        found = found or shutil.which(name)
        if found is None:
            where = f" (looked in {self._tools_dir} and PATH)" if self._tools_dir else " on PATH"
            raise ToolMissingError(f"{name} not found{where}")
        return found

    def run_tool(
        self, argv: Sequence[str], *, env: Mapping[str, str], timeout_s: float
    ) -> ToolResult:
        if not argv:
            raise ToolMissingError("no tool named")
        binary = self._binary(argv[0])
        try:
            done = subprocess.run(
                [binary, *argv[1:]],
                capture_output=True,
                text=True,
                errors="replace",
                env={**os.environ, **env},
                timeout=timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise RunnerError(f"{argv[0]} did not finish in {timeout_s:.0f} s") from None
        except OSError as error:
            raise ToolMissingError(f"{argv[0]} could not be started: {error}") from error
        return ToolResult(done.returncode, done.stdout, done.stderr)

"""tests/local runs this repository's runners as local processes, whatever the host has.

``glimmer run --runtime auto`` picks podman, docker or nerdctl when one answers; a
developer machine with a working docker would then run these tests' ``runner.command``
inside containers. The runtime tests choose their runtime explicitly.

Likewise the host probe (N8): in-process tests see a host with no accelerator (an empty
sysfs, no vendor tool), so the images they expect do not turn on the GPUs of the machine
that runs them; the probe's own tests give it the host they mean.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from glimmer.local import host


@pytest.fixture(autouse=True)
def _local_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GLIMMER_RUNTIME", "process")


@pytest.fixture(autouse=True)
def _host_without_accelerators(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    sysfs = tmp_path_factory.mktemp("sys")
    (sysfs / "bus" / "pci" / "devices").mkdir(parents=True)
    monkeypatch.setattr(
        host,
        "HOST_SOURCES",
        host.HostSources(sysfs=host.DirectorySysfs(Path(sysfs)), which=lambda _name: None),
    )
    monkeypatch.setattr(host, "_PROBES", {})
    yield

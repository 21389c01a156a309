"""tests/local runs this repository's runners as local processes, whatever the host has.

``glimmer run --runtime auto`` picks podman, docker or nerdctl when one answers; a
developer machine with a working docker would then run these tests' ``runner.command``
inside containers. The runtime tests choose their runtime explicitly.
"""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _local_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GLIMMER_RUNTIME", "process")

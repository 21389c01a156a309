"""Watch a directory for a secret that is readable by others, even for an instant (I30).

A write-then-chmod also ends at 0600, so the rule is about a window, not the end state.
One audit hook (installed once, on import) looks at the watched directory at every
audited operation (each open, chmod, copy and rename raises one) and records any regular
file there that holds a secret while group or others may read it.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

#: What marks a file as holding a secret: an embedded client key or a token.
SECRETS = (b"client-key-data", b"the-token")

_state: dict[str, Any] = {"directory": None, "busy": False, "exposed": []}


def _exposes_secret(path: str) -> bool:
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or not info.st_mode & 0o077:
            return False
        with open(path, "rb") as stream:
            data = stream.read()
    except FileNotFoundError:
        return False
    return any(secret in data for secret in SECRETS)


def _look(event: str, args: tuple[Any, ...]) -> None:
    directory = _state["directory"]
    if directory is None or _state["busy"]:
        return
    _state["busy"] = True  # the look itself raises audit events
    try:
        for root, _, names in os.walk(directory):
            found = [n for n in names if _exposes_secret(os.path.join(root, n))]
            _state["exposed"].extend((event, name) for name in found)
    finally:
        _state["busy"] = False


sys.addaudithook(_look)


def exposed() -> list[tuple[str, str]]:
    """(audit event, file name) of every moment a secret was readable by others."""
    return list(_state["exposed"])


@contextmanager
def watching(directory: Path) -> Iterator[Path]:
    """Watch ``directory`` with umask 0 (the widest a caller can leave it)."""
    directory.mkdir(parents=True, exist_ok=True)
    previous = os.umask(0)
    _state.update(directory=str(directory), exposed=[])
    try:
        yield directory
    finally:
        _state["directory"] = None
        os.umask(previous)

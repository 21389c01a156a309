"""File names under ``--report-dir`` for a test's raw logs and artifacts.

A planned test's name is author text (a BurnInTest name, an inline kind, a variant
name), so it is never used as a path: ``../../x`` would write outside the report
directory and ``x/y`` would fail on a missing folder. :func:`file_stem` maps a name
to one path component, deterministically (a re-run writes the same files) and
injectively (two tests never share a file):

* a name that is already a plain file name (``[A-Za-z0-9][A-Za-z0-9._-]*``, at most
  100 characters) is used as it is, so ordinary names stay readable;
* anything else becomes ``<readable part>~<12 hex of sha256(name)>``; ``~`` never
  occurs in a name of the first form, so the two forms cannot collide, and the hash
  covers the whole name, so two names that read alike stay apart.

The files of attempt *n* are then ``raw/<stem>.a<n>.log`` and
``artifacts/<stem>.a<n>/<artifact>`` (artifact names are already restricted to
``[A-Za-z0-9._-]``, not ``.``/``..``, by A12). Both parse back uniquely from the
right (the attempt number has no ``.``), so no two attempts share a file either.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Final

MAX_PLAIN: Final = 100
_PREFIX: Final = 60
_HASH_HEX: Final = 12
_PLAIN: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_NOT_PLAIN: Final = re.compile(r"[^A-Za-z0-9._-]+")


def file_stem(name: str) -> str:
    """One safe, unique path component standing for the planned test ``name``."""
    if len(name) <= MAX_PLAIN and _PLAIN.fullmatch(name):
        return name
    readable = _NOT_PLAIN.sub("-", name)[:_PREFIX].lstrip(".-_")
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_HEX]
    return f"{readable}~{digest}" if readable else f"~{digest}"


def raw_log_path(*, test: str, attempt: int) -> Path:
    """``raw/<stem>.a<n>.log``, relative to the report directory."""
    return Path("raw") / f"{file_stem(test)}.a{attempt}.log"


def artifact_folder(*, test: str, attempt: int) -> Path:
    """``artifacts/<stem>.a<n>``, relative to the report directory."""
    return Path("artifacts") / f"{file_stem(test)}.a{attempt}"

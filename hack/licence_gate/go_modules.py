"""The Go modules linked into a binary, and the licence files each ships.

The set checked is what ``go version -m`` reads from the binary's embedded build info:
exactly the modules compiled in (a ``go.sum`` also lists modules only tests or other
platforms use, which are not in the binaries the tests run). A replaced module is
judged by its replacement, the code actually linked. Licence files are read from the
module cache, where the build left them; a module missing from the cache is fetched
with ``go mod download``.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from licence_gate.policy import Declared
from licence_gate.texts import classify_text

#: Names a module's licence file goes by at its root (compared case-insensitively).
LICENCE_STEMS = ("licence", "license", "copying", "unlicense")


@dataclass(frozen=True)
class GoModule:
    path: str
    version: str
    #: The binaries it is linked into (for the report).
    binaries: tuple[str, ...] = ()


def parse_build_info(text: str) -> list[tuple[str, str]]:
    """``(path, version)`` of every module in ``go version -m`` output, replacements
    resolved; the main module counts too unless it was built from a local tree."""
    modules: list[tuple[str, str]] = []
    for line in text.splitlines():
        fields = [*line.strip(" \n").lstrip("\t").split("\t"), "", ""]
        if fields[0] not in ("mod", "dep", "=>"):
            continue
        path, version = fields[1], fields[2]
        if fields[0] == "=>":
            # The line above is the module this one replaces: judge the replacement.
            if modules:
                modules.pop()
            if version == "" or path.startswith((".", "/")):
                raise ValueError(f"module replaced by a local directory {path!r}: not checkable")
        elif fields[0] == "mod" and version == "(devel)":
            continue
        modules.append((path, version))
    return modules


def modules_of(binaries: Iterable[Path]) -> list[GoModule]:
    """Every module linked into any of ``binaries``, each once, sorted."""
    seen: dict[tuple[str, str], list[str]] = {}
    for binary in binaries:
        if not binary.is_file():
            raise FileNotFoundError(f"{binary}: no such binary (build it first)")
        info = subprocess.run(
            ["go", "version", "-m", str(binary)], check=True, capture_output=True, text=True
        ).stdout
        for key in parse_build_info(info):
            seen.setdefault(key, []).append(binary.name)
    return [GoModule(path=p, version=v, binaries=tuple(b)) for (p, v), b in sorted(seen.items())]


def escape_path(path: str) -> str:
    """The module cache's case encoding: each upper-case letter becomes ``!`` + lower."""
    return "".join(f"!{c.lower()}" if c.isupper() else c for c in path)


def module_dir(module: GoModule, *, cache: Path) -> Path:
    """The module's extracted source in the cache, downloaded if absent."""
    directory = cache / f"{escape_path(module.path)}@{escape_path(module.version)}"
    if directory.is_dir():
        return directory
    out = subprocess.run(
        ["go", "mod", "download", "-json", f"{module.path}@{module.version}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return Path(json.loads(out)["Dir"])


def licence_files(directory: Path) -> list[Path]:
    """The licence files at the module's root (LICENSE, LICENSE.md, COPYING, ...)."""
    return sorted(
        entry
        for entry in directory.iterdir()
        if entry.is_file() and entry.name.lower().split(".")[0].split("-")[0] in LICENCE_STEMS
    )


def module_cache() -> Path:
    out = subprocess.run(
        ["go", "env", "GOMODCACHE"], check=True, capture_output=True, text=True
    ).stdout
    return Path(out.strip())


def declared_licence(module: GoModule, *, cache: Path) -> Declared:
    """The AND of the licences in the module's root licence files; unknown when it has
    none or any of them is unrecognised (an unread file may hold the one that matters)."""
    files = licence_files(module_dir(module, cache=cache))
    if not files:
        return Declared(None, "no licence file at the module root")
    found: list[str] = []
    for file in files:
        ids = classify_text(file.read_text(errors="replace"))
        if not ids:
            return Declared(None, f"unrecognised licence text in {file.name}")
        found.extend(i for i in ids if i not in found)
    return Declared(" AND ".join(sorted(found)), ", ".join(f.name for f in files))

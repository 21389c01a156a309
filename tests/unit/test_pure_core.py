"""The pure core imports only the standard library (and itself, downwards).

import-linter forbids the known third-party packages; this test closes the gap by
checking every import against ``sys.stdlib_module_names``.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "glimmer"
ALLOWED = {
    "contract": {"glimmer.contract"},
    "verdict": {"glimmer.contract", "glimmer.verdict"},
    "plan": {"glimmer.contract", "glimmer.verdict", "glimmer.plan"},
}


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_pure_packages_import_only_stdlib(package: str) -> None:
    offenders = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for name in _imports(path):
            top = name.split(".")[0]
            if top in sys.stdlib_module_names and top != "asyncio":
                continue
            if any(name == own or name.startswith(own + ".") for own in ALLOWED[package]):
                continue
            offenders.append(f"{path.relative_to(ROOT)}: {name}")
    assert offenders == []

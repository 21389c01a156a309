"""The implementations behind the runner seam import only what the seam allows.

import-linter (pyproject.toml) holds the direction with layers and forbidden lists; a
forbidden list cannot name an SDK module written later, so this test closes that gap
with an allow-list: each implementation imports the standard library, the protocols,
the errors' base, its own package and its own libraries, and nothing else.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

SDK = Path(__file__).resolve().parents[1] / "sdk"
SEAM = ("runners.sdk.protocols", "runners.sdk.outcome")
ALLOWED = {
    "silicon": {*SEAM, "runners.sdk.silicon", "pynvml", "torch", "amdsmi"},
    "simgpu": {*SEAM, "runners.sdk.simgpu"},
}


def _imports(path: Path) -> list[str]:
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: relative import"
            assert node.module is not None
            names.append(node.module)
    return names


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_seam_implementations_import_only_protocols_outcome_and_their_own_package(
    package: str,
) -> None:
    offenders = []
    files = sorted((SDK / package).rglob("*.py"))
    assert files, f"no sources under sdk/{package}"
    for path in files:
        for name in _imports(path):
            if name.split(".")[0] in sys.stdlib_module_names:
                continue
            if any(name == ok or name.startswith(ok + ".") for ok in ALLOWED[package]):
                continue
            offenders.append(f"{path.relative_to(SDK)}: {name}")
    assert offenders == []


def test_every_runner_package_is_in_the_seam_layers_contract() -> None:
    # import-linter leaves a package the layers contract does not name unconstrained, so a
    # new runner left out of pyproject.toml could import silicon or simgpu directly.
    import tomllib

    root = Path(__file__).resolve().parents[2]
    contracts = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["importlinter"]
    [seam] = [c for c in contracts["contracts"] if c["name"].startswith("runner seam, one way")]
    listed = {name.strip() for layer in seam["layers"] for name in layer.split("|")}
    runners = {f"runners.{path.parent.name}" for path in (root / "runners").glob("*/__main__.py")}
    assert runners - listed == set(), "add these to the runner seam layers in pyproject.toml"

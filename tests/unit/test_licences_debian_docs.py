"""docs/licences.md lists what every Containerfile installs, at the version it installs:
each `apt-get install` package, each `pip install` pin and each default base image."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "licences.md"
CONTAINERFILES = sorted(
    p
    for p in REPO.rglob("Containerfile")
    if ".venv" not in p.parts and "node_modules" not in p.parts
)


def _run_lines(text: str) -> str:
    """The Containerfile with continuation lines joined."""
    return re.sub(r"\\\n", " ", text)


def apt_packages(text: str) -> list[tuple[str, str]]:
    """(package, version) for every `apt-get install` in the file; version "" if unpinned."""
    found: list[tuple[str, str]] = []
    for command in re.findall(r"apt-get install ([^&;\n]+)", _run_lines(text)):
        for word in command.split():
            if word.startswith("-"):
                continue
            name, _, version = word.partition("=")
            found.append((name, version))
    return found


def pip_pins(text: str, args: dict[str, str]) -> list[str]:
    pins = []
    for command in re.findall(r"pip install ([^&;\n]+)", _run_lines(text)):
        for quoted in command.split():
            word = quoted.strip('"')
            if word.startswith(("-", "/")):
                continue
            pins.append(re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], word))
    return pins


def build_args(text: str) -> dict[str, str]:
    return dict(re.findall(r"^ARG (\w+)=(\S+)$", text, flags=re.MULTILINE))


@pytest.mark.parametrize("path", CONTAINERFILES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_debian_package_an_image_installs_is_documented(path: Path) -> None:
    doc = DOC.read_text()
    text = path.read_text()
    for name, version in apt_packages(text):
        assert version, f"{path}: apt-get install {name} without a version pin"
        row = f"| `{name}` | `{version}` |"
        assert row in doc, f"docs/licences.md lacks the row {row!r} ({path})"


@pytest.mark.parametrize("path", CONTAINERFILES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_base_image_and_pip_pin_is_documented(path: Path) -> None:
    doc = DOC.read_text()
    text = path.read_text()
    args = build_args(text)
    bases = [re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], b)
             for b in re.findall(r"^FROM (\S+)", text, flags=re.MULTILINE)]  # fmt: skip
    for base in bases:
        assert f"`{base}`" in doc, f"docs/licences.md does not name base image {base} ({path})"
    for pin in pip_pins(text, args):
        if "*.whl" in pin or pin in (".",):
            continue
        assert f"`{pin}`" in doc, f"docs/licences.md does not name pip install {pin} ({path})"


def test_the_parsers_read_a_containerfile() -> None:
    text = (
        "ARG V=1.2\nFROM debian:bookworm-slim\nRUN apt-get update \\\n"
        "    && apt-get install -y --no-install-recommends foo=1.0-1 bar=2 \\\n"
        '    && rm -rf /x\nRUN pip install --no-cache-dir "lib==${V}"\n'
    )
    assert apt_packages(text) == [("foo", "1.0-1"), ("bar", "2")]
    assert pip_pins(text, build_args(text)) == ["lib==1.2"]

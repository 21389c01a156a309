"""hack/images releases every image the code names (rule I32).

The expected set is read from the code (runners/catalog.py, the chart and manifests),
never from hack/images itself, so a runner added to the catalog and missing from the
release, or a Containerfile nothing releases, fails here.
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest
import yaml

from glimmer.plan.images import RUNNER_TAG
from runners.catalog import RUNNERS

REPO = Path(__file__).resolve().parents[3]
REGISTRY = "registry.example/team"


def _images(*args: str) -> list[list[str]]:
    out = subprocess.run(
        [str(REPO / "hack" / "images"), *args, "--registry", REGISTRY, "--dry-run"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    ).stdout
    return [shlex.split(line[2:]) for line in out.splitlines() if line.startswith("+ ")]


def _catalog_repositories() -> set[str]:
    names: set[str] = set()
    for spec in RUNNERS.values():
        names.add(spec.image)
        if spec.rocm_image is not None:
            names.add(spec.rocm_image)
    return {name.rsplit("/", 1)[1] for name in names}


def _manager_ref() -> str:
    """What the chart and kustomize pull, moved to the test registry."""
    chart = yaml.safe_load((REPO / "charts/glimmer/Chart.yaml").read_text())
    values = yaml.safe_load((REPO / "charts/glimmer/values.yaml").read_text())
    repo = values["image"]["repository"].rsplit("/", 1)[1]
    deployment = yaml.safe_load((REPO / "manifests/manager/deployment.yaml").read_text())
    pulled = deployment["spec"]["template"]["spec"]["containers"][0]["image"]
    assert pulled.rsplit("/", 1)[1] == f"{repo}:{chart['appVersion']}"
    return f"{REGISTRY}/{repo}:{chart['appVersion']}"


def _built(cmds: list[list[str]]) -> dict[str, list[str]]:
    built: dict[str, list[str]] = {}
    for cmd in cmds:
        if "build" in cmd[:3]:
            flag = "-t" if "-t" in cmd else "--manifest"
            built[cmd[cmd.index(flag) + 1]] = cmd
    return built


@pytest.mark.parametrize("engine", ["docker", "podman"])
def test_I32_every_catalogued_image_and_the_manager_is_built_and_pushed(engine: str) -> None:
    cmds = _images("push", "--engine", engine)
    built = _built(cmds)
    expected = {f"{REGISTRY}/{name}:{RUNNER_TAG}" for name in _catalog_repositories()}
    expected.add(_manager_ref())
    assert set(built) == expected
    for ref, cmd in built.items():
        assert cmd[0] == engine
        if engine == "docker":
            assert "--push" in cmd, ref
        else:
            assert ["podman", "manifest", "push", "--all", ref, f"docker://{ref}"] in cmds


def test_I32_every_containerfile_is_released() -> None:
    """The reverse direction: a Containerfile the release skips is a missing image."""
    files = {str(p.relative_to(REPO)) for p in REPO.glob("runners/*/Containerfile*")}
    files.add("Containerfile")
    cmds = _images("build", "--engine", "docker")
    assert {cmd[cmd.index("-f") + 1] for cmd in cmds} == files


def test_I32_push_records_a_digest_for_each_image_and_sign_uses_only_digests() -> None:
    pushed = set(_built(_images("push", "--engine", "docker")))
    signed = _images("sign")
    sign_refs = [cmd[-1] for cmd in signed if cmd[:2] == ["cosign", "sign"]]
    attest_refs = [cmd[-1] for cmd in signed if cmd[:2] == ["cosign", "attest"]]
    assert all("@sha256:" in ref for ref in sign_refs)
    assert {ref.split("@", 1)[0] for ref in sign_refs} == {ref.rsplit(":", 1)[0] for ref in pushed}
    assert sorted(attest_refs) == sorted(sign_refs)
    assert all("spdxjson" in cmd for cmd in signed if cmd[:2] == ["cosign", "attest"])


def test_I32_sign_refuses_a_digest_file_without_digests(tmp_path: Path) -> None:
    digests = tmp_path / "digests.txt"
    digests.write_text(f"{REGISTRY}/glimmer:0.1.0\n")
    done = subprocess.run(
        [str(REPO / "hack/images"), "sign", "--registry", REGISTRY, "--digests", str(digests)],
        check=False,
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert done.returncode != 0
    assert "sha256" in done.stderr
    assert "cosign" not in done.stdout


@pytest.mark.parametrize("tag", ["latest", ""])
def test_I32_a_mutable_tag_is_refused(tag: str) -> None:
    done = subprocess.run(
        [str(REPO / "hack/images"), "push", "--registry", REGISTRY, "--tag", tag, "--dry-run"],
        check=False,
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert done.returncode == 2
    assert "immutable" in done.stderr


def test_I32_gpu_vendor_bases_are_single_arch_and_the_manager_is_multi_arch() -> None:
    cmds = _built(_images("build", "--engine", "docker"))
    platforms = {ref: cmd[cmd.index("--platform") + 1] for ref, cmd in cmds.items()}
    assert platforms[_manager_ref()] == "linux/amd64,linux/arm64"
    for ref, value in platforms.items():
        if ref.endswith(f"-rocm:{RUNNER_TAG}") or "-gpu-burn:" in ref:
            assert value == "linux/amd64", ref

"""N7: which runner an image reference *is* (``glimmer.plan.images.runner_image_of``).

Only names someone builds count: this project's runner images and ROCm siblings, and the
Go implementation's published ones, by exact repository with any tag or digest. A
look-alike is no runner: a bare host must never run a local runner in place of an image
it cannot vouch for.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from glimmer.plan.images import (
    OWN_RUNNER_KINDS,
    ROCM_DECLARATIONS,
    ROCM_KIND_DECLARATIONS,
    ROCM_SIBLING_KINDS,
    RUNNER_REPOSITORY,
    UPSTREAM_REPOSITORY,
    UPSTREAM_ROCM_KINDS,
    UPSTREAM_RUNNER_KINDS,
    RunnerImage,
    image_repository,
    runner_image,
    runner_image_of,
)

REPO = Path(__file__).resolve().parents[3]
DIGEST = "sha256:" + "0" * 64


@pytest.mark.parametrize(
    ("reference", "repository"),
    [
        ("ghcr.io/a/b:v1", "ghcr.io/a/b"),
        ("ghcr.io/a/b@" + DIGEST, "ghcr.io/a/b"),
        ("ghcr.io/a/b:v1@" + DIGEST, "ghcr.io/a/b"),
        ("registry:5000/a/b", "registry:5000/a/b"),
        ("registry:5000/a/b:v2", "registry:5000/a/b"),
        ("b", "b"),
    ],
)
def test_N7_the_repository_drops_tag_and_digest_never_a_registry_port(
    reference: str, repository: str
) -> None:
    assert image_repository(reference) == repository


@pytest.mark.parametrize("kind", sorted(OWN_RUNNER_KINDS))
@pytest.mark.parametrize("suffix", [":v0.1.0", ":v0.0.9", "@" + DIGEST, ":dev@" + DIGEST, ""])
def test_N7_this_projects_runner_images_are_their_kinds_runner_with_any_tag(
    kind: str, suffix: str
) -> None:
    reference = f"{RUNNER_REPOSITORY}-{kind}{suffix}"
    assert runner_image_of(reference) == RunnerImage(
        reference=reference, kind=kind, rocm=False, family=RUNNER_REPOSITORY
    )


@pytest.mark.parametrize("kind", sorted(ROCM_SIBLING_KINDS))
def test_N7_a_rocm_sibling_is_its_kinds_runner_built_for_amd(kind: str) -> None:
    known = runner_image_of(runner_image(kind, rocm=True))
    assert known is not None and (known.kind, known.rocm) == (kind, True)
    assert known.declarations()["BURNIN_GPU_VENDOR"] == "amd"


@pytest.mark.parametrize("kind", sorted(UPSTREAM_RUNNER_KINDS))
def test_N7_the_go_implementations_images_are_their_kinds_runner(kind: str) -> None:
    known = runner_image_of(f"{UPSTREAM_REPOSITORY}-{kind}:v0.7.0")
    assert known is not None and (known.kind, known.rocm, known.family) == (
        kind,
        False,
        UPSTREAM_REPOSITORY,
    )
    assert known.declarations() == {}


@pytest.mark.parametrize("kind", sorted(UPSTREAM_ROCM_KINDS))
def test_N7_the_go_implementations_rocm_images_are_their_kinds_runner(kind: str) -> None:
    known = runner_image_of(f"{UPSTREAM_REPOSITORY}-{kind}-rocm:v0.7.0")
    assert known is not None and (known.kind, known.rocm) == (kind, True)


@pytest.mark.parametrize(
    "reference",
    [
        "docker.io/glimmer-ai/glimmer-runner-compute-smoke:v0.1.0",  # another registry
        "glimmer-ai/glimmer-runner-compute-smoke:v0.1.0",  # docker.io, implicitly
        "ghcr.io/someone/glimmer-runner-compute-smoke:v0.1.0",  # another owner
        "ghcr.io/glimmer-ai/glimmer-runner-compute-smoke-extra:v0.1.0",  # another name
        "ghcr.io/glimmer-ai/glimmer-runner-not-a-kind:v0.1.0",
        "ghcr.io/glimmer-ai/glimmer-runner-custom:v0.1.0",
        "ghcr.io/glimmer-ai/glimmer-runner-disk-io-rocm:v0.1.0",  # no ROCm build here
        "ghcr.io/baldwinspc/glimmer-burnin-disk-io:v0.7.0",  # not published upstream
        "ghcr.io/baldwinspc/glimmer-burnin-dcgm-diag-rocm:v0.7.0",
        "ghcr.io/glimmer-ai/glimmer-runner:v0.1.0",
        "registry.example/team/burner:1.2",
    ],
)
def test_N7_a_look_alike_is_no_runner(reference: str) -> None:
    assert runner_image_of(reference) is None


def test_N7_rocm_declarations_are_the_containerfiles() -> None:
    """A local runner standing in for a ROCm image is told what the image tells it: the
    ``BURNIN_*`` variables each Containerfile.rocm sets, no more and no fewer."""
    for path in sorted((REPO / "runners").glob("*/Containerfile.rocm")):
        kind = path.parent.name.replace("_", "-")
        declared: dict[str, str] = {}
        for line in path.read_text().splitlines():
            if line.startswith("ENV "):
                declared |= dict(re.findall(r"(BURNIN_\w+)=(\S+)", line))
        expected = {**ROCM_DECLARATIONS, **ROCM_KIND_DECLARATIONS.get(kind, {})}
        assert declared == expected, kind

"""N7: a pinned runner image on a bare host with no container runtime.

Reference profiles pin ``runner.image`` to published runner images. Without podman,
docker or nerdctl, an image of a known runner family runs as this repository's runner
of the same kind, and the plan says so; an unknown image still needs a runtime or
``--image-command``. The stand-in is by kind: an image of one kind on a test of another
is refused, and a ROCm build's stand-in is told it is one, so it never measures the
other vendor's parts in its place.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner, Result

from glimmer.cli.plan import plan
from glimmer.cli.run import run
from glimmer.local.dispatcher import Launch, LocalOptions, launch
from glimmer.local.runtimes import ContainerRuntime
from glimmer.plan import PinnedPlan, PlannedTest, build_plan
from glimmer.plan.images import UPSTREAM_REPOSITORY, runner_image

UPSTREAM_SMOKE = f"{UPSTREAM_REPOSITORY}-compute-smoke:v0.7.0"
OWN_SMOKE_ROCM = runner_image("compute-smoke", rocm=True)
UNKNOWN = "registry.example/team/burner:1.2"


def suite(path: Path, *tests: dict[str, Any]) -> Path:
    spec = {"tests": [{"inline": t} for t in tests]}
    path.write_text(
        yaml.safe_dump({"kind": "BurnInProfile", "metadata": {"name": "p"}, "spec": spec})
    )
    return path


def pinned(kind: str, image: str, **extra: Any) -> dict[str, Any]:
    return {"kind": kind, "runner": {"image": image, **extra}}


def invoke(command: Any, *args: str) -> Result:
    return CliRunner().invoke(command, list(args), catch_exceptions=False)


def planned(test: dict[str, Any]) -> PlannedTest:
    outcome = build_plan(profile={"tests": [{"inline": test}]}, tests={}, targets=["host-1"])
    assert isinstance(outcome, PinnedPlan), outcome
    (only,) = outcome.tests
    return only


def process(test: dict[str, Any], **options: Any) -> Launch | str:
    return launch(planned(test), attempt=1, options=LocalOptions(node="host-1", **options))


def test_N7_a_pinned_upstream_image_runs_as_the_local_runner_of_its_kind(tmp_path: Path) -> None:
    # A B200: compute-smoke is the FP4 test, and the part has FP4, so the stand-in measures.
    profile = suite(tmp_path / "p.yaml", pinned("compute-smoke", UPSTREAM_SMOKE))
    shown = invoke(plan, str(profile), "--runtime", "process", "--sim", "b200")
    assert shown.exit_code == 0, shown.output
    assert f"image: {UPSTREAM_SMOKE} -> local runner compute-smoke" in shown.output
    assert f"{sys.executable} -m runners.compute_smoke" in shown.output
    as_json = json.loads(invoke(plan, str(profile), "--sim", "b200", "-o", "json").output)
    assert as_json["tests"][0]["imageRunsAs"] == "local runner compute-smoke"
    out = tmp_path / "r"
    result = invoke(
        run, str(profile), "--runtime", "process", "--sim", "b200", "--results-dir", str(out)
    )
    document = json.loads((out / "run.json").read_text())
    assert result.exit_code == 0, result.output
    assert [r["phase"] for r in document["results"]] == ["Passed"]


def test_N7_an_image_of_another_kind_is_refused_naming_both_kinds(tmp_path: Path) -> None:
    profile = suite(tmp_path / "p.yaml", pinned("gpu-burn", UPSTREAM_SMOKE))
    result = invoke(run, str(profile), "--runtime", "process", "--results-dir", str(tmp_path / "r"))
    assert result.exit_code == 3
    assert "the test is kind 'gpu-burn' but its image" in result.output
    assert "is the compute-smoke runner's" in result.output
    assert not (tmp_path / "r" / "run.json").exists()
    custom = process(pinned("custom", UPSTREAM_SMOKE))
    assert isinstance(custom, str) and "set kind: compute-smoke" in custom


def test_N7_an_unknown_image_still_needs_a_runtime_or_an_image_command(tmp_path: Path) -> None:
    refused = process(pinned("compute-smoke", UNKNOWN))
    assert isinstance(refused, str) and refused.startswith(
        f"no container runtime and no local command for {UNKNOWN}"
    )
    mapped = process(pinned("compute-smoke", UNKNOWN), image_commands={"compute-smoke": ["my"]})
    assert isinstance(mapped, Launch) and mapped.command == ["my"]
    profile = suite(tmp_path / "p.yaml", pinned("compute-smoke", UNKNOWN))
    shown = invoke(plan, str(profile), "--runtime", "process")
    assert "command: no container runtime and no local command" in shown.output
    assert "-> local runner" not in shown.output


def test_N7_a_rocm_image_tells_its_stand_in_it_is_the_amd_build() -> None:
    how = process(pinned("compute-smoke", OWN_SMOKE_ROCM))
    assert isinstance(how, Launch) and how.env["BURNIN_GPU_VENDOR"] == "amd"
    plain = process(pinned("compute-smoke", UPSTREAM_SMOKE))
    assert isinstance(plain, Launch) and "BURNIN_GPU_VENDOR" not in plain.env
    own_env = [{"name": "BURNIN_GPU_VENDOR", "value": "nvidia"}]
    overridden = process(pinned("compute-smoke", OWN_SMOKE_ROCM, env=own_env))
    assert isinstance(overridden, Launch) and overridden.env["BURNIN_GPU_VENDOR"] == "nvidia"


def test_N7_a_rocm_image_on_an_nvidia_host_is_error_never_a_pass(tmp_path: Path) -> None:
    """The stand-in for a ROCm build refuses NVIDIA parts, as the image would (rule K)."""
    profile = suite(tmp_path / "p.yaml", pinned("compute-smoke", OWN_SMOKE_ROCM))
    out = tmp_path / "r"
    result = invoke(run, str(profile), "--sim", "h200", "--results-dir", str(out))
    document = json.loads((out / "run.json").read_text())
    assert result.exit_code == 3, result.output
    (only,) = document["results"]
    assert only["phase"] == "Error" and "BURNIN_GPU_VENDOR=amd" in only["message"]


def test_N7_under_a_runtime_the_pinned_image_itself_runs() -> None:
    docker = ContainerRuntime(name="docker", binary="/opt/bin/docker")
    how = process(pinned("compute-smoke", UPSTREAM_SMOKE), runtime=docker, run_id="r1")
    assert isinstance(how, Launch) and how.runtime == "docker"
    assert UPSTREAM_SMOKE in how.command and "BURNIN_GPU_VENDOR" not in " ".join(how.command)

"""N2: ``glimmer run --runtime`` runs runner images under a container runtime.

The stand-in runtime (tests/local/fake_runtime) records every argv and plays back the
output and exit code a test chooses, so the exact command line, the verdict read from
the container's output, and the stopping of the container itself are all checked
without a real runtime.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from glimmer.cli import run as run_module
from glimmer.cli.plan import plan as plan_command
from glimmer.cli.run import run
from glimmer.local import attempts
from glimmer.local.dispatcher import Launch, LocalOptions, SilentReporter, launch, run_plan
from glimmer.local.interrupt import Interrupted
from glimmer.local.process import run_runner
from glimmer.local.runtimes import (
    ContainerRuntime,
    RuntimeChoiceError,
    choose_runtime,
    container_name,
)
from glimmer.plan import PinnedPlan, PlannedTest, build_plan
from glimmer.verdict import Phase
from glimmer.verdict.termination import DEADLINE_MESSAGE
from tests.local.fake_runtime import FakeRuntime, fake_runtime_on_path

DOCKER = ContainerRuntime(name="docker", binary="/opt/bin/docker")
IMAGE = "registry.example/team/burner:1.2"


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeRuntime:
    return fake_runtime_on_path(tmp_path, monkeypatch)


def pinned(test: dict[str, Any], *, node: str = "host-1") -> PinnedPlan:
    outcome = build_plan(profile={"tests": [{"inline": test}]}, tests={}, targets=[node])
    assert isinstance(outcome, PinnedPlan), outcome
    return outcome


def planned(test: dict[str, Any], *, node: str = "host-1") -> PlannedTest:
    (only,) = pinned(test, node=node).tests
    return only


def argv_of(test: dict[str, Any], runtime: ContainerRuntime = DOCKER) -> list[str]:
    how = launch(
        planned(test), attempt=1, options=LocalOptions(node="host-1", runtime=runtime, run_id="r1")
    )
    assert isinstance(how, Launch), how
    return how.command


def name_of(test: str, attempt: int = 1) -> str:
    return container_name(run_id="r1", test=test, attempt=attempt)


def env_flags(argv: list[str]) -> dict[str, str]:
    pairs = [argv[i + 1] for i, word in enumerate(argv) if word == "-e"]
    return dict(p.split("=", 1) for p in pairs)


# --- the exact command line -------------------------------------------------------------


@pytest.mark.parametrize(
    ("runtime", "gpu_flags"),
    [
        ("docker", ["--gpus", "all"]),
        ("nerdctl", ["--gpus", "all"]),
        ("podman", ["--device", "nvidia.com/gpu=all"]),
    ],
)
def test_N2_accelerator_kind_gets_every_gpu_exact_argv(runtime: str, gpu_flags: list[str]) -> None:
    binary = f"/opt/bin/{runtime}"
    argv = argv_of(
        {"kind": "gpu-burn", "durationSeconds": 60, "resources": {"limits": {"nvidia.com/gpu": 2}}},
        ContainerRuntime(name=runtime, binary=binary),
    )
    assert argv == [
        binary, "run", "--rm", "--name", name_of("inline-0-gpu-burn"),
        *gpu_flags,
        "-e", "BURNIN_DURATION_SECONDS=60",
        "-e", "BURNIN_ATTEMPT=1",
        "ghcr.io/glimmer-ai/glimmer-runner-gpu-burn:v0.1.0",
    ]  # fmt: skip
    # N2: every device, so no BURNIN_RESOURCE_LIMITS even where limits are set.


def test_N2_non_accelerator_kind_gets_no_gpu() -> None:
    argv = argv_of({"kind": "memory-stress", "durationSeconds": 30})
    assert argv == [
        "/opt/bin/docker", "run", "--rm", "--name", name_of("inline-0-memory-stress"),
        "-e", "BURNIN_DURATION_SECONDS=30",
        "-e", "BURNIN_ATTEMPT=1",
        "ghcr.io/glimmer-ai/glimmer-runner-memory-stress:v0.1.0",
    ]  # fmt: skip


def test_N2_custom_image_asking_for_an_nvidia_gpu_gets_every_gpu() -> None:
    argv = argv_of(
        {
            "kind": "custom",
            "runner": {"image": IMAGE},
            "resources": {"limits": {"nvidia.com/gpu": 1}},
        }
    )
    assert argv[5:7] == ["--gpus", "all"] and argv[-1] == IMAGE
    assert "BURNIN_RESOURCE_LIMITS" not in env_flags(argv)


def test_N2_host_path_devices_are_granted_and_bind_mounts_honour_read_only() -> None:
    mounts = [
        {"path": "/dev/kmsg", "mountPath": "/dev/kmsg"},
        {"path": "/dev/infiniband", "mountPath": "/dev/infiniband", "readOnly": False},
        {"path": "/sys", "mountPath": "/host/sys"},  # readOnly unset means true (api)
        {"path": "/var/log/burn", "mountPath": "/logs", "readOnly": False},
        {"path": "/dev/shm", "mountPath": "/dev/shm", "readOnly": False},  # tmpfs, no device
        {"path": "/srv/tty0", "mountPath": "/dev/tty0", "type": "CharDevice"},
    ]
    argv = argv_of({"kind": "custom", "runner": {"image": IMAGE, "hostPaths": mounts}})
    assert argv == [
        "/opt/bin/docker", "run", "--rm", "--name", name_of("inline-0-custom"),
        "--ulimit", "memlock=-1:-1",
        "--device", "/dev/kmsg:/dev/kmsg",
        "--device", "/dev/infiniband:/dev/infiniband",
        "-v", "/sys:/host/sys:ro",
        "-v", "/var/log/burn:/logs",
        "-v", "/dev/shm:/dev/shm",
        "--device", "/srv/tty0:/dev/tty0",
        "-e", "BURNIN_DURATION_SECONDS=600",
        "-e", "BURNIN_ATTEMPT=1",
        IMAGE,
    ]  # fmt: skip


def test_N2_memlock_is_lifted_only_when_infiniband_is_mounted() -> None:
    plain = argv_of(
        {
            "kind": "custom",
            "runner": {"image": IMAGE, "hostPaths": [{"path": "/sys", "mountPath": "/sys"}]},
        }
    )
    assert "--ulimit" not in plain
    below = argv_of(
        {
            "kind": "custom",
            "runner": {
                "image": IMAGE,
                "hostPaths": [
                    {"path": "/dev/infiniband/uverbs0", "mountPath": "/dev/infiniband/uverbs0"}
                ],
            },
        }
    )
    assert below[5:7] == ["--ulimit", "memlock=-1:-1"]


def test_N2_command_args_privileged_and_user_map_onto_the_runtime() -> None:
    argv = argv_of(
        {
            "kind": "custom",
            "runner": {
                "image": IMAGE,
                "command": ["/bin/burn", "--mode"],
                "args": ["hot", "--for", "5"],
                "privileged": True,
                "runAsUser": 1000,
            },
            "hostNetwork": True,
        }
    )
    assert argv[5:10] == ["--network", "host", "--privileged", "--user", "1000"]
    # Kubernetes command overrides ENTRYPOINT and args override CMD: the same here.
    assert argv[-7:] == ["--entrypoint", "/bin/burn", IMAGE, "--mode", "hot", "--for", "5"]


def test_N2_container_env_is_the_runner_env_with_reserved_names_ignored(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HOST_ONLY_SECRET", "never-in-the-container")
    env = [
        {"name": "BURNIN_ATTEMPT", "value": "99"},  # reserved: ignored on a bare host (N2)
        {"name": "BURNIN_DURATION_SECONDS", "value": "1"},
        {"name": "MODE", "value": "hot"},
        {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
    ]
    flags = env_flags(
        argv_of({"kind": "custom", "durationSeconds": 45, "runner": {"image": IMAGE, "env": env}})
    )
    assert flags == {
        "BURNIN_DURATION_SECONDS": "45",
        "BURNIN_ATTEMPT": "1",
        "MODE": "hot",
        "NODE": "host-1",
    }  # TOKEN left unset, never empty; nothing of the host's own environment


def test_N2_segmented_soak_is_one_container_for_the_whole_duration() -> None:
    flags = env_flags(
        argv_of({"kind": "gpu-burn", "durationSeconds": 1200, "soak": {"segmentSeconds": 600}})
    )
    assert flags["BURNIN_DURATION_SECONDS"] == "1200"


def _plan_json(suite: Path, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(
        plan_command, [str(suite), "-o", "json", *args], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def _suite(path: Path, tests: list[dict[str, Any]]) -> Path:
    profile = {"kind": "BurnInProfile", "metadata": {"name": "p"}, "spec": {"tests": tests}}
    path.write_text(yaml.safe_dump(profile))
    return path


def test_N2_pair_and_group_sides_use_host_networking(fake: FakeRuntime, tmp_path: Path) -> None:
    fake.install("docker")
    image = {"image": "example.invalid/link:dev"}
    pair = _suite(
        tmp_path / "pair.yaml", [{"inline": {"kind": "custom", "scope": "Pair", "runner": image}}]
    )
    client = _plan_json(
        pair, "--runtime", "docker", "--node", "b", "--role", "client", "--peer", "10.0.0.1",
        "--peer-node", "a",
    )  # fmt: skip
    (entry,) = client["tests"]
    assert entry["runtime"] == "docker"
    assert entry["command"][5:7] == ["--network", "host"]
    assert env_flags(entry["command"])["BURNIN_ROLE"] == "client"
    assert env_flags(entry["command"])["BURNIN_PEER_HOST"] == "10.0.0.1"
    group = _suite(
        tmp_path / "group.yaml", [{"inline": {"kind": "custom", "scope": "Group", "runner": image}}]
    )
    rank = _plan_json(
        group, "--runtime", "docker", "--rank", "1", "--nranks", "2", "--root", "10.0.0.1"
    )
    (entry,) = rank["tests"]
    assert entry["command"][5:7] == ["--network", "host"]
    assert env_flags(entry["command"])["BURNIN_RANK"] == "1"
    node = _suite(tmp_path / "node.yaml", [{"inline": {"kind": "custom", "runner": image}}])
    (entry,) = _plan_json(node, "--runtime", "docker")["tests"]
    assert "--network" not in entry["command"]  # Node scope keeps the runtime's network


# --- running through the stand-in ------------------------------------------------------


def _run(*args: str) -> Result:
    return CliRunner().invoke(run, list(args), catch_exceptions=False)


def _custom(tmp_path: Path, **test: Any) -> Path:
    spec = {"kind": "custom", "runner": {"image": IMAGE}, **test}
    return _suite(tmp_path / "p.yaml", [{"inline": spec}])


GATE = [{"metric": "bw", "comparison": "GreaterThanOrEqual", "value": "50"}]


@pytest.mark.parametrize(
    ("output", "code", "phase", "status"),
    [
        ("bw=99\nBURN_PASS\n", 0, "Passed", 0),
        ("bw=10\nBURN_FAIL: slow\n", 1, "Failed", 1),
        ("BURN_SKIP: no fabric\n", 2, "Skipped", 2),
        ("", 2, "Error", 3),  # undeclared skip (A3)
        ("bw=99\n", 3, "Error", 3),
    ],
)
def test_N2_verdict_comes_from_the_containers_output_and_exit_code(
    fake: FakeRuntime, tmp_path: Path, output: str, code: int, phase: str, status: int
) -> None:
    fake.install("docker")
    fake.play(output=output, exit=code)
    suite = _custom(tmp_path, thresholds=GATE)
    result = _run(str(suite), "--runtime", "docker", "--report-dir", str(tmp_path / "r"))
    assert result.exit_code == status, result.output
    doc = json.loads((tmp_path / "r" / "run.json").read_text())
    assert doc["results"][0]["phase"] == phase
    (call,) = fake.calls("run")
    assert call[-1] == IMAGE and call[:2] == ["run", "--rm"]
    assert fake.container_pids() == {}  # --rm: the container is gone


@pytest.mark.parametrize(
    "scenario",
    [
        {"run_exit_without_container": 125, "client_message": "Error response from daemon\n"},
        {"run_exit_without_container": 127},
        {"client_dies": True, "mode": "hang"},
        {"run_exit_without_container": 0},  # a runtime that "succeeds" and ran nothing
    ],
    ids=["daemon-error", "not-found", "client-killed", "silent-zero"],
)
def test_N2_a_crashed_runtime_is_error_never_pass(
    fake: FakeRuntime, tmp_path: Path, scenario: dict[str, Any]
) -> None:
    fake.install("docker")
    fake.play(**scenario)
    suite = _custom(tmp_path, thresholds=GATE)
    result = _run(str(suite), "--runtime", "docker", "--report-dir", str(tmp_path / "r"))
    assert result.exit_code == 3, result.output
    doc = json.loads((tmp_path / "r" / "run.json").read_text())
    assert doc["results"][0]["phase"] == "Error"
    if scenario.get("client_dies"):
        # The client died with its container still running: the container is stopped too.
        assert fake.calls("rm") and _all_dead(fake)


def test_N2_an_absent_runtime_is_refused_exit_3(fake: FakeRuntime, tmp_path: Path) -> None:
    suite = _custom(tmp_path)
    result = _run(str(suite), "--runtime", "podman", "--report-dir", str(tmp_path / "r"))
    assert result.exit_code == 3
    assert "podman is not on PATH" in result.output
    assert not (tmp_path / "r" / "run.json").exists()


def test_N2_a_runtime_that_does_not_answer_is_refused_exit_3(
    fake: FakeRuntime, tmp_path: Path
) -> None:
    fake.install("docker")
    fake.play(version_exit=1)
    result = _run(
        str(_custom(tmp_path)), "--runtime", "docker", "--report-dir", str(tmp_path / "r")
    )
    assert result.exit_code == 3 and "`docker version` failed" in result.output
    assert fake.calls("run") == []


def test_N2_a_runtime_that_vanishes_before_the_attempt_is_error(fake: FakeRuntime) -> None:
    plan = pinned({"kind": "custom", "runner": {"image": IMAGE}})
    gone = ContainerRuntime(name="docker", binary=str(fake.bin_dir / "docker"))  # never installed
    options = LocalOptions(node="host-1", runtime=gone)
    local = run_plan(plan, options=options, reporter=SilentReporter())
    (result,) = local.results
    assert result.state.phase is Phase.ERROR


def _all_dead(fake: FakeRuntime) -> bool:
    """Every container the stand-in started has died (SIGKILL lands asynchronously)."""
    started = fake.started_pids()
    assert started, "no container was started"
    until = time.monotonic() + 5
    while time.monotonic() < until:
        if not any(_alive(pid) for pid in started):
            return True
        time.sleep(0.02)
    return False


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def test_N2_a_deadline_stops_the_container_not_just_the_client(
    fake: FakeRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake.install("docker")
    # A SIGTERM-trapping entrypoint that prints a passing value and exits 0 at the stop.
    fake.play(output="bw=99\n", mode="trap_term")
    monkeypatch.setattr(attempts, "_deadline", lambda test: 1)
    plan = pinned({"kind": "custom", "runner": {"image": IMAGE}, "thresholds": GATE})
    (test,) = plan.tests
    runtime = ContainerRuntime(name="docker", binary=str(fake.bin_dir / "docker"))
    options = LocalOptions(node="host-1", runtime=runtime, run_id="r1")
    local = run_plan(plan, options=options, reporter=SilentReporter())
    (result,) = local.results
    assert result.state.phase is Phase.ERROR and result.state.message == DEADLINE_MESSAGE
    name = name_of(test.name)
    (stop,) = fake.calls("stop")
    assert stop == ["stop", "-t", "10", name]  # the grace the process path gives
    assert ["rm", "-f", name] in fake.calls("rm")
    assert fake.container_pids() == {} and _all_dead(fake)


def test_N2_an_interrupt_stops_the_container(fake: FakeRuntime) -> None:
    fake.install("docker")
    fake.play(output="started\n", mode="hang")
    test = planned({"kind": "custom", "runner": {"image": IMAGE}})
    runtime = ContainerRuntime(name="docker", binary=str(fake.bin_dir / "docker"))
    how = launch(test, attempt=1, options=LocalOptions(node="host-1", runtime=runtime, run_id="r1"))
    assert isinstance(how, Launch) and how.stopper is not None

    def ctrl_c(chunk: bytes) -> None:
        raise Interrupted("SIGINT")

    with pytest.raises(Interrupted):
        run_runner(
            command=how.command,
            env=how.env,
            kind="custom",
            deadline_seconds=60,
            raw_log=None,
            on_output=ctrl_c,
            stopper=how.stopper,
        )
    name = name_of(test.name)
    assert fake.calls("stop") == [["stop", "-t", "3", name]]
    assert fake.calls("rm") == [["rm", "-f", name]]
    assert _all_dead(fake)


# --- choosing the runtime --------------------------------------------------------------


def _which(*present: str) -> Any:
    return lambda name: f"/bin/{name}" if name in present else None


def ok(path: str) -> bool:
    return True


def test_N2_auto_picks_the_first_working_runtime_in_order() -> None:
    chosen = choose_runtime(
        "auto", sim=False, which=_which("docker", "podman", "nerdctl"), answers=ok
    )
    assert chosen == ContainerRuntime(name="podman", binary="/bin/podman")
    chosen = choose_runtime("auto", sim=False, which=_which("nerdctl", "docker"), answers=ok)
    assert chosen is not None and chosen.name == "docker"
    # A docker client whose daemon is down is no runtime: the next one answers.
    chosen = choose_runtime(
        "auto", sim=False, which=_which("docker", "nerdctl"), answers=lambda p: "nerdctl" in p
    )
    assert chosen is not None and chosen.name == "nerdctl"
    assert choose_runtime("auto", sim=False, which=_which(), answers=ok) is None  # processes
    # --sim: the simulated GPU lives in this repository's runners, run as processes.
    assert choose_runtime("auto", sim=True, which=_which("podman"), answers=ok) is None
    assert choose_runtime("process", sim=False, which=_which("podman"), answers=ok) is None
    with pytest.raises(RuntimeChoiceError, match="--sim"):
        choose_runtime("docker", sim=True, which=_which("docker"), answers=ok)


def test_N2_auto_runs_the_image_when_a_runtime_works_and_processes_otherwise(
    fake: FakeRuntime, tmp_path: Path
) -> None:
    suite = _suite(
        tmp_path / "p.yaml",
        [{"inline": {"kind": "custom", "runner": {"command": ["sh", "-c", "echo bw=77"]}}}],
    )
    # No runtime on PATH: runner.command runs here as a process, as before.
    result = _run(str(suite), "--runtime", "auto", "--report-dir", str(tmp_path / "a"))
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "a" / "run.json").read_text())["results"][0]["metrics"] == {
        "bw": "77"
    }
    fake.install("docker")
    fake.play(version_exit=1)  # on PATH but not working: still processes
    result = _run(str(suite), "--runtime", "auto", "--report-dir", str(tmp_path / "b"))
    assert result.exit_code == 0, result.output
    assert fake.calls("run") == [] and fake.calls("version")
    fake.play(output="bw=88\n", exit=0)
    image_suite = _custom(tmp_path)
    result = _run(str(image_suite), "--runtime", "auto", "--report-dir", str(tmp_path / "c"))
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "c" / "run.json").read_text())["results"][0]["metrics"] == {
        "bw": "88"
    }
    assert fake.calls("run")


def test_N2_custom_image_with_no_runtime_and_no_command_is_refused(tmp_path: Path) -> None:
    suite = _custom(tmp_path)
    result = _run(str(suite), "--runtime", "process", "--report-dir", str(tmp_path / "r"))
    assert result.exit_code == 3
    for fix in ("podman, docker or nerdctl", "runner.command", "--image-command custom=CMD"):
        assert fix in result.output
    assert not (tmp_path / "r" / "run.json").exists()  # refused before anything ran


def test_N2_image_command_stays_a_local_process_under_a_runtime(
    fake: FakeRuntime, tmp_path: Path
) -> None:
    fake.install("docker")
    suite = _custom(tmp_path)
    result = _run(
        str(suite), "--runtime", "docker", "--image-command", "custom=sh -c 'echo bw=5'",
        "--report-dir", str(tmp_path / "r"),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert fake.calls("run") == []


def test_N2_an_accelerator_image_runs_with_every_gpu_through_the_cli(
    fake: FakeRuntime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_module, "gpu_present", lambda: True)
    fake.install("podman")
    fake.play(output="nonfiniteCount=0\nmaxRelativeError=0.001\nFP4_GEMM_PASS\n")
    suite = _suite(tmp_path / "p.yaml", [{"testRef": "smoke"}])
    with suite.open("a") as handle:
        handle.write("---\n" + yaml.safe_dump({
            "kind": "BurnInTest", "metadata": {"name": "smoke"},
            "spec": {"kind": "compute-smoke", "thresholds": [
                {"metric": "nonfiniteCount", "comparison": "Equal", "value": "0"}]},
        }))  # fmt: skip
    result = _run(str(suite), "--runtime", "auto", "--report-dir", str(tmp_path / "r"))
    assert result.exit_code == 0, result.output
    (call,) = fake.calls("run")
    assert call[4:6] == ["--device", "nvidia.com/gpu=all"]
    assert call[-1] == "ghcr.io/glimmer-ai/glimmer-runner-compute-smoke:v0.1.0"
    assert fake.runtimes_called() == ["podman", "podman"]  # version probe, then run


def test_N2_GLIMMER_RUNTIME_sets_the_default(
    fake: FakeRuntime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake.install("docker")
    monkeypatch.setenv("GLIMMER_RUNTIME", "process")
    result = _run(str(_custom(tmp_path)), "--report-dir", str(tmp_path / "r"))
    assert result.exit_code == 3 and "no container runtime and no local command" in result.output
    assert fake.calls("version") == []  # not even probed

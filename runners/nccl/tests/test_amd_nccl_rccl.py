"""nccl on AMD (RCCL and rccl-tests): the matrix cells, HIP's device selection, the build
the node's vendor needs, and the transport rules unchanged.

The phases are ``runners/fault_matrix.py:AMD_FAULT_MATRIX`` (one table: the conformance
suite runs it on ``mi300xx2``, these tests on ``mi325xx2``). The recorded outputs are the
NVIDIA fixtures with RCCL's version line: rccl-tests prints nccl-tests' table, and RCCL
NCCL's ``NCCL INFO`` lines (``RCCL version 2.21.5+hip6.4``; peers ``via P2P/IPC``).
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from glimmer.contract import RunnerReport, read_report
from runners.catalog import RUNNERS
from runners.conformance import Case, check, execute
from runners.nccl import runner
from runners.nccl.parse import NcclOutputError, build_of, transport_of
from runners.sdk.entry import RunnerContext, guarded_main
from runners.sdk.outcome import Verdict
from runners.sdk.protocols import Fabric, Platform, RdmaPort, ToolResult
from runners.sdk.report import Markers, Report
from runners.tests.amd_fixtures import amd_matrix_cases

KIND = "nccl"
FIXTURES = Path(__file__).parent / "fixtures"
MARKERS = Markers.for_prefix("NCCL")
CUDA_LINE = "NCCL INFO NCCL version 2.21.5+cuda12.4"
RCCL_LINE = "NCCL INFO RCCL version 2.21.5+hip6.4 HEAD:3a6a2b0"
ROCM_IMAGE = "ghcr.io/glimmer-ai/glimmer-runner-nccl-rocm"
CUDA_IMAGE = "ghcr.io/glimmer-ai/glimmer-runner-nccl ("


def rccl(name: str) -> str:
    """A recorded NVIDIA output as RCCL prints it (its version line)."""
    text = (FIXTURES / name).read_text()
    if CUDA_LINE in text:
        return text.replace(CUDA_LINE, RCCL_LINE)
    return f"node-a:21001:21001 [0] {RCCL_LINE}\n{text}"


def conclude(
    text: str, *, sim: str, exit_code: int = 0, expect: str = "fabric", multi_node: bool = True
) -> RunnerReport:
    out = io.StringIO()
    config = runner.Settings(
        collective="all_reduce",
        expect=expect,
        min_bytes="8",
        max_bytes="8G",
        iterations=20,
        warmup=5,
        port=18540,
        rendezvous_s=5,
        tool_s=60,
    )

    def measure(ctx: RunnerContext) -> Verdict:
        return runner._conclude(
            ctx, config=config, result=ToolResult(exit_code, text, ""), multi_node=multi_node
        )

    code = guarded_main(
        markers=MARKERS,
        measure=measure,
        environ={"GLIMMER_SIM_GPU": sim},
        report=Report(markers=MARKERS, out=out),
    )
    return read_report(out.getvalue().encode(), kind=KIND, exit_code=code)


def run_node(environ: Mapping[str, str]) -> RunnerReport:
    out = io.StringIO()
    code = guarded_main(
        markers=MARKERS,
        measure=runner.measure,
        environ={**RUNNERS[KIND].test_env, **environ},
        report=Report(markers=MARKERS, out=out),
    )
    return read_report(out.getvalue().encode(), kind=KIND, exit_code=code)


# -- the matrix ------------------------------------------------------------------------


@pytest.mark.parametrize("case", amd_matrix_cases(KIND, profile="mi325xx2"), ids=str)
def test_amd_fault_gives_its_matrix_phase(case: Case) -> None:
    assert check(RUNNERS[KIND], case) == []


def _healthy(profile: str) -> RunnerReport:
    spec = RUNNERS[KIND]
    env = {**spec.test_env, "GLIMMER_SIM_GPU": profile}
    run = execute(spec.command, kind=KIND, env=env, timeout_s=60)
    assert run.exit_code == 0, run.stdout[-600:]
    return run.report


@pytest.mark.parametrize("profile", ["mi300xx2", "mi325xx2"])
def test_amd_healthy_node_runs_rccl_over_xgmi_with_provenance_sim(profile: str) -> None:
    report = _healthy(profile)
    assert report.metrics["ncclTransport"] == "P2P"
    assert report.metrics["devicesVisible"] == "2"
    assert report.provenance == "sim"
    # Two GPUs: one xGMI peer link (simgpu's SIM_XGMI_PEER_GBS), never NVLink's figure.
    nvlink = float(_healthy("h200x2").metrics["busBandwidthGBs"])
    assert 0 < float(report.metrics["busBandwidthGBs"]) < nvlink


# -- device selection ------------------------------------------------------------------


class _Recording:
    """A fabric that records the environment each tool is started with."""

    def __init__(self, inner: Fabric, seen: list[dict[str, str]]) -> None:
        self._inner, self._seen = inner, seen

    def rdma_ports(self) -> list[RdmaPort]:
        return self._inner.rdma_ports()

    def error_counters(self, port: RdmaPort) -> dict[str, int] | None:
        return self._inner.error_counters(port)

    def memlock_limit_bytes(self) -> int | None:
        return self._inner.memlock_limit_bytes()

    def run_tool(
        self, argv: Sequence[str], *, env: Mapping[str, str], timeout_s: float
    ) -> ToolResult:
        self._seen.append(dict(env))
        return self._inner.run_tool(argv, env=env, timeout_s=timeout_s)


def _recorded_envs(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, str]]:
    seen: list[dict[str, str]] = []
    real = Platform.fabric

    def recording(self: Platform) -> Fabric:
        inner = real(self)  # a platform may hand out another's fabric: record once
        return inner if isinstance(inner, _Recording) else _Recording(inner, seen)

    monkeypatch.setattr(Platform, "fabric", recording)
    return seen


def test_amd_tests_see_their_gpus_through_hip_visible_devices_never_cuda(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = _recorded_envs(monkeypatch)
    report = run_node({"GLIMMER_SIM_GPU": "mi300xx2"})
    assert report.exit_code == 0, report.message
    assert [env.get(runner.HIP_DEVICES_ENV) for env in seen] == ["0,1"]
    assert all("CUDA_VISIBLE_DEVICES" not in env for env in seen)


def test_nvidia_device_selection_is_unchanged_no_hip_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = _recorded_envs(monkeypatch)
    report = run_node({"GLIMMER_SIM_GPU": "h200x2"})
    assert report.exit_code == 0, report.message
    assert seen and all(runner.HIP_DEVICES_ENV not in env for env in seen)


def test_amd_allocation_is_read_from_amd_com_gpu() -> None:
    report = run_node({"GLIMMER_SIM_GPU": "mi300xx2", "BURNIN_RESOURCE_LIMITS": "amd.com/gpu=4"})
    assert report.exit_code == 3 and "4 GPUs allocated but only 2 visible" in report.message


def test_simulated_rccl_tests_see_only_the_gpus_hip_visible_devices_names() -> None:
    from runners.sdk.platform import open_platform

    fabric = open_platform({"GLIMMER_SIM_GPU": "mi300xx2"}).fabric()
    argv = ["all_reduce_perf", "-b", "8", "-e", "8M", "-g", "2"]
    assert fabric.run_tool(argv, env={"HIP_VISIBLE_DEVICES": "0,1"}, timeout_s=5).exit_code == 0
    one = fabric.run_tool(argv, env={"HIP_VISIBLE_DEVICES": "0"}, timeout_s=5)
    assert one.exit_code == 1 and "Test HIP failure" in one.stderr


# -- the build the node's vendor needs -------------------------------------------------


def test_amd_node_with_the_cuda_image_declared_is_error_naming_the_rocm_image() -> None:
    report = run_node({"GLIMMER_SIM_GPU": "mi300xx2", runner.BUILD_ENV: "cuda"})
    assert report.exit_code == 3
    assert "cuda build" in report.message and ROCM_IMAGE in report.message
    assert "busBandwidthGBs" not in report.metrics


def test_nvidia_node_with_the_rocm_image_declared_is_error_naming_the_cuda_image() -> None:
    report = run_node({"GLIMMER_SIM_GPU": "h200x2", runner.BUILD_ENV: "rocm"})
    assert report.exit_code == 3
    assert "rocm build" in report.message and CUDA_IMAGE in report.message


def test_amd_node_whose_output_is_nccls_cuda_build_is_error_naming_it() -> None:
    text = (FIXTURES / "all_reduce_perf-2node-ib.txt").read_text()
    report = conclude(text, sim="mi300xx2")
    assert report.exit_code == 3
    assert "2.21.5+cuda12.4" in report.message and ROCM_IMAGE in report.message
    assert "busBandwidthGBs" not in report.metrics


def test_cuda_tests_failing_on_an_amd_node_are_error_naming_the_cuda_build() -> None:
    text = "node-a: Test CUDA failure common.cu:892 'no CUDA-capable device is detected'\n"
    report = conclude(text, sim="mi300xx2", exit_code=1)
    assert report.exit_code == 3 and "Test CUDA failure" in report.message
    assert ROCM_IMAGE in report.message


def test_nvidia_node_whose_output_is_rccl_is_error_naming_the_cuda_image() -> None:
    report = conclude(rccl("all_reduce_perf-2node-ib.txt"), sim="h200x2")
    assert report.exit_code == 3 and "RCCL version" in report.message
    assert CUDA_IMAGE in report.message


def test_amd_output_that_never_says_rccl_is_error_not_read_as_rccl() -> None:
    text = (FIXTURES / "all_reduce_perf-2node-ib.txt").read_text().replace(CUDA_LINE, "")
    report = conclude(text, sim="mi300xx2")
    assert report.exit_code == 3 and "RCCL version" in report.message
    assert "busBandwidthGBs" not in report.metrics


def test_output_naming_both_builds_is_refused() -> None:
    with pytest.raises(NcclOutputError, match="both builds"):
        build_of(f"h [0] {RCCL_LINE}\nh [0] {CUDA_LINE}\n")


# -- transport and memlock: NVIDIA's rules, on RCCL's lines ----------------------------


def test_amd_ib_run_through_rccl_is_measured() -> None:
    report = conclude(rccl("all_reduce_perf-2node-ib.txt"), sim="mi300xx2")
    assert report.exit_code == 0, report.message
    assert report.metrics["ncclTransport"] == "IB"


def test_amd_socket_fallback_when_the_fabric_is_expected_is_error_never_pass() -> None:
    report = conclude(rccl("all_reduce_perf-2node-socket-fallback.txt"), sim="mi300xx2")
    assert report.exit_code == 3 and "TCP sockets" in report.message
    assert "busBandwidthGBs" not in report.metrics


def test_amd_socket_transport_is_measured_only_when_asked_for() -> None:
    text = rccl("all_reduce_perf-2node-socket-fallback.txt")
    report = conclude(text, sim="mi300xx2", expect="socket")
    assert report.exit_code == 0 and report.metrics["ncclTransport"] == "socket"


def test_amd_memlock_failure_is_error_naming_rlimit_memlock() -> None:
    report = conclude(rccl("all_reduce_perf-memlock.txt"), sim="mi300xx2:memlock-8mib", exit_code=1)
    assert report.exit_code == 3
    for words in ("RLIMIT_MEMLOCK", "8388608 bytes", "LimitMEMLOCK=infinity"):
        assert words in report.message


def test_xgmi_peers_read_as_p2p_from_rccls_channel_lines() -> None:
    assert transport_of("h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC") == "P2P"

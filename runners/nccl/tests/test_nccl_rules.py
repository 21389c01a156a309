"""nccl's rules on recorded (constructed) nccl-tests outputs: what each must conclude.

The fixtures follow nccl-tests' documented format (fixtures/README.md); they are read
by the same parser and conclusion as a real run and as the simulated tool's output.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from glimmer.contract import RunnerReport, read_report
from runners.catalog import RUNNERS
from runners.conformance import check_fabric, fabric_cases_for
from runners.nccl import runner
from runners.nccl.parse import NcclOutputError, parse_report, transport_of
from runners.sdk.entry import RunnerContext, guarded_main
from runners.sdk.env import RunnerEnv
from runners.sdk.outcome import RunnerError, Verdict
from runners.sdk.protocols import ToolResult
from runners.sdk.report import Markers, Report

FIXTURES = Path(__file__).parent / "fixtures"
MARKERS = Markers.for_prefix("NCCL")


def config(expect: str = "fabric") -> runner.Settings:
    return runner.Settings(
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


def conclude(
    text: str, *, exit_code: int = 0, expect: str = "fabric", sim: str = "h200x2"
) -> RunnerReport:
    out = io.StringIO()

    def measure(ctx: RunnerContext) -> Verdict:
        return runner._conclude(
            ctx, config=config(expect), result=ToolResult(exit_code, text, ""), multi_node=True
        )

    code = guarded_main(
        markers=MARKERS,
        measure=measure,
        environ={"GLIMMER_SIM_GPU": sim},
        report=Report(markers=MARKERS, out=out),
    )
    return read_report(out.getvalue().encode(), kind="nccl", exit_code=code)


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_O_recorded_all_reduce_table_parses_to_the_section_O_metrics() -> None:
    report = conclude(fixture("all_reduce_perf-2node-ib.txt"))
    assert report.exit_code == 0, report.message
    assert report.metrics["busBandwidthGBs"] == "68.64"  # largest size, worse of the two
    assert report.metrics["algBandwidthGBs"] == "45.78"  # peak
    assert report.metrics["latencyUs"] == "30.97"  # smallest size
    assert report.metrics["miscompares"] == "0"
    assert report.metrics["ranks"] == "4"
    assert report.metrics["ncclTransport"] == "IB"


def test_socket_fallback_when_the_fabric_is_expected_is_error_never_pass() -> None:
    report = conclude(fixture("all_reduce_perf-2node-socket-fallback.txt"))
    assert report.exit_code == 3
    assert "TCP sockets" in report.message
    assert report.metrics["ncclTransport"] == "socket"
    assert "busBandwidthGBs" not in report.metrics  # a socket figure is never offered


def test_socket_transport_is_measured_only_when_sockets_are_asked_for() -> None:
    report = conclude(fixture("all_reduce_perf-2node-socket-fallback.txt"), expect="socket")
    assert report.exit_code == 0 and report.metrics["ncclTransport"] == "socket"


def test_memlock_registration_failure_is_error_naming_rlimit_memlock_value_and_fix() -> None:
    report = conclude(
        fixture("all_reduce_perf-memlock.txt"), exit_code=1, sim="h200x2:memlock-8mib"
    )
    assert report.exit_code == 3
    for words in ("RLIMIT_MEMLOCK", "8388608 bytes", "LimitMEMLOCK=infinity", "never measured"):
        assert words in report.message


def test_wrong_elements_are_a_measured_fail_old_format_included() -> None:
    report = conclude(fixture("all_reduce_perf-old-format-wrong.txt"), expect="any")
    assert report.exit_code == 1
    assert report.metrics["miscompares"] == "3"
    assert report.metrics["ncclTransport"] == "P2P"


def test_a_run_without_validation_is_error_not_zero_miscompares() -> None:
    text = fixture("all_reduce_perf-2node-ib.txt").replace("      0    ", "    N/A    ")
    report = conclude(text)
    assert report.exit_code == 3 and "validation" in report.message
    assert "miscompares" not in report.metrics


def test_an_unknown_transport_is_unproven_when_the_fabric_is_expected() -> None:
    text = fixture("all_reduce_perf-2node-ib.txt")
    stripped = "\n".join(line for line in text.splitlines() if "NCCL INFO" not in line)
    report = conclude(stripped)
    assert report.exit_code == 3 and "transport" in report.message


@pytest.mark.parametrize(
    ("line", "word"),
    [
        (
            "h:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE ; OOB eth0\n"
            "h NCCL INFO Using network IB",
            "RoCE",
        ),
        ("h:1:2 [0] NCCL INFO Using network IBext_v8", "IB"),
        (
            "h:1:2 [0] NCCL INFO Using network IB\n"
            "h NCCL INFO Channel 01/0 : 0 -> 1 via NET/Socket/1",
            "socket",
        ),
        ("h:1:2 [0] NCCL INFO NVLS multicast support is available on dev 0", "NVLS"),
    ],
)
def test_transport_is_read_from_nccls_own_lines(line: str, word: str) -> None:
    assert transport_of(line) == word


@pytest.mark.parametrize(
    "row",
    [
        "        8   2   float  sum  -1  nan  0.00  0.00  0  30.9  0.00  0.00  0",
        "        8   2   float  sum  -1  31.6  0.00",
        "        8   2   float  sum  -1  31.6  0.00  -1.0  0  30.9  0.00  0.00  0",
    ],
)
def test_malformed_rows_are_refused_never_guessed(row: str) -> None:
    with pytest.raises(NcclOutputError):
        parse_report(row + "\n")


def test_the_runner_never_sets_a_fallback_and_refuses_one_already_set() -> None:
    out = io.StringIO()
    ctx = RunnerContext(
        report=Report(markers=MARKERS, out=out),
        env=RunnerEnv.from_environ({}),
        environ={"NCCL_IB_DISABLE": "1"},
    )
    with pytest.raises(RunnerError, match="NCCL_IB_DISABLE=1 is set"):
        runner._tool_env(ctx, config())
    clean = RunnerContext(
        report=Report(markers=MARKERS, out=out), env=RunnerEnv.from_environ({}), environ={}
    )
    env = runner._tool_env(clean, config())
    assert not set(env) & set(runner.FALLBACK_SETTINGS)


def test_F7_group_nccl_over_4_ranks_reports_once_from_rank_0() -> None:
    (case,) = [c for c in fabric_cases_for("nccl") if c.label == "healthy"]
    assert len(case.sides) == 4
    assert check_fabric(RUNNERS["nccl"], case) == []

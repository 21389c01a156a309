"""Section A of the semantics: the runner contract, one test per rule."""

from __future__ import annotations

import pytest

from glimmer.contract import (
    DropReason,
    Outcome,
    ReportReader,
    RunnerReport,
    artifact_name_ok,
    canonical_name,
    read_report,
)
from glimmer.contract.artifacts import MAX_PAYLOAD_BYTES
from glimmer.contract.report import MAX_LINE_BYTES, MAX_VALUE_BYTES


def report(text: str | bytes, *, exit_code: int = 0, kind: str = "custom") -> RunnerReport:
    data = text.encode() if isinstance(text, str) else text
    return read_report(data, kind=kind, exit_code=exit_code)


def test_A1_interface_is_exit_code_plus_key_value_lines() -> None:
    r = report("gpuTempC=71\nmiscompares=0\nGPU_BURN_PASS\n")
    assert r.metrics == {"gpuTempC": "71", "miscompares": "0"}
    assert r.message == "GPU_BURN_PASS"
    assert r.outcome is Outcome.PASS


@pytest.mark.parametrize(
    ("code", "outcome"),
    [
        (0, Outcome.PASS),
        (1, Outcome.FAIL),
        (3, Outcome.ERROR),
        (4, Outcome.ERROR),
        (137, Outcome.ERROR),
        (143, Outcome.ERROR),
        (128, Outcome.ERROR),
        (-1, Outcome.ERROR),
        (255, Outcome.ERROR),
    ],
)
def test_A2_exit_codes(code: int, outcome: Outcome) -> None:
    assert report("", exit_code=code).outcome is outcome


def test_A2_exit_2_with_marker_is_skip() -> None:
    assert report("NCCL_SKIP: one GPU\n", exit_code=2).outcome is Outcome.SKIP


def test_A3_exit2_without_marker_is_error() -> None:
    r = report("panic: runtime error\n", exit_code=2)
    assert r.outcome is Outcome.ERROR
    assert r.undeclared_skip


@pytest.mark.parametrize(
    ("line", "declared"),
    [
        ("NCCL_SKIP: no peers", True),
        ("NCCL_SKIP", True),
        ("A_SKIP.", True),
        ("X9_Y_SKIP:", True),
        ("NCCL_SKIPPED", False),
        ("SKIP", False),
        ("_SKIP:", False),
        (" NCCL_SKIP:", False),
        ("nccl_SKIP:", False),
        ("9_SKIP:", False),
        ("FOO_SKIP_", False),
    ],
)
def test_A3_skip_marker_regex(line: str, declared: bool) -> None:
    r = report(f"metric=1\n{line}\n", exit_code=2)
    assert r.skip_declared is declared
    assert (r.outcome is Outcome.SKIP) is declared


def test_A3_marker_is_read_from_raw_output_including_artifact_payloads() -> None:
    text = (
        "-----BEGIN BURNIN ARTIFACT log text/plain-----\n"
        "GPU_BURN_SKIP: inside the payload\n"
        "-----END BURNIN ARTIFACT-----\n"
    )
    assert report(text, exit_code=2).outcome is Outcome.SKIP


def test_A3_marker_after_crlf_line_counts() -> None:
    assert report(b"x=1\r\nNCCL_SKIP: no\r\n", exit_code=2).skip_declared


@pytest.mark.parametrize(
    "line",
    ["just prose", "=value", "has space=1", "tab\tkey=1", "key with = sign", "no equals here"],
)
def test_A4_non_metric_lines_become_the_message(line: str) -> None:
    r = report(f"a=1\n{line}\n")
    assert r.message == line
    assert r.metrics == {"a": "1"}


def test_A4_message_is_last_non_metric_line() -> None:
    r = report("first\nx=1\nsecond\ny=2\n")
    assert r.message == "second"


def test_A4_split_at_first_equals_and_trim() -> None:
    r = report("  gpuName =  NVIDIA H200=big \n")
    assert r.metrics == {"gpuName": "NVIDIA H200=big"}


def test_A4_blank_lines_skipped_and_value_may_be_empty() -> None:
    r = report("\n\n   \nconfigWarnings=\n")
    assert r.metrics == {"configWarnings": ""}
    assert r.message == ""


def test_A4_go_whitespace_only_is_trimmed() -> None:
    # U+001C is not white space in Go; a key led by it is not silently cleaned.
    r = report("\x1cfoo=1\n")
    assert "foo" not in r.metrics


def test_A5_generic_camel_casing() -> None:
    assert canonical_name("custom", "gpu_temp_c") == "gpuTempC"
    assert canonical_name("custom", "GPU-TEMP-C") == "gpuTempC"
    assert canonical_name("custom", "sustainedClockPct") == "sustainedClockPct"
    assert canonical_name("custom", "a__b") == "aB"
    assert canonical_name("custom", "_") == ""


def test_A5_aliases_are_keyed_by_kind() -> None:
    assert canonical_name("gpu-burn", "errors") == "miscompares"
    assert canonical_name("custom", "errors") == "errors"
    assert canonical_name("nccl", "busbw") == "busBandwidthGBs"
    assert canonical_name("unknown-kind", "busbw") == "busbw"


def test_A5_case_trap_snake_gbs_is_dimensionless() -> None:
    assert canonical_name("custom", "h2d_bandwidth_gbs") == "h2dBandwidthGbs"
    assert canonical_name("memory-bw", "h2d_bandwidth_gbs") == "hostToDeviceBandwidthGBs"


@pytest.mark.parametrize(
    ("kind", "raw", "canonical"),
    [
        ("compute-smoke", "tflops", "throughputTflops"),
        ("gemm-sweep", "window_seconds", "sampleWindowS"),
        ("gemm-sweep", "gemm_iterations", "iterationsCompleted"),
        ("gpu-burn", "iterations", "iterationsCompleted"),
        ("gpu-burn", "tflops", "sustainedThroughputTflops"),
        ("gpu-burn", "xid_count", "xidEvents"),
        ("dcgm-diag", "tests_failed", "diagTestsFailed"),
        ("dcgm-diag", "pcie_replay_count", "pcieReplayErrors"),
        ("dcgm-diag", "rows_remapped", "remappedRows"),
        ("memory-bw", "d2h_bandwidth_gbs", "deviceToHostBandwidthGBs"),
        ("memory-bw", "d2d_bandwidth_gbs", "deviceToDeviceBandwidthGBs"),
        ("memory-bw", "peer_read_bandwidth_gbs", "peerReadBandwidthGBs"),
        ("memory-bw", "peer_write_bandwidth_gbs", "peerWriteBandwidthGBs"),
        ("memory-bw", "memory_bandwidth_gbs", "memoryBandwidthGBs"),
        ("host-health", "ib_counters_saturated", "fabricCountersSaturated"),
        ("host-health", "ib_saturated_counters", "fabricSaturatedCounters"),
        ("host-health", "ib_counter_status", "fabricCounterStatus"),
        ("host-health", "nic_link_down", "nicLinkDownEvents"),
        ("host-health", "pcie_replay_count", "pcieReplayErrors"),
        ("host-health", "xid_count", "xidEvents"),
        ("host-health", "rows_remapped", "remappedRows"),
        ("thermal-soak", "peak_temp_c", "gpuTempC"),
        ("thermal-soak", "peak_power_w", "powerDrawW"),
        ("thermal-soak", "throttle_count", "throttleEvents"),
        ("thermal-soak", "soak_seconds", "elapsedS"),
        ("thermal-soak", "xid_count", "xidEvents"),
        ("nccl", "algbw", "algBandwidthGBs"),
        ("nccl", "wrong_count", "miscompares"),
        ("ib-write-bw", "bw_average", "bandwidthGbps"),
        ("ib-write-bw", "bw_peak", "peakBandwidthGbps"),
        ("ib-write-bw", "latency_min_us", "minLatencyUs"),
        ("ib-write-bw", "latency_max_us", "maxLatencyUs"),
        ("ib-write-bw", "latency_p99_us", "p99LatencyUs"),
        ("ib-write-bw", "msg_rate_mpps", "messageRateMpps"),
        ("gpudirect-rdma", "bw_average", "bandwidthGbps"),
        ("gpudirect-rdma", "t_avg_usec", "latencyUs"),
        ("clockprobe", "sm_clock_mhz", "smClockMHz"),
        ("clockprobe", "mem_clock_mhz", "memClockMHz"),
        ("clockprobe", "rated_boost_clock_mhz", "ratedBoostClockMHz"),
        ("memory-stress", "hardware_incidents", "memoryErrors"),
        ("memory-stress", "sdc_count", "sdcDetections"),
        ("memory-stress", "read_bandwidth_mbs", "readBandwidthMBs"),
        ("memory-stress", "write_bandwidth_mbs", "writeBandwidthMBs"),
    ],
)
def test_A6_alias_table(kind: str, raw: str, canonical: str) -> None:
    assert canonical_name(kind, raw) == canonical
    assert report(f"{raw}=5\n", kind=kind).metrics == {canonical: "5"}


def test_A7_invalid_names_are_reported_one_per_line() -> None:
    r = report("FOO=1\nBar=2\nFOO=3\n9lives=4\nok=5\n")
    assert r.invalid_names == ("FOO", "Bar", "FOO", "9lives")
    assert r.invalid_name_count == 4
    assert r.metrics == {"ok": "5"}


def test_A7_invalid_name_is_not_a_metric_and_does_not_touch_maps() -> None:
    r = report("Gpu=1\n")
    assert r.metrics == {}
    assert not r.harvested_nothing  # an invalid name is something the runner printed


@pytest.mark.parametrize("value", ["n/a", "N/A", "N/a", "  n/a  "])
def test_A8_na_sentinel_goes_to_unmeasurable(value: str) -> None:
    r = report(f"eccErrors={value}\n")
    assert r.unmeasurable == frozenset({"eccErrors"})
    assert r.metrics == {}


@pytest.mark.parametrize("value", ["unknown", "none", "", "na", "n / a"])
def test_A8_only_na_spelling_counts(value: str) -> None:
    r = report(f"eccErrors={value}\n")
    assert r.metrics == {"eccErrors": value.strip()}
    assert not r.unmeasurable


def test_A9_last_occurrence_wins_across_both_maps() -> None:
    r = report("a=1\na=n/a\nb=n/a\nb=2\nc=1\nc=3\n")
    assert r.metrics == {"b": "2", "c": "3"}
    assert r.unmeasurable == frozenset({"a"})


def test_A9_aliased_and_canonical_spellings_share_one_name() -> None:
    r = report("xid_count=3\nxidEvents=0\n", kind="host-health")
    assert r.metrics == {"xidEvents": "0"}


def test_A10_empty_harvest_inputs() -> None:
    assert report("just a line\n").harvested_nothing
    assert not report("x=n/a\n").harvested_nothing
    assert not report("x=1\n").harvested_nothing
    assert not report("X=1\n").harvested_nothing


BEGIN = "-----BEGIN BURNIN ARTIFACT"
END = "-----END BURNIN ARTIFACT-----"


def test_A11_artifact_lifted_out_before_metric_scanning() -> None:
    r = report(f"{BEGIN} diag.json application/json-----\nmiscompares=99\n{END}\nmiscompares=0\n")
    assert r.metrics == {"miscompares": "0"}
    (artifact,) = r.artifacts
    assert artifact.name == "diag.json"
    assert artifact.media_type == "application/json"
    assert artifact.payload == b"miscompares=99\n"
    assert artifact.digest.startswith("sha256:")


def test_A11_crlf_stripped_from_markers_and_payload() -> None:
    r = report(f"{BEGIN} a text/plain-----\r\nline\r\n{END}\r\n".encode())
    assert r.artifacts[0].payload == b"line\n"


@pytest.mark.parametrize("header", ["", " onlyname", " a b c", "\ta"])
def test_A11_bad_header_still_consumes_payload_and_is_dropped(header: str) -> None:
    r = report(f"{BEGIN}{header}-----\nx=1\n{END}\ny=2\n")
    assert r.metrics == {"y": "2"}
    (drop,) = r.dropped_artifacts
    assert drop.reason is DropReason.BAD_HEADER
    assert (drop.name, drop.media_type, drop.size) == ("", "", 0)


def test_A11_begin_marker_needs_space_or_nothing_before_header() -> None:
    r = report(f"{BEGIN}S a b-----\nx=1\n")
    assert r.metrics == {"x": "1"}
    assert not r.artifacts and not r.dropped_artifacts


def test_A11_markers_are_column_zero_and_exact() -> None:
    r = report(f" {BEGIN} a b-----\nx=1\n{END} \n")
    assert r.metrics == {"x": "1"}
    assert not r.dropped_artifacts


def test_A11_unterminated_fence_swallows_the_rest() -> None:
    r = report(f"a=1\n{BEGIN} a b-----\nb=2\nc=3\n")
    assert r.metrics == {"a": "1"}
    (drop,) = r.dropped_artifacts
    assert drop.reason is DropReason.UNTERMINATED
    assert drop.size == len("b=2\nc=3\n")


def test_A11_nested_begin_drops_outer_and_restarts_there() -> None:
    r = report(f"{BEGIN} outer x-----\np=1\n{BEGIN} inner y-----\nq=2\n{END}\nr=3\n")
    assert r.metrics == {"r": "3"}
    (drop,) = r.dropped_artifacts
    assert (drop.name, drop.reason) == ("outer", DropReason.NESTED)
    assert r.artifacts[0].name == "inner"
    assert r.artifacts[0].payload == b"q=2\n"


def test_A11_oversized_payload_dropped_with_true_size() -> None:
    line = "x" * 1023
    lines = 300  # 300 KiB
    r = report(f"{BEGIN} big text/plain-----\n" + (line + "\n") * lines + f"{END}\nk=1\n")
    (drop,) = r.dropped_artifacts
    assert drop.reason is DropReason.OVERSIZED
    assert drop.size == 1024 * lines > MAX_PAYLOAD_BYTES
    assert r.metrics == {"k": "1"}


def test_A11_exactly_max_payload_is_kept() -> None:
    line = "y" * 1023
    r = report(f"{BEGIN} edge text/plain-----\n" + (line + "\n") * 256 + f"{END}\n")
    assert r.artifacts[0].size == MAX_PAYLOAD_BYTES


def test_A11_drop_reason_precedence() -> None:
    # bad header beats nested
    r = report(f"{BEGIN}-----\n{BEGIN} b c-----\n{END}\n")
    assert r.dropped_artifacts[0].reason is DropReason.BAD_HEADER
    # unterminated beats oversized
    r = report(f"{BEGIN} big t-----\n" + ("z" * 1023 + "\n") * 300)
    assert r.dropped_artifacts[0].reason is DropReason.UNTERMINATED


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("diag.json", True),
        ("a-b_c.1", True),
        (".", False),
        ("..", False),
        ("a/b", False),
        ("ü", False),
        ("", False),
        ("a b", False),
    ],
)
def test_A12_artifact_names_are_never_sanitised(name: str, ok: bool) -> None:
    assert artifact_name_ok(name) is ok


def test_input_bytes_non_utf8_nul_and_crlf_never_crash() -> None:
    r = report(b"\xff\xfe=1\nok=\x00v\r\nbad\x00key=1\n\x80\x81\n")
    assert r.metrics.get("ok") == "\x00v"
    assert "bad\x00key" not in r.metrics


def test_a_line_over_the_bound_is_never_a_metric() -> None:
    huge = b"gpuTempC=" + b"9" * (MAX_LINE_BYTES + 10)
    r = report(huge + b"\nafter=1\n")
    assert "gpuTempC" not in r.metrics
    assert r.metrics == {"after": "1"}


def test_an_oversized_value_removes_the_name_instead_of_keeping_an_old_value() -> None:
    r = report("gpuTempC=50\ngpuTempC=" + "9" * (MAX_VALUE_BYTES + 1) + "\n")
    assert "gpuTempC" not in r.metrics
    assert "gpuTempC" in r.overflow_names


def test_a_one_megabyte_line_is_read() -> None:
    value = "7" * 1_000_000
    r = report(f"configWarnings={value}\nmsg\n")
    assert r.message == "msg"


def test_streaming_in_arbitrary_chunks_equals_whole_read() -> None:
    data = f"a=1\r\n{BEGIN} n t-----\npay=1\n{END}\nNCCL_SKIP: x\nb=n/a\nlast\n".encode()
    whole = read_report(data, kind="custom", exit_code=2)
    for size in (1, 2, 3, 7, 64):
        reader = ReportReader(kind="custom")
        for start in range(0, len(data), size):
            reader.feed(data[start : start + size])
        assert reader.finish(exit_code=2) == whole

"""Section B: metric naming and the registry."""

from __future__ import annotations

import math

import pytest

from glimmer.contract import (
    REGISTRY,
    SPREAD_METRICS,
    Aggregation,
    Combination,
    ThresholdUse,
    is_valid_metric_name,
    unit_of,
)
from glimmer.contract.names import UNIT_SUFFIXES, grammar_ok, name_problem
from glimmer.contract.numbers import format_go_g, format_go_plain, parse_go_float


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("gpuTempC", True),
        ("a", True),
        ("p99LatencyUs", True),
        ("", False),
        ("GpuTemp", False),
        ("gpu_temp", False),
        ("gpu-temp", False),
        ("9x", False),
        ("gpuTempÇ", False),
        ("gpu temp", False),
    ],
)
def test_B1_grammar(name: str, ok: bool) -> None:
    assert grammar_ok(name) is ok
    assert is_valid_metric_name(name) is ok


def test_B1_registered_name_must_carry_its_registered_unit() -> None:
    assert name_problem("gpuTempC", "C") is None
    assert name_problem("gpuTempC", "W") is not None


@pytest.mark.parametrize(
    ("name", "unit"),
    [
        ("bandwidthGbps", "Gbps"),
        ("busBandwidthGBs", "GBs"),
        ("readBandwidthMBs", "MBs"),
        ("achievedTflops", "Tflops"),
        ("smClockMHz", "MHz"),
        ("latencyUs", "Us"),
        ("totalKernelMs", "Ms"),
        ("sustainedClockPct", "Pct"),
        ("gpuTempC", "C"),
        ("powerDrawW", "W"),
        ("elapsedS", "S"),
        ("messageRateMpps", ""),
        ("miscompares", ""),
        ("C", ""),
        ("S", ""),
        ("Gbps", ""),
        ("h2dBandwidthGbs", ""),
        ("memClockMhz", ""),
        ("soakSeconds", ""),
    ],
)
def test_B2_unit_suffixes_in_order(name: str, unit: str) -> None:
    assert unit_of(name) == unit


def test_B2_suffix_order_is_exactly_as_specified() -> None:
    assert [s for s, _ in UNIT_SUFFIXES] == [
        "Gbps",
        "GBs",
        "MBs",
        "Tflops",
        "MHz",
        "Us",
        "Ms",
        "Pct",
        "C",
        "W",
        "S",
    ]


#: Acceptance measurements this project's runners print beyond the reference's 143 names
#: (docs/simulated-gpu.md, "Readings that show what no runner fails").
ADDED_ACCEPTANCE = {
    "hwSlowdownEvents",
    "eccCorrectedDelta",
    "eccCorrected",
    "pcieLinkDegradedDevices",
}


def test_B3_registry_has_147_names_67_acceptance_80_evidence() -> None:
    uses = [spec.use for spec in REGISTRY.values()]
    assert set(REGISTRY) >= ADDED_ACCEPTANCE
    assert all(REGISTRY[name].use == ThresholdUse.ACCEPTANCE for name in ADDED_ACCEPTANCE)
    assert len(REGISTRY) == 143 + len(ADDED_ACCEPTANCE)
    assert uses.count(ThresholdUse.ACCEPTANCE) == 63 + len(ADDED_ACCEPTANCE)
    assert uses.count(ThresholdUse.EVIDENCE) == 80


def test_B3_every_registered_unit_is_the_one_its_suffix_implies() -> None:
    for name, spec in REGISTRY.items():
        assert spec.unit == unit_of(name)
        assert is_valid_metric_name(name), name


@pytest.mark.parametrize(
    ("name", "use", "aggregation", "combination"),
    [
        ("bandwidthGbps", "Acceptance", "Min", "Min"),
        ("busBandwidthGBs", "Acceptance", "Min", "Collective"),
        ("elapsedS", "Acceptance", "Sum", "Max"),
        ("eccErrors", "Acceptance", "Last", "Sum"),
        ("remappedRows", "Acceptance", "Last", "Sum"),
        ("xidEvents", "Acceptance", "Sum", "Sum"),
        ("xidPreexisting", "Acceptance", "Last", "Max"),
        ("diagTestsFailed", "Acceptance", "Sum", ""),
        ("deviceCount", "Acceptance", "Last", ""),
        ("maxRelativeError", "Acceptance", "Max", ""),
        ("ratedBoostClockMHz", "Evidence", "Last", ""),
        ("maxLatencyUs", "Evidence", "Max", "Max"),
        ("minLatencyUs", "Evidence", "Min", ""),
        ("totalKernelMs", "Evidence", "Sum", ""),
        ("throughputTflops", "Evidence", "Last", ""),
    ],
)
def test_B3_registry_entries(name: str, use: str, aggregation: str, combination: str) -> None:
    spec = REGISTRY[name]
    assert (spec.use, spec.aggregation, spec.combination) == (
        ThresholdUse(use),
        Aggregation(aggregation),
        Combination(combination),
    )


def test_B4_spread_metrics() -> None:
    assert {
        "sustainedClockSpreadPct",
        "gemmThroughputSpreadPct",
        "fmaThroughputSpreadPct",
        "hostToDeviceBandwidthSpreadPct",
    } == SPREAD_METRICS
    assert all(REGISTRY[name].use is ThresholdUse.ACCEPTANCE for name in SPREAD_METRICS)


def test_B5_lifetime_counters_are_last_across_segments_windowed_are_sum() -> None:
    assert REGISTRY["eccErrors"].aggregation is Aggregation.LAST
    assert REGISTRY["remappedRows"].aggregation is Aggregation.LAST
    assert REGISTRY["xidEvents"].aggregation is Aggregation.SUM
    assert REGISTRY["pcieReplayErrors"].aggregation is Aggregation.SUM


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("90", 90.0),
        ("-1.5", -1.5),
        ("+2", 2.0),
        (".5", 0.5),
        ("1.", 1.0),
        ("1e3", 1000.0),
        ("1_000", 1000.0),
        ("0x1p3", 8.0),
        ("0x1.8p1", 3.0),
        ("1e-400", 0.0),
        ("Inf", float("inf")),
        ("-infinity", float("-inf")),
    ],
)
def test_C1_go_parse_float_accepts(text: str, value: float) -> None:
    assert parse_go_float(text) == value


@pytest.mark.parametrize(
    "text", ["", " 1", "1 ", "1e400", "-nan", "+NaN", "1__0", "_1", "1_", "0x1", "abc", "1,5", "."]
)
def test_C1_go_parse_float_rejects(text: str) -> None:
    assert parse_go_float(text) is None


def test_C1_nan_parses_unsigned() -> None:
    value = parse_go_float("NaN")
    assert value is not None and math.isnan(value)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (83.22, "83.22"),
        (100000.0, "100000"),
        (1e6, "1e+06"),
        (1234567.0, "1.234567e+06"),
        (0.0001, "0.0001"),
        (1e-5, "1e-05"),
        (0.0, "0"),
        (90.0, "90"),
        (-2.5e-7, "-2.5e-07"),
        (1e100, "1e+100"),
    ],
)
def test_C2_go_g_formatting(value: float, text: str) -> None:
    assert format_go_g(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (5.0, "5"),
        (1e3, "1000"),
        (2.5, "2.5"),
        (1e21, "1000000000000000000000"),
        (1e-7, "0.0000001"),
    ],
)
def test_F7_plain_formatting(value: float, text: str) -> None:
    assert format_go_plain(value) == text

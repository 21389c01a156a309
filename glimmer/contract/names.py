"""Metric names: the grammar, unit suffixes, and key canonicalisation (A5-A7, B1-B2).

A metric name crosses repository boundaries (runner images, stored verdicts,
dashboards), so the name *is* the contract: lowerCamelCase ASCII, and a
dimensional quantity carries its unit as a suffix. Runners may print legacy
snake_case keys; they are canonicalised here, per test kind, so a runner's
spelling can change without breaking stored verdicts.
"""

from __future__ import annotations

import re
from typing import Final

#: Unit suffixes, checked in exactly this order (B2). The name must be longer than
#: the suffix. A name with none of them is dimensionless.
UNIT_SUFFIXES: Final[tuple[tuple[str, str], ...]] = (
    ("Gbps", "gigabits per second"),
    ("GBs", "gigabytes per second"),
    ("MBs", "megabytes per second"),
    ("Tflops", "teraflops"),
    ("MHz", "megahertz"),
    ("Us", "microseconds"),
    ("Ms", "milliseconds"),
    ("Pct", "percent"),
    ("C", "degrees Celsius"),
    ("W", "watts"),
    ("S", "seconds"),
)
DIMENSIONLESS: Final = ""

_GRAMMAR: Final = re.compile(r"[a-z][A-Za-z0-9]*", re.ASCII)

#: Per-kind alias tables (A6), keyed by test kind and applied to the literal key.
ALIASES: Final[dict[str, dict[str, str]]] = {
    "compute-smoke": {"tflops": "throughputTflops"},
    "gemm-sweep": {"window_seconds": "sampleWindowS", "gemm_iterations": "iterationsCompleted"},
    "gpu-burn": {
        "errors": "miscompares",
        "iterations": "iterationsCompleted",
        "tflops": "sustainedThroughputTflops",
        "xid_count": "xidEvents",
    },
    "dcgm-diag": {
        "tests_failed": "diagTestsFailed",
        "pcie_replay_count": "pcieReplayErrors",
        "rows_remapped": "remappedRows",
    },
    "memory-bw": {
        "h2d_bandwidth_gbs": "hostToDeviceBandwidthGBs",
        "d2h_bandwidth_gbs": "deviceToHostBandwidthGBs",
        "d2d_bandwidth_gbs": "deviceToDeviceBandwidthGBs",
        "peer_read_bandwidth_gbs": "peerReadBandwidthGBs",
        "peer_write_bandwidth_gbs": "peerWriteBandwidthGBs",
        "memory_bandwidth_gbs": "memoryBandwidthGBs",
    },
    "host-health": {
        "ib_counters_saturated": "fabricCountersSaturated",
        "ib_saturated_counters": "fabricSaturatedCounters",
        "ib_counter_status": "fabricCounterStatus",
        "nic_link_down": "nicLinkDownEvents",
        "pcie_replay_count": "pcieReplayErrors",
        "xid_count": "xidEvents",
        "rows_remapped": "remappedRows",
    },
    "thermal-soak": {
        "peak_temp_c": "gpuTempC",
        "peak_power_w": "powerDrawW",
        "throttle_count": "throttleEvents",
        "soak_seconds": "elapsedS",
        "xid_count": "xidEvents",
    },
    "nccl": {"algbw": "algBandwidthGBs", "busbw": "busBandwidthGBs", "wrong_count": "miscompares"},
    "ib-write-bw": {
        "bw_average": "bandwidthGbps",
        "bw_peak": "peakBandwidthGbps",
        "latency_min_us": "minLatencyUs",
        "latency_max_us": "maxLatencyUs",
        "latency_p99_us": "p99LatencyUs",
        "msg_rate_mpps": "messageRateMpps",
    },
    "gpudirect-rdma": {"bw_average": "bandwidthGbps", "t_avg_usec": "latencyUs"},
    "clockprobe": {
        "sm_clock_mhz": "smClockMHz",
        "mem_clock_mhz": "memClockMHz",
        "rated_boost_clock_mhz": "ratedBoostClockMHz",
    },
    "memory-stress": {
        "hardware_incidents": "memoryErrors",
        "sdc_count": "sdcDetections",
        "read_bandwidth_mbs": "readBandwidthMBs",
        "write_bandwidth_mbs": "writeBandwidthMBs",
    },
}

_SEPARATORS: Final = re.compile(r"[_-]+")


def canonical_name(kind: str, key: str) -> str:
    """The canonical metric name for a raw runner key under a test kind (A5).

    The kind's alias wins; otherwise a key with ``_`` or ``-`` is camel-cased (empty
    parts between separators vanish); otherwise the key passes through unchanged.
    Unknown and ``custom`` kinds get the generic rule only.
    """
    alias = ALIASES.get(kind, {}).get(key)
    if alias is not None:
        return alias
    if "_" not in key and "-" not in key:
        return key
    parts = [part for part in _SEPARATORS.split(key) if part]
    if not parts:
        return ""
    head, *tail = parts
    return head.lower() + "".join(part[:1].upper() + part[1:].lower() for part in tail)


def unit_of(name: str) -> str:
    """The unit suffix a name carries (B2), or ``""`` for a dimensionless name."""
    for suffix, _ in UNIT_SUFFIXES:
        if len(name) > len(suffix) and name.endswith(suffix):
            return suffix
    return DIMENSIONLESS


def grammar_ok(name: str) -> bool:
    """Non-empty, first char ``a``-``z``, then ASCII letters and digits only (B1)."""
    return _GRAMMAR.fullmatch(name) is not None


def name_problem(name: str, registered_unit: str | None) -> str | None:
    """Why ``name`` is not a legal metric name, or ``None`` when it is.

    ``registered_unit`` is the registry's unit for the name (``None`` when the name
    is unregistered, which is legal).
    """
    if not name:
        return "empty metric name"
    if not grammar_ok(name):
        return (
            f"metric name {name!r} must start with a-z and contain only ASCII letters and "
            "digits (lowerCamelCase, e.g. gpuTempC)"
        )
    if registered_unit is not None and unit_of(name) != registered_unit:
        return f"metric name {name!r} must carry the unit suffix {registered_unit!r}"
    return None

"""The metric registry (B3): every name the built-in kinds emit, with its unit, how it
folds across soak segments (Aggregation) and Group ranks (Combination), and whether
it is an Acceptance measurement or only Evidence.

Gating on Evidence (a clock the part was *rated* for, a GPU name) cannot mean what an
author intends, so the linter calls it Unsound. Unregistered names are legal; they
aggregate as ``Last`` and combine only when every rank agrees.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final

from glimmer.contract.names import unit_of


class ThresholdUse(enum.StrEnum):
    ACCEPTANCE = "Acceptance"
    EVIDENCE = "Evidence"


class Aggregation(enum.StrEnum):
    """How a metric folds across the segments of a soak (G2)."""

    SUM = "Sum"
    MIN = "Min"
    MAX = "Max"
    LAST = "Last"


class Combination(enum.StrEnum):
    """How a metric combines across Group ranks (F7); ``UNCLASSIFIED`` = unanimity only."""

    COLLECTIVE = "Collective"
    SUM = "Sum"
    MAX = "Max"
    MIN = "Min"
    UNCLASSIFIED = ""


@dataclass(frozen=True, slots=True)
class MetricSpec:
    name: str
    unit: str
    aggregation: Aggregation
    combination: Combination
    use: ThresholdUse
    description: str


_A, _E = ThresholdUse.ACCEPTANCE, ThresholdUse.EVIDENCE
_SUM, _MIN, _MAX, _LAST = Aggregation.SUM, Aggregation.MIN, Aggregation.MAX, Aggregation.LAST
_CS, _CMIN, _CMAX, _CC, _CU = (
    Combination.SUM,
    Combination.MIN,
    Combination.MAX,
    Combination.COLLECTIVE,
    Combination.UNCLASSIFIED,
)

# (use, aggregation, combination) -> {name: description}
_TABLE: Final[list[tuple[ThresholdUse, Aggregation, Combination, dict[str, str]]]] = [
    (
        _A,
        _MIN,
        _CMIN,
        {
            "bandwidthGbps": "average point-to-point bandwidth",
            "tcpThroughputGbps": "TCP throughput between the pair",
            "minBandwidthGbps": "lowest bandwidth sample of a fabric soak",
            "memoryBandwidthGBs": "device memory bandwidth",
        },
    ),
    (
        _A,
        _MIN,
        _CU,
        {
            "p1BandwidthGbps": "1st-percentile bandwidth of a fabric soak",
            "peakBandwidthGbps": "peak point-to-point bandwidth",
            "hostToDeviceBandwidthGBs": "host-to-device copy bandwidth (worst device)",
            "deviceToHostBandwidthGBs": "device-to-host copy bandwidth (worst device)",
            "peerReadBandwidthGBs": "GPU peer read bandwidth (worst pair)",
            "peerWriteBandwidthGBs": "GPU peer write bandwidth (worst pair)",
            "deviceToDeviceBandwidthGBs": "on-device copy bandwidth (worst device)",
            "readBandwidthMBs": "read bandwidth",
            "writeBandwidthMBs": "write bandwidth",
            "messageRateMpps": "message rate in millions of packets per second",
            "enforcedPowerLimitW": "power limit the driver enforces",
            "powerLimitRatioPct": "enforced power limit as a share of the default",
            "sustainedClockPct": "sustained SM clock under load as a share of rated boost",
            "smClockMHz": "SM clock under load",
            "memClockMHz": "memory clock under load",
            "minSmClockPct": "lowest sampled SM clock as a share of rated boost",
            "sustainedThroughputTflops": "sustained compute throughput",
            "sustainedFmaThroughputTflops": "sustained FMA throughput",
            "throughputConsistencyPct": "sustained over peak throughput",
            "achievedTflops": "achieved GEMM throughput",
        },
    ),
    (
        _A,
        _MIN,
        _CC,
        {
            "busBandwidthGBs": "collective bus bandwidth",
            "algBandwidthGBs": "collective algorithm bandwidth",
        },
    ),
    (
        _A,
        _MAX,
        _CMAX,
        {
            "latencyUs": "latency",
            "p99LatencyUs": "99th-percentile latency",
            "tcpRttUs": "TCP round-trip time",
            "ioLatencyUs": "storage I/O latency",
            "gpuTempC": "peak GPU temperature",
            "meanTempUnderLoadC": "mean GPU temperature under load",
            "powerDrawW": "peak power draw",
        },
    ),
    (_A, _SUM, _CMAX, {"elapsedS": "time the measurement ran"}),
    (
        _A,
        _MAX,
        _CU,
        {
            "meanPowerW": "mean power draw",
            "maxRelativeError": "largest relative error against the reference",
            "sustainedClockSpreadPct": "spread of sustained clocks across devices",
            "gemmThroughputSpreadPct": "spread of GEMM throughput across devices",
            "fmaThroughputSpreadPct": "spread of FMA throughput across devices",
            "hostToDeviceBandwidthSpreadPct": "spread of host-to-device bandwidth across devices",
            "fabricCountersSaturated": "fabric error counters that saturated",
        },
    ),
    (
        _A,
        _SUM,
        _CS,
        {
            "nonfiniteCount": "NaN or infinite results produced",
            "miscompares": "results that differed from the reference",
            "sdcDetections": "silent data corruption detections",
            "memoryErrors": "memory errors found",
            "xidEvents": "Xid events in the window",
            "pcieReplayErrors": "PCIe replays in the window",
            "tcpRetransmits": "TCP retransmits",
            "ioErrors": "storage I/O errors",
            "nicLinkDownEvents": "NIC link-down events",
            "soakFailedIterations": "failed iterations of a fabric soak",
            "linkErrorEvents": "link error events",
            "throttleEvents": "clock throttle events",
            "hwSlowdownEvents": "hardware slowdowns (HW slowdown, thermal or power brake)",
            "eccCorrectedDelta": "corrected ECC errors during the load window",
            "xidWindowsWatched": "windows in which Xid events were watched",
        },
    ),
    (
        _A,
        _LAST,
        _CS,
        {
            "eccErrors": "lifetime uncorrected ECC errors",
            "eccCorrected": "lifetime corrected ECC errors",
            "pcieLinkDegradedDevices": "GPUs whose PCIe link trained narrower than its maximum",
            "remappedRows": "lifetime remapped memory rows",
        },
    ),
    (
        _A,
        _LAST,
        _CU,
        {
            "acceleratorCount": "accelerators found",
            "deviceCount": "devices measured",
        },
    ),
    (
        _A,
        _SUM,
        _CU,
        {
            "throttledSamples": "samples taken while throttled",
            "diagTestsFailed": "DCGM diagnostic tests that failed",
            "testsWarned": "DCGM diagnostic tests that warned",
            "iterationsCompleted": "iterations completed",
        },
    ),
    (_A, _LAST, _CMAX, {"xidPreexisting": "Xid events already present before the window"}),
    (
        _E,
        _LAST,
        _CU,
        {
            "meanBandwidthGbps": "mean bandwidth of a fabric soak",
            "ranks": "ranks that took part",
            "durationRequestedS": "duration the runner was asked for",
            "warmupS": "warm-up time",
            "sampleWindowS": "sampling window",
            "tempAtMinClockC": "temperature at the lowest clock sample",
            "thermalTempThresholdC": "the part's thermal slowdown threshold",
            "defaultPowerLimitW": "the part's default power limit",
            "ratedBoostClockMHz": "the part's rated boost clock",
            "clockFloorPct": "configured clock floor",
            "thermalClockFloorPct": "configured clock floor under thermal limits",
            "throughputTflops": "burst GEMM throughput of a smoke test",
            "gemmPrecision": "GEMM precision used",
            "gemmShape": "GEMM shape used",
            "lastXidCode": "the most recent Xid code",
            "devicesVisible": "devices the runner could see",
            "deviceWindowS": "per-device window",
            "worstDeviceIndex": "index of the worst device",
            "worstDevicePciBusId": "PCI bus id of the worst device",
            "deviceHomogeneous": "whether all devices are the same model",
            "deviceConcurrency": "how devices were exercised (all or sequential)",
            "loadThreads": "load threads",
            "loadItersPerLaunch": "iterations per kernel launch",
            "tcpTestInterface": "interface the TCP test used",
            "tcpMgmtInterface": "management interface",
            "pciAddresses": "PCI addresses of the accelerators",
            "hardwareIdentity": "digest of GPU UUIDs/serials, PCI addresses and RDMA GUIDs",
            "gpuUuids": "GPU UUIDs",
            "pciVendorIds": "PCI vendor ids",
            "pciDeviceIds": "PCI device ids",
            "acceleratorVendors": "accelerator vendors",
            "acceleratorDrivers": "bound accelerator drivers",
            "diskIoPath": "path the disk test used",
            "gpuName": "GPU model name",
            "computeCap": "CUDA compute capability",
            "pciBusId": "PCI bus id",
            "driverVersion": "driver version",
            "builtCudaArch": "CUDA architectures the runner was built for",
            "migMode": "MIG mode",
            "nvmlUnsupported": "NVML queries the part does not support",
            "configWarnings": "configuration warnings",
            "throttleReasons": "clock event reasons seen",
            "throttleClassification": "classification of the throttling seen",
            "ncclTransport": "transport NCCL chose",
            "pdWedgeSuspected": "whether a wedged P-state is suspected",
            "idleClockLockSuspected": "whether an idle clock lock is suspected",
            "gfxTarget": "AMD GFX target",
            "clockFloorBasis": "what the clock floor is relative to",
            "fabricSaturatedCounters": "names of saturated fabric counters",
            "fabricCounterStatus": "fabric counter read status",
            "eccMode": "ECC mode",
            "eccSource": "where ECC counts were read",
            "eccVendorConflict": "whether ECC sources disagreed",
            "amdRasUnreadableFiles": "AMD RAS files that could not be read",
            "xidSource": "where Xid events were read",
            "xidSourceDetail": "detail of the Xid source",
            "xidLogDropped": "whether the kernel log dropped lines",
            "nodeReady": "node readiness seen by the runner",
            "hostHealthVersion": "host-health runner version",
            "hostHealthStage": "the stage host-health reached",
            "hostHealthPanic": "a host-health internal failure",
        },
    ),
    (
        _E,
        _MAX,
        _CU,
        {
            "bandwidthStdDevGbps": "standard deviation of bandwidth samples",
            "peerReadBandwidthMaxGBs": "best GPU peer read bandwidth",
            "peerWriteBandwidthMaxGBs": "best GPU peer write bandwidth",
            "maxSmClockPct": "highest sampled SM clock as a share of rated boost",
            "gpuUtilizationPct": "GPU utilisation",
            "memUtilizationPct": "memory utilisation",
            "peakFmaThroughputTflops": "peak FMA throughput",
            "maxAbsError": "largest absolute error against the reference",
            "maxAbsRef": "largest absolute reference value",
            "throttleReasonsMask": "clock event reason bitmask",
            "unsupportedReads": "reads the part did not support",
        },
    ),
    (
        _E,
        _MIN,
        _CU,
        {
            "minLatencyUs": "lowest latency sample",
            "clockFloorAppliedPct": "clock floor applied",
        },
    ),
    (_E, _MAX, _CMAX, {"maxLatencyUs": "highest latency sample"}),
    (
        _E,
        _SUM,
        _CU,
        {
            "totalKernelMs": "total kernel time",
            "soakIterations": "fabric soak iterations",
            "soakServerRestarts": "fabric soak server restarts",
            "samplesTaken": "samples taken",
            "loadLaunches": "kernel launches",
        },
    ),
]


def _build() -> dict[str, MetricSpec]:
    registry: dict[str, MetricSpec] = {}
    for use, aggregation, combination, names in _TABLE:
        for name, description in names.items():
            assert name not in registry, name
            registry[name] = MetricSpec(
                name=name,
                unit=unit_of(name),
                aggregation=aggregation,
                combination=combination,
                use=use,
                description=description,
            )
    return registry


#: The registry: canonical name -> spec (141 names).
REGISTRY: Final[dict[str, MetricSpec]] = _build()

#: Spread metrics are ``n/a`` on one device; a gate on one must be RequiredIfMeasurable (B4).
SPREAD_METRICS: Final[frozenset[str]] = frozenset(
    {
        "sustainedClockSpreadPct",
        "gemmThroughputSpreadPct",
        "fmaThroughputSpreadPct",
        "hostToDeviceBandwidthSpreadPct",
    }
)


def aggregation_of(name: str) -> Aggregation:
    spec = REGISTRY.get(name)
    return spec.aggregation if spec else Aggregation.LAST


def combination_of(name: str) -> Combination:
    spec = REGISTRY.get(name)
    return spec.combination if spec else Combination.UNCLASSIFIED

"""Every runner this repository ships: its kind, module, markers and healthy metric set.

Why a catalog: the dispatcher (``glimmer run``), the conformance suite and the docs need
the same kind -> module map; keeping it here means a new runner is registered once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from glimmer.contract import SIM_GPU_ENV
from runners.sdk.outcome import RunnerError
from runners.sdk.platform import injected_crash_requested, simulated_faults


@dataclass(frozen=True)
class RunnerSpec:
    kind: str
    module: str
    prefix: str
    #: Marker printed on exit 0 (None: the runner prints no line on exit 0).
    pass_line: str | None
    fail_prefix: str
    error_prefix: str
    #: Metrics a healthy run prints (value or n/a); conformance requires each.
    healthy_metrics: frozenset[str]
    #: Whether it reads the (possibly simulated) GPU; if not its provenance is silicon.
    reads_gpu: bool = True
    #: Settings that keep a conformance run short; none changes what is checked.
    test_env: dict[str, str] = field(default_factory=dict)
    #: Environment that removes the runner's external dependency (must exit 3).
    missing_dependency_env: dict[str, str] = field(default_factory=dict)
    #: Environment under which the runner must declare a skip (exit 2), if it can skip.
    declared_skip_env: dict[str, str] | None = None
    #: ``Node``, or ``Pair``/``Group`` for a runner that needs its peers: conformance then
    #: runs two or three processes on loopback (``runners.conformance.link_cases_for``).
    scope: str = "Node"
    #: Metrics the Pair server prints on a healthy run (the client prints ``healthy_metrics``).
    server_metrics: frozenset[str] = frozenset()
    #: Whether the runner has an AMD (ROCm) sibling image (``Containerfile.rocm``), the
    #: default on a node fingerprinted ``amd`` (glimmer/plan/images.py ROCM_SIBLING_KINDS).
    rocm_sibling: bool = False
    #: The runner's own knob for how long it loads, which overrides the window it is
    #: given; a bound on the window (``glimmer run --host-window``, N9) bounds it too.
    window_env: str | None = None

    @property
    def image(self) -> str:
        """This project's image name, never the Go implementation's
        (``glimmer.plan.images.runner_repository(kind)``; runners cannot import the plan,
        so a test pins the two equal)."""
        return f"{IMAGE_PREFIX}{self.kind}"

    @property
    def rocm_image(self) -> str | None:
        """The ROCm sibling's image name (``IMAGE_PREFIX`` + kind + ``-rocm``)."""
        return f"{IMAGE_PREFIX}{self.kind}-rocm" if self.rocm_sibling else None

    @property
    def conformance_provenance(self) -> str:
        """What conformance runs must declare: ``sim`` on the simulated GPU, and for a link
        runner whose conformance traffic is loopback (never a link); else ``silicon``."""
        return "sim" if self.reads_gpu or self.scope != "Node" else "silicon"

    @property
    def command(self) -> tuple[str, ...]:
        return ("python", "-m", self.module)


#: Where this project's runner images live (the NVIDIA names spell it out per spec).
IMAGE_PREFIX = "ghcr.io/glimmer-ai/glimmer-runner-"

_FOLD = frozenset(
    {
        "deviceCount",
        "devicesVisible",
        "deviceHomogeneous",
        "deviceConcurrency",
        "worstDeviceIndex",
        "worstDevicePciBusId",
    }
)

#: What gpu-burn and thermal-soak print on every healthy window (§O).
_BURN = frozenset(
    {
        "provenance",
        "miscompares",
        "sdcDetections",
        "nonfiniteCount",
        "eccErrors",
        "iterationsCompleted",
        "elapsedS",
        "sustainedThroughputTflops",
        "gpuTempC",
        "powerDrawW",
        "throttleEvents",
        "hwSlowdownEvents",
        "eccCorrectedDelta",
        "sustainedClockPct",
        "sustainedClockSpreadPct",
        "deviceWindowS",
    }
)

#: What every perftest runner prints about the port and the registration it used.
_RDMA = frozenset(
    {
        "provenance",
        "rdmaDevice",
        "rdmaLinkLayer",
        "linkRateGbps",
        "rdmaMessageBytes",
        "rdmaQueuePairs",
        "memlockLimit",
        "memlockShrunk",
        "linkFloorPct",
    }
)
#: A write test with no ``measurand`` axis runs both sessions.
_WRITE = frozenset(
    {
        "bandwidthGbps",
        "messageRateMpps",
        "latencyUs",
        "p99LatencyUs",
        "minLatencyUs",
        "maxLatencyUs",
        "measurand",
    }
)
_SOAK = _RDMA | {
    "minBandwidthGbps",
    "p1BandwidthGbps",
    "meanBandwidthGbps",
    "bandwidthStdDevGbps",
    "soakIterations",
    "soakFailedIterations",
    "linkErrorEvents",
}


def _rdma_test_env(prefix: str) -> dict[str, str]:
    """Short conformance runs of a perftest runner (nothing checked is changed). The
    client's connect window outlasts a slow start of its server on a loaded machine: a
    client that gave up first would leave the server waiting out its own 70 s bound,
    past the suite's 60 s a case."""
    return {
        f"BURNIN_{prefix}_CONNECT_SECONDS": "10",
        f"BURNIN_{prefix}_TOOL_SECONDS": "10",
        "BURNIN_DURATION_SECONDS": "10",
    }


RUNNERS: dict[str, RunnerSpec] = {
    spec.kind: spec
    for spec in (
        RunnerSpec(
            kind="compute-smoke",
            module="runners.compute_smoke",
            prefix="FP4_GEMM",
            pass_line="FP4_GEMM_PASS",
            fail_prefix="FP4_GEMM_FAIL:",
            error_prefix="FP4_GEMM_ERROR:",
            healthy_metrics=_FOLD
            | {
                "provenance",
                "builtCudaArch",
                "nonfiniteCount",
                "maxRelativeError",
                "maxAbsError",
                "maxAbsRef",
                "throughputTflops",
                "gemmPrecision",
                "gemmShape",
                "gpuName",
                "computeCap",
                "pciBusId",
            },
            missing_dependency_env={SIM_GPU_ENV: "h200:no-driver"},
            # The FP4 test on a Hopper part: no FP4 tensor cores, so no FP4_GEMM_PASS
            # (A3: the skip is declared, naming sm_90); healthy metrics come from b200.
            declared_skip_env={SIM_GPU_ENV: "h200"},
            rocm_sibling=True,
        ),
        RunnerSpec(
            kind="gpu-burn",
            module="runners.gpu_burn",
            prefix="GPU_BURN",
            pass_line="GPU_BURN_PASS",
            fail_prefix="GPU_BURN_FAIL:",
            error_prefix="GPU_BURN_ERROR:",
            healthy_metrics=_FOLD | _BURN,
            test_env={"BURNIN_DURATION_SECONDS": "60"},
            missing_dependency_env={SIM_GPU_ENV: "h200:no-driver"},
            rocm_sibling=True,
        ),
        RunnerSpec(
            kind="thermal-soak",
            module="runners.thermal_soak",
            prefix="THERMAL_SOAK",
            pass_line="THERMAL_SOAK_PASS",
            fail_prefix="THERMAL_SOAK_FAIL:",
            error_prefix="THERMAL_SOAK_ERROR:",
            healthy_metrics=_FOLD
            | _BURN
            | {
                "meanPowerW",
                "smClockMHz",
                "throttledSamples",
                "xidEvents",
                "xidWindowsWatched",
            },
            test_env={"BURNIN_DURATION_SECONDS": "60"},
            missing_dependency_env={SIM_GPU_ENV: "h200:no-driver"},
            rocm_sibling=True,
        ),
        RunnerSpec(
            kind="gemm-sweep",
            module="runners.gemm_sweep",
            prefix="GEMM_SWEEP",
            pass_line="GEMM_SWEEP_PASS",
            fail_prefix="GEMM_SWEEP_FAIL:",
            error_prefix="GEMM_SWEEP_ERROR:",
            healthy_metrics=_FOLD
            | {
                "provenance",
                "achievedTflops",
                "maxRelativeError",
                "nonfiniteCount",
                "gemmPrecision",
                "gemmShape",
                "iterationsCompleted",
                "totalKernelMs",
                "sampleWindowS",
                "gemmThroughputSpreadPct",
            },
            test_env={"BURNIN_GEMM_SWEEP_SECONDS": "2"},
            missing_dependency_env={SIM_GPU_ENV: "h200:no-driver"},
            # FP4 on a Hopper part: the part has no FP4 tensor cores.
            declared_skip_env={SIM_GPU_ENV: "h200", "BURNIN_VARIANT_PRECISION": "fp4"},
            rocm_sibling=True,
        ),
        RunnerSpec(
            kind="clockprobe",
            module="runners.clockprobe",
            prefix="CLOCKPROBE",
            pass_line="CLOCKPROBE_PASS",
            fail_prefix="CLOCKPROBE_FAIL:",
            error_prefix="CLOCKPROBE_ERROR:",
            healthy_metrics=_FOLD
            | {
                "provenance",
                "smClockMHz",
                "memClockMHz",
                "sustainedClockPct",
                "minSmClockPct",
                "ratedBoostClockMHz",
                "throttleEvents",
                "hwSlowdownEvents",
                "throttledSamples",
                "gpuTempC",
                "powerDrawW",
                "throttleReasons",
                "throttleClassification",
                "sustainedClockSpreadPct",
                "elapsedS",
                "deviceWindowS",
            },
            missing_dependency_env={SIM_GPU_ENV: "h200:no-driver"},
            rocm_sibling=True,
        ),
        RunnerSpec(
            kind="dcgm-diag",
            module="runners.dcgm_diag",
            prefix="DCGM_DIAG",
            pass_line="DCGM_DIAG_PASS",
            fail_prefix="DCGM_DIAG_FAIL:",
            error_prefix="DCGM_DIAG_ERROR:",
            healthy_metrics=frozenset(
                {
                    "provenance",
                    "diagTestsFailed",
                    "testsWarned",
                    "gpuTempC",
                    "devicesVisible",
                    "driverVersion",
                    "elapsedS",
                }
            ),
            missing_dependency_env={SIM_GPU_ENV: "", "BURNIN_DCGMI_PATH": "/nonexistent/dcgmi"},
        ),
        RunnerSpec(
            kind="host-health",
            module="runners.host_health",
            prefix="HOST_HEALTH",
            pass_line="HOST_HEALTH_OK",
            fail_prefix="HOST_HEALTH_FAULT:",
            error_prefix="HOST_HEALTH_ERROR:",
            healthy_metrics=frozenset(
                {
                    "provenance",
                    "xidEvents",
                    "eccErrors",
                    "remappedRows",
                    "pcieReplayErrors",
                    "nicLinkDownEvents",
                    "xidSource",
                    "eccMode",
                    "devicesVisible",
                    "elapsedS",
                }
            ),
            test_env={"BURNIN_HOST_HEALTH_WINDOW_SECONDS": "2"},
            missing_dependency_env={SIM_GPU_ENV: "h200:no-driver"},
            rocm_sibling=True,
        ),
        RunnerSpec(
            kind="memory-bw",
            module="runners.memory_bw",
            prefix="MEMORY_BW",
            pass_line="MEMORY_BW_PASS",
            fail_prefix="MEMORY_BW_FAIL:",
            error_prefix="MEMORY_BW_ERROR:",
            healthy_metrics=_FOLD
            | {
                "provenance",
                "hostToDeviceBandwidthGBs",
                "deviceToHostBandwidthGBs",
                "deviceToDeviceBandwidthGBs",
                "peerReadBandwidthGBs",
                "peerWriteBandwidthGBs",
                "gpuName",
                "elapsedS",
            },
            missing_dependency_env={SIM_GPU_ENV: "h200:no-driver"},
            rocm_sibling=True,
        ),
        RunnerSpec(
            kind="memory-stress",
            module="runners.memory_stress",
            window_env="BURNIN_STRESS_SECONDS",
            prefix="STRESSAPPTEST",
            pass_line="STRESSAPPTEST_PASS",
            fail_prefix="STRESSAPPTEST_FAIL:",
            error_prefix="STRESSAPPTEST_ERROR:",
            healthy_metrics=frozenset(
                {
                    "provenance",
                    "memoryErrors",
                    "miscompares",
                    "sdcDetections",
                    "readBandwidthMBs",
                    "writeBandwidthMBs",
                    "elapsedS",
                    "durationRequestedS",
                }
            ),
            reads_gpu=False,
            test_env={"BURNIN_STRESS_SECONDS": "1", "BURNIN_STRESS_MEMORY_MB": "32"},
            missing_dependency_env={"BURNIN_STRESSAPPTEST_PATH": "/nonexistent/stressapptest"},
        ),
        RunnerSpec(
            kind="fingerprint-probe",
            module="runners.fingerprint_probe",
            prefix="FINGERPRINT_PROBE",
            pass_line=None,
            fail_prefix="FINGERPRINT_PROBE_ERROR:",
            error_prefix="FINGERPRINT_PROBE_ERROR:",
            healthy_metrics=frozenset(
                {
                    "provenance",
                    "acceleratorCount",
                    "pciAddresses",
                    "pciVendorIds",
                    "pciDeviceIds",
                    "acceleratorVendors",
                    "acceleratorDrivers",
                }
            ),
            missing_dependency_env={SIM_GPU_ENV: "h200:no-driver"},
            declared_skip_env={SIM_GPU_ENV: "", "BURNIN_SYSFS_ROOT": "/nonexistent/sys"},
        ),
        RunnerSpec(
            kind="tcp-baseline",
            module="runners.tcp_baseline",
            prefix="TCP_BASELINE",
            pass_line="TCP_BASELINE_PASS",
            fail_prefix="TCP_BASELINE_FAIL:",
            error_prefix="TCP_BASELINE_ERROR:",
            healthy_metrics=frozenset(
                {
                    "provenance",
                    "tcpThroughputGbps",
                    "tcpRetransmits",
                    "tcpRttUs",
                    "elapsedS",
                    "tcpTestInterface",
                    "tcpMgmtInterface",
                }
            ),
            server_metrics=frozenset(
                {
                    "provenance",
                    "tcpThroughputGbps",
                    "elapsedS",
                    "tcpTestInterface",
                    "tcpMgmtInterface",
                }
            ),
            reads_gpu=False,
            scope="Pair",
            test_env={
                "BURNIN_TCP_BASELINE_SECONDS": "0.5",
                "BURNIN_TCP_BASELINE_CONNECT_SECONDS": "3",
                "BURNIN_DURATION_SECONDS": "10",
            },
        ),
        RunnerSpec(
            kind="nccl",
            module="runners.nccl",
            prefix="NCCL",
            pass_line="NCCL_PASS",
            fail_prefix="NCCL_FAIL:",
            error_prefix="NCCL_ERROR:",
            healthy_metrics=frozenset(
                {
                    "provenance",
                    "devicesVisible",
                    "ncclCollective",
                    "ncclTransport",
                    "ranks",
                    "busBandwidthGBs",
                    "algBandwidthGBs",
                    "latencyUs",
                    "miscompares",
                }
            ),
            # Node scope here (the fault matrix on h200x2); its Pair and Group runs are
            # the fabric cases (runners.conformance.fabric_cases_for).
            test_env={"BURNIN_NCCL_MAX_BYTES": "64M", "BURNIN_DURATION_SECONDS": "20"},
            missing_dependency_env={SIM_GPU_ENV: "h200x2:no-driver"},
            rocm_sibling=True,
        ),
        RunnerSpec(
            kind="ib-write-bw",
            module="runners.ib_write_bw",
            prefix="IB_WRITE_BW",
            pass_line="IB_WRITE_BW_PASS",
            fail_prefix="IB_WRITE_BW_FAIL:",
            error_prefix="IB_WRITE_BW_ERROR:",
            healthy_metrics=_RDMA | _WRITE,
            server_metrics=_RDMA | _WRITE,
            reads_gpu=False,
            scope="Pair",
            test_env=_rdma_test_env("IB_WRITE_BW"),
        ),
        RunnerSpec(
            kind="gpudirect-rdma",
            module="runners.gpudirect_rdma",
            prefix="GPUDIRECT_RDMA",
            pass_line="GPUDIRECT_RDMA_PASS",
            fail_prefix="GPUDIRECT_RDMA_FAIL:",
            error_prefix="GPUDIRECT_RDMA_ERROR:",
            healthy_metrics=_RDMA | _WRITE | {"gpuName", "pciBusId"},
            server_metrics=_RDMA | _WRITE | {"gpuName", "pciBusId"},
            scope="Pair",
            test_env=_rdma_test_env("GPUDIRECT_RDMA"),
        ),
        RunnerSpec(
            kind="fabric-soak",
            module="runners.fabric_soak",
            prefix="FABRIC_SOAK",
            pass_line="FABRIC_SOAK_PASS",
            fail_prefix="FABRIC_SOAK_FAIL:",
            error_prefix="FABRIC_SOAK_ERROR:",
            healthy_metrics=_SOAK,
            server_metrics=_SOAK,
            reads_gpu=False,
            scope="Pair",
            test_env={**_rdma_test_env("FABRIC_SOAK"), "BURNIN_FABRIC_SOAK_ITERATIONS": "5"},
        ),
        RunnerSpec(
            # Not an API kind: run as ``kind: custom`` with the image
            # ghcr.io/glimmer-ai/glimmer-runner-ring-allreduce:<tag>.
            kind="ring-allreduce",
            module="runners.ring_allreduce",
            prefix="RING_ALLREDUCE",
            pass_line="RING_ALLREDUCE_PASS",
            fail_prefix="RING_ALLREDUCE_FAIL:",
            error_prefix="RING_ALLREDUCE_ERROR:",
            healthy_metrics=frozenset(
                {
                    "provenance",
                    "busBandwidthGBs",
                    "algBandwidthGBs",
                    "latencyUs",
                    "miscompares",
                    "elapsedS",
                }
            ),
            reads_gpu=False,
            scope="Group",
            test_env={
                "BURNIN_RING_ALLREDUCE_ELEMENTS": "8192",
                "BURNIN_RING_ALLREDUCE_ITERATIONS": "2",
                "BURNIN_RING_ALLREDUCE_RENDEZVOUS_SECONDS": "3",
                "BURNIN_DURATION_SECONDS": "20",
            },
        ),
        RunnerSpec(
            kind="disk-io",
            module="runners.disk_io",
            window_env="BURNIN_DISK_IO_SECONDS",
            prefix="DISK_IO",
            pass_line="DISK_IO_PASS",
            fail_prefix="DISK_IO_FAIL:",
            error_prefix="DISK_IO_ERROR:",
            healthy_metrics=frozenset(
                {
                    "provenance",
                    "writeBandwidthMBs",
                    "readBandwidthMBs",
                    "ioLatencyUs",
                    "p99LatencyUs",
                    "ioErrors",
                    "diskIoPath",
                    "fioVersion",
                    "elapsedS",
                    "durationRequestedS",
                }
            ),
            # The disk is never simulated: real fio on a real directory, provenance silicon.
            reads_gpu=False,
            # BURNIN_DISK_IO_PATH is not here on purpose: a conformance run supplies a
            # tmpfs it mounted (runners/disk_io/tests/test_disk_io_conformance.py).
            test_env={"BURNIN_DISK_IO_SIZE_MB": "8", "BURNIN_DISK_IO_SECONDS": "3"},
            missing_dependency_env={"BURNIN_FIO_PATH": "/nonexistent/fio"},
        ),
    )
}

#: kind -> ``python -m`` module, for the bare-host dispatcher.
RUNNER_MODULES: dict[str, str] = {kind: spec.module for kind, spec in RUNNERS.items()}


def _refusal(text: str) -> str | None:
    try:
        injected_crash_requested({SIM_GPU_ENV: text})
    except RunnerError as exc:
        return str(exc).removeprefix(f"{SIM_GPU_ENV}: ")
    return None


def sim_spec_problem(text: str) -> str | None:
    """Why every runner would refuse ``GLIMMER_SIM_GPU=text``, or None if they accept it.

    Why the runners' own parser: ``glimmer run --sim`` checks up front, so a typo is a
    usage error before anything runs, and it accepts exactly what the runners accept.
    The profile part is checked alone first, so a refusal names which part was wrong
    (the parser's profile refusal lists the known profiles; a fault's gets the faults).
    """
    head = _refusal(text.partition(":")[0])
    if head is not None:
        return head
    whole = _refusal(text)
    if whole is not None:
        return f"{whole}; known faults: {', '.join(simulated_faults())}"
    return None

"""What each runner must conclude for each simulated fault (the fault-coverage record).

Why a table in code: the matrix in docs/simulated-gpu.md is rendered from this table and
a test compares the two, and the conformance suite runs every cell — so the document,
the simulator and the runners cannot drift apart. A ``Passed`` cell for a fault is a
*finding* (this runner does not catch that fault), not an endorsement.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from runners.catalog import RUNNERS
from runners.sdk.simgpu.profiles import ALL_PROFILES, AMD_PROFILES

PASSED: Final = "Passed"
FAILED: Final = "Failed"
ERROR: Final = "Error"
SKIPPED: Final = "Skipped"
NOT_READ: Final = "not read"

EXIT_CODES: Final[dict[str, int]] = {PASSED: 0, FAILED: 1, SKIPPED: 2, ERROR: 3}

#: Two devices, so every fault lands on device 1 and the fold must find it.
MATRIX_PROFILE: Final = "h200x2"

#: The simulated profiles with FP4 tensor cores (sm_100 and newer): where compute-smoke,
#: the FP4 test, runs at all.
FP4_PROFILES: Final = frozenset({"b200", "gb200", "gb10"})

FAULTS: Final[tuple[str, ...]] = (
    "healthy",
    "low-clock",
    "ecc-uncorrectable",
    "remap-pending",
    "fallen-off-bus",
    "xid:79",
    "low-bandwidth",
    "nan-compute",
    "sdc",
    "thermal-throttle",
    "power-brake",
    "pcie-downtrain",
    "nvlink-down",
    "ecc-correctable-storm",
    "nic-flap-under-load",
    "no-driver",
    "crash",
)

_P, _F, _E, _S, _N = PASSED, FAILED, ERROR, SKIPPED, NOT_READ


@dataclass(frozen=True)
class FaultStory:
    """What a simulated fault stands for, in the words ``glimmer coverage`` prints."""

    #: The real-world failure the fault models, one sentence.
    models: str
    #: What kind of test catches it: the hint printed beside a miss.
    caught_by: str


#: Every modelled fault (Node and fabric), told once: ``glimmer coverage`` and the
#: "What each fault models" table of docs/simulated-gpu.md read it from here.
FAULT_STORIES: Final[dict[str, FaultStory]] = {
    "healthy": FaultStory(
        models="No fault: the control every coverage run starts from.",
        caught_by="nothing should: a profile that fails a healthy node measures nothing",
    ),
    "low-clock": FaultStory(
        models="A GPU stuck in a low performance state (power brake, bad VBIOS, failed "
        "fan) that never reaches its rated boost clock under load.",
        caught_by="a sustained-clock test under load (clockprobe with a sustainedClockPct floor)",
    ),
    "ecc-uncorrectable": FaultStory(
        models="Failing HBM: the GPU has counted uncorrectable (double-bit) ECC errors.",
        caught_by="a health read of the ECC counters (host-health eccErrors, or dcgm-diag)",
    ),
    "remap-pending": FaultStory(
        models="HBM rows that failed and await remapping at the next GPU reset, so the "
        "memory is degraded until the node is drained and reset.",
        caught_by="a health read of row remapping (host-health remappedRows, or dcgm-diag)",
    ),
    "fallen-off-bus": FaultStory(
        models="A GPU that dropped off PCIe (Xid 79 in the field): a riser, power or "
        "board fault, and the driver can no longer reach the device.",
        caught_by="any test that reads every GPU (nearly all do); host-health names it",
    ),
    "xid:79": FaultStory(
        models="The driver logged Xid 79 (GPU fallen off the bus) in the kernel log, "
        "while the device still answers for now.",
        caught_by="a kernel-log Xid read (host-health xidEvents), dcgm-diag or a soak "
        "that watches Xids (thermal-soak)",
    ),
    "low-bandwidth": FaultStory(
        models="A GPU whose data paths all run at a fraction of their rate (host copies, "
        "its own memory and its peer links) while its PCIe link reports full width: a "
        "part left in a degraded mode, e.g. after a bad reset.",
        caught_by="a bandwidth test with floors (memory-bw), or dcgm-diag's PCIe test",
    ),
    "nan-compute": FaultStory(
        models="Broken arithmetic units that return NaN or Inf from matrix multiplies.",
        caught_by="any compute test that checks its results (gemm-sweep, gpu-burn, "
        "thermal-soak, nccl)",
    ),
    "sdc": FaultStory(
        models="Silent data corruption under sustained load: now and then a GEMM returns "
        "finite numbers that are wrong, the failure that corrupts training runs unseen.",
        caught_by="a sustained load test that checks results repeatedly (gpu-burn, "
        "thermal-soak); a burst check misses it",
    ),
    "thermal-throttle": FaultStory(
        models="A GPU whose cooling cannot hold sustained load (a failed fan, a clogged "
        "heatsink, dried-out thermal paste): after about two minutes at full load it "
        "reaches its slowdown temperature and clocks itself down.",
        caught_by="a soak longer than the onset with a gate on its clocks or hardware "
        "slowdowns (thermal-soak: hwSlowdownEvents, sustainedClockPct); a burst test "
        "(clockprobe's 30 s, dcgm-diag level 2) misses it, dcgm-diag level 3 sees it",
    ),
    "power-brake": FaultStory(
        models="A power-delivery transient (a failing VRM or PSU, a rack power brake) "
        "that brakes the GPU's clocks for a moment, again and again, under load: the "
        "mean clock hardly moves.",
        caught_by="a gate on hardware slowdowns under load (clockprobe or gpu-burn "
        "hwSlowdownEvents); dcgm-diag level 4's pulse test",
    ),
    "pcie-downtrain": FaultStory(
        models="A GPU's PCIe link trained at x8 Gen4 instead of x16 Gen5 (a dirty or "
        "damaged connector, a riser, a retimer), so host copies run at a quarter of "
        "their rate.",
        caught_by="a host-copy bandwidth test with floors (memory-bw), or dcgm-diag's "
        "PCIe test; host-health prints pcieLinkDegradedDevices for a gate",
    ),
    "nvlink-down": FaultStory(
        models="One of a GPU's NVLinks to the NVSwitch fabric is down (a failed link or "
        "switch port): its peer traffic loses that link's share, about 6 % on an "
        "18-link part, and every collective waits for it.",
        caught_by="dcgm-diag (its NVLink status check); a peer-bandwidth floor tight "
        "enough to see 6 % (memory-bw peerReadBandwidthGBs): the defaults do not",
    ),
    "ecc-correctable-storm": FaultStory(
        models="HBM correcting thousands of single-bit errors, more under load, yet no "
        "uncorrectable one so far: memory on its way to failing.",
        caught_by="a gate on corrected ECC errors (host-health eccCorrected, gpu-burn or "
        "thermal-soak eccCorrectedDelta); no runner fails corrected errors by itself",
    ),
    "nic-flap-under-load": FaultStory(
        models="A NIC port that goes down and retrains only while it carries traffic (a "
        "marginal optic or cable that fails under load): every idle check of it is clean.",
        caught_by="a Pair/Group test that loads the link and reads its counters around the "
        "traffic (fabric-soak); no Node test loads the NIC, so host-health misses it",
    ),
    "no-driver": FaultStory(
        models="No working GPU driver on the node (not installed, wrong version, or "
        "failed to load): nothing can use the GPUs.",
        caught_by="any test that opens the GPUs (every GPU test ends Error)",
    ),
    "crash": FaultStory(
        models="The test program itself crashes (a bug, a killed process, a bad image), "
        "so it reports no verdict.",
        caught_by="any required test: a crash is an Error, never a Pass",
    ),
    "degraded-link": FaultStory(
        models="An RDMA link running below its rated speed (a bad cable or optic, a "
        "port trained down).",
        caught_by="a Pair/Group bandwidth test over the fabric (ib-write-bw, "
        "gpudirect-rdma, fabric-soak)",
    ),
    "flapping-link": FaultStory(
        models="An RDMA link that goes down and up all the time, idle or loaded (a marginal "
        "optic or connector): its error counters move between any two reads.",
        caught_by="a fabric soak that watches the link for its whole window (fabric-soak)",
    ),
    "slow-link": FaultStory(
        models="A slow network path between two nodes (a congested or mis-negotiated "
        "link) that still delivers every byte intact.",
        caught_by="a Pair/Group bandwidth test with a threshold floor (tcp-baseline, "
        "ring-allreduce): the runners pass with a low measurement",
    ),
    "corrupt-data": FaultStory(
        models="A link that delivers corrupted data (a bad NIC, cable or switch buffer) "
        "without raising any error.",
        caught_by="a test that checks the data it received (ring-allreduce); tcp-baseline "
        "does not read it",
    ),
    "memlock-8mib": FaultStory(
        models="A node whose locked-memory limit is 8 MiB, so RDMA cannot register "
        "its buffers (a container or systemd default).",
        caught_by="nccl over the fabric (it refuses to run); perftest-based tests do not see it",
    ),
    "nccl-socket-fallback": FaultStory(
        models="NCCL silently falling back from RDMA to TCP sockets (missing plugin or "
        "verbs device), so collectives run at a fraction of their rate.",
        caught_by="nccl over the fabric, which checks the transport it used",
    ),
    "no-rendezvous": FaultStory(
        models="A peer that never joins the test (a firewall, a wrong address, a node "
        "that never started its side).",
        caught_by="any Pair/Group test: a side that cannot meet its peer is an Error",
    ),
    "dead-peer": FaultStory(
        models="The other node of a Pair or Group is down.",
        caught_by="any Pair/Group test: the waiting side ends Error",
    ),
}

#: kind -> one phase per entry of FAULTS, in order. compute-smoke is the FP4 test: an H200
#: has no FP4 tensor cores, so every cell it can reach is its declared skip (A3), and a
#: lost GPU or a missing driver is still an Error (the rule reads every GPU first). Its
#: row on an FP4 part is ``runners/compute_smoke/tests/test_fp4_path.py:FP4_PART_ROW``.
_ROWS: Final[dict[str, tuple[str, ...]]] = {
    "compute-smoke": (_S, _S, _S, _S, _E, _S, _S, _S, _S, _S, _S, _S, _S, _S, _S, _E, _E),
    "gpu-burn": (_P, _P, _P, _P, _E, _P, _P, _F, _F, _P, _P, _P, _P, _P, _P, _E, _E),
    "thermal-soak": (_P, _P, _P, _P, _E, _F, _P, _F, _F, _P, _P, _P, _P, _P, _P, _E, _E),
    "gemm-sweep": (_P, _P, _P, _P, _E, _P, _P, _F, _P, _P, _P, _P, _P, _P, _P, _E, _E),
    "clockprobe": (_P, _F, _P, _P, _E, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _E, _E),
    "dcgm-diag": (_P, _P, _F, _F, _E, _F, _F, _P, _P, _P, _P, _F, _F, _P, _P, _E, _E),
    "host-health": (_P, _P, _F, _F, _F, _F, _P, _P, _P, _P, _P, _P, _P, _P, _P, _E, _E),
    "memory-bw": (_P, _P, _P, _P, _E, _P, _F, _P, _P, _P, _P, _F, _P, _P, _P, _E, _E),
    "memory-stress": (_P, _N, _N, _N, _N, _N, _N, _N, _N, _N, _N, _N, _N, _N, _N, _N, _E),
    "fingerprint-probe": (_P, _P, _P, _P, _E, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _E, _E),
    "nccl": (_P, _P, _P, _P, _E, _P, _P, _F, _P, _P, _P, _P, _P, _P, _P, _E, _E),
    "disk-io": (_P, _N, _N, _N, _N, _N, _N, _N, _N, _N, _N, _N, _N, _N, _N, _N, _E),
}

FAULT_MATRIX: Final[dict[str, dict[str, str]]] = {
    kind: dict(zip(FAULTS, row, strict=True)) for kind, row in _ROWS.items()
}

#: Two simulated MI300X (gfx942): faults land on device 1, read through the simulated
#: amdsmi and HIP (docs/vendors/amd.md).
AMD_MATRIX_PROFILE: Final = "mi300xx2"

#: kind -> one phase per entry of FAULTS on ``AMD_MATRIX_PROFILE``: every Node runner that
#: runs on an AMD node (nccl through RCCL and rccl-tests). ``xid:79`` is refused (Error) on
#: an AMD profile: an Xid is an NVIDIA driver event. DCGM does not exist there (Error).
#: fingerprint-probe reads PCI sysfs, not amdsmi, on AMD: ``fallen-off-bus`` and
#: ``no-driver`` do not reach it (a finding, as a Passed cell always is).
#: compute-smoke: gfx942 has no FP4 matrix cores, a declared skip wherever it is reached.
_AMD_ROWS: Final[dict[str, tuple[str, ...]]] = {
    "compute-smoke": (_S, _S, _S, _S, _E, _E, _S, _S, _S, _S, _S, _S, _E, _S, _S, _E, _E),
    "gpu-burn": (_P, _P, _P, _P, _E, _E, _P, _F, _F, _P, _P, _P, _E, _P, _P, _E, _E),
    "thermal-soak": (_P, _P, _P, _P, _E, _E, _P, _F, _F, _P, _P, _P, _E, _P, _P, _E, _E),
    "gemm-sweep": (_P, _P, _P, _P, _E, _E, _P, _F, _P, _P, _P, _P, _E, _P, _P, _E, _E),
    "clockprobe": (_P, _F, _P, _P, _E, _E, _P, _P, _P, _P, _P, _P, _E, _P, _P, _E, _E),
    "dcgm-diag": (_E,) * len(FAULTS),
    "host-health": (_P, _P, _F, _F, _F, _E, _P, _P, _P, _P, _P, _P, _E, _P, _P, _E, _E),
    "memory-bw": (_P, _P, _P, _P, _E, _E, _F, _P, _P, _P, _P, _F, _E, _P, _P, _E, _E),
    "memory-stress": (_P, _N, _N, _N, _N, _E, _N, _N, _N, _N, _N, _N, _E, _N, _N, _N, _E),
    "fingerprint-probe": (_P, _P, _P, _P, _P, _E, _P, _P, _P, _P, _P, _P, _E, _P, _P, _P, _E),
    "nccl": (_P, _P, _P, _P, _E, _E, _P, _F, _P, _P, _P, _P, _E, _P, _P, _E, _E),
    "disk-io": (_P, _N, _N, _N, _N, _E, _N, _N, _N, _N, _N, _N, _E, _N, _N, _N, _E),
}

AMD_FAULT_MATRIX: Final[dict[str, dict[str, str]]] = {
    kind: dict(zip(FAULTS, row, strict=True)) for kind, row in _AMD_ROWS.items()
}

#: Faults of the link runners (Pair/Group over real sockets; docs/simulated-kubelet.md).
#: ``slow-link``/``corrupt-data``/``no-rendezvous`` are ``GLIMMER_SIM_GPU`` faults on one
#: node (the server's, or one rank's); ``dead-peer`` is real: the other side is never
#: started. Phases are those of the *faulty-free* side (the client, or every healthy
#: rank); the faulty side itself ends Error under ``no-rendezvous``. A slow link is a
#: Pass with a low measurement: its Fail comes from thresholds, never the runner.
LINK_FAULTS: Final[tuple[str, ...]] = (
    "healthy",
    "slow-link",
    "corrupt-data",
    "no-rendezvous",
    "dead-peer",
)
_LINK_ROWS: Final[dict[str, tuple[str, ...]]] = {
    "tcp-baseline": (_P, _P, _N, _E, _E),
    "ring-allreduce": (_P, _P, _F, _E, _E),
}
LINK_FAULT_MATRIX: Final[dict[str, dict[str, str]]] = {
    kind: dict(zip(LINK_FAULTS, row, strict=True)) for kind, row in _LINK_ROWS.items()
}


#: Faults of the RDMA fabric runners (docs/fabric.md). Each cell is the phase of the
#: whole Pair (F3) or Group (F6), the faulty node being the one ``FABRIC_FAULT_SIDE``
#: names; ``dead-peer`` is real (the server, or rank 3, is never started). A ``Passed``
#: cell is a finding: the runner does not catch that fault itself (a threshold may).
FABRIC_FAULTS: Final[tuple[str, ...]] = (
    "healthy",
    "degraded-link",
    "flapping-link",
    "nic-flap-under-load",
    "memlock-8mib",
    "nccl-socket-fallback",
    "no-rendezvous",
    "dead-peer",
)
#: Which side carries the fault: memlock on the client/a worker (its limit must reach
#: the server through the session), the rest on the server / rank 0 (nccl's simulated
#: tool runs there), ``no-rendezvous`` on the server / the last rank.
FABRIC_FAULT_SIDE: Final[dict[str, str]] = {
    "degraded-link": "server",
    "flapping-link": "server",
    "nic-flap-under-load": "server",
    "memlock-8mib": "client",
    "nccl-socket-fallback": "server",
    "no-rendezvous": "server",
}
_FABRIC_ROWS: Final[dict[str, tuple[str, ...]]] = {
    "ib-write-bw": (_P, _F, _P, _P, _P, _N, _E, _E),
    "gpudirect-rdma": (_P, _F, _P, _P, _P, _N, _E, _E),
    "fabric-soak": (_P, _F, _F, _F, _P, _N, _E, _E),
    "nccl": (_P, _P, _P, _P, _E, _E, _E, _E),
}
FABRIC_FAULT_MATRIX: Final[dict[str, dict[str, str]]] = {
    kind: dict(zip(FABRIC_FAULTS, row, strict=True)) for kind, row in _FABRIC_ROWS.items()
}


@dataclass(frozen=True)
class Evidence:
    """A reading that shows a fault its runner does not fail by itself, and a threshold
    (the API's words) that catches it: the healthy reading meets it, the faulty one not.

    Why a table: a ``Passed`` cell says the runner does not catch the fault, but a fleet
    that gates the right reading does, and which reading that is must be as checked as
    the cell. A test runs every entry healthy and faulty through the runner and the
    verdict's own threshold evaluation (``tests/unit/sim/test_fault_evidence.py``).
    """

    kind: str
    metric: str
    comparison: str
    value: str
    #: The simulated part it is shown on (the matrix's, unless the fault needs more).
    sim: str = MATRIX_PROFILE
    #: Environment beyond the runner's conformance one (a soak longer than an onset).
    env: tuple[tuple[str, str], ...] = ()


_SOAK_PAST_ONSET = (("BURNIN_DURATION_SECONDS", "300"),)

#: fault -> the readings that show it where the matrix says Passed (NVIDIA parts).
FAULT_EVIDENCE: Final[dict[str, tuple[Evidence, ...]]] = {
    "thermal-throttle": (
        Evidence("thermal-soak", "hwSlowdownEvents", "Equal", "0", env=_SOAK_PAST_ONSET),
        Evidence(
            "thermal-soak", "sustainedClockPct", "GreaterThanOrEqual", "90", env=_SOAK_PAST_ONSET
        ),
    ),
    "power-brake": (
        Evidence("clockprobe", "hwSlowdownEvents", "Equal", "0"),
        Evidence("gpu-burn", "hwSlowdownEvents", "Equal", "0"),
    ),
    "pcie-downtrain": (Evidence("host-health", "pcieLinkDegradedDevices", "Equal", "0"),),
    "nvlink-down": (
        Evidence("memory-bw", "peerReadBandwidthGBs", "GreaterThanOrEqual", "350", sim="h200x8"),
    ),
    "ecc-correctable-storm": (
        Evidence("host-health", "eccCorrected", "LessThanOrEqual", "1000"),
        Evidence("thermal-soak", "eccCorrectedDelta", "LessThanOrEqual", "100"),
    ),
}


def _healthy_phase(kind: str, profile: str) -> str:
    if kind == "dcgm-diag" and profile in AMD_PROFILES:
        return ERROR  # DCGM is NVIDIA's: the AMD node has none
    if kind == "compute-smoke" and profile not in FP4_PROFILES:
        return SKIPPED  # no FP4 tensor cores (sm_75, sm_90, gfx942): the declared skip
    if kind == "gemm-sweep" and profile == "t4":
        return SKIPPED  # sm_75: no BF16 tensor cores (the sweep's default precision)
    if kind == "nccl":
        return SKIPPED  # every healthy profile here is one GPU: no intra-node collective
    if not RUNNERS[kind].reads_gpu and profile != "h200":
        return NOT_READ  # host-only runner: the GPU profile changes nothing it reads
    if kind == "dcgm-diag" and profile == "gb10":
        return ERROR  # DCGM gates its CUDA plugins on GB10: without BURNIN_DCGM_ALLOW they skip
    return PASSED


#: Healthy runs per profile (Node runners; the link runners' table is LINK_FAULT_MATRIX).
PROFILE_MATRIX: Final[dict[str, dict[str, str]]] = {
    kind: {profile: _healthy_phase(kind, profile) for profile in ALL_PROFILES}
    for kind, spec in RUNNERS.items()
    if spec.scope == "Node"
}


def render_markdown() -> str:
    """The fault matrix as the Markdown table docs/simulated-gpu.md carries."""
    kinds = list(FAULT_MATRIX)
    lines = [
        "| fault (`" + MATRIX_PROFILE + ":<fault>`) | " + " | ".join(kinds) + " |",
        "|---|" + "---|" * len(kinds),
    ]
    for fault in FAULTS:
        cells = [FAULT_MATRIX[kind][fault] for kind in kinds]
        lines.append(f"| `{fault}` | " + " | ".join(cells) + " |")
    lines.append("")
    profiles = list(next(iter(PROFILE_MATRIX.values())))
    lines.append("| healthy profile | " + " | ".join(kinds) + " |")
    lines.append("|---|" + "---|" * len(kinds))
    for profile in profiles:
        cells = [PROFILE_MATRIX[kind][profile] for kind in kinds]
        lines.append(f"| `{profile}` | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def render_amd_markdown() -> str:
    """The AMD fault matrix as docs/simulated-gpu.md carries it ("On AMD profiles")."""
    kinds = list(AMD_FAULT_MATRIX)
    lines = [
        "| fault (`" + AMD_MATRIX_PROFILE + ":<fault>`) | " + " | ".join(kinds) + " |",
        "|---|" + "---|" * len(kinds),
    ]
    for fault in FAULTS:
        cells = [AMD_FAULT_MATRIX[kind][fault] for kind in kinds]
        lines.append(f"| `{fault}` | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def render_fabric_markdown() -> str:
    """The fabric runners' fault table, as docs/simulated-gpu.md carries it."""
    kinds = list(FABRIC_FAULT_MATRIX)
    lines = [
        "| fault | " + " | ".join(kinds) + " |",
        "|---|" + "---|" * len(kinds),
    ]
    for fault in FABRIC_FAULTS:
        cells = [FABRIC_FAULT_MATRIX[kind][fault] for kind in kinds]
        lines.append(f"| `{fault}` | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def render_link_markdown() -> str:
    """The link runners' fault table, as docs/simulated-kubelet.md carries it."""
    kinds = list(LINK_FAULT_MATRIX)
    lines = [
        "| fault | " + " | ".join(kinds) + " |",
        "|---|" + "---|" * len(kinds),
    ]
    for fault in LINK_FAULTS:
        cells = [LINK_FAULT_MATRIX[kind][fault] for kind in kinds]
        lines.append(f"| `{fault}` | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def render_stories_markdown() -> str:
    """What each fault models, and what catches it, as docs/simulated-gpu.md carries it."""
    lines = ["| fault | what it models | what catches it |", "|---|---|---|"]
    for fault, story in FAULT_STORIES.items():
        lines.append(f"| `{fault}` | {story.models} | {story.caught_by} |")
    return "\n".join(lines) + "\n"


def render_evidence_markdown() -> str:
    """The evidence table, as docs/simulated-gpu.md carries it."""
    lines = [
        "| fault | runner (part) | a threshold that catches it |",
        "|---|---|---|",
    ]
    for fault, entries in FAULT_EVIDENCE.items():
        for e in entries:
            extra = "".join(f", `{k}={v}`" for k, v in e.env)
            lines.append(
                f"| `{fault}` | {e.kind} (`{e.sim}`{extra}) | "
                f'`{{metric: {e.metric}, comparison: {e.comparison}, value: "{e.value}"}}` |'
            )
    return "\n".join(lines) + "\n"


def fault_matrix_for(sim: str) -> dict[str, dict[str, str]]:
    """The Node fault table of a ``--sim`` profile (``h200x2``, ``mi300xx2@cx7``): the
    AMD table on an AMD part, the NVIDIA one otherwise."""
    key = sim.partition(":")[0].partition("@")[0]
    base = key.rstrip("0123456789")
    amd = key in AMD_PROFILES or (base.endswith("x") and base[:-1] in AMD_PROFILES)
    return AMD_FAULT_MATRIX if amd else FAULT_MATRIX

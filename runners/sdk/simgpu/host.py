"""Simulated host sources: the kernel log, sysfs and ``dcgmi diag``.

The kernel log holds ordinary boot noise plus the Xid lines the faults imply; sysfs holds
the GPUs' PCI functions and two NICs (one Ethernet, one InfiniBand) with quiet counters;
``dcgmi`` answers with a diagnostic document in the current JSON layout whose tests
depend on the run level and the faults (see docs/simulated-gpu.md); on a part DCGM does
not list for its CUDA-backed plugins (GB10) those plugins report ``Skip`` with no
reason, as measured on that part, unless ``-p <plugin>.is_allowed=true`` enables them.
"""

from __future__ import annotations

import json

from runners.sdk.protocols import ToolResult
from runners.sdk.simgpu.load_faults import POWER_BRAKE_FAULT, THERMAL_THROTTLE_FAULT
from runners.sdk.simgpu.nvml import SIM_DRIVER_VERSION, pci_bus_id
from runners.sdk.simgpu.spec import NVLINK_DOWN_FAULT, PCIE_DOWNTRAIN_FAULT
from runners.sdk.simgpu.state import SimState

_XID_TEXT = {
    13: "Graphics SM Warp Exception",
    31: "Ch 00000008, intr 10000000. MMU Fault",
    48: "An uncorrectable double bit error (DBE) has been detected on GPU",
    63: "Row remapping pending",
    79: "GPU has fallen off the bus.",
    94: "Contained ECC error",
    95: "Uncontained ECC error",
}


def xid_line(*, seq: int, bus_id: str, code: int) -> str:
    short = bus_id.split(":", 1)[1].lower()
    text = _XID_TEXT.get(code, "simulated Xid")
    return f"3,{seq},{seq * 1000},-;NVRM: Xid (PCI:{short}): {code}, pid=4242, name=python, {text}"


class SimKmsg:
    """Backlog first; fault Xids arrive once the window has started (virtual time)."""

    def __init__(self, state: SimState) -> None:
        self._state = state
        self._opened_at = state.clock.monotonic()
        self._backlog_read = False
        self._pending = list(state.spec.xid_codes)
        bus = pci_bus_id(state.spec.faulty_index)
        self._bus = bus
        self._backlog = [
            "6,1,100,-;Linux version 6.8.0-sim (glimmer simulated kernel log)",
            "6,2,200,-;nvidia: loading out-of-tree module taints kernel.",
        ]
        if state.spec.has("fallen-off-bus"):
            self._backlog.append(xid_line(seq=3, bus_id=bus, code=79))

    def drain(self) -> list[str]:
        lines: list[str] = []
        if not self._backlog_read:
            self._backlog_read = True
            lines.extend(self._backlog)
        if self._pending and self._state.clock.monotonic() - self._opened_at >= 0.5:
            for offset, code in enumerate(self._pending):
                lines.append(xid_line(seq=100 + offset, bus_id=self._bus, code=code))
            self._pending.clear()
        return lines

    def dropped(self) -> int:
        return 0

    def close(self) -> None:
        return None


#: sysfs's ``*_link_speed`` text per PCIe generation.
_PCIE_SPEED = {
    1: "2.5 GT/s PCIe",
    2: "5.0 GT/s PCIe",
    3: "8.0 GT/s PCIe",
    4: "16.0 GT/s PCIe",
    5: "32.0 GT/s PCIe",
    6: "64.0 GT/s PCIe",
}


class SimSysfs:
    """An in-memory sysfs tree (paths relative to /sys)."""

    def __init__(self, state: SimState) -> None:
        profile = state.spec.profile
        files: dict[str, str] = {}
        links: dict[str, str] = {}
        for index in range(state.spec.count):
            bdf = pci_bus_id(index)[4:].lower()
            base = f"bus/pci/devices/{bdf}"
            files[f"{base}/vendor"] = "0x10de"
            files[f"{base}/device"] = f"0x{profile.pci_device_id:04x}"
            files[f"{base}/class"] = "0x030200"
            links[f"{base}/driver"] = "../../../bus/pci/drivers/nvidia"
            # pcie-downtrain: trained one generation down at half the lanes.
            down = 1 if state.fault_on(PCIE_DOWNTRAIN_FAULT, index) else 0
            generation = profile.pcie_generation
            files[f"{base}/current_link_speed"] = _PCIE_SPEED[generation - down]
            files[f"{base}/current_link_width"] = str(profile.pcie_width >> down)
            files[f"{base}/max_link_speed"] = _PCIE_SPEED[generation]
            files[f"{base}/max_link_width"] = str(profile.pcie_width)
        nics = {"eth0": "0000:c1:00.0", "ib0": "0000:c2:00.0"}
        for name, bdf in nics.items():
            base = f"class/net/{name}"
            files[f"{base}/address"] = f"02:42:ac:11:00:{len(files) % 256:02x}"
            files[f"{base}/operstate"] = "up"
            files[f"{base}/carrier_down_count"] = "1"
            files[f"{base}/device/vendor"] = "0x15b3"
            files[f"{base}/speed"] = "400000" if name == "ib0" else "100000"
            links[f"{base}/device/driver"] = "../../../bus/pci/drivers/mlx5_core"
            files[f"bus/pci/devices/{bdf}/vendor"] = "0x15b3"
            files[f"bus/pci/devices/{bdf}/device"] = "0x1021"
            files[f"bus/pci/devices/{bdf}/class"] = "0x020000"
        files["class/net/lo/address"] = "00:00:00:00:00:00"
        ib = "class/infiniband/mlx5_0"
        files[f"{ib}/node_guid"] = "b83f:d203:00a1:b2c4"
        files[f"{ib}/fw_ver"] = "28.43.1014"
        files[f"{ib}/board_id"] = "MT_0000000838"
        files[f"{ib}/hca_type"] = "MT4129"
        files[f"{ib}/ports/1/state"] = "4: ACTIVE"
        files[f"{ib}/ports/1/link_layer"] = state.spec.nic.link_layer
        files[f"{ib}/ports/1/rate"] = state.spec.nic.rate_text
        self._files = files
        self._links = links

    def read_text(self, path: str) -> str | None:
        return self._files.get(path.strip("/"))

    def list_dir(self, path: str) -> list[str] | None:
        prefix = path.strip("/") + "/"
        names = {
            path[len(prefix) :].split("/", 1)[0]
            for path in (*self._files, *self._links)
            if path.startswith(prefix)
        }
        return sorted(names) if names else None

    def link_name(self, path: str) -> str | None:
        target = self._links.get(path.strip("/"))
        return None if target is None else target.rsplit("/", 1)[-1]


#: Per level: (category, test name, the DCGM plugin that runs it).
_LEVEL_TESTS: dict[int, list[tuple[str, str, str]]] = {
    1: [
        ("Deployment", "Denylist", "software"),
        ("Deployment", "NVML Library", "software"),
        ("Deployment", "CUDA Main Library", "software"),
        ("Deployment", "Permissions and OS Blocks", "software"),
        ("Deployment", "Persistence Mode", "software"),
        ("Deployment", "Environment Variables", "software"),
        ("Deployment", "Page Retirement/Row Remap", "software"),
        ("Deployment", "Graphics Processes", "software"),
        ("Deployment", "Inforom", "software"),
    ],
    2: [("Integration", "PCIe", "pcie"), ("Hardware", "GPU Memory", "memory")],
    3: [
        ("Hardware", "Diagnostic", "diagnostic"),
        ("Stress", "Targeted Stress", "targeted_stress"),
        ("Stress", "Targeted Power", "targeted_power"),
        ("Stress", "Memory Bandwidth", "memory_bandwidth"),
    ],
    4: [("Hardware", "Memtest", "memtest"), ("Hardware", "Pulse Test", "pulse_test")],
}
#: Parts missing from DCGM's per-SKU allowlist: every plugin but ``software`` is gated.
_GATED_PARTS: frozenset[str] = frozenset({"gb10"})


def _allowed_plugins(parameters: str) -> frozenset[str]:
    """The plugins ``-p`` enables (``<plugin>.is_allowed=true`` clauses)."""
    allowed = set()
    for clause in parameters.split(";"):
        key, _, value = clause.strip().partition("=")
        plugin, _, parameter = key.strip().partition(".")
        if parameter == "is_allowed" and value.strip().lower() == "true":
            allowed.add(plugin.lower())
    return frozenset(allowed)


def _failing_tests(state: SimState) -> dict[str, str]:
    """Test name -> warning text for the faults a diagnostic at some level would see."""
    failing: dict[str, str] = {}
    spec = state.spec
    gpu = spec.faulty_index
    if spec.has("remap-pending"):
        failing["Page Retirement/Row Remap"] = f"GPU {gpu} has a pending row remap; reset the GPU"
    if spec.has("ecc-uncorrectable"):
        failing["GPU Memory"] = f"GPU {gpu} has 2 uncorrectable (DBE) memory errors"
    if spec.has("low-bandwidth"):
        failing["PCIe"] = f"GPU {gpu} host-to-device bandwidth 16.5 GB/s is below 25 GB/s"
        failing["Memory Bandwidth"] = f"GPU {gpu} memory bandwidth below the minimum"
    for code in spec.xid_codes:
        failing["PCIe"] = f"Detected XID {code} on GPU {gpu} during the test"
    if spec.has("nan-compute"):
        failing["Diagnostic"] = f"GPU {gpu} produced miscompares in the SM stress"
    if spec.has("low-clock"):
        failing["Targeted Power"] = f"GPU {gpu} did not reach its target power (clocks locked)"
    if spec.has(PCIE_DOWNTRAIN_FAULT):
        failing["PCIe"] = f"GPU {gpu} PCIe link is x8 Gen4; its maximum is x16 Gen5"
    if spec.has(NVLINK_DOWN_FAULT):
        failing["PCIe"] = f"GPU {gpu}'s NvLink link 5 is currently down"
    if spec.has(THERMAL_THROTTLE_FAULT):
        # The stress plugins run for minutes: long enough for the cooling to give out.
        failing["Targeted Stress"] = f"GPU {gpu} clocks throttled: HW thermal slowdown"
    if spec.has(POWER_BRAKE_FAULT):
        failing["Pulse Test"] = f"GPU {gpu} failed the pulse test: HW power brake engaged"
    return failing


class SimDcgmi:
    def __init__(self, state: SimState) -> None:
        self._state = state

    def diag(self, *, level: int, timeout_s: float, parameters: str = "") -> ToolResult:
        spec = self._state.spec
        self._state.clock.sleep(min(timeout_s, 30.0 * level))
        if spec.has("no-driver"):
            return ToolResult(1, "", "Error: unable to establish a connection to the host engine\n")
        if spec.has("fallen-off-bus"):
            doc: dict[str, object] = {
                "DCGM Diagnostic": {
                    "test_categories": [],
                    "runtime_error": f"GPU {spec.faulty_index} is lost: cannot run diagnostic",
                }
            }
            return ToolResult(226, json.dumps(doc), "")
        failing = _failing_tests(self._state)
        gated = spec.profile.key in _GATED_PARTS
        allowed = _allowed_plugins(parameters)
        categories: dict[str, list[dict[str, object]]] = {}
        any_fail = False
        for tier in range(1, level + 1):
            for category, name, plugin in _LEVEL_TESTS[tier]:
                skipped = gated and plugin != "software" and plugin not in allowed
                results = []
                for gpu in range(spec.count):
                    status, warnings = "Pass", []
                    if skipped:
                        status = "Skip"
                    elif name in failing and gpu == spec.faulty_index:
                        status = "Fail"
                        warnings = [
                            {
                                "warning": failing[name],
                                "error_id": 20,
                                "error_category": 1,
                                "error_severity": 2,
                            }
                        ]
                        any_fail = True
                    results.append(
                        {
                            "entity_group": "GPU",
                            "entity_group_id": 1,
                            "entity_id": gpu,
                            "status": status,
                            "warnings": warnings,
                        }
                    )
                summary = "Skip" if skipped else "Pass"
                if any(r["status"] == "Fail" for r in results):
                    summary = "Fail"
                categories.setdefault(category, []).append(
                    {"name": name, "results": results, "test_summary": {"status": summary}}
                )
        doc = {
            "DCGM Diagnostic": {
                "test_categories": [
                    {"category": category, "tests": tests} for category, tests in categories.items()
                ]
            },
            "entity_groups": [
                {
                    "entity_group": "GPU",
                    "entity_group_id": 1,
                    "entities": [
                        {"entity_id": gpu, "device_id": f"{spec.profile.pci_device_id:04x}"}
                        for gpu in range(spec.count)
                    ],
                }
            ],
            "metadata": {"version": "4.1.1", "Driver Version Detected": SIM_DRIVER_VERSION},
        }
        return ToolResult(226 if any_fail else 0, json.dumps(doc, indent=2), "")

"""fingerprint-probe: the identity of the node's accelerators, NICs and RDMA devices.

Burst-only; never exits 1 (it judges nothing). Exit 2 with ``FINGERPRINT_PROBE_SKIP`` when
sysfs is not mounted; exit 3 when NVIDIA GPUs are present but NVML cannot identify them
(a fingerprint without serials would later read as drift). On exit 0 it prints
``acceleratorCount`` (also when 0), identity lines, a JSON artifact, and no marker line.
"""

from __future__ import annotations

import hashlib
import json

from runners.fingerprint_probe.inventory import (
    ACCELERATOR_VENDORS,
    nic_identities,
    pci_functions,
    rdma_identities,
)
from runners.sdk.entry import RunnerContext
from runners.sdk.outcome import DeclaredSkip, Passed, RunnerError, Verdict
from runners.sdk.protocols import DriverUnavailableError


def _identity_line(kind: str, fields: dict[str, str]) -> str:
    return f"FINGERPRINT {kind} " + " ".join(f"{k}={v}" for k, v in fields.items())


#: The scheme word of ``hardwareIdentity`` (a new scheme never compares equal to an old).
IDENTITY_SCHEME = "hw1"


def hardware_identity(
    accelerators: list[str], gpus: list[dict[str, str]], rdma: list[dict[str, str]]
) -> str:
    """One word for the parts themselves: GPU UUIDs and serials, accelerator PCI addresses,
    RDMA GUIDs. Labels cannot see a like-for-like swap (same model, count, memory,
    driver); this changes with it."""
    parts = sorted(f"pci={a}" for a in accelerators)
    parts += sorted(f"gpu={g.get('uuid', '')}/{g.get('serial', '')}" for g in gpus)
    parts += sorted(f"rdma={r.get('node_guid', '')}" for r in rdma)
    digest = hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]
    return f"{IDENTITY_SCHEME}:{digest}"


def measure(ctx: RunnerContext) -> Verdict:
    report = ctx.report
    platform = ctx.platform()
    functions = pci_functions(platform.sysfs)
    if functions is None:
        raise DeclaredSkip("sysfs is not mounted (no /sys/bus/pci/devices)")
    accelerators = [f for f in functions if f.is_accelerator]
    gpus: list[dict[str, str]] = []
    if any(f.vendor == "0x10de" for f in accelerators):
        try:
            nvml = platform.nvml()
            driver = nvml.driver_version()
            for index in range(nvml.device_count()):
                device = nvml.device(index)
                gpus.append(
                    {
                        "index": str(index),
                        "name": device.name(),
                        "uuid": device.uuid(),
                        "serial": device.serial(),
                        "boardPartNumber": device.board_part_number(),
                        "vbios": device.vbios_version(),
                        "pciBusId": device.pci_bus_id(),
                        "driver": driver,
                    }
                )
        except DriverUnavailableError as error:
            raise RunnerError(
                f"NVIDIA GPUs present but NVML cannot identify them: {error}"
            ) from None
    nics = nic_identities(platform.sysfs)
    rdma = rdma_identities(platform.sysfs)
    for gpu in gpus:
        report.note(_identity_line("gpu", gpu))
    for nic in nics:
        report.note(_identity_line("nic", nic))
    for rdma_device in rdma:
        report.note(_identity_line("rdma", rdma_device))
    report.artifact(
        name="fingerprint.json",
        media_type="application/json",
        payload=json.dumps({"gpus": gpus, "nics": nics, "rdma": rdma}, indent=2, sort_keys=True),
    )
    report.metric("acceleratorCount", len(accelerators))
    report.metric(
        "hardwareIdentity", hardware_identity([f.address for f in accelerators], gpus, rdma)
    )
    if gpus:
        report.metric("gpuUuids", ",".join(g["uuid"] for g in gpus))
    if accelerators:
        report.metric("pciAddresses", ",".join(f.address for f in accelerators))
        report.metric("pciVendorIds", ",".join(f.vendor for f in accelerators))
        report.metric("pciDeviceIds", ",".join(f.device for f in accelerators))
        vendors = sorted({ACCELERATOR_VENDORS.get(f.vendor, f.vendor) for f in accelerators})
        report.metric("acceleratorVendors", ",".join(vendors))
        drivers = sorted({f.driver for f in accelerators if f.driver})
        if drivers:
            report.metric("acceleratorDrivers", ",".join(drivers))
    if gpus:
        report.metric("driverVersion", gpus[0]["driver"])
        report.metric("gpuName", gpus[0]["name"])
    report.metric("nicCount", len(nics))
    report.metric("rdmaDeviceCount", len(rdma))
    return Passed()

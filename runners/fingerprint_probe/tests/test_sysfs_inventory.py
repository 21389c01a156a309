"""Inventory read from a real directory tree laid out like sysfs."""

from __future__ import annotations

import os
from pathlib import Path

from runners.fingerprint_probe.inventory import nic_identities, pci_functions, rdma_identities
from runners.sdk.platform import open_platform
from runners.sdk.protocols import Sysfs


def host_sysfs(root: Path) -> Sysfs:
    """The host's sysfs reader, rooted at ``root``, as the platform choice gives it."""
    return open_platform({"BURNIN_SYSFS_ROOT": str(root)}).sysfs


def pci(
    root: Path, address: str, *, vendor: str, device: str, cls: str, driver: str | None
) -> None:
    base = root / "bus/pci/devices" / address
    base.mkdir(parents=True)
    (base / "vendor").write_text(vendor + "\n")
    (base / "device").write_text(device + "\n")
    (base / "class").write_text(cls + "\n")
    if driver:
        (root / "bus/pci/drivers" / driver).mkdir(parents=True, exist_ok=True)
        os.symlink(f"../../../bus/pci/drivers/{driver}", base / "driver")


def test_accelerators_are_counted_from_pci_class_and_vendor(tmp_path: Path) -> None:
    pci(tmp_path, "0000:18:00.0", vendor="0x10de", device="0x2335", cls="0x030200", driver="nvidia")
    pci(tmp_path, "0000:03:00.0", vendor="0x1a03", device="0x2000", cls="0x030000", driver="ast")
    pci(tmp_path, "0000:c1:00.0", vendor="0x15b3", device="0x1021", cls="0x020000", driver=None)
    functions = pci_functions(host_sysfs(tmp_path))
    assert functions is not None
    accelerators = [f for f in functions if f.is_accelerator]
    assert [(f.address, f.driver) for f in accelerators] == [("0000:18:00.0", "nvidia")]


def test_unmounted_sysfs_is_reported_as_absent_not_empty(tmp_path: Path) -> None:
    assert pci_functions(host_sysfs(tmp_path / "nothing")) is None


def test_nics_without_hardware_are_ignored_and_rdma_guids_are_read(tmp_path: Path) -> None:
    (tmp_path / "class/net/lo").mkdir(parents=True)
    eth = tmp_path / "class/net/eth0"
    (eth / "device").mkdir(parents=True)
    (eth / "device/vendor").write_text("0x15b3\n")
    (eth / "address").write_text("aa:bb:cc:dd:ee:ff\n")
    ib = tmp_path / "class/infiniband/mlx5_0"
    ib.mkdir(parents=True)
    (ib / "node_guid").write_text("b83f:d203:00a1:b2c4\n")
    (ib / "fw_ver").write_text("28.43.1014\n")
    sysfs = host_sysfs(tmp_path)
    assert nic_identities(sysfs) == [{"name": "eth0", "mac": "aa:bb:cc:dd:ee:ff"}]
    assert rdma_identities(sysfs) == [
        {"name": "mlx5_0", "node_guid": "b83f:d203:00a1:b2c4", "fw_ver": "28.43.1014"}
    ]


def test_hardware_identity_changes_with_a_like_for_like_gpu_swap() -> None:
    """Same model, count and driver; one GPU's UUID and serial differ: the identity moves,
    and it does not depend on the order the parts were listed in."""
    from runners.fingerprint_probe.runner import hardware_identity

    gpus = [{"uuid": f"GPU-{i}", "serial": f"S{i}", "name": "H200"} for i in range(8)]
    pci = [f"0000:{i:02x}:00.0" for i in range(8)]
    before = hardware_identity(pci, gpus, [])
    assert before == hardware_identity(list(reversed(pci)), list(reversed(gpus)), [])
    swapped = [*gpus[:7], {"uuid": "GPU-new", "serial": "S-new", "name": "H200"}]
    assert hardware_identity(pci, swapped, []) != before
    assert before.startswith("hw1:")

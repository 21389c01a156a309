"""The vendor rule (``runners/sdk/vendor.py``): the AMD or NVIDIA backend is chosen only
on evidence, and a node of undetermined vendor is Error, never NVIDIA's path."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from glimmer.contract import read_report
from runners.sdk.platform import SIM_ENV, open_platform
from runners.sdk.protocols import DriverUnavailableError, VendorUndeterminedError
from runners.sdk.silicon.amd_smi import AmdSmiLibrary
from runners.sdk.vendor import VENDOR_ENV, settle_vendor


def pci_function(root: Path, address: str, *, vendor: str, klass: str) -> None:
    base = root / "bus/pci/devices" / address
    base.mkdir(parents=True)
    (base / "vendor").write_text(vendor + "\n")
    (base / "class").write_text(klass + "\n")


def silicon_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    (tmp_path / "sys").mkdir(exist_ok=True)
    (tmp_path / "dev").mkdir(exist_ok=True)
    return {
        "BURNIN_SYSFS_ROOT": str(tmp_path / "sys"),
        "BURNIN_DEV_ROOT": str(tmp_path / "dev"),
        **extra,
    }


def test_K_vendor_undetermined_node_is_error_never_the_nvidia_path(tmp_path: Path) -> None:
    """No declaration, no GPU on PCI, no vendor device node: every GPU source refuses
    with VendorUndeterminedError naming what was looked at; NVML is never opened."""
    platform = open_platform(silicon_env(tmp_path))
    with pytest.raises(VendorUndeterminedError, match="cannot determine this node's GPU vendor"):
        platform.nvml()
    with pytest.raises(VendorUndeterminedError, match=VENDOR_ENV):
        platform.compute()


def test_K_vendor_undetermined_runner_exits_3_naming_it(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BURNIN_", "GLIMMER_"))}
    env.update(silicon_env(tmp_path))
    done = subprocess.run(
        [sys.executable, "-m", "runners.clockprobe"], capture_output=True, env=env, check=False
    )
    report = read_report(done.stdout, kind="clockprobe", exit_code=done.returncode)
    assert done.returncode == 3
    assert report.message.startswith("CLOCKPROBE_ERROR: cannot determine this node's GPU vendor")


def test_K_amd_pci_function_selects_the_amd_backend(tmp_path: Path) -> None:
    """An Instinct part (vendor 0x1002, class 0x12) and no declaration: the AMD backend
    opens (here it finds no amdsmi installed) — NVML is not tried."""
    env = silicon_env(tmp_path)
    pci_function(tmp_path / "sys", "0000:05:00.0", vendor="0x1002", klass="0x120000")
    platform = open_platform(env)
    assert platform.vendor() == "amd"
    with pytest.raises(DriverUnavailableError, match="amdsmi"):
        platform.nvml()


def test_K_amd_cpu_and_chipset_functions_are_not_gpus(tmp_path: Path) -> None:
    """0x1022 is AMD's CPU/chipset id (every EPYC host, and its on-die accelerators such
    as an NPU): even in an accelerator class it is no evidence of an AMD GPU."""
    env = silicon_env(tmp_path)
    pci_function(tmp_path / "sys", "0000:00:00.0", vendor="0x1022", klass="0x060000")
    pci_function(tmp_path / "sys", "0000:c4:00.1", vendor="0x1022", klass="0x120000")
    pci_function(tmp_path / "sys", "0000:3b:00.0", vendor="0x10de", klass="0x030200")
    assert open_platform(env).vendor() == "nvidia"


def test_K_kfd_device_node_alone_selects_amd(tmp_path: Path) -> None:
    env = silicon_env(tmp_path)
    (tmp_path / "dev" / "kfd").write_text("")
    assert open_platform(env).vendor() == "amd"


def test_K_declaration_contradicted_by_the_node_is_refused(tmp_path: Path) -> None:
    """An image that says nvidia on a node whose GPUs are all AMD must not read them."""
    env = silicon_env(tmp_path, **{VENDOR_ENV: "nvidia"})
    pci_function(tmp_path / "sys", "0000:05:00.0", vendor="0x1002", klass="0x120000")
    platform = open_platform(env)
    with pytest.raises(VendorUndeterminedError, match=r"BURNIN_GPU_VENDOR=nvidia but .* amd"):
        platform.nvml()


def test_K_both_vendors_without_a_declaration_is_refused_and_a_declaration_settles_it(
    tmp_path: Path,
) -> None:
    pci_function(tmp_path / "sys", "0000:05:00.0", vendor="0x1002", klass="0x030000")
    pci_function(tmp_path / "sys", "0000:3b:00.0", vendor="0x10de", klass="0x030200")
    with pytest.raises(VendorUndeterminedError, match="several vendors"):
        open_platform(silicon_env(tmp_path)).vendor()
    declared = open_platform(silicon_env(tmp_path, **{VENDOR_ENV: "amd"}))
    assert declared.vendor() == "amd"


def test_K_unknown_vendor_word_is_refused(tmp_path: Path) -> None:
    platform = open_platform(silicon_env(tmp_path, **{VENDOR_ENV: "intel"}))
    with pytest.raises(VendorUndeterminedError, match="names no GPU backend"):
        platform.vendor()


def test_K_simulated_nvidia_node_declared_amd_is_refused() -> None:
    """The ROCm image (BURNIN_GPU_VENDOR=amd) on a simulated H200: refused, never run."""
    platform = open_platform({SIM_ENV: "h200", VENDOR_ENV: "amd"})
    with pytest.raises(VendorUndeterminedError, match=r"h200|nvidia"):
        platform.nvml()


@pytest.mark.parametrize("profile", ["mi300x", "mi325x"])
def test_K_simulated_amd_node_reads_through_the_amdsmi_adapter(profile: str) -> None:
    platform = open_platform({SIM_ENV: f"{profile}x2"})
    assert platform.vendor() == "amd" and platform.provenance == "sim"
    library = platform.nvml()
    assert isinstance(library, AmdSmiLibrary) and library.device_count() == 2
    assert "AMD Instinct" in library.device(1).name()


def test_K_host_runners_never_settle_a_vendor(tmp_path: Path) -> None:
    """Host-only sources (sysfs, kernel log, fabric) work on a node of unknown vendor."""
    platform = open_platform(silicon_env(tmp_path))
    assert platform.sysfs.list_dir("bus/pci/devices") is None
    platform.fabric()


@pytest.mark.parametrize(
    ("declared", "seen", "expected"),
    [
        (None, {"pci": {"amd"}, "/dev": set()}, "amd"),
        (None, {"pci": set(), "/dev": {"nvidia"}}, "nvidia"),
        ("amd", {"pci": {"amd", "nvidia"}, "/dev": set()}, "amd"),
        ("nvidia", {"pci": set(), "/dev": set()}, "nvidia"),
    ],
)
def test_K_settle_vendor_table(
    declared: str | None, seen: dict[str, set[str]], expected: str
) -> None:
    assert settle_vendor(declared=declared, seen=seen) == expected


def test_K_a_platform_assembled_without_a_vendor_refuses_to_name_one(tmp_path: Path) -> None:
    """The NVIDIA silicon assembler names no vendor itself (the platform choice does):
    on its own, its ``vendor()`` refuses rather than defaulting to NVIDIA."""
    from runners.sdk.silicon.platform import open_silicon

    with pytest.raises(VendorUndeterminedError, match="without a GPU vendor"):
        open_silicon(silicon_env(tmp_path)).vendor()


def test_K_a_settled_vendor_without_a_backend_is_refused(tmp_path: Path) -> None:
    """Defence behind the rule: a vendor the node's backends do not cover is refused
    (exit 3), never handed to another vendor's backend."""
    from runners.sdk import platform as chooser

    base = open_platform(silicon_env(tmp_path))
    guarded = chooser._vendor_guarded(
        base=base, backends={"nvidia": lambda: base}, settle=lambda: "amd"
    )
    with pytest.raises(VendorUndeterminedError, match="no amd GPU backend"):
        guarded.nvml()

"""What the bare-host dispatcher knows about the machine it runs on.

The host probe (rule N8) learns the host's accelerators the way the operator learns a
node's, but from the machine itself, since no node feature discovery labelled it: the
GPU-class PCI functions of accelerator vendors in sysfs, then each vendor's tool where
one is installed (``nvidia-smi``, ``amd-smi`` or else ``rocm-smi``) for the count and the
product. A vendor whose tool is absent or does not answer is counted from PCI with the
product unknown. The result is an :class:`~glimmer.api.fingerprint.Observation`, the
type the NodeFingerprint controller builds from a Node, digested by the same function
(K4), and its first GPU's vendor is what image resolution is fed (E14), as a captured
fingerprint's ``status.gpus[0].vendor`` is in a cluster.

Fail closed: what was not seen is not there. An unreadable sysfs and no tool is a host
with no known GPU (resolved as the operator resolves an unlabelled node); a vendor is
never inferred from anything but a function or a tool that names it. Under ``--sim`` the
probe reads the simulated GPU through the runners' own platform choice (the sysfs and
the management library the runners will see), marks the observation with the simulated
profile, and says so: a simulated probe describes no silicon.

Every source is injectable (:class:`HostSources`), so tests probe a fake sysfs tree and
fake tools; :func:`this_host` probes once per process.
"""

from __future__ import annotations

import csv
import ipaddress
import json
import os
import platform
import shutil
import socket
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from glimmer.api.fingerprint import GPU, Observation, digest, first_gpu_vendor
from glimmer.contract import SIM_GPU_ENV
from runners.sdk.outcome import RunnerError
from runners.sdk.platform import open_platform
from runners.sdk.protocols import Nvml, Sysfs

__all__ = [
    "ACCELERATOR_KINDS",
    "PCI_ACCELERATOR_VENDORS",
    "SIMULATED_GPU_LABEL",
    "DirectorySysfs",
    "HostProbe",
    "HostSources",
    "PciAccelerator",
    "digest",
    "gpu_present",
    "is_accelerator",
    "node_name",
    "pci_accelerators",
    "primary_address",
    "probe_host",
    "this_host",
]

#: Kinds that need an accelerator; without one (and without ``--sim``) a run of them
#: is refused up front instead of producing a column of Errors.
ACCELERATOR_KINDS: Final[frozenset[str]] = frozenset(
    {
        "compute-smoke",
        "gemm-sweep",
        "clockprobe",
        "thermal-soak",
        "gpu-burn",
        "memory-bw",
        "dcgm-diag",
        "nccl",
        "gpudirect-rdma",
        "host-health",
    }
)


def node_name() -> str:
    return os.environ.get("NODE_NAME") or socket.gethostname()


#: Documentation addresses (RFC 5737 / 3849): a UDP connect to one picks the source
#: address of the default route and sends nothing.
_ROUTE_PROBES: Final = (
    (socket.AF_INET, ("192.0.2.1", 9)),
    (socket.AF_INET6, ("2001:db8::1", 9)),
)


def primary_address() -> str | None:
    """The host's primary address (the default route's source), as the kubelet reports
    ``status.hostIP``; None when the host has no route off itself (N2: then refuse)."""
    for family, target in _ROUTE_PROBES:
        try:
            with socket.socket(family, socket.SOCK_DGRAM) as probe:
                probe.connect(target)
                address = str(probe.getsockname()[0])
        except OSError:
            continue
        parsed = ipaddress.ip_address(address.split("%", maxsplit=1)[0])
        if not (parsed.is_unspecified or parsed.is_loopback):
            return address
    return None


def gpu_present() -> bool:
    """An NVIDIA or AMD (ROCm ``/dev/kfd``) driver node, or its tool; cheap, no library
    import. Which vendor it is the runners settle themselves (runners/sdk/vendor.py)."""
    return (
        Path("/dev/nvidia0").exists()
        or Path("/dev/kfd").exists()
        or shutil.which("amd-smi") is not None
        or Path("/proc/driver/nvidia/version").exists()
        or shutil.which("nvidia-smi") is not None
    )


# --- the host probe (N8) ----------------------------------------------------------------

#: PCI vendor ids of accelerator makers and the fingerprint's vendor word for each
#: (0x1022, AMD's CPU and chipset id, is deliberately absent: every EPYC host has it).
PCI_ACCELERATOR_VENDORS: Final[Mapping[str, str]] = {
    "0x10de": "nvidia",
    "0x1002": "amd",
    "0x8086": "intel",
}
#: A simulated probe's mark in its observation (the simulated kubelet labels its nodes
#: with the same name): its digest can then never be a silicon host's.
SIMULATED_GPU_LABEL: Final = "sim.glimmer.dev/simulated-gpu"
#: How long a vendor tool may take before it counts as not answering.
TOOL_SECONDS: Final = 15.0
_NVIDIA_QUERY: Final = (
    "nvidia-smi",
    "--query-gpu=index,pci.bus_id,name,memory.total,driver_version",
    "--format=csv,noheader,nounits",
)
_AMD_SMI_QUERY: Final = ("amd-smi", "static", "--asic", "--json")
_ROCM_SMI_QUERY: Final = ("rocm-smi", "--showproductname", "--json")
#: ``platform.machine()`` as the kubelet's ``kubernetes.io/arch`` label spells it.
_GO_ARCH: Final[Mapping[str, str]] = {
    "x86_64": "amd64",
    "amd64": "amd64",
    "aarch64": "arm64",
    "arm64": "arm64",
    "ppc64le": "ppc64le",
    "s390x": "s390x",
}


class DirectorySysfs:
    """A sysfs tree under ``root`` (``/sys``; a fake tree in tests), read like the
    runners' ``Sysfs``: paths relative to the root, None for what cannot be read."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def read_text(self, path: str) -> str | None:
        try:
            return (self.root / path).read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            return None

    def list_dir(self, path: str) -> list[str] | None:
        try:
            return sorted(entry.name for entry in (self.root / path).iterdir())
        except OSError:
            return None

    def link_name(self, path: str) -> str | None:
        try:
            return os.readlink(self.root / path).rsplit("/", 1)[-1]
        except OSError:
            return None


def run_tool(argv: Sequence[str]) -> str | None:
    """A vendor tool's stdout, or None when it fails, times out or cannot start."""
    try:
        done = subprocess.run(
            list(argv),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=TOOL_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return None
    return done.stdout if done.returncode == 0 else None


@dataclass(frozen=True)
class HostSources:
    """Where the probe reads the host (each a seam a test replaces)."""

    sysfs: Sysfs = field(default_factory=lambda: DirectorySysfs(Path("/sys")))
    os_release: Path = Path("/etc/os-release")
    #: Finds a vendor tool on PATH (``shutil.which``).
    which: Callable[[str], str | None] = shutil.which
    #: Runs a tool found by ``which``: its stdout, or None when it did not answer.
    run: Callable[[Sequence[str]], str | None] = run_tool
    kernel: Callable[[], str] = platform.release
    machine: Callable[[], str] = platform.machine


@dataclass(frozen=True)
class PciAccelerator:
    address: str
    vendor: str
    device: str


def is_accelerator(*, vendor: str, pci_class: str) -> bool:
    """A GPU-class function of an accelerator vendor: a processing accelerator (class
    0x12, what Instinct parts report) or a display controller (0x03). For Intel only the
    3D (0x0302) and other-display (0x0380) controllers of its data-centre GPUs: an Intel
    VGA function (0x0300) is the integrated graphics most Intel hosts carry, and counting
    it would give an NVIDIA host a second vendor."""
    if vendor not in PCI_ACCELERATOR_VENDORS:
        return False
    if pci_class.startswith("0x12"):
        return True
    if vendor == "0x8086":
        return pci_class.startswith(("0x0302", "0x0380"))
    return pci_class.startswith("0x03")


def pci_accelerators(sysfs: Sysfs) -> list[PciAccelerator] | None:
    """The accelerator functions in ``bus/pci/devices``, or None when it cannot be read."""
    addresses = sysfs.list_dir("bus/pci/devices")
    if addresses is None:
        return None
    found = []
    for address in addresses:
        base = f"bus/pci/devices/{address}"
        vendor = (sysfs.read_text(f"{base}/vendor") or "").strip().lower()
        pci_class = (sysfs.read_text(f"{base}/class") or "").strip().lower()
        if is_accelerator(vendor=vendor, pci_class=pci_class):
            device = (sysfs.read_text(f"{base}/device") or "").strip().lower()
            found.append(
                PciAccelerator(
                    address=_address(address), vendor=PCI_ACCELERATOR_VENDORS[vendor], device=device
                )
            )
    return found


def _address(bus_id: str) -> str:
    """A PCI address as sysfs names it: NVML's ``00000000:18:00.0`` is ``0000:18:00.0``."""
    text = bus_id.strip().lower()
    domain, colon, rest = text.partition(":")
    return f"{domain[-4:].rjust(4, '0')}:{rest}" if colon and rest.count(":") == 1 else text


@dataclass(frozen=True)
class ToolGPU:
    """One GPU as a vendor tool lists it."""

    address: str = ""
    model: str = ""
    memory_bytes: int | None = None
    driver_version: str = ""


@dataclass(frozen=True)
class HostProbe:
    """What the probe saw: the observation the digest covers, where each GPU sits, what
    answered and what did not, and the simulated profile when it is the simulator's."""

    observation: Observation
    #: Each GPU's PCI address, in the observation's order ("" where no source gave one).
    addresses: tuple[str, ...] = ()
    #: What answered: ``sysfs``, ``nvidia-smi``, ``amd-smi``, ``rocm-smi``, ``simulated``.
    sources: tuple[str, ...] = ()
    #: What could not be read, or disagreed, one line each.
    notes: tuple[str, ...] = ()
    #: The ``--sim`` profile this probe describes; None for the machine itself.
    simulated: str | None = None

    @property
    def vendor(self) -> str | None:
        """The vendor image resolution is fed (E14): the first GPU's, None if none."""
        return first_gpu_vendor(self.observation)

    @property
    def digest(self) -> str:
        """K4's digest of the observation, as the NodeFingerprint controller computes it."""
        return digest(self.observation)

    def summary(self) -> str:
        """One line: ``8 nvidia GPUs (NVIDIA H200) from sysfs, nvidia-smi``."""
        gpus = self.observation.gpus
        if not gpus:
            what = "no accelerator found"
        else:
            counts: dict[tuple[str, str], int] = {}
            for gpu in gpus:
                key = (gpu.vendor, gpu.model or "product unknown")
                counts[key] = counts.get(key, 0) + 1
            what = "; ".join(
                f"{n} {vendor} GPU{'s' if n != 1 else ''} ({model})"
                for (vendor, model), n in counts.items()
            )
        where = f" from {', '.join(self.sources)}" if self.sources else ""
        mark = f" [SIMULATED GPU {self.simulated}: no silicon]" if self.simulated else ""
        return f"{what}{where}{mark}"

    def to_json(self) -> dict[str, Any]:
        """``run.json``'s ``host``: the fingerprint as a NodeFingerprint status holds it,
        its digest, and how it was learned."""
        return {
            "simulated": self.simulated is not None,
            "simulatedGpu": self.simulated,
            "vendor": self.vendor,
            "sources": list(self.sources),
            "notes": list(self.notes),
            "pciAddresses": list(self.addresses),
            "fingerprint": {**self.observation.status_fields(), "digest": self.digest},
        }


def probe_host(*, sim: str | None = None, sources: HostSources | None = None) -> HostProbe:
    """The host's accelerators, OS and kernel (N8); ``sim``: the simulated GPU's."""
    sources = sources or HostSources()
    labels = {"kubernetes.io/arch": _GO_ARCH.get(sources.machine(), sources.machine())}
    notes: list[str] = []
    if sim:
        labels[SIMULATED_GPU_LABEL] = sim
        gpus, addresses, answered = _simulated_gpus(sim, notes)
    else:
        gpus, addresses, answered = _host_gpus(sources, notes)
    observation = Observation(
        os_image=_os_image(sources.os_release),
        kernel=_text(sources.kernel),
        labels=labels,
        gpus=gpus,
    )
    return HostProbe(
        observation=observation,
        addresses=addresses,
        sources=answered,
        notes=tuple(notes),
        simulated=sim or None,
    )


_PROBES: dict[str | None, HostProbe] = {}
#: The sources :func:`this_host` reads (tests point them at a fake tree).
HOST_SOURCES = HostSources()


def this_host(sim: str | None = None) -> HostProbe:
    """The probe of the host ``glimmer run`` runs on (or of ``--sim``'s GPU), taken once
    per process: the plan shown, the images resolved and the fingerprint recorded all
    describe the same look."""
    if sim not in _PROBES:
        _PROBES[sim] = probe_host(sim=sim, sources=HOST_SOURCES)
    return _PROBES[sim]


def _os_image(path: Path) -> str:
    """``PRETTY_NAME`` of os-release, as the kubelet reports ``osImage``."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() == "PRETTY_NAME":
            return value.strip().strip("\"'")
    return ""


def _text(read: Callable[[], str]) -> str:
    try:
        return read().strip()
    except OSError:
        return ""


_Found = tuple[tuple[GPU, ...], tuple[str, ...], tuple[str, ...]]


def _host_gpus(sources: HostSources, notes: list[str]) -> _Found:
    pci = pci_accelerators(sources.sysfs)
    answered: list[str] = []
    unreadable = pci is None
    if pci is None:
        notes.append("sysfs bus/pci/devices cannot be read: PCI accelerators unknown")
        pci = []
    else:
        answered.append("sysfs")
    on_pci: dict[str, list[str]] = {}
    for function in pci:
        on_pci.setdefault(function.vendor, []).append(function.address)
    listed: dict[str, list[ToolGPU]] = {}
    for vendor, tools in (("nvidia", (_nvidia_smi,)), ("amd", (_amd_smi, _rocm_smi))):
        for tool in tools:
            name, found = tool(sources)
            if found is None:
                if name and (vendor in on_pci or unreadable):
                    notes.append(f"{name} did not answer")
                continue
            answered.append(name)
            if found:
                listed[vendor] = found
            break
    entries: list[tuple[str, str, ToolGPU]] = []
    for vendor in sorted(set(on_pci) | set(listed)):
        addresses = on_pci.get(vendor, [])
        if vendor in listed:
            tool_gpus = listed[vendor]
            if addresses and len(addresses) != len(tool_gpus):
                notes.append(
                    f"{len(tool_gpus)} {vendor} GPUs listed by its tool, "
                    f"{len(addresses)} {vendor} functions on PCI"
                )
            entries += [(vendor, g.address, g) for g in tool_gpus]
        else:
            notes.append(f"{vendor} GPUs counted from PCI: product unknown")
            entries += [(vendor, address, ToolGPU(address=address)) for address in addresses]
    return _ordered(entries, answered)


def _ordered(entries: Iterable[tuple[str, str, ToolGPU]], answered: Sequence[str]) -> _Found:
    """GPUs in the operator's order (by vendor, then by address), indexed from 0."""
    ordered = sorted(entries, key=lambda e: (e[0], e[1]))
    gpus = tuple(
        GPU(
            index=index,
            vendor=vendor,
            model=tool.model,
            memory_bytes=tool.memory_bytes,
            driver_version=tool.driver_version,
        )
        for index, (vendor, _, tool) in enumerate(ordered)
    )
    return gpus, tuple(address for _, address, _ in ordered), tuple(dict.fromkeys(answered))


def _nvidia_smi(sources: HostSources) -> tuple[str, list[ToolGPU] | None]:
    if sources.which("nvidia-smi") is None:
        return "", None
    out = sources.run(_NVIDIA_QUERY)
    if out is None:
        return "nvidia-smi", None
    gpus = []
    for row in csv.reader(out.splitlines(), skipinitialspace=True):
        if not row:
            continue
        if len(row) != 5 or not row[0].strip().isdigit() or not row[2].strip():
            return "nvidia-smi", None  # an answer we cannot read is no answer
        _, bus_id, name, memory, driver = (cell.strip() for cell in row)
        mib = int(memory) if memory.isdigit() else None
        gpus.append(
            ToolGPU(
                address=_address(bus_id),
                model=name,
                memory_bytes=None if mib is None else mib * 1024 * 1024,
                driver_version="" if driver.startswith("[") else driver,
            )
        )
    return "nvidia-smi", gpus


def _amd_smi(sources: HostSources) -> tuple[str, list[ToolGPU] | None]:
    if sources.which("amd-smi") is None:
        return "", None
    document = _json(sources.run(_AMD_SMI_QUERY))
    entries = list(document.values()) if isinstance(document, dict) else document
    if not isinstance(entries, list):
        return "amd-smi", None
    gpus = []
    for entry in entries:
        asic = entry.get("asic") if isinstance(entry, dict) else None
        if not isinstance(asic, dict):
            return "amd-smi", None
        gpus.append(ToolGPU(address=_bdf(entry), model=_word(asic.get("market_name"))))
    return "amd-smi", gpus


def _rocm_smi(sources: HostSources) -> tuple[str, list[ToolGPU] | None]:
    if sources.which("rocm-smi") is None:
        return "", None
    document = _json(sources.run(_ROCM_SMI_QUERY))
    if not isinstance(document, dict):
        return "rocm-smi", None
    gpus = []
    for key in sorted(document, key=_card_number):
        card = document[key]
        if not key.startswith("card") or not isinstance(card, dict):
            continue
        fields = {str(k).strip().lower(): v for k, v in card.items()}
        model = _word(fields.get("card series")) or _word(fields.get("device name"))
        gpus.append(ToolGPU(model=model))
    return "rocm-smi", gpus


def _card_number(key: str) -> tuple[int, str]:
    digits = key.removeprefix("card")
    return (int(digits), key) if digits.isdigit() else (1 << 30, key)


def _json(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _word(value: Any) -> str:
    text = value.strip() if isinstance(value, str) else ""
    return "" if text.upper() in ("", "N/A") else text


def _bdf(entry: Mapping[str, Any]) -> str:
    bus = entry.get("bus")
    bdf = entry.get("bdf") or (bus.get("bdf") if isinstance(bus, dict) else None)
    return _address(bdf) if isinstance(bdf, str) and bdf else ""


def _simulated_gpus(sim: str, notes: list[str]) -> _Found:
    """The simulated GPU as the runners will see it: its sysfs, then its management
    library (simulated NVML or amdsmi) standing in for the vendor tool."""
    simulated = open_platform({SIM_GPU_ENV: sim})
    pci = pci_accelerators(simulated.sysfs) or []
    entries: list[tuple[str, str, ToolGPU]] = []
    try:
        library: Nvml = simulated.nvml()
        driver = library.driver_version()
        vendor = simulated.vendor()
        for index in range(library.device_count()):
            device = library.device(index)
            entries.append(
                (
                    vendor,
                    _address(device.pci_bus_id()),
                    ToolGPU(
                        address=_address(device.pci_bus_id()),
                        model=device.name(),
                        memory_bytes=device.memory_total_bytes(),
                        driver_version=driver,
                    ),
                )
            )
    except RunnerError as err:
        notes.append(f"the simulated GPU's library did not answer ({err}): counted from PCI")
        entries = [(f.vendor, f.address, ToolGPU(address=f.address)) for f in pci]
    return _ordered(entries, ("simulated",))

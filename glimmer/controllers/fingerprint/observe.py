"""What a Node says about its hardware (K2, K3): salient labels, GPUs, NICs, OS, kernel.

Pure: a Node as JSON in, an :class:`~glimmer.api.fingerprint.Observation` out (the type
and its digest are shared with the bare host: :mod:`glimmer.api.fingerprint`). Identity
comes from what node feature discovery, device plugins and the kubelet already publish;
no probe runs.

The salient filter keeps only labels that name hardware or its software identity, and
drops every label in the operator's own domain (``burnin.glimmer.ai``) or named like
one of ours (``burnin*``, ``*-burnin*``, ``*.burnin*``). Without that, the verdict label
this controller writes on the node would come back on the next pass as "the labels
changed" and raise ``Drifted`` on every node it ever judged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

from glimmer.api import GROUP
from glimmer.api.fingerprint import GPU, JSON, NIC, Observation
from glimmer.controllers.kit.core_view import NodeView

__all__ = [
    "GPU",
    "JSON",
    "MAX_DEVICES",
    "NIC",
    "Observation",
    "gpus_from_allocatable",
    "gpus_from_labels",
    "is_operator_label",
    "is_salient",
    "is_unattributed",
    "nics_from_labels",
    "observation_from_status",
    "observe",
    "salient_labels",
    "vendor_of_domain",
]

_KEEP_EXACT: Final = frozenset(
    {
        "kubernetes.io/arch",
        "beta.kubernetes.io/arch",
        "node.kubernetes.io/instance-type",
        "beta.kubernetes.io/instance-type",
    }
)
_KEEP_PREFIXES: Final = (
    "accelerator", "board.", "board-", "cpu.", "cpu-", "cuda.", "cuda-", "gpu.", "gpu-",
    "gpus.", "hw.", "hw-", "infiniband", "kernel-version.", "memory.", "memory-", "mig.",
    "mig-", "nic.", "nic-", "nvlink", "pci-", "rdma.", "rdma-", "rocm.", "rocm-", "system-os",
)  # fmt: skip

_GPU_FIELDS: Final[Mapping[str, str]] = {
    **dict.fromkeys(("gpu.product", "gpu.model", "gpu.name", "gpu-product", "gpu-model"), "model"),
    **dict.fromkeys(("gpu.count", "gpu-count", "gpu.replicas"), "count"),
    **dict.fromkeys(("gpu.memory", "gpu-memory", "gpu.vram"), "memory"),
    **dict.fromkeys(
        (
            "gpu.arch",
            "gpu-arch",
            "gpu.architecture",
            "gpu.compute-capability",
            "cuda.compute-capability",
        ),
        "arch",
    ),
    **dict.fromkeys(("gpu.family", "gpu-family"), "family"),
    **dict.fromkeys(("gpu.vendor", "gpu-vendor"), "vendor"),
    **dict.fromkeys(
        ("gpu.driver-version", "gpu.driver", "gpu.driver.version", "cuda.driver-version"),
        "driver",
    ),
    **dict.fromkeys(("cuda.driver.major", "gpu.driver.major"), "major"),
    **dict.fromkeys(("cuda.driver.minor", "gpu.driver.minor"), "minor"),
    **dict.fromkeys(("cuda.driver.rev", "gpu.driver.rev"), "rev"),
}
_ALLOCATABLE_NAMES: Final = frozenset(
    {"gpu", "gpu.shared", "i915", "i915_monitoring", "xe", "npu", "tpu", "accelerator"}
)
_ALLOCATABLE_DOMAIN_PREFIXES: Final = ("gpu.", "accelerator.", "npu.", "tpu.")
_NIC_FIELDS: Final[Mapping[str, str]] = {
    "role": "role",
    "pci-vendor": "pciVendor",
    "pcivendor": "pciVendor",
    "model": "model",
    "rdma-device": "rdmaDevice",
    "rdmadevice": "rdmaDevice",
    "link-layer": "linkLayer",
    "linklayer": "linkLayer",
    "speed-mbps": "speedMbps",
    "speedmbps": "speedMbps",
    "mtu": "mtu",
}
MAX_DEVICES: Final = 64

_QUANTITY: Final = re.compile(r"^([0-9]+(?:\.[0-9]+)?)([KMGTPE]i|[kMGTPE])?$")
_QUANTITY_SCALE: Final[Mapping[str, int]] = {
    "": 1,
    **{s: 1024 ** (i + 1) for i, s in enumerate(("Ki", "Mi", "Gi", "Ti", "Pi", "Ei"))},
    **{s: 1000 ** (i + 1) for i, s in enumerate(("k", "M", "G", "T", "P", "E"))},
}


def observe(node: Mapping[str, Any]) -> Observation:
    """The observation of ``node`` (K2, K3); a field the node lacks is empty, never guessed."""
    view = NodeView(node)
    info = view.node_info
    labels = salient_labels(_strings(view.labels))
    gpus = gpus_from_labels(labels) or gpus_from_allocatable(_strings(view.allocatable))
    return Observation(
        os_image=str(info.get("osImage") or ""),
        kernel=str(info.get("kernelVersion") or ""),
        labels=labels,
        gpus=gpus,
        nics=nics_from_labels(labels),
    )


def observation_from_status(status: Mapping[str, Any]) -> Observation:
    """The observation a stored NodeFingerprint status records (to diff against)."""
    return Observation(
        os_image=str(status.get("osImage") or ""),
        kernel=str(status.get("kernel") or ""),
        labels=_strings(status.get("labels")),
        gpus=tuple(
            GPU(
                index=_int(g.get("index")) or 0,
                vendor=str(g.get("vendor") or ""),
                model=str(g.get("model") or ""),
                arch=str(g.get("arch") or ""),
                memory_bytes=_int(g.get("memoryBytes")),
                driver_version=str(g.get("driverVersion") or ""),
            )
            for g in _objects(status.get("gpus"))
        ),
        nics=tuple(
            NIC(
                name=str(n.get("name") or ""),
                role=str(n.get("role") or ""),
                pci_vendor=str(n.get("pciVendor") or ""),
                model=str(n.get("model") or ""),
                rdma_device=str(n.get("rdmaDevice") or ""),
                link_layer=str(n.get("linkLayer") or ""),
                speed_mbps=_int(n.get("speedMbps")),
                mtu=_int(n.get("mtu")),
            )
            for n in _objects(status.get("nics"))
        ),
    )


# --- K2 -------------------------------------------------------------------------------


def is_operator_label(key: str) -> bool:
    """A label of the operator's own (its domain, or named ``burnin``-like)."""
    domain, _, name = _split(key)
    lowered = name.lower()
    return (
        domain == GROUP
        or domain.endswith(f".{GROUP}")
        or lowered.startswith("burnin")
        or "-burnin" in lowered
        or ".burnin" in lowered
    )


def is_salient(key: str) -> bool:
    """Whether ``key`` names hardware identity (K2)."""
    if is_operator_label(key):
        return False
    if key in _KEEP_EXACT:
        return True
    return _split(key)[2].lower().startswith(_KEEP_PREFIXES)


def salient_labels(labels: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in sorted(labels.items()) if is_salient(k)}


# --- K3: GPUs -------------------------------------------------------------------------


def is_unattributed(domain: str) -> bool:
    """Domains that name no vendor: labels there describe a GPU of nobody in particular."""
    return domain in ("", "kubernetes.io", "glimmer.ai") or domain.endswith(
        (".kubernetes.io", ".glimmer.ai")
    )


def vendor_of_domain(domain: str) -> str:
    """First of the last two DNS labels: ``nvidia.com`` -> nvidia, ``gpu.intel.com`` -> intel."""
    parts = [p for p in domain.lower().split(".") if p]
    if not parts:
        return ""
    return parts[-2] if len(parts) >= 2 else parts[0]


def gpus_from_labels(labels: Mapping[str, str]) -> tuple[GPU, ...]:
    groups: dict[str, dict[str, str]] = {}
    for key, value in labels.items():
        domain, _, name = _split(key)
        fieldname = _GPU_FIELDS.get(name.lower())
        if fieldname is not None and value:
            groups.setdefault(domain, {}).setdefault(fieldname, value)
    unattributed: dict[str, str] = {}
    kept: list[tuple[str, dict[str, str]]] = []
    for domain in sorted(groups):
        fields = groups[domain]
        if is_unattributed(domain):
            for k, v in fields.items():
                unattributed.setdefault(k, v)
        elif "model" in fields or "count" in fields:
            kept.append((vendor_of_domain(domain), fields))
    if not kept:
        if "model" in unattributed or "count" in unattributed:
            kept = [("", unattributed)]
    elif len(kept) == 1:
        vendor, fields = kept[0]
        kept = [(vendor, {**unattributed, **fields})]
    entries: list[tuple[str, str, dict[str, str]]] = []
    for domain_vendor, fields in kept:
        vendor = (fields.get("vendor") or domain_vendor).lower()
        entries.append((vendor, fields.get("model", ""), fields))
    gpus: list[GPU] = []
    for vendor, model, fields in sorted(entries, key=lambda e: (e[0], e[1])):
        count = _int(fields.get("count"))
        if count is None or not 0 <= count <= MAX_DEVICES:
            count = 1 if any(k in fields for k in ("model", "arch", "family", "memory")) else 0
        driver = fields.get("driver") or ".".join(
            _leading(fields.get(k) for k in ("major", "minor", "rev"))
        )
        for _ in range(count):
            gpus.append(
                GPU(
                    index=len(gpus),
                    vendor=vendor,
                    model=model,
                    arch=fields.get("arch") or fields.get("family", ""),
                    memory_bytes=_memory_bytes(fields.get("memory")),
                    driver_version=driver,
                )
            )
    return tuple(gpus)


def gpus_from_allocatable(allocatable: Mapping[str, str]) -> tuple[GPU, ...]:
    """Extended resources (``nvidia.com/gpu: 8``): index and vendor only."""
    gpus: list[GPU] = []
    for key in sorted(allocatable):
        domain, slash, name = _split(key)
        if not slash or is_unattributed(domain):
            continue
        if name not in _ALLOCATABLE_NAMES and not domain.startswith(_ALLOCATABLE_DOMAIN_PREFIXES):
            continue
        count = _int(allocatable[key])
        if count is None or not 1 <= count <= MAX_DEVICES:
            continue
        vendor = vendor_of_domain(domain)
        start = len(gpus)
        gpus.extend(GPU(index=start + i, vendor=vendor) for i in range(count))
    return tuple(gpus)


# --- K3: NICs -------------------------------------------------------------------------


def nics_from_labels(labels: Mapping[str, str]) -> tuple[NIC, ...]:
    devices: dict[str, dict[str, str]] = {}
    for key, value in labels.items():
        _, _, name = _split(key)
        if not name.startswith("nic."):
            continue
        device, dot, raw_field = name[len("nic.") :].rpartition(".")
        fieldname = _NIC_FIELDS.get(raw_field.lower())
        if not dot or not device or fieldname is None:
            continue
        devices.setdefault(device, {}).setdefault(fieldname, value)
    return tuple(
        NIC(
            name=device,
            role=f.get("role", ""),
            pci_vendor=f.get("pciVendor", ""),
            model=f.get("model", ""),
            rdma_device=f.get("rdmaDevice", ""),
            link_layer=f.get("linkLayer", ""),
            speed_mbps=_int(f.get("speedMbps")),
            mtu=_int(f.get("mtu")),
        )
        for device, f in sorted(devices.items())
    )


# --- parsing helpers ------------------------------------------------------------------


def _split(key: str) -> tuple[str, str, str]:
    domain, slash, name = key.rpartition("/")
    return domain, slash, name


def _strings(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): str(v) for k, v in value.items() if isinstance(k, str)}


def _objects(value: Any) -> Iterable[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"[0-9]{1,18}", value.strip()):
        return int(value.strip())
    return None


def _leading(parts: Iterable[str | None]) -> list[str]:
    out: list[str] = []
    for part in parts:
        if not part:
            break
        out.append(part)
    return out


def _memory_bytes(value: str | None) -> int | None:
    """A plain integer is MiB (NFD's ``gpu.memory``); anything else a k8s quantity."""
    if not value:
        return None
    plain = _int(value)
    if plain is not None:
        return plain * 1024 * 1024
    match = _QUANTITY.fullmatch(value.strip())
    if match is None:
        return None
    number, suffix = match.group(1), match.group(2) or ""
    whole, _, frac = number.partition(".")
    scale = _QUANTITY_SCALE[suffix]
    return int(whole) * scale + (int(frac) * scale // 10 ** len(frac) if frac else 0)

"""NodeFingerprint: the hardware identity a verdict is bound to (api §7)."""

# field() returns attrs.field() with schema metadata; ruff cannot see that.
# ruff: noqa: RUF009

from __future__ import annotations

from datetime import datetime

import attrs

from glimmer.api.burnintest import API_VERSION
from glimmer.api.core import KubeCondition, ObjectMeta
from glimmer.api.fields import field


@attrs.define(kw_only=True)
class GPUInfo:
    """One accelerator as seen through node labels or extended resources."""

    index: int = field(json="index", required=True, fmt="int32", description="Device index.")
    vendor: str | None = field(json="vendor", description="Vendor word (nvidia, amd, intel...).")
    model: str | None = field(json="model", description="Product name.")
    arch: str | None = field(json="arch", description="Architecture.")
    memory_bytes: int | None = field(
        json="memoryBytes", fmt="int64", description="Device memory in bytes."
    )
    driver_version: str | None = field(json="driverVersion", description="Driver version.")


@attrs.define(kw_only=True)
class NICInfo:
    """One network interface as seen through node labels."""

    name: str = field(json="name", required=True, description="Device name.")
    role: str | None = field(json="role", description="Role.")
    pci_vendor: str | None = field(json="pciVendor", description="PCI vendor.")
    model: str | None = field(json="model", description="Model.")
    rdma_device: str | None = field(json="rdmaDevice", description="RDMA device.")
    link_layer: str | None = field(json="linkLayer", description="Link layer.")
    speed_mbps: int | None = field(json="speedMbps", fmt="int32", description="Speed in Mb/s.")
    mtu: int | None = field(json="mtu", fmt="int32", description="MTU.")


@attrs.define(kw_only=True)
class NodeFingerprintSpec:
    """Which node this fingerprint describes."""

    node_name: str = field(json="nodeName", required=True, description="The node.")


@attrs.define(kw_only=True)
class NodeFingerprintStatus:
    """The captured identity and its drift condition."""

    captured_at: datetime | None = field(
        json="capturedAt",
        fmt="date-time",
        description="Last time the observation changed (not the last look).",
    )
    gpus: list[GPUInfo] | None = field(json="gpus", description="Accelerators.")
    nics: list[NICInfo] | None = field(json="nics", description="Network interfaces.")
    os_image: str | None = field(json="osImage", description="node.status.nodeInfo.osImage.")
    kernel: str | None = field(json="kernel", description="node.status.nodeInfo.kernelVersion.")
    labels: dict[str, str] | None = field(
        json="labels", description="Hardware-identity subset of the node labels."
    )
    digest: str | None = field(json="digest", description="<scheme>:<hex> digest.")
    observed_generation: int | None = field(
        json="observedGeneration", fmt="int64", description="Generation last observed."
    )
    conditions: list[KubeCondition] | None = field(json="conditions", description="Drifted.")


@attrs.define(kw_only=True)
class NodeFingerprint:
    """NodeFingerprint is the captured hardware and network identity of one node."""

    api_version: str = field(json="apiVersion", default=API_VERSION, description="API version.")
    kind: str = field(json="kind", default="NodeFingerprint", description="Kind.")
    metadata: ObjectMeta = field(json="metadata", factory=ObjectMeta, description="Metadata.")
    spec: NodeFingerprintSpec = field(json="spec", required=True, description="The node.")
    status: NodeFingerprintStatus | None = field(json="status", description="Observed state.")

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
    max_verdict_age_seconds: int | None = field(
        json="maxVerdictAgeSeconds",
        fmt="int64",
        minimum=1,
        description="Glimmer extension: the node's verdict expires this long after the run "
        "that gave it finished (VerdictCurrent=False/VerdictTooOld). Unset: the manager's "
        "default (none unless configured). The operator never overwrites it.",
    )


@attrs.define(kw_only=True)
class NodeVerdict:
    """The node's last acceptance verdict and the digest it was measured on."""

    run_namespace: str = field(json="runNamespace", required=True, description="Run namespace.")
    run_name: str = field(json="runName", required=True, description="Run name.")
    run_uid: str | None = field(json="runUID", description="Run UID.")
    phase: str = field(
        json="phase",
        required=True,
        enum=("Passed", "Failed", "Simulated"),
        description="Passed: every required test of the run's pinned plan naming this node "
        "Passed, measured on silicon and not suspect; Failed: a required test on this node "
        "Failed; Simulated (Glimmer extension): every required test Passed, some only on "
        "the simulated GPU, and no run judged the node on silicon. Runs that judged nothing "
        "here (a planned test never run, Error, Cancelled, Skipped, unknown provenance, "
        "baseline) give no verdict.",
    )
    started_at: datetime | None = field(
        json="startedAt", fmt="date-time", description="Earliest start of its results here."
    )
    finished_at: datetime = field(
        json="finishedAt", required=True, fmt="date-time", description="When the run ended."
    )
    digest: str | None = field(
        json="digest",
        description="The fingerprint digest the verdict was measured on; absent when the "
        "fingerprint changed after the measurement began, so it is bound to no digest.",
    )
    hardware_identity: str | None = field(
        json="hardwareIdentity",
        description="Glimmer extension: the probed hardware identity (fingerprint-probe's "
        "hardwareIdentity: GPU UUIDs and serials, accelerator PCI addresses, RDMA GUIDs) the "
        "verdict was measured on; absent when no probe had identified the node by then.",
    )


@attrs.define(kw_only=True)
class ProbedIdentity:
    """The newest hardware identity a fingerprint-probe result recorded for the node."""

    identity: str = field(json="identity", required=True, description="hardwareIdentity.")
    gpu_uuids: str | None = field(json="gpuUuids", description="GPU UUIDs, comma-joined.")
    run_namespace: str = field(json="runNamespace", required=True, description="Run namespace.")
    run_name: str = field(json="runName", required=True, description="Run name.")
    observed_at: datetime = field(
        json="observedAt", required=True, fmt="date-time", description="When the probe ended."
    )


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
    hardware_identity: ProbedIdentity | None = field(
        json="hardwareIdentity",
        description="Glimmer extension: the newest identity a fingerprint-probe result "
        "recorded for this node (labels cannot show a like-for-like GPU swap; a probe can).",
    )
    verdict: NodeVerdict | None = field(
        json="verdict",
        description="Glimmer extension: the node's last acceptance verdict (read from finished "
        "BurnInRuns) and the digest it is bound to.",
    )
    conditions: list[KubeCondition] | None = field(
        json="conditions",
        description="Drifted; VerdictCurrent; Attested (signed verdicts, Glimmer extensions).",
    )


@attrs.define(kw_only=True)
class NodeFingerprint:
    """NodeFingerprint is the captured hardware and network identity of one node."""

    api_version: str = field(json="apiVersion", default=API_VERSION, description="API version.")
    kind: str = field(json="kind", default="NodeFingerprint", description="Kind.")
    metadata: ObjectMeta = field(json="metadata", factory=ObjectMeta, description="Metadata.")
    spec: NodeFingerprintSpec = field(json="spec", required=True, description="The node.")
    status: NodeFingerprintStatus | None = field(json="status", description="Observed state.")

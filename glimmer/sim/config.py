"""Options of one simulated-kubelet process (every field documented with its default)."""

from __future__ import annotations

from pathlib import Path

import attrs

from glimmer.contract import SIM_GPU_ENV
from glimmer.sim.images import ImageMap
from glimmer.sim.names import CLUSTER_DOMAIN, find_nss_wrapper

#: Label every node of this simulator carries, valued with its instance id.
INSTANCE_LABEL = "sim.glimmer.dev/instance"
#: Label (profile, label-safe) and annotation (exact ``GLIMMER_SIM_GPU``) on a node whose
#: containers see the simulated GPU. The operator reads either label as "this pod ran
#: against the simulated GPU" and records provenance ``sim`` itself, whatever the log
#: still holds (glimmer.controllers.run.evidence.SIM_NODE_LABELS names the same keys).
SIM_GPU_LABEL = "sim.glimmer.dev/simulated-gpu"
SIM_GPU_ANNOTATION = "sim.glimmer.dev/simulated-gpu"
#: Pod annotation that makes the simulated kubelet evict the pod as node-pressure
#: eviction does (DisruptionTarget, phase Failed, reason Evicted); the value is the
#: eviction message. A test hook: a real node evicts on memory or disk pressure.
EVICT_ANNOTATION = "sim.glimmer.dev/evict"


@attrs.frozen
class SimConfig:
    #: Kubeconfig of an identity allowed to manage nodes, leases, pods and bindings.
    kubeconfig: Path
    #: Number of nodes to register (0: only schedule, see ``schedule_selector``).
    nodes: int = 1
    #: Node names are ``<prefix><index>``, index from 0.
    name_prefix: str = "sim-"
    #: ``nvidia.com/gpu`` capacity and allocatable per node.
    gpus_per_node: int = 8
    #: Value of the ``nvidia.com/gpu.product`` label.
    gpu_product: str = "NVIDIA-H100-80GB-HBM3"
    #: Extra node labels.
    labels: tuple[tuple[str, str], ...] = ()
    #: Node taints as ``(key, value, effect)``.
    taints: tuple[tuple[str, str, str], ...] = ()
    #: Image -> local command rules (runner images map to ``python -m runners.<kind>``).
    images: ImageMap = attrs.field(factory=ImageMap.default)
    #: Port of the kubelet HTTPS endpoint (0: any free port).
    port: int = 0
    #: Second octet of pod IPs (127.<block>.x.y); 0 picks one from the process id.
    pod_ip_block: int = 0
    #: Bind pending pods that fit this process's nodes (False: leave them to someone else).
    schedule: bool = True
    #: Label selector of the nodes to schedule onto instead of this process's own nodes
    #: (e.g. ``type=kwok``; those nodes' pods are then bound, never run, by this process).
    schedule_selector: str | None = None
    #: Directory for container logs and certificates (default: a temp dir).
    state_dir: Path | None = None
    #: Written (JSON: nodes, port) once every node is registered and Ready.
    ready_file: Path | None = None
    #: Delete this process's nodes on shutdown (a real node would only go NotReady).
    delete_nodes_on_exit: bool = True
    #: Seconds between lease renewals (node heartbeats).
    heartbeat_seconds: float = 10.0
    #: ``GLIMMER_SIM_GPU`` every container on these nodes sees (the node's simulated
    #: hardware, see docs/simulated-gpu.md); None: derived from ``gpu_product`` and
    #: ``gpus_per_node``, e.g. ``h100x8``.
    sim_gpu: str | None = None
    #: Per-node ``GLIMMER_SIM_GPU`` overrides (node name, value), e.g. to inject a fault
    #: on one node: ``("sim-2", "h100x8:ecc-uncorrectable")``.
    node_sim_gpu: tuple[tuple[str, str], ...] = ()
    #: Extra environment for every container (a pod's own env wins).
    container_env: tuple[tuple[str, str], ...] = ()
    #: ``libnss_wrapper.so``, through which pods resolve Service names (docs/
    #: simulated-kubelet.md); None: not installed, so a pod that sets ``spec.subdomain``
    #: is refused (CreateContainerError naming the package) instead of resolving wrongly.
    nss_wrapper: Path | None = attrs.field(factory=find_nss_wrapper)
    #: Cluster domain of the ``<host>.<svc>.<ns>.svc.<domain>`` names.
    cluster_domain: str = CLUSTER_DOMAIN

    def node_env(self, node: str) -> dict[str, str]:
        """The environment a container on ``node`` starts from, before the pod's own."""
        product = self.gpu_product.upper()
        profile = next((p for p in ("GB200", "B200", "H200", "H100", "T4") if p in product), None)
        default = f"{profile.lower()}x{self.gpus_per_node}" if profile else None
        sim_gpu = dict(self.node_sim_gpu).get(node, self.sim_gpu or default)
        env = dict(self.container_env)
        if sim_gpu and self.gpus_per_node > 0:
            env[SIM_GPU_ENV] = sim_gpu
        return env

    def simulated_gpu(self, node: str) -> str | None:
        """The ``GLIMMER_SIM_GPU`` containers on ``node`` see (None: no simulated GPU)."""
        return self.node_env(node).get(SIM_GPU_ENV)


def label_safe(value: str) -> str:
    """``value`` as a label value (63 chars of ``[A-Za-z0-9._-]``, alphanumeric ends)."""
    safe = "".join(c if c.isascii() and (c.isalnum() or c in "._-") else "_" for c in value)
    return safe[:63].strip("._-") or "simulated"

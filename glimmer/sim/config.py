"""Options of one simulated-kubelet process (every field documented with its default)."""

from __future__ import annotations

import re
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

#: The simulated AMD profiles (``runners/sdk/simgpu/profiles.py:AMD_PROFILES``; a unit
#: test keeps the two equal, since glimmer.sim may not import the simulator) and the
#: model label value AMD's node labeller would publish for each.
AMD_SIM_PRODUCTS: dict[str, str] = {
    "mi300x": "AMD-Instinct-MI300X",
    "mi325x": "AMD-Instinct-MI325X",
}
#: The gfx target of the simulated AMD parts (both CDNA3).
AMD_SIM_GFX = "gfx942"
_PROFILE_COUNT = re.compile(r"x\d+\Z")


def sim_gpu_profile(sim_gpu: str) -> str:
    """The profile key of a ``GLIMMER_SIM_GPU`` value: ``mi300xx8:ecc-uncorrectable`` ->
    ``mi300x``."""
    return _PROFILE_COUNT.sub("", sim_gpu.split(":", 1)[0].strip().lower())


@attrs.frozen
class SimConfig:
    #: Kubeconfig of an identity allowed to manage nodes, leases, pods and bindings.
    kubeconfig: Path
    #: Number of nodes to register (0: only schedule, see ``schedule_selector``).
    nodes: int = 1
    #: Node names are ``<prefix><index>``, index from 0.
    name_prefix: str = "sim-"
    #: GPU capacity and allocatable per node (``nvidia.com/gpu``, or ``amd.com/gpu`` on a
    #: node whose simulated GPU is an AMD profile: ``gpu_resource``).
    gpus_per_node: int = 8
    #: Value of the ``nvidia.com/gpu.product`` label (an AMD node's model label is its
    #: profile's, ``AMD_SIM_PRODUCTS``).
    gpu_product: str = "NVIDIA-H100-80GB-HBM3"
    #: Extra node labels.
    labels: tuple[tuple[str, str], ...] = ()
    #: Node taints as ``(key, value, effect)``.
    taints: tuple[tuple[str, str, str], ...] = ()
    #: Image -> local command rules (runner images map to ``python -m runners.<kind>``).
    images: ImageMap = attrs.field(factory=ImageMap.default)
    #: Port of the kubelet HTTPS endpoint (0: any free port).
    port: int = 0
    #: Serving certificate and key of the kubelet endpoint (PEM files), e.g. issued by the
    #: CA an apiserver's ``--kubelet-certificate-authority`` names; None: a self-signed
    #: one for 127.0.0.1 (only an apiserver that does not verify kubelets accepts it).
    tls_cert_file: Path | None = None
    tls_private_key_file: Path | None = None
    #: CA whose client certificates may call the endpoint (a kubelet's
    #: ``--client-ca-file``); every other client is refused in the TLS handshake. None:
    #: the CA of the kubeconfig's cluster (which issued the apiserver's kubelet-client
    #: certificate in the harness and in kubeadm clusters).
    client_ca_file: Path | None = None
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
        known = ("GB200", "B200", "H200", "H100", "T4", "MI325X", "MI300X")
        profile = next((p for p in known if p in product), None)
        default = f"{profile.lower()}x{self.gpus_per_node}" if profile else None
        sim_gpu = dict(self.node_sim_gpu).get(node, self.sim_gpu or default)
        env = dict(self.container_env)
        if sim_gpu and self.gpus_per_node > 0:
            env[SIM_GPU_ENV] = sim_gpu
        return env

    def simulated_gpu(self, node: str) -> str | None:
        """The ``GLIMMER_SIM_GPU`` containers on ``node`` see (None: no simulated GPU)."""
        return self.node_env(node).get(SIM_GPU_ENV)

    def gpu_vendor(self, node: str) -> str:
        """``amd`` when ``node``'s simulated GPU is an AMD profile, else ``nvidia``.

        Why from the simulated GPU and not ``gpu_product``: the runners on the node see
        that profile, so the fingerprint (which reads these labels) must say the same
        vendor, or image resolution (E14) would pick the other vendor's image.
        """
        sim_gpu = self.simulated_gpu(node)
        if sim_gpu and sim_gpu_profile(sim_gpu) in AMD_SIM_PRODUCTS:
            return "amd"
        return "nvidia"

    def gpu_labels(self, node: str) -> dict[str, str]:
        """The device plugin's / node labeller's GPU labels of ``node`` (vendor domain)."""
        count = str(self.gpus_per_node)
        if self.gpu_vendor(node) == "amd":
            sim_gpu = self.simulated_gpu(node) or ""
            product = AMD_SIM_PRODUCTS[sim_gpu_profile(sim_gpu)]
            return {
                "amd.com/gpu.product": product,
                "amd.com/gpu.product-name": product,
                "amd.com/gpu.count": count,
                "amd.com/gpu.arch": AMD_SIM_GFX,
            }
        return {"nvidia.com/gpu.product": self.gpu_product, "nvidia.com/gpu.count": count}

    def gpu_resource(self, node: str) -> str:
        """The extended resource ``node``'s GPUs are allocated as."""
        return "amd.com/gpu" if self.gpu_vendor(node) == "amd" else "nvidia.com/gpu"


def label_safe(value: str) -> str:
    """``value`` as a label value (63 chars of ``[A-Za-z0-9._-]``, alphanumeric ends)."""
    safe = "".join(c if c.isascii() and (c.isalnum() or c in "._-") else "_" for c in value)
    return safe[:63].strip("._-") or "simulated"

"""K4: one digest for both dispatchers, byte for byte what it was.

The NodeFingerprint controller and ``glimmer run`` digest an observation with the same
function (``glimmer.api.fingerprint.digest``); the controller's modules re-export it and
the shared types, so nothing that imported them from the controller changed.
"""

from __future__ import annotations

from glimmer.api import fingerprint as shared
from glimmer.controllers.fingerprint import digests
from glimmer.controllers.fingerprint.observe import GPU as NODE_GPU
from glimmer.controllers.fingerprint.observe import NIC as NODE_NIC
from glimmer.controllers.fingerprint.observe import Observation as NodeObservation
from glimmer.local import host

#: An observation and the digest the controller gave it before the digest moved to
#: glimmer.api.fingerprint: a change of byte layout would re-baseline every fleet.
PINNED = shared.Observation(
    os_image="Ubuntu 24.04.1 LTS",
    kernel="6.8.0-45-generic",
    labels={"nvidia.com/gpu.product": "NVIDIA-H200", "kubernetes.io/arch": "amd64"},
    gpus=(
        shared.GPU(
            index=0,
            vendor="nvidia",
            model="NVIDIA H200",
            memory_bytes=143771 * 1024 * 1024,
            driver_version="550.54.15",
        ),
        shared.GPU(index=1, vendor="nvidia"),
    ),
    nics=(shared.NIC(name="ib0", role="fabric", speed_mbps=400000, mtu=4096),),
)
PINNED_DIGEST = "glimmer-v1:7d1da87fac7f28ea7e7b28c671331a10d79ece5fa72e208f46d63b1fa729d01f"
EMPTY_DIGEST = "glimmer-v1:28517f3a2673332054df4a939be00b12eddcfb9d9f465677ab31285edefc6786"


def test_K4_the_digest_is_byte_identical_to_the_controllers_before_it_moved() -> None:
    assert shared.digest(PINNED) == PINNED_DIGEST
    assert shared.digest(shared.Observation()) == EMPTY_DIGEST


def test_K4_the_controller_and_the_bare_host_share_one_digest_function() -> None:
    assert digests.digest is shared.digest
    assert digests.digest_inputs is shared.digest_inputs
    assert digests.SCHEME == shared.SCHEME
    assert NodeObservation is shared.Observation
    assert NODE_GPU is shared.GPU and NODE_NIC is shared.NIC
    assert host.digest is shared.digest


def test_K4_the_vendor_fed_to_image_resolution_is_the_first_gpus() -> None:
    assert shared.first_gpu_vendor(PINNED) == "nvidia"
    assert shared.first_gpu_vendor(shared.Observation()) is None
    assert shared.first_gpu_vendor(shared.Observation(gpus=(shared.GPU(index=0),))) is None

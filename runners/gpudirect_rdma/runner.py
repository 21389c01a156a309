"""gpudirect-rdma: RDMA writes into GPU memory (``ib_write_bw --use_cuda``) across a Pair.

The same session as ib-write-bw (``runners.sdk.rdma_write``), with the buffer on the
GPU ``BURNIN_GPUDIRECT_RDMA_GPU`` (default 0). A part that cannot do GPUDirect RDMA (a
GB10-style part: unified memory, no peer-memory path) is a declared skip **before**
the rendezvous, on either side, so a server's skip skips the pair and nothing is
measured on a path that does not exist.
"""

from __future__ import annotations

from runners.sdk.entry import RunnerContext
from runners.sdk.outcome import DeclaredSkip, RunnerError, Verdict
from runners.sdk.rdma_write import WriteTest, measure_write
from runners.sdk.rendezvous import pair_side

RUNNER = "gpudirect-rdma"
#: Parts without a GPUDirect RDMA path, by the name NVML reports and why.
NO_GPUDIRECT: dict[str, str] = {
    "GB10": "unified memory shared with the CPU, no GPUDirect RDMA peer-memory path",
}


def gpudirect_blocker(name: str) -> str | None:
    """Why the GPU called ``name`` cannot take part in GPUDirect RDMA, or None."""
    for part, why in NO_GPUDIRECT.items():
        if part in name.split() or name.endswith(part):
            return f"{name}: {why}"
    return None


def measure(ctx: RunnerContext) -> Verdict:
    pair_side(ctx.environ, runner=RUNNER)  # scope and role refused before the GPU is touched
    gpu = int(ctx.env.number("BURNIN_GPUDIRECT_RDMA_GPU", default=0, low=0, high=63))
    nvml = ctx.platform().nvml()
    if gpu >= nvml.device_count():
        raise RunnerError(
            f"BURNIN_GPUDIRECT_RDMA_GPU={gpu}: only {nvml.device_count()} GPUs visible"
        )
    device = nvml.device(gpu)
    name = device.name()
    ctx.report.metric("gpuName", name)
    ctx.report.metric("pciBusId", device.pci_bus_id())
    blocker = gpudirect_blocker(name)
    if blocker is not None:
        raise DeclaredSkip(f"GPUDirect RDMA is not applicable: {blocker}")
    return measure_write(
        ctx, WriteTest(kind=RUNNER, prefix="GPUDIRECT_RDMA", extra=(f"--use_cuda={gpu}",))
    )

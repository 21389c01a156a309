"""gpudirect-rdma: which parts have no GPUDirect RDMA path (a declared skip, never a run)."""

from runners.gpudirect_rdma.runner import gpudirect_blocker


def test_gb10_parts_have_no_gpudirect_path_and_others_do() -> None:
    assert gpudirect_blocker("NVIDIA GB10") is not None
    assert gpudirect_blocker("NVIDIA H200") is None
    assert gpudirect_blocker("NVIDIA GB100") is None

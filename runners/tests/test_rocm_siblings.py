"""Every ROCm sibling the catalog names has its image recipe, and the AMD table covers
every Node runner that runs on AMD."""

from __future__ import annotations

from pathlib import Path

from runners.catalog import IMAGE_PREFIX, RUNNERS
from runners.fault_matrix import AMD_FAULT_MATRIX

ROOT = Path(__file__).resolve().parents[2]
#: Node runners with no AMD row yet (none: nccl runs on AMD through RCCL).
NOT_YET_ON_AMD: frozenset[str] = frozenset()


def test_every_rocm_sibling_has_a_containerfile_naming_its_image() -> None:
    siblings = {kind: spec for kind, spec in RUNNERS.items() if spec.rocm_image is not None}
    assert {"compute-smoke", "gpu-burn", "thermal-soak", "gemm-sweep", "nccl"} <= set(siblings)
    for kind, spec in siblings.items():
        assert spec.rocm_image == f"{IMAGE_PREFIX}{kind}-rocm"
        package = ROOT / spec.module.replace(".", "/")
        text = (package / "Containerfile.rocm").read_text()
        assert spec.rocm_image in text, kind
        assert "BURNIN_GPU_VENDOR=amd" in text, kind
        assert f'"-m", "{spec.module}"' in text, kind


def test_every_containerfile_rocm_belongs_to_a_catalogued_sibling() -> None:
    by_package = {spec.module.replace(".", "/"): spec for spec in RUNNERS.values()}
    for path in sorted((ROOT / "runners").glob("*/Containerfile.rocm")):
        spec = by_package[str(path.parent.relative_to(ROOT))]
        assert spec.rocm_sibling, f"{path} has no rocm_sibling=True in runners/catalog.py"


def test_the_amd_matrix_covers_every_node_runner_that_runs_on_amd() -> None:
    node_kinds = {kind for kind, spec in RUNNERS.items() if spec.scope == "Node"}
    assert set(AMD_FAULT_MATRIX) == node_kinds - NOT_YET_ON_AMD

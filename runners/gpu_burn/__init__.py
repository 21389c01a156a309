"""gpu-burn: sustained GEMM load checked against a reference (docs/runners.md)."""

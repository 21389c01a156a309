"""gemm-sweep: one GEMM precision per test, throughput and error (docs/runners.md)."""

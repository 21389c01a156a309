"""compute-smoke: an arch-correct low-precision GEMM checked against a float64 reference."""

"""dcgm-diag: NVIDIA DCGM diagnostics (site-mounted ``dcgmi``) turned into metrics."""

"""Silicon implementations of the hardware seam: NVML, PyTorch, /dev/kmsg, sysfs, dcgmi.

Only ``runners.sdk.hardware`` imports this package, and the GPU libraries inside it are
imported lazily, so runner images without them (and CI) can still load every runner.
"""

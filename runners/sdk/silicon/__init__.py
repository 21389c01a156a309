"""Silicon implementations of the runner seam: NVML, PyTorch, /dev/kmsg, sysfs, dcgmi.

Of the SDK and the runners, only the platform choice (``runners.sdk.platform``) imports
this package, and it imports only the protocols (``runners.sdk.protocols``, with the
errors in ``runners.sdk.outcome``), never the simulator. The GPU libraries inside it are
imported lazily, so runner images without them (and CI) can still load every runner.
"""

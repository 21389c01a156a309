"""fingerprint-probe: the identity of the node's GPUs, NICs and RDMA devices."""

"""fabric-soak: repeated RDMA bandwidth samples across a Pair, with the port's error-counter delta."""

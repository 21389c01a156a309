"""fabric-soak: repeated RDMA bandwidth samples across a Pair, and the error-counter delta."""

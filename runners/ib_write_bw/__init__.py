"""ib-write-bw: perftest ib_write_bw (RDMA write bandwidth/latency) between the two sides of a Pair."""

"""ib-write-bw: perftest RDMA write bandwidth (or latency) between the sides of a Pair."""

"""gpudirect-rdma: perftest ib_write_bw --use_cuda: RDMA writes straight into GPU memory across a Pair."""

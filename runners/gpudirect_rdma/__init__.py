"""gpudirect-rdma: ``ib_write_bw --use_cuda``, RDMA writes into GPU memory across a Pair."""

"""nccl: nccl-tests collectives (all_reduce_perf and the collective axis) across a node's GPUs, a Pair or a Group."""

"""nccl: nccl-tests collectives across a node's GPUs, a Pair or a Group."""

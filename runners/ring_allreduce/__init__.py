"""ring-allreduce: a ring all-reduce over TCP across the ranks of a Group, verified exactly."""

"""The runner SDK: the runner contract (semantics §A) written once for every runner.

Why a shared SDK: each runner is a separate program, but the ways a runner can lie are
common to all of them (a crash that exits 1, a zero printed for a counter nobody read,
a skip without a marker). Putting the contract here means each runner only measures;
it cannot get the exit codes, marker lines or metric grammar wrong on its own.

It imports only the standard library and ``glimmer.contract`` so it can be copied into
a runner image without the rest of Glimmer.
"""

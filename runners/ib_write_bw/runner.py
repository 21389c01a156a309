"""ib-write-bw: perftest's RDMA write bandwidth (or latency) between the two sides of a Pair.

Pair only. The session, the RLIMIT_MEMLOCK fitting and the metrics are the SDK's
(``runners.sdk.rdma_write``): the server listens on the readiness port 18510 and runs
``ib_write_bw`` on 18515 per round; the client connects, both run perftest with the
agreed message size and queue pairs, and each side prints what its own tool reported.
Never ``peakBandwidthGbps``. See README.md.
"""

from __future__ import annotations

from runners.sdk.entry import RunnerContext
from runners.sdk.outcome import Verdict
from runners.sdk.rdma_write import WriteTest, measure_write

TEST = WriteTest(kind="ib-write-bw", prefix="IB_WRITE_BW")


def measure(ctx: RunnerContext) -> Verdict:
    return measure_write(ctx, TEST)

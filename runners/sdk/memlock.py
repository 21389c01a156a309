"""RLIMIT_MEMLOCK: the pinned-memory ceiling every RDMA runner meets first.

Why a module of its own: containerd's systemd unit ships ``LimitMEMLOCK=8388608`` (8 MiB)
and every pod inherits it. RDMA buffers are pinned, perftest registers message size x
queue pairs x 2, so its ordinary 1 MiB x 4 QPs lands on that ceiling and fails with
``Couldn't create CQ`` (NCCL: ``ibv_reg_mr_iova2 failed with error Cannot allocate
memory``). Neither message names the limit, and both read like a broken link. So:

- the perftest runners read the limit and **shrink** the message size (then the queue
  pairs) until the registration fits, and say so in evidence: a shrunk, still-measured
  run is a real measurement of the link;
- what cannot fit, and any registration failure the tools print, is **Error** naming
  ``RLIMIT_MEMLOCK``, its current value and the fix, because the link was never measured.

The estimate is perftest's own (size x QPs x 2) plus :data:`PINNED_HEADROOM_BYTES` for the
completion queues, rings and whatever else the process has pinned.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from runners.sdk.outcome import RunnerError

PINNED_HEADROOM_BYTES: Final = 1024 * 1024
#: The smallest message a shrunk bandwidth run may use: below it a write measures the
#: NIC's message rate, not the link's bandwidth.
MIN_MESSAGE_BYTES: Final = 64 * 1024
FIX: Final = (
    "raise it on the node: a containerd drop-in "
    "/etc/systemd/system/containerd.service.d/10-memlock.conf with "
    "[Service] LimitMEMLOCK=infinity, then systemctl daemon-reload && systemctl restart "
    "containerd (docs/fabric.md; securityContext IPC_LOCK does not help a non-root pod)"
)
#: What perftest and NCCL print when pinned memory cannot be registered.
REGISTRATION_FAILURES: Final = (
    "Couldn't allocate MR",
    "Couldn't create CQ",
    "Failed to create CQs",
    "Couldn't create IB resources",
    "Cannot allocate memory",
)


def describe(limit: int | None) -> str:
    """The limit as a message names it."""
    if limit is None:
        return "unlimited"
    return f"{limit} bytes ({limit / 2**20:g} MiB)"


def registration_failed(text: str) -> bool:
    """Whether a tool's output says pinned memory could not be registered."""
    return any(marker in text for marker in REGISTRATION_FAILURES)


def memlock_error(*, what: str, limit: int | None) -> RunnerError:
    """The Error for a registration that failed: the limit, its value, the fix."""
    return RunnerError(
        f"{what}: pinned RDMA memory could not be registered with RLIMIT_MEMLOCK at "
        f"{describe(limit)}, so the link was never measured; {FIX}"
    )


def pinned_bytes(*, size: int, queue_pairs: int) -> int:
    return size * queue_pairs * 2 + PINNED_HEADROOM_BYTES


@dataclass(frozen=True)
class Registration:
    """The message size and queue pairs a run uses, and whether the limit shrank them."""

    size: int
    queue_pairs: int
    limit: int | None
    shrunk: bool


def fit(*, size: int, queue_pairs: int, limit: int | None, tool: str) -> Registration:
    """The largest registration at or below the one asked for that fits ``limit``.

    The message size halves first (down to :data:`MIN_MESSAGE_BYTES`), then the queue
    pairs; what still does not fit is an Error naming the limit.
    """
    want_size, want_qps = size, queue_pairs
    while limit is not None and pinned_bytes(size=size, queue_pairs=queue_pairs) > limit:
        if size // 2 >= MIN_MESSAGE_BYTES:
            size //= 2
        elif queue_pairs > 1:
            queue_pairs //= 2
        else:
            raise RunnerError(
                f"{tool}: RLIMIT_MEMLOCK is {describe(limit)}, below the "
                f"{pinned_bytes(size=size, queue_pairs=1)} bytes even a {size}-byte message on "
                f"one queue pair pins, so the link cannot be measured; {FIX}"
            )
    return Registration(
        size=size,
        queue_pairs=queue_pairs,
        limit=limit,
        shrunk=(size, queue_pairs) != (want_size, want_qps),
    )

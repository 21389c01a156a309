"""The seam where sinks plug in (L4); this controller delivers nothing itself yet.

The reconciler calls a :class:`Deliverer` at exactly the points L4 names: Running
(before the status write), each unit settled through the normal path, each checkpoint,
and the terminal phase (after unload and release). Sinks are a separate piece of work;
until then :class:`NoDelivery` accepts everything, which is what a profile with no sinks
means anyway.
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


class Reason(enum.StrEnum):
    RUN_PHASE_CHANGED = "RunPhaseChanged"
    TEST_COMPLETED = "TestCompleted"
    CHECKPOINT = "Checkpoint"


@dataclass(frozen=True)
class Delivery:
    """What an envelope would be built from (L1): the run as written, and why."""

    reason: Reason
    #: RunPhaseChanged: the phase; TestCompleted: ``<test>/<node>``; Checkpoint: sequence.
    event_key: str
    run: Mapping[str, Any]
    sinks: Sequence[str] = field(default_factory=tuple)


class Deliverer(Protocol):
    async def deliver(self, delivery: Delivery) -> bool:
        """True when every sink accepted (a failure never changes the run)."""
        ...


class NoDelivery:
    """Accepts every delivery and sends nothing; records them for tests and logs."""

    def __init__(self, *, keep: int = 256) -> None:
        #: The most recent deliveries (bounded: a long-lived manager must not grow).
        self.sent: deque[Delivery] = deque(maxlen=keep)

    async def deliver(self, delivery: Delivery) -> bool:
        self.sent.append(delivery)
        return True

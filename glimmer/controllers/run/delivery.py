"""The seam where sinks plug in (L4): what the reconciler hands over, and who sends it.

The reconciler calls a :class:`Deliverer` at exactly the points L4 names: Running
(before the status write), each unit settled through the normal path, each checkpoint,
and the terminal phase (after unload and release). :class:`SinkDeliverer` is what the
operator ships: it builds the envelope from the run as written and fans it out to the
pinned BurnInSinks (:mod:`glimmer.sinks`). :class:`NoDelivery` accepts everything and
sends nothing, which is what a profile with no sinks means anyway; tests use it to see
what would have been sent.

A delivery's outcome never changes the run: the only consequence of a failure is the
terminal envelope's re-send (E19), decided in ``finish``.
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

import aiohttp

from glimmer.contract.envelope import ClusterRef
from glimmer.controllers.kit.view import ObjectView, RunView
from glimmer.engine import NAMESPACES, ApiError
from glimmer.plan import PinnedPlan
from glimmer.plan.units import verdict_units
from glimmer.sinks import FanoutReport, SinkFanout, build_envelope
from glimmer.sinks.build import read_evidence

#: The namespace whose UID identifies the cluster in envelopes (L1).
CLUSTER_IDENTITY_NAMESPACE = "kube-system"


class Reason(enum.StrEnum):
    RUN_PHASE_CHANGED = "RunPhaseChanged"
    TEST_COMPLETED = "TestCompleted"
    CHECKPOINT = "Checkpoint"


@dataclass(frozen=True)
class Delivery:
    """What an envelope is built from (L1): the run as written, and why."""

    reason: Reason
    #: RunPhaseChanged: the phase; TestCompleted: ``<test>/<node>``; Checkpoint: sequence.
    event_key: str
    run: Mapping[str, Any]
    sinks: Sequence[str] = field(default_factory=tuple)


class Deliverer(Protocol):
    async def deliver(self, delivery: Delivery) -> bool:
        """True when every sink accepted (a failure never changes the run)."""
        ...


@runtime_checkable
class ReportingDeliverer(Protocol):
    """A deliverer that can say, per sink, what happened (the run's ``sinkStatus``)."""

    async def deliver(self, delivery: Delivery) -> bool: ...

    async def deliver_reporting(self, delivery: Delivery) -> FanoutReport: ...


class NoDelivery:
    """Accepts every delivery and sends nothing; records them for tests and logs."""

    def __init__(self, *, keep: int = 256) -> None:
        #: The most recent deliveries (bounded: a long-lived manager must not grow).
        self.sent: deque[Delivery] = deque(maxlen=keep)

    async def deliver(self, delivery: Delivery) -> bool:
        self.sent.append(delivery)
        return True


def pinned_baseline(view: RunView, plan: PinnedPlan | None) -> bool:
    """Whether the run is a baseline (I16: a baseline measures, it never certifies).

    ``spec.baseline`` is pinned: the plan's copy decides, so a spec edited after the pin
    changes nothing; the spec is read only when no plan could be pinned or decoded."""
    if plan is not None:
        return plan.baseline
    return view.baseline


class SinkDeliverer:
    """Envelopes from runs, to the run's pinned sinks (L1, L5)."""

    def __init__(
        self,
        *,
        fanout: SinkFanout,
        now: Callable[[], datetime],
        cluster_name: str = "",
    ) -> None:
        """``cluster_name``: ``glimmer manager --cluster-name``; the envelope carries a
        ``cluster`` block only when it is set (a guessed identity is worse than none)."""
        self.fanout = fanout
        self.now = now
        self.cluster_name = cluster_name
        self._cluster_uid: str | None = None

    async def cluster(self) -> ClusterRef | None:
        """The configured cluster name with the kube-system namespace UID (read once;
        a failed read is retried on the next delivery, the name is sent meanwhile)."""
        if not self.cluster_name:
            return None
        if self._cluster_uid is None:
            try:
                namespace = await self.fanout.client.get(NAMESPACES, CLUSTER_IDENTITY_NAMESPACE)
                self._cluster_uid = ObjectView(namespace).uid
            except (ApiError, OSError, TimeoutError, aiohttp.ClientError):
                return ClusterRef(name=self.cluster_name)
        return ClusterRef(name=self.cluster_name, uid=self._cluster_uid)

    async def deliver(self, delivery: Delivery) -> bool:
        return (await self.deliver_reporting(delivery)).ok

    async def deliver_reporting(self, delivery: Delivery) -> FanoutReport:
        if not delivery.sinks:
            return FanoutReport()  # L4: profiles with no sinks deliver nothing
        view = RunView(dict(delivery.run))
        plan = view.readable_plan()
        envelope = build_envelope(
            delivery.run,
            reason=str(delivery.reason),
            event_key=delivery.event_key,
            sent_at=self.now(),
            baseline=pinned_baseline(view, plan),
            planned=verdict_units(plan),
            cluster=await self.cluster(),
            # A large run's settled results live in evidence shards (docs/status-shards.md):
            # every envelope carries them in full (one GET per shard; none for a run that fits).
            shards=await read_evidence(self.fanout.client, dict(delivery.run)),
        )
        return await self.fanout.deliver(envelope, namespace=view.namespace, sinks=delivery.sinks)

"""Leader election on a `coordination.k8s.io/v1` Lease, as client-go does it.

Only the leader reconciles; standbys keep warm caches. Timing defaults are
client-go's (lease 15 s, renew deadline 10 s, retry 2 s) and so is the
validation: `lease_duration > renew_deadline > retry_period * 1.2`, all > 0.

Why the orderings matter: a leader that cannot renew for `renew_deadline`
gives up (and the manager exits) while a standby waits `lease_duration`
after it last *saw the lease change* before taking over. Expiry is judged on
the observer's own monotonic clock, never by comparing the lease's
`renewTime` with local wall time, so skewed clocks between nodes cannot
produce two leaders; the gap `lease_duration - renew_deadline` is the margin
for the old leader to stop before the new one starts.

Writes carry the lease's resourceVersion, so two candidates racing for an
expired lease cannot both win: the second update gets 409.

An election that cannot start for a reason retrying will not fix soon (the
Lease's namespace is missing, or RBAC forbids leases) is *blocked*: it is
logged as an error naming the fix, at most once per `GUIDANCE_INTERVAL`,
and `blocked_reason` says why so `/readyz` can. Attempts go on, since the
namespace or the Role may be created later.
"""

from __future__ import annotations

import asyncio
import random
import socket
import uuid
from collections.abc import Mapping
from typing import Any

import attrs
import structlog

from glimmer.engine.client import JSON, LEASES, ApiError, KubeClient, is_conflict, is_not_found
from glimmer.engine.clock import Clock, MonotonicClock, format_micro_time, wall_now
from glimmer.engine.metrics import EngineMetrics

log = structlog.get_logger("glimmer.engine.leaderelection")

JITTER_FACTOR = 1.2
"""client-go's `JitterFactor`: acquire retries wait retry_period * (1 + U[0, 1.2))."""

GUIDANCE_INTERVAL = 60.0
"""Seconds between repeats of the error line for an unchanged blocked reason."""


def default_identity() -> str:
    """hostname + "_" + a fresh uuid: unique even for two managers on one host."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


class LeadershipLostError(Exception):
    """The lease could not be renewed within the renew deadline."""


def blocked_reason(exc: BaseException, *, namespace: str) -> str | None:
    """Why a failed lease call will keep failing, with the fix; None if retrying may help.

    A 404 whose Status names the namespace (`details.kind: namespaces`, the
    apiserver's answer to a create in a missing namespace) means it is
    missing; a 404 on the lease itself is a race a retry resolves. A 403 is RBAC.
    """
    if not isinstance(exc, ApiError):
        return None
    details = exc.body.get("details") if isinstance(exc.body, dict) else None
    missing_kind = details.get("kind") if isinstance(details, dict) else None
    if exc.status == 404 and missing_kind == "namespaces":
        return (
            f'lease namespace "{namespace}" not found: create it '
            f"(kubectl create namespace {namespace}) or pass --leader-election-namespace"
        )
    if exc.status == 403:
        return (
            f'forbidden to use leases in namespace "{namespace}" ({exc}): the manager\'s '
            "ServiceAccount needs get, create and update on leases.coordination.k8s.io "
            f'in "{namespace}" (a Role and RoleBinding there)'
        )
    return None


def _validate(instance: LeaderElectionConfig) -> None:
    """client-go's `NewLeaderElector` checks, with its messages."""
    if instance.lease_duration <= instance.renew_deadline:
        raise ValueError("leaseDuration must be greater than renewDeadline")
    if instance.renew_deadline <= JITTER_FACTOR * instance.retry_period:
        raise ValueError("renewDeadline must be greater than retryPeriod*JitterFactor")
    if instance.lease_duration <= 0:
        raise ValueError("leaseDuration must be greater than zero")
    if instance.renew_deadline <= 0:
        raise ValueError("renewDeadline must be greater than zero")
    if instance.retry_period <= 0:
        raise ValueError("retryPeriod must be greater than zero")
    if not instance.identity:
        raise ValueError("Lock identity is empty")
    if not instance.lease_name or not instance.lease_namespace:
        raise ValueError("the lease needs a name and a namespace")


@attrs.frozen
class LeaderElectionConfig:
    """Which lease to hold, as whom, and how eagerly."""

    lease_name: str
    """Name of the Lease object."""
    lease_namespace: str
    """Namespace of the Lease object."""
    identity: str = attrs.field(factory=default_identity)
    """This candidate's holder identity (default: hostname_uuid)."""
    lease_duration: float = 15.0
    """Seconds a standby waits after last seeing the lease change before taking it."""
    renew_deadline: float = 10.0
    """Seconds the leader keeps retrying a renewal before giving up leadership."""
    retry_period: float = 2.0
    """Seconds between acquire/renew attempts."""
    release_on_cancel: bool = True
    """On a graceful stop, clear the holder so a standby takes over at once
    (client-go's `ReleaseOnCancel`; on here because rolling updates are the
    common case and a 15 s leaderless gap buys nothing)."""

    def __attrs_post_init__(self) -> None:
        _validate(self)


@attrs.frozen
class _Record:
    holder: str
    lease_duration_seconds: int
    acquire_time: str | None
    renew_time: str | None
    transitions: int

    @classmethod
    def from_lease(cls, lease: Mapping[str, Any]) -> _Record:
        spec = lease.get("spec") or {}
        return cls(
            holder=str(spec.get("holderIdentity") or ""),
            lease_duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
            acquire_time=spec.get("acquireTime"),
            renew_time=spec.get("renewTime"),
            transitions=int(spec.get("leaseTransitions") or 0),
        )

    def to_spec(self) -> JSON:
        return {
            "holderIdentity": self.holder,
            "leaseDurationSeconds": self.lease_duration_seconds,
            "acquireTime": self.acquire_time,
            "renewTime": self.renew_time,
            "leaseTransitions": self.transitions,
        }


#: Release tries: a conflict (a renew that landed after its cancel) is re-read once more.
RELEASE_ATTEMPTS = 3


class LeaderElector:
    """Acquires, holds and releases one Lease."""

    def __init__(
        self,
        client: KubeClient,
        config: LeaderElectionConfig,
        *,
        clock: Clock | None = None,
        metrics: EngineMetrics | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.client = client
        self.config = config
        self._clock: Clock = clock if clock is not None else MonotonicClock()
        self._metrics = metrics
        self._rng = rng or random.Random()
        self._observed: _Record | None = None
        self._observed_rv: str | None = None
        self._observed_time = 0.0
        self._leading = False
        self._blocked: str | None = None
        self._blocked_logged_at: float | None = None
        self._set_status(False)
        self._log = log.bind(lease=f"{config.lease_namespace}/{config.lease_name}",
                             identity=config.identity)  # fmt: skip

    @property
    def is_leader(self) -> bool:
        return self._leading

    @property
    def blocked_reason(self) -> str | None:
        """Why the election cannot proceed until someone acts (None when it can)."""
        return self._blocked

    @property
    def observed_holder(self) -> str:
        return self._observed.holder if self._observed is not None else ""

    def _set_status(self, leading: bool) -> None:
        self._leading = leading
        if self._metrics is not None:
            self._metrics.leader_election_status.labels(name=self.config.lease_name).set(
                1 if leading else 0
            )

    async def acquire(self) -> None:
        """Return once this candidate holds the lease (retries forever, jittered)."""
        self._log.info("attempting to acquire leader lease")
        while True:
            if await self._try_acquire_or_renew():
                self._set_status(True)
                self._log.info("acquired leader lease")
                return
            period = self.config.retry_period * (1.0 + self._rng.random() * JITTER_FACTOR)
            await self._clock.sleep(period)

    async def hold(self) -> None:
        """Renew every retry period; raise `LeadershipLostError` on a missed renew deadline."""
        while True:
            deadline = self._clock.now() + self.config.renew_deadline
            while not await self._try_acquire_or_renew(deadline=deadline):
                if self._clock.now() + self.config.retry_period >= deadline:
                    self._set_status(False)
                    self._log.error("failed to renew leader lease within the renew deadline")
                    raise LeadershipLostError(self.config.lease_name)
                await self._clock.sleep(self.config.retry_period)
            await self._clock.sleep(self.config.retry_period)

    async def release(self) -> None:
        """Give the lease up now (only if we still hold it)."""
        was_leading = self._leading
        self._set_status(False)
        if not was_leading or not self.config.release_on_cancel or self._observed is None:
            return
        if self._observed.holder != self.config.identity:
            return
        now = format_micro_time(wall_now())
        record = _Record(
            holder="",
            lease_duration_seconds=1,
            acquire_time=now,
            renew_time=now,
            transitions=self._observed.transitions,
        )
        for _ in range(RELEASE_ATTEMPTS):
            try:
                await self._update(record)
                self._log.info("released leader lease")
                return
            except ApiError as exc:
                if not is_conflict(exc):
                    self._log.warning("could not release leader lease", error=str(exc))
                    return
                # A renew cancelled mid-flight (shutdown cancels `hold`) may still have
                # reached the apiserver, so our resourceVersion is one behind: re-read
                # and release only if the lease is still ours.
                try:
                    self._observe(
                        await self.client.get(
                            LEASES, self.config.lease_name, namespace=self.config.lease_namespace
                        )
                    )
                except (ApiError, TimeoutError, OSError) as read_exc:
                    self._log.warning("could not release leader lease", error=str(read_exc))
                    return
                if self._observed is None or self._observed.holder != self.config.identity:
                    return
            except Exception as exc:
                self._log.warning("could not release leader lease", error=str(exc))
                return
        self._log.warning("could not release leader lease", error="conflicts on every attempt")

    async def _update(self, record: _Record) -> None:
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "name": self.config.lease_name,
                "namespace": self.config.lease_namespace,
                "resourceVersion": self._observed_rv,
            },
            "spec": record.to_spec(),
        }
        updated = await self.client.replace(LEASES, body, namespace=self.config.lease_namespace)
        self._observe(updated)

    def _observe(self, lease: Mapping[str, Any]) -> None:
        self._observed = _Record.from_lease(lease)
        self._observed_rv = str((lease.get("metadata") or {}).get("resourceVersion", ""))
        self._observed_time = self._clock.now()

    async def _try_acquire_or_renew(self, *, deadline: float | None = None) -> bool:
        budget = self.config.renew_deadline
        if deadline is not None:
            budget = max(0.001, deadline - self._clock.now())
        try:
            async with asyncio.timeout(budget):
                succeeded = await self._attempt()
        except (ApiError, TimeoutError, OSError) as exc:
            self._failed(exc, str(exc) or type(exc).__name__)
            return False
        except Exception as exc:
            # Transport errors of any kind are a failed attempt, never a crash:
            # the deadline logic decides when it becomes a lost lease.
            self._failed(exc, repr(exc))
            return False
        self._unblock()
        return succeeded

    def _failed(self, exc: BaseException, error: str) -> None:
        reason = blocked_reason(exc, namespace=self.config.lease_namespace)
        if reason is None:
            # Not a verdict on the block: only a success clears it.
            self._log.warning("lease attempt failed", error=error)
            return
        now = self._clock.now()
        repeat_due = (
            self._blocked_logged_at is None or now - self._blocked_logged_at >= GUIDANCE_INTERVAL
        )
        if reason != self._blocked or repeat_due:
            self._blocked_logged_at = now
            self._log.error("leader election cannot proceed", reason=reason, error=error)
        else:
            self._log.debug("lease attempt failed", reason=reason, error=error)
        self._blocked = reason

    def _unblock(self) -> None:
        if self._blocked is not None:
            self._log.info("leader election unblocked", was=self._blocked)
        self._blocked = None
        self._blocked_logged_at = None

    async def _attempt(self) -> bool:
        now_wall = format_micro_time(wall_now())
        cfg = self.config
        try:
            lease = await self.client.get(LEASES, cfg.lease_name, namespace=cfg.lease_namespace)
        except ApiError as exc:
            if not is_not_found(exc):
                raise
            record = _Record(cfg.identity, int(cfg.lease_duration), now_wall, now_wall, 0)
            created = await self.client.create(
                LEASES,
                {
                    "apiVersion": "coordination.k8s.io/v1",
                    "kind": "Lease",
                    "metadata": {"name": cfg.lease_name, "namespace": cfg.lease_namespace},
                    "spec": record.to_spec(),
                },
                namespace=cfg.lease_namespace,
            )
            self._observe(created)
            return True

        current = _Record.from_lease(lease)
        current_rv = str((lease.get("metadata") or {}).get("resourceVersion", ""))
        if self._observed is None or current != self._observed:
            self._observed = current
            self._observed_time = self._clock.now()
        self._observed_rv = current_rv

        held_by_other = current.holder and current.holder != cfg.identity
        expires = self._observed_time + current.lease_duration_seconds
        if held_by_other and expires > self._clock.now():
            return False

        if current.holder == cfg.identity:
            record = attrs.evolve(current, renew_time=now_wall,
                                  lease_duration_seconds=int(cfg.lease_duration))  # fmt: skip
        else:
            record = _Record(
                holder=cfg.identity,
                lease_duration_seconds=int(cfg.lease_duration),
                acquire_time=now_wall,
                renew_time=now_wall,
                transitions=current.transitions + 1,
            )
        await self._update(record)
        return True

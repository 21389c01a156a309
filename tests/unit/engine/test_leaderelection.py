"""Leader election on a Lease: client-go's validation and timing, on a fake clock."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from glimmer.engine import (
    LEASES,
    ApiError,
    EngineMetrics,
    FakeClient,
    FakeClock,
    LeaderElectionConfig,
    LeaderElector,
    LeadershipLostError,
    default_identity,
    settle,
)


async def run_for(clock: FakeClock, seconds: float, *, step: float = 0.1) -> None:
    """Advance fake time in small steps, letting woken tasks run after each."""
    for _ in range(round(seconds / step)):
        clock.advance(step)
        await settle()


def config(identity: str, **kwargs: Any) -> LeaderElectionConfig:
    return LeaderElectionConfig(
        lease_name="glimmer",
        lease_namespace="system",
        identity=identity,
        **kwargs,
    )


def elector(client: FakeClient, clock: FakeClock, identity: str, **kwargs: object) -> LeaderElector:
    return LeaderElector(
        client, config(identity, **kwargs), clock=clock, rng=random.Random(identity)
    )


def test_defaults_are_client_go_defaults() -> None:
    cfg = LeaderElectionConfig(lease_name="l", lease_namespace="n")
    assert (cfg.lease_duration, cfg.renew_deadline, cfg.retry_period) == (15.0, 10.0, 2.0)


@pytest.mark.parametrize(
    ("durations", "message"),
    [
        ((10.0, 10.0, 2.0), "leaseDuration must be greater than renewDeadline"),
        ((15.0, 2.4, 2.0), "renewDeadline must be greater than retryPeriod\\*JitterFactor"),
        ((15.0, 10.0, 0.0), "retryPeriod must be greater than zero"),
        ((15.0, 10.0, -1.0), "retryPeriod must be greater than zero"),
        ((15.0, -1.0, -2.0), "renewDeadline must be greater than zero"),
        ((-1.0, -2.0, -3.0), "leaseDuration must be greater than zero"),
    ],
)
def test_timing_validation_follows_client_go(
    durations: tuple[float, float, float], message: str
) -> None:
    lease, renew, retry = durations
    with pytest.raises(ValueError, match=message):
        LeaderElectionConfig(
            lease_name="l",
            lease_namespace="n",
            lease_duration=lease,
            renew_deadline=renew,
            retry_period=retry,
        )


def test_renew_deadline_just_above_retry_times_jitter_is_accepted() -> None:
    LeaderElectionConfig(lease_name="l", lease_namespace="n", renew_deadline=2.41, retry_period=2.0)


def test_empty_identity_is_refused() -> None:
    with pytest.raises(ValueError, match="identity is empty"):
        LeaderElectionConfig(lease_name="l", lease_namespace="n", identity="")


def test_identity_is_hostname_underscore_uuid() -> None:
    import socket
    import uuid

    host, _, suffix = default_identity().rpartition("_")
    assert host == socket.gethostname()
    uuid.UUID(suffix)


async def test_first_candidate_creates_the_lease_and_leads() -> None:
    client, clock = FakeClient(), FakeClock()
    metrics = EngineMetrics()
    a = LeaderElector(client, config("a"), clock=clock, metrics=metrics)
    await asyncio.wait_for(a.acquire(), 1)
    lease = await client.get(LEASES, "glimmer", namespace="system")
    assert lease["spec"]["holderIdentity"] == "a"
    assert lease["spec"]["leaseDurationSeconds"] == 15
    assert lease["spec"]["leaseTransitions"] == 0
    assert a.is_leader
    assert (
        metrics.registry.get_sample_value("glimmer_leader_election_status", {"name": "glimmer"})
        == 1
    )


async def test_standby_waits_while_the_leader_renews() -> None:
    client, clock = FakeClient(), FakeClock()
    a, b = elector(client, clock, "a"), elector(client, clock, "b")
    await a.acquire()
    holding = asyncio.create_task(a.hold())
    waiting = asyncio.create_task(b.acquire())
    await run_for(clock, 60.0)
    assert not waiting.done() and not b.is_leader
    lease = await client.get(LEASES, "glimmer", namespace="system")
    assert lease["spec"]["holderIdentity"] == "a"
    holding.cancel()
    waiting.cancel()


async def test_standby_takes_over_a_crashed_leader_after_lease_duration() -> None:
    client, clock = FakeClient(), FakeClock()
    a, b = elector(client, clock, "a"), elector(client, clock, "b")
    await a.acquire()
    holding = asyncio.create_task(a.hold())
    waiting = asyncio.create_task(b.acquire())
    await run_for(clock, 5.0)
    holding.cancel()  # a crashes: no release, renewals just stop
    crashed_at = clock.now()
    await settle()
    while not waiting.done():
        await run_for(clock, 0.1)
        assert clock.now() - crashed_at < 25, "standby never took over"
    took = clock.now() - crashed_at
    # b last saw the lease change at the last renewal (<= retry period before the crash).
    assert 15.0 - 2.0 <= took <= 15.0 + 2.0 * 2.2 + 0.2
    lease = await client.get(LEASES, "glimmer", namespace="system")
    assert lease["spec"]["holderIdentity"] == "b"
    assert lease["spec"]["leaseTransitions"] == 1


async def test_release_lets_the_standby_take_over_at_its_next_retry() -> None:
    client, clock = FakeClient(), FakeClock()
    a, b = elector(client, clock, "a"), elector(client, clock, "b")
    await a.acquire()
    waiting = asyncio.create_task(b.acquire())
    await run_for(clock, 1.0)
    await a.release()
    assert not a.is_leader
    released_at = clock.now()
    while not waiting.done():
        await run_for(clock, 0.1)
    assert clock.now() - released_at <= 2.0 * 2.2 + 0.2


async def test_release_after_a_renew_that_landed_unseen_still_frees_the_lease() -> None:
    # Shutdown cancels `hold` mid-renew: the apiserver may have applied that renew while
    # we never saw its answer, so our resourceVersion is one behind (a 409 on release).
    client, clock = FakeClient(), FakeClock()
    a = elector(client, clock, "a")
    await a.acquire()
    lease = await client.get(LEASES, "glimmer", namespace="system")
    lease["spec"]["renewTime"] = "2026-12-01T00:00:09.000000Z"
    renewed = await client.replace(LEASES, lease, namespace="system")  # the unseen renew
    assert renewed["metadata"]["resourceVersion"] != lease["metadata"]["resourceVersion"]
    await a.release()
    lease = await client.get(LEASES, "glimmer", namespace="system")
    assert lease["spec"]["holderIdentity"] == ""


async def test_release_never_frees_a_lease_someone_else_took_meanwhile() -> None:
    client, clock = FakeClient(), FakeClock()
    a = elector(client, clock, "a")
    await a.acquire()
    lease = await client.get(LEASES, "glimmer", namespace="system")
    lease["spec"]["holderIdentity"] = "b"
    await client.replace(LEASES, lease, namespace="system")
    await a.release()
    lease = await client.get(LEASES, "glimmer", namespace="system")
    assert lease["spec"]["holderIdentity"] == "b"


async def test_leader_gives_up_when_renewals_fail_for_the_renew_deadline() -> None:
    client, clock = FakeClient(), FakeClock()
    a = elector(client, clock, "a")
    await a.acquire()
    holding = asyncio.create_task(a.hold())
    await run_for(clock, 4.0)
    assert not holding.done()
    client.inject_error("get", ApiError(status=503, reason="ServiceUnavailable"), times=1000)
    failing_since = clock.now()
    while not holding.done():
        await run_for(clock, 0.1)
        assert clock.now() - failing_since < 20
    with pytest.raises(LeadershipLostError):
        holding.result()
    assert not a.is_leader
    # Gave up within the deadline measured from the first failed renewal.
    assert clock.now() - failing_since <= 10.0 + 2.0 + 0.2


class _InterleavingClient(FakeClient):
    """Yields after every read, so two candidates' reads both land before either write."""

    async def get(self, *args: Any, **kwargs: Any) -> Any:
        result = await super().get(*args, **kwargs)
        await asyncio.sleep(0)
        return result


async def test_two_candidates_racing_for_a_free_lease_cannot_both_win() -> None:
    client, clock = _InterleavingClient(), FakeClock()
    a = elector(client, clock, "a")
    await a.acquire()
    await a.release()
    b, c = elector(client, clock, "b"), elector(client, clock, "c")
    results = await asyncio.gather(b._try_acquire_or_renew(), c._try_acquire_or_renew())
    assert sorted(results) == [False, True], "the resourceVersion precondition must pick one"
    lease = await client.get(LEASES, "glimmer", namespace="system")
    winner = "b" if results[0] else "c"
    assert lease["spec"]["holderIdentity"] == winner

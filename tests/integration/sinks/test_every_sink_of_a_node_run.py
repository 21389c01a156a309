"""Every sink of a Node run end to end (L4-L8, E19): the operator in-process, the real
apiserver, the simulated kubelet, and a real HTTPS receiver with a CA made here."""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from glimmer.contract.envelope import Envelope, decode, delivery_id
from glimmer.controllers.kit import names
from glimmer.controllers.kit.names import RUNS
from glimmer.engine import CONFIGMAPS, ApiServerClient
from glimmer.sinks import verify
from glimmer.sinks.fanout import SECRETS, SINKS
from glimmer.testing import EmbeddedOperator
from tests.integration.run.conftest import (
    FAST_RUN_OPTIONS,
    apply_profile,
    create_run,
    custom,
    terminal_run,
    wait_for,
)
from tests.unit.sinks.receiver import Receiver

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(240)]

KEY = b"shared-signing-key"
SINKS_PINNED = ["hook", "store", "prom"]
TESTS = {
    "first": custom("echo gpuTempC=61; echo bw=12"),
    "second": custom("echo gpuTempC=63; echo CUSTOM_PASS"),
}


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


async def install_sinks(kube: ApiServerClient, namespace: str, receiver: Receiver) -> None:
    secret = {"metadata": {"name": "hook-secrets"},
              "data": {"token": b64("tok-1\n"), "ca.crt": b64(receiver.ca_pem),
                       "signing": b64(KEY.decode())}}  # fmt: skip
    await kube.create(SECRETS, secret, namespace=namespace)
    ref = {"name": "hook-secrets"}
    sinks = {
        "hook": {"type": "Webhook", "webhook": {
            "url": receiver.url, "tokenSecretRef": {**ref, "key": "token"},
            "caSecretRef": {**ref, "key": "ca.crt"},
            "signingSecretRef": {**ref, "key": "signing"}}},
        "store": {"type": "ConfigMap", "configMap": {"name": "verdicts"}},
        "prom": {"type": "Prometheus"},
    }  # fmt: skip
    for name, spec in sinks.items():
        body = {"apiVersion": "burnin.glimmer.ai/v1alpha1", "kind": "BurnInSink",
                "metadata": {"name": name}, "spec": spec}  # fmt: skip
        await kube.create(SINKS, body, namespace=namespace)


def accepted(receiver: Receiver) -> list[Envelope]:
    return [decode(r.body) for r in receiver.accepted()]


def unique_in_order(envelopes: list[Envelope]) -> list[Envelope]:
    """At-least-once delivery: the receiver keeps the first of each deliveryId."""
    seen: dict[str, Envelope] = {}
    for env in envelopes:
        seen.setdefault(env.delivery_id, env)
    return list(seen.values())


@pytest_asyncio.fixture(loop_scope="function")
async def operator(control_plane: Any, sink_crds: None) -> AsyncIterator[EmbeddedOperator]:
    op = EmbeddedOperator(kubeconfig=control_plane.kubeconfig_path, run_options=FAST_RUN_OPTIONS)
    await op.start()
    try:
        yield op
    finally:
        await op.stop()


async def test_L4_L6_every_envelope_of_a_node_run_arrives_in_order_signed_and_once_per_id(
    operator: EmbeddedOperator,
    kube: ApiServerClient,
    namespace: str,
    sim_nodes: Any,
    receiver: Receiver,
) -> None:
    nodes = sim_nodes(count=1)
    node = nodes.names[0]
    await install_sinks(kube, namespace, receiver)
    await apply_profile(kube, namespace, TESTS, sinks=SINKS_PINNED)
    await create_run(kube, namespace, "acc", nodes.names)
    run = await terminal_run(kube, namespace, "acc")
    assert run["status"]["phase"] == "Passed", run["status"]
    uid = run["metadata"]["uid"]

    got = unique_in_order(accepted(receiver))
    assert [e.reason for e in got] == [
        "RunPhaseChanged", "TestCompleted", "TestCompleted", "RunPhaseChanged",
    ]  # fmt: skip
    assert (got[0].phase, got[1].phase, got[-1].phase) == ("Running", "Running", "Passed")
    keys = ["Running", f"first/{node}", f"second/{node}", "Passed"]
    assert [e.delivery_id for e in got] == [
        delivery_id(uid, e.reason, k) for e, k in zip(got, keys, strict=True)
    ]
    # Duplicates of an id (a pass retried after a conflict) are the same delivery.
    for env in accepted(receiver):
        first = next(g for g in got if g.delivery_id == env.delivery_id)
        assert (env.reason, env.phase, env.run) == (first.reason, first.phase, first.run)
    # Cumulative: each envelope carries every result recorded so far.
    counts = [len(e.results) for e in got]
    assert counts == sorted(counts) and counts[-1] == 2, counts
    assert got[1].results[0].name == "first" and got[1].results[0].phase == "Passed"
    terminal = got[-1]
    assert (terminal.summary.passed, terminal.summary.failed) == (2, 0)
    assert terminal.run.namespace == namespace and terminal.run.profile == "prof"
    assert terminal.results[0].metrics["gpuTempC"] == "61"
    for r in receiver.accepted():
        assert r.headers["Content-Type"] == "application/json"
        assert r.headers["Authorization"] == "Bearer tok-1"
        assert r.headers["Idempotency-Key"] == decode(r.body).delivery_id
        signed_at = int(r.headers["X-Glimmer-Signature"].split(",")[0][2:])
        assert verify(r.body, r.headers["X-Glimmer-Signature"], key=KEY, now=signed_at)

    # L7: the ConfigMap holds exactly what the webhook accepted, per deliveryId.
    cm = await kube.get(CONFIGMAPS, "verdicts", namespace=namespace)
    last_by_id = {decode(r.body).delivery_id: r.body.decode() for r in receiver.accepted()}
    assert cm["data"] == last_by_id

    # L5: each sink recorded its last success; E19: the run recorded the terminal one.
    for name in SINKS_PINNED:
        status = (await kube.get(SINKS, name, namespace=namespace)).get("status") or {}
        assert status.get("lastDelivery") and not status.get("lastError"), (name, status)
    sink_status = run["status"]["sinkStatus"]
    assert set(sink_status) == set(SINKS_PINNED)
    assert all(v.startswith("Delivered ") for v in sink_status.values()), sink_status

    # L8: the run's families on the manager's /metrics registry, until it is deleted.
    registry = operator.metrics.registry
    labels_ = {"namespace": namespace, "run": "acc"}
    assert (
        registry.get_sample_value(
            "burnin_run_phase", {**labels_, "profile": "prof", "phase": "Passed"}
        )
        == 1
    )
    assert registry.get_sample_value("burnin_run_tests", {**labels_, "phase": "Passed"}) == 2
    metric = {**labels_, "test": "first", "kind": "custom", "scope": "Node", "node": node,
              "metric": "gpuTempC", "unit": "C", "threshold_use": "Acceptance"}  # fmt: skip
    assert registry.get_sample_value("burnin_test_metric", metric) == 61
    assert registry.get_sample_value("workqueue_adds_total", {"name": "burninrun"})
    await kube.delete(RUNS, "acc", namespace=namespace)

    async def forgotten() -> bool:
        value = registry.get_sample_value("burnin_run_tests", {**labels_, "phase": "Passed"})
        return value is None

    await wait_for(forgotten, what="the deleted run's burnin_* series to go")


async def test_E19_a_refused_terminal_envelope_is_re_sent_after_the_retry_period(
    control_plane: Any,
    sink_crds: None,
    kube: ApiServerClient,
    namespace: str,
    sim_nodes: Any,
    receiver: Receiver,
) -> None:
    nodes = sim_nodes(count=1)
    await install_sinks(kube, namespace, receiver)
    await apply_profile(kube, namespace, {"only": TESTS["first"]}, sinks=["hook"])

    def terminal(body: bytes) -> bool:
        doc = json.loads(body)
        return bool(doc["reason"] == "RunPhaseChanged" and doc["phase"] == "Passed")

    receiver.refuse = terminal  # the receiver is down for the terminal envelope
    options = dataclasses.replace(FAST_RUN_OPTIONS, terminal_delivery_retry_seconds=2)
    async with EmbeddedOperator(kubeconfig=control_plane.kubeconfig_path, run_options=options):
        await create_run(kube, namespace, "late", nodes.names)
        run = await terminal_run(kube, namespace, "late")
        assert run["status"]["phase"] == "Passed"

        async def pending() -> dict[str, Any] | None:
            current = await kube.get(RUNS, "late", namespace=namespace)
            notes = current["metadata"].get("annotations") or {}
            return current if notes.get(names.PENDING_TERMINAL_DELIVERY) == "Passed" else None

        held = await wait_for(pending, what="the pending-terminal-delivery annotation")
        assert held["status"]["sinkStatus"]["hook"].startswith("Failed "), held["status"]
        assert held["status"]["phase"] == "Passed"  # a failed delivery never changes the run
        refused = [r for r in receiver.received if r.status == 503]
        assert refused and all(terminal(r.body) for r in refused), receiver.received
        assert not any(terminal(r.body) for r in receiver.accepted())
        status = (await kube.get(SINKS, "hook", namespace=namespace))["status"]
        assert "HTTP 503" in status["lastError"]
        receiver.refuse = None  # the receiver is back

        async def delivered() -> dict[str, Any] | None:
            current = await kube.get(RUNS, "late", namespace=namespace)
            notes = current["metadata"].get("annotations") or {}
            done = names.PENDING_TERMINAL_DELIVERY not in notes
            arrived = any(terminal(r.body) for r in receiver.accepted())
            return current if done and arrived else None

        final = await wait_for(delivered, timeout=60, what="the terminal envelope re-sent")
        assert final["status"]["sinkStatus"]["hook"].startswith("Delivered ")
        # At least once (L5): a re-send whose success was not yet recorded may repeat,
        # and the receiver dedupes by deliveryId, so every copy is the same delivery.
        arrived = {decode(r.body).delivery_id for r in receiver.accepted() if terminal(r.body)}
        assert arrived == {decode(refused[0].body).delivery_id}
        status = (await kube.get(SINKS, "hook", namespace=namespace))["status"]
        assert status.get("lastDelivery") and not status.get("lastError")


async def test_L5_a_broken_sink_never_changes_the_run(
    operator: EmbeddedOperator,
    kube: ApiServerClient,
    namespace: str,
    sim_nodes: Any,
) -> None:
    nodes = sim_nodes(count=1)
    await apply_profile(kube, namespace, {"only": TESTS["first"]}, sinks=["ghost"])
    await create_run(kube, namespace, "lonely", nodes.names)
    run = await terminal_run(kube, namespace, "lonely")
    assert run["status"]["phase"] == "Passed"

    async def recorded() -> dict[str, Any] | None:
        # The delivery outcome is written after the terminal phase, by the delivery.
        current = await kube.get(RUNS, "lonely", namespace=namespace)
        return current if "ghost" in (current["status"].get("sinkStatus") or {}) else None

    run = await wait_for(recorded, what="the missing sink's status")
    assert run["status"]["phase"] == "Passed"  # a broken sink never changes the run
    assert "BurnInSink" in run["status"]["sinkStatus"]["ghost"]
    notes = run["metadata"].get("annotations") or {}
    assert notes.get(names.PENDING_TERMINAL_DELIVERY) == "Passed"

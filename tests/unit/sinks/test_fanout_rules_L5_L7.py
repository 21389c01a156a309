"""Fan-out (L5), webhook (L6) and ConfigMap (L7) against a fake apiserver and a real
HTTPS receiver on loopback."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest
import pytest_asyncio

from glimmer.contract.envelope import Envelope, RunRef, TestResult, decode, encode
from glimmer.controllers.run.delivery import Delivery, Reason, SinkDeliverer
from glimmer.engine import CONFIGMAPS, NAMESPACES, ApiError, FakeClient
from glimmer.sinks import FanoutOptions, RunExporter, SinkFanout, verify
from glimmer.sinks.configmap import CONFIGMAP_BUDGET_BYTES
from glimmer.sinks.destinations import DestinationGuard
from glimmer.sinks.fanout import SECRETS, SINKS
from tests.unit.sinks.receiver import Receiver

NS = "team"
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
WALL = 1_796_126_400.0
#: The test receiver listens on loopback, which the manager's guard refuses by default.
RECEIVER_ALLOWED = DestinationGuard.from_flags(allow=["127.0.0.1"])


def envelope(reason: str = "RunPhaseChanged", did: str = "a" * 32, **kw: Any) -> Envelope:
    base = Envelope(
        delivery_id=did, reason=reason, sent_at="2026-12-01T12:00:00Z",
        run=RunRef(namespace=NS, name="r", uid="u"), phase="Passed",
        results=(TestResult(name="t", kind="custom", phase="Passed", nodes=("n",)),),
    )  # fmt: skip
    return dataclasses.replace(base, **kw)


class Sleeps:
    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


@pytest_asyncio.fixture(loop_scope="function")
async def receiver() -> AsyncIterator[Receiver]:
    r = Receiver()
    await r.start()
    try:
        yield r
    finally:
        await r.stop()


async def secret(client: FakeClient, name: str, **data: str) -> None:
    encoded = {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}
    body = {"metadata": {"name": name, "namespace": NS}, "data": encoded}
    await client.create(SECRETS, body, namespace=NS)


async def sink(client: FakeClient, name: str, spec: dict[str, Any]) -> None:
    await client.create(SINKS, {"apiVersion": "burnin.glimmer.ai/v1alpha1", "kind": "BurnInSink",
                                "metadata": {"name": name, "namespace": NS}, "spec": spec},
                        namespace=NS)  # fmt: skip


async def webhook(client: FakeClient, receiver: Receiver, name: str = "hook", **extra: Any) -> None:
    await secret(client, "ca", pem=receiver.ca_pem)
    await secret(client, "tok", token="s3cret\n")
    await secret(client, "sig", key="signing-key")
    await sink(client, name, {"type": "Webhook", "webhook": {
        "url": receiver.url, "tokenSecretRef": {"name": "tok", "key": "token"},
        "caSecretRef": {"name": "ca", "key": "pem"},
        "signingSecretRef": {"name": "sig", "key": "key"}, **extra}})  # fmt: skip


def fanout(client: FakeClient, **options: Any) -> tuple[SinkFanout, Sleeps]:
    sleeps = Sleeps()
    options.setdefault("destinations", RECEIVER_ALLOWED)
    return SinkFanout(client=client, options=FanoutOptions(**options), wall=lambda: WALL,
                      now=lambda: NOW, sleep=sleeps, exporter=RunExporter()), sleeps  # fmt: skip


async def sink_status(client: FakeClient, name: str) -> dict[str, Any]:
    return dict((await client.get(SINKS, name, namespace=NS)).get("status") or {})


async def test_L6_webhook_posts_the_envelope_with_its_headers_and_a_valid_signature(
    receiver: Receiver,
) -> None:
    client = FakeClient()
    await webhook(client, receiver)
    out, _ = fanout(client)
    env = envelope()
    report = await out.deliver(env, namespace=NS, sinks=["hook"])
    assert report.ok, report
    [got] = receiver.received
    assert got.body == encode(env) and decode(got.body) == env
    assert got.headers["Content-Type"] == "application/json"
    assert got.headers["Idempotency-Key"] == env.delivery_id
    assert got.headers["Authorization"] == "Bearer s3cret"  # trimmed, as a file's newline
    assert verify(got.body, got.headers["X-Glimmer-Signature"], key=b"signing-key", now=WALL)
    assert (await sink_status(client, "hook")) == {"lastDelivery": "2026-12-01T12:00:00.000Z"}


async def test_L6_tls_is_verified_a_receiver_the_system_store_does_not_trust_is_refused(
    receiver: Receiver,
) -> None:
    client = FakeClient()
    await sink(client, "hook", {"type": "Webhook", "webhook": {"url": receiver.url}})
    out, _ = fanout(client)
    report = await out.deliver(envelope(), namespace=NS, sinks=["hook"])
    assert not report.ok and "Certificate" in report.outcomes[0].error
    assert receiver.received == []


async def test_L6_insecure_skip_verify_is_honoured(receiver: Receiver) -> None:
    client = FakeClient()
    spec = {"type": "Webhook", "webhook": {"url": receiver.url, "insecureSkipVerify": True}}
    await sink(client, "hook", spec)
    out, _ = fanout(client)
    assert (await out.deliver(envelope(), namespace=NS, sinks=["hook"])).ok
    assert "Authorization" not in receiver.received[0].headers
    assert "X-Glimmer-Signature" not in receiver.received[0].headers


async def test_L6_4xx_is_permanent_one_attempt_and_records_the_code_never_the_body(
    receiver: Receiver,
) -> None:
    client = FakeClient()
    await webhook(client, receiver)
    receiver.reply = b"internal-secret " * 300
    receiver.script.extend([400])
    out, sleeps = fanout(client)
    report = await out.deliver(envelope(), namespace=NS, sinks=["hook"])
    assert not report.ok and len(receiver.received) == 1 and sleeps.calls == []
    error = report.outcomes[0].error
    assert error == f"POST {receiver.url}: HTTP 400 Bad Request from the receiver"
    assert "internal-secret" not in error
    assert (await sink_status(client, "hook"))["lastError"] == error


@pytest.mark.parametrize("status", [500, 503, 408, 429])
async def test_L5_L6_retryable_answers_get_a_second_attempt_a_second_later(
    receiver: Receiver, status: int
) -> None:
    client = FakeClient()
    await webhook(client, receiver)
    receiver.script.extend([status])
    out, sleeps = fanout(client)
    report = await out.deliver(envelope(), namespace=NS, sinks=["hook"])
    assert report.ok and [r.status for r in receiver.received] == [status, 200]
    assert sleeps.calls == [1.0]
    assert receiver.received[0].body == receiver.received[1].body  # the same document
    assert (
        receiver.received[0].headers["Idempotency-Key"]
        == receiver.received[1].headers["Idempotency-Key"]
    )


async def test_L5_two_attempts_at_most_and_success_clears_last_error(receiver: Receiver) -> None:
    client = FakeClient()
    await webhook(client, receiver)
    receiver.script.extend([503, 503])
    out, _ = fanout(client)
    assert not (await out.deliver(envelope(), namespace=NS, sinks=["hook"])).ok
    assert len(receiver.received) == 2
    assert "HTTP 503" in (await sink_status(client, "hook"))["lastError"]
    assert (await out.deliver(envelope(), namespace=NS, sinks=["hook"])).ok
    assert (await sink_status(client, "hook")) == {"lastDelivery": "2026-12-01T12:00:00.000Z"}


async def test_L6_a_rotated_token_is_read_for_each_delivery(receiver: Receiver) -> None:
    client = FakeClient()
    await webhook(client, receiver)
    out, _ = fanout(client)
    await out.deliver(envelope(), namespace=NS, sinks=["hook"])
    current = await client.get(SECRETS, "tok", namespace=NS)
    current["data"] = {"token": base64.b64encode(b"rotated").decode()}
    await client.replace(SECRETS, current, namespace=NS)
    await out.deliver(envelope(did="b" * 32), namespace=NS, sinks=["hook"])
    assert [r.headers["Authorization"] for r in receiver.received] == [
        "Bearer s3cret", "Bearer rotated",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("spec", "secrets", "needle"),
    [
        ({"type": "Webhook"}, {}, "needs webhook.url"),
        ({"type": "ConfigMap"}, {}, "needs configMap.name"),
        ({"type": "Carrier-Pigeon"}, {}, "unknown type"),
        ({"type": "Webhook", "webhook": {"url": "ftp://x/", "insecureSkipVerify": True}}, {},
         "not an absolute http(s) URL"),
        ({"type": "Webhook", "webhook": {"url": "https://127.0.0.1:1/",
          "tokenSecretRef": {"name": "nope", "key": "token"}}}, {}, "Secret team/nope not found"),
        ({"type": "Webhook", "webhook": {"url": "https://127.0.0.1:1/",
          "tokenSecretRef": {"name": "tok", "key": "token"}}}, {"other": "x"}, "has no key"),
        ({"type": "Webhook", "webhook": {"url": "https://127.0.0.1:1/",
          "tokenSecretRef": {"name": "tok", "key": "token"}}}, {"token": " \n"}, "is empty"),
        ({"type": "Webhook", "webhook": {"url": "https://127.0.0.1:1/",
          "caSecretRef": {"name": "tok", "key": "token"}}}, {"token": "not pem"}, "CA bundle"),
    ],
)  # fmt: skip
async def test_L5_configuration_faults_are_permanent_failures(
    spec: dict[str, Any], secrets: dict[str, str], needle: str
) -> None:
    client = FakeClient()
    if secrets:
        await secret(client, "tok", **secrets)
    await sink(client, "s", spec)
    out, sleeps = fanout(client)
    report = await out.deliver(envelope(), namespace=NS, sinks=["s"])
    assert not report.ok and needle in report.outcomes[0].error, report
    assert sleeps.calls == []  # permanent: no second attempt
    assert needle in (await sink_status(client, "s"))["lastError"]


async def test_L5_a_missing_sink_fails_and_the_others_still_deliver(receiver: Receiver) -> None:
    client = FakeClient()
    await webhook(client, receiver)
    await sink(client, "prom", {"type": "Prometheus"})
    out, _ = fanout(client)
    report = await out.deliver(envelope(), namespace=NS, sinks=["ghost", "hook", "prom"])
    assert [(o.sink, o.delivered) for o in report.outcomes] == [
        ("ghost", False), ("hook", True), ("prom", True),
    ]  # fmt: skip
    assert "BurnInSink team/ghost not found" in report.outcomes[0].error
    assert not report.ok
    assert out.exporter is not None and out.exporter.tracked == [(NS, "r")]


async def test_L5_one_budget_bounds_the_whole_fan_out() -> None:
    # A receiver that accepts the connection and never answers.
    async def hang(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(60)

    server = await asyncio.start_server(hang, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    client = FakeClient()
    for name in ("a", "b"):
        await sink(
            client, name, {"type": "Webhook", "webhook": {"url": f"http://127.0.0.1:{port}/"}}
        )
    out, _ = fanout(client, budget_seconds=0.5)
    try:
        report = await asyncio.wait_for(out.deliver(envelope(), namespace=NS, sinks=["a", "b"]), 5)
    finally:
        server.close()
    assert not report.ok
    assert all("budget" in o.error or "Timeout" in o.error for o in report.outcomes), report


async def test_L2_an_invalid_envelope_is_never_sent(receiver: Receiver) -> None:
    client = FakeClient()
    await webhook(client, receiver)
    out, _ = fanout(client)
    bad = envelope(results=(TestResult(name="t", metrics={"bad_name": "1"}),))
    report = await out.deliver(bad, namespace=NS, sinks=["hook"])
    assert not report.ok and "invalid envelope" in report.outcomes[0].error
    assert receiver.received == []


async def test_L5_no_sinks_deliver_nothing_and_succeed() -> None:
    out, _ = fanout(FakeClient())
    assert (await out.deliver(envelope(), namespace=NS, sinks=[])).ok


# --- ConfigMap (L7) ----------------------------------------------------------------


async def cm_data(client: FakeClient, name: str = "verdicts") -> dict[str, str]:
    return dict((await client.get(CONFIGMAPS, name, namespace=NS)).get("data") or {})


async def sink_configmap(client: FakeClient, data: dict[str, str], sink_name: str = "cm") -> None:
    """``verdicts`` as the sink would have created it (its label and owner reference)."""
    owner = await client.get(SINKS, sink_name, namespace=NS)
    meta = {"name": "verdicts", "namespace": NS, "labels": {"burnin.glimmer.ai/sink": sink_name},
            "ownerReferences": [{"apiVersion": "burnin.glimmer.ai/v1alpha1",
                                 "kind": "BurnInSink", "name": sink_name,
                                 "uid": owner["metadata"]["uid"]}]}  # fmt: skip
    await client.create(CONFIGMAPS, {"metadata": meta, "data": data}, namespace=NS)


async def test_L7_one_entry_per_delivery_created_if_absent_identical_is_a_no_op() -> None:
    client = FakeClient()
    await sink(client, "cm", {"type": "ConfigMap", "configMap": {"name": "verdicts"}})
    out, _ = fanout(client)
    first, second = envelope(), envelope(did="b" * 32, reason="TestCompleted")
    assert (await out.deliver(first, namespace=NS, sinks=["cm"])).ok
    assert (await out.deliver(second, namespace=NS, sinks=["cm"])).ok
    data = await cm_data(client)
    assert data == {first.delivery_id: encode(first).decode(),
                    second.delivery_id: encode(second).decode()}  # fmt: skip
    cm = await client.get(CONFIGMAPS, "verdicts", namespace=NS)
    owner = await client.get(SINKS, "cm", namespace=NS)
    assert cm["metadata"]["labels"] == {"burnin.glimmer.ai/sink": "cm"}
    assert cm["metadata"]["ownerReferences"] == [
        {"apiVersion": "burnin.glimmer.ai/v1alpha1", "kind": "BurnInSink", "name": "cm",
         "uid": owner["metadata"]["uid"], "controller": True}
    ]  # fmt: skip
    writes = len([r for r in client.requests if r.verb in ("create", "replace")])
    assert (await out.deliver(first, namespace=NS, sinks=["cm"])).ok  # a retry
    assert len([r for r in client.requests if r.verb in ("create", "replace")]) == writes


async def test_L7_over_the_900_kib_budget_is_permanent_and_never_evicts() -> None:
    client = FakeClient()
    filler = "x" * (CONFIGMAP_BUDGET_BYTES - 100)  # the envelope is ~300 bytes
    await sink(client, "cm", {"type": "ConfigMap", "configMap": {"name": "verdicts"}})
    await sink_configmap(client, {"old": filler})
    out, sleeps = fanout(client)
    report = await out.deliver(envelope(), namespace=NS, sinks=["cm"])
    assert not report.ok and "921600-byte budget" in report.outcomes[0].error
    assert sleeps.calls == []
    assert await cm_data(client) == {"old": filler}


async def test_L7_a_concurrent_writer_is_merged_never_overwritten() -> None:
    client = FakeClient()
    await sink(client, "cm", {"type": "ConfigMap", "configMap": {"name": "verdicts"}})
    out, _ = fanout(client)
    envs = [envelope(did=f"{i:032x}") for i in range(6)]
    reports = await asyncio.gather(*(out.deliver(e, namespace=NS, sinks=["cm"]) for e in envs))
    assert all(r.ok for r in reports)
    assert set(await cm_data(client)) == {e.delivery_id for e in envs}
    assert (
        json.loads((await cm_data(client))[envs[0].delivery_id])["deliveryId"]
        == envs[0].delivery_id
    )


async def test_L7_a_conflicting_write_is_read_again_never_overwritten_blind() -> None:
    client = FakeClient()
    await sink(client, "cm", {"type": "ConfigMap", "configMap": {"name": "verdicts"}})
    await sink_configmap(client, {"old": "{}"})
    client.inject_error("replace", ApiError(status=409, reason="Conflict"))
    out, sleeps = fanout(client)
    env = envelope()
    assert (await out.deliver(env, namespace=NS, sinks=["cm"])).ok
    assert sleeps.calls == []  # merged within the attempt, not retried a second later
    assert set(await cm_data(client)) == {"old", env.delivery_id}


async def test_L1_sink_deliverer_sends_the_cluster_only_when_named_and_the_pinned_baseline() -> (
    None
):
    client = FakeClient()
    await client.create(NAMESPACES, {"metadata": {"name": "kube-system"}})
    ks_uid = (await client.get(NAMESPACES, "kube-system"))["metadata"]["uid"]
    await sink(client, "cm", {"type": "ConfigMap", "configMap": {"name": "verdicts"}})
    run = {
        "metadata": {"namespace": NS, "name": "r", "uid": "u"},
        "spec": {"profileRef": "p", "baseline": True},
        "status": {"phase": "Running"},
    }
    for name in ("", "lab-7"):
        deliverer = SinkDeliverer(fanout=fanout(client)[0], now=lambda: NOW, cluster_name=name)
        delivery = Delivery(Reason.RUN_PHASE_CHANGED, "Running", run, ("cm",))
        assert await deliverer.deliver(delivery)
        [stored] = (await cm_data(client)).values()
        env = decode(stored)
        if name:
            assert env.cluster is not None and (env.cluster.name, env.cluster.uid) == (name, ks_uid)
        else:
            assert env.cluster is None and b'"cluster"' not in stored.encode()
        assert env.baseline  # no plan pinned: the spec's value
        await client.delete(CONFIGMAPS, "verdicts", namespace=NS)

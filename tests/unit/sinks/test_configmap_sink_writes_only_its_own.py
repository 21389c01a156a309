"""A ConfigMap sink writes only the ConfigMap it created (L7): never a confused deputy.

Whoever may create a BurnInSink may not be allowed to write ``payments-app-config``;
the manager may. So the manager writes a ConfigMap only when it carries the sink's
label and an ownerReference to the sink by UID, and refuses any other untouched.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from glimmer.engine import CONFIGMAPS, ApiError, FakeClient, Resource
from glimmer.sinks import FanoutOptions, SinkFanout
from glimmer.sinks.configmap import SINK_LABEL
from glimmer.sinks.fanout import SINKS
from tests.unit.sinks.test_fanout_rules_L5_L7 import NS, envelope

APP_DATA = {"DATABASE_URL": "postgres://payments", "FEATURE_X": "on"}


async def configmap_sink(client: FakeClient, name: str, target: str) -> dict[str, Any]:
    body = {"apiVersion": "burnin.glimmer.ai/v1alpha1", "kind": "BurnInSink",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"type": "ConfigMap", "configMap": {"name": target}}}  # fmt: skip
    return await client.create(SINKS, body, namespace=NS)


def reference(sink: dict[str, Any], **override: Any) -> dict[str, Any]:
    meta = sink["metadata"]
    return {"apiVersion": "burnin.glimmer.ai/v1alpha1", "kind": "BurnInSink",
            "name": meta["name"], "uid": meta["uid"], **override}  # fmt: skip


def writes(client: FakeClient) -> list[str]:
    verbs = ("create", "replace", "patch", "apply", "delete")
    return [f"{r.verb} {r.name}" for r in client.requests
            if r.verb in verbs and r.resource == CONFIGMAPS.plural]  # fmt: skip


async def deliver(client: FakeClient, sink: str) -> str:
    report = await SinkFanout(client=client, options=FanoutOptions()).deliver(
        envelope(), namespace=NS, sinks=[sink]
    )
    [outcome] = report.outcomes
    return "" if outcome.delivered else outcome.error


async def test_an_existing_configmap_the_sink_did_not_create_is_refused_never_modified() -> None:
    client = FakeClient()
    app = {"metadata": {"name": "payments-app-config", "namespace": NS}, "data": APP_DATA}
    before = await client.create(CONFIGMAPS, app, namespace=NS)
    await configmap_sink(client, "grab", "payments-app-config")
    client.requests.clear()
    error = await deliver(client, "grab")
    assert "ConfigMap team/payments-app-config exists and was not created by BurnInSink grab" in (
        error
    )
    assert f"{SINK_LABEL}=grab" in error and "configMap.name" in error
    assert writes(client) == []
    after = await client.get(CONFIGMAPS, "payments-app-config", namespace=NS)
    assert after == before
    status = (await client.get(SINKS, "grab", namespace=NS)).get("status") or {}
    assert status.get("lastError") == error


@pytest.mark.parametrize(
    "marks",
    ["label only", "owner reference only", "a previous sink's UID", "another sink's label",
     "another kind"],
)  # fmt: skip
async def test_ownership_needs_both_the_label_and_an_owner_reference_to_this_sink(
    marks: str,
) -> None:
    client = FakeClient()
    sink = await configmap_sink(client, "store", "verdicts")
    label = {SINK_LABEL: "store"}
    ref = reference(sink)
    choices: dict[str, dict[str, Any]] = {
        "label only": {"labels": label},
        "owner reference only": {"ownerReferences": [ref]},
        "a previous sink's UID": {"labels": label,
                                  "ownerReferences": [reference(sink, uid="old-uid")]},
        "another sink's label": {"labels": {SINK_LABEL: "other"}, "ownerReferences": [ref]},
        "another kind": {"labels": label, "ownerReferences": [reference(sink, kind="Secret")]},
    }  # fmt: skip
    meta = choices[marks]
    body = {"metadata": {"name": "verdicts", "namespace": NS, **meta}, "data": {"k": "v"}}
    await client.create(CONFIGMAPS, body, namespace=NS)
    client.requests.clear()
    assert "was not created by BurnInSink store" in await deliver(client, "store")
    assert writes(client) == []
    assert (await client.get(CONFIGMAPS, "verdicts", namespace=NS))["data"] == {"k": "v"}


async def test_the_configmap_a_sink_creates_is_labelled_and_owned_and_written_again() -> None:
    client = FakeClient()
    sink = await configmap_sink(client, "store", "verdicts")
    assert await deliver(client, "store") == ""
    assert writes(client) == ["create verdicts"]
    cm = await client.get(CONFIGMAPS, "verdicts", namespace=NS)
    assert cm["metadata"]["labels"] == {SINK_LABEL: "store"}
    assert cm["metadata"]["ownerReferences"] == [reference(sink, controller=True)]
    second = envelope(did="b" * 32, reason="TestCompleted")
    report = await SinkFanout(client=client).deliver(second, namespace=NS, sinks=["store"])
    assert report.ok and writes(client) == ["create verdicts", "replace verdicts"]
    assert set((await client.get(CONFIGMAPS, "verdicts", namespace=NS))["data"]) == {
        "a" * 32, "b" * 32,
    }  # fmt: skip


class LosesTheCreateRace(FakeClient):
    """Our create of ``verdicts`` loses a race: someone else's ConfigMap appears first,
    and the apiserver answers AlreadyExists."""

    async def create(
        self, resource: Resource, body: Mapping[str, Any], *, namespace: str | None = None
    ) -> dict[str, Any]:
        if resource == CONFIGMAPS and body["metadata"]["name"] == "verdicts":
            foreign = {"metadata": {"name": "verdicts", "namespace": NS}, "data": APP_DATA}
            await super().create(CONFIGMAPS, foreign, namespace=NS)
            raise ApiError(status=409, reason="Conflict", body={"reason": "AlreadyExists"})
        return await super().create(resource, body, namespace=namespace)


async def test_a_configmap_someone_else_creates_meanwhile_is_refused_not_merged_into() -> None:
    client = LosesTheCreateRace()
    await configmap_sink(client, "store", "verdicts")
    error = await deliver(client, "store")
    assert "was not created by BurnInSink store" in error
    assert (await client.get(CONFIGMAPS, "verdicts", namespace=NS))["data"] == APP_DATA


async def test_a_sink_name_too_long_for_a_label_value_is_refused_before_any_write() -> None:
    client = FakeClient()
    name = "s" * 64
    await configmap_sink(client, name, "verdicts")
    client.requests.clear()
    assert "at most 63 characters" in await deliver(client, name)
    assert writes(client) == []

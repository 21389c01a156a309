"""The ``--run`` fixture: a run, its ConfigMap sink and NodeFingerprints in a FakeClient,
the sink's entries written by the sinks' own ConfigMap store."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from glimmer.contract.envelope import Envelope, encode
from glimmer.engine import FakeClient
from glimmer.report.cluster import FINGERPRINTS, RUNS, SINKS
from glimmer.sinks.configmap import SinkOwner, store
from tests.unit.report import report_fleet as fleet

OPERATOR_NAMESPACE = "glimmer-system"


def sink(name: str, *, type_: str = "ConfigMap", config_map: str = "verdicts-cm") -> dict[str, Any]:
    spec: dict[str, Any] = {"type": type_}
    if type_ == "ConfigMap":
        spec["configMap"] = {"name": config_map}
    if type_ == "Webhook":
        spec["webhook"] = {"url": "https://example.invalid/hook"}
    return {
        "apiVersion": "burnin.glimmer.ai/v1alpha1",
        "kind": "BurnInSink",
        "metadata": {"name": name, "namespace": fleet.NAMESPACE},
        "spec": spec,
    }


def fingerprint(node: str) -> dict[str, Any]:
    return {
        "apiVersion": "burnin.glimmer.ai/v1alpha1",
        "kind": "NodeFingerprint",
        "metadata": {"name": node, "namespace": OPERATOR_NAMESPACE},
        "spec": {"nodeName": node},
        "status": {
            "gpus": [{"index": 0, "vendor": "nvidia", "model": "H200", "arch": "hopper"}],
            "osImage": "Ubuntu 24.04",
            "kernel": "6.8.0",
            "digest": "g1:abc",
            "conditions": [
                {
                    "type": "Drifted",
                    "status": "True" if node.endswith("3") else "False",
                    "reason": "DigestChanged" if node.endswith("3") else "DigestStable",
                    "message": "kernel changed" if node.endswith("3") else "unchanged",
                    "lastTransitionTime": "2026-11-29T00:00:00Z",
                }
            ],
        },
    }


async def cluster_with_run(
    *,
    results: Sequence[dict[str, Any]] | None = None,
    provenance: str = "silicon",
    sinks: Sequence[dict[str, Any]] = (),
    pinned_sinks: Sequence[str] = ("verdicts",),
    terminal: str | None = "Failed",
    extra: Sequence[Envelope] = (),
) -> tuple[FakeClient, list[Envelope]]:
    """A FakeClient holding the run, its sinks, fingerprints and delivered envelopes."""
    client = FakeClient()
    results = list(fleet.fleet_results(provenance=provenance) if results is None else results)
    run = await client.create(
        RUNS,
        fleet.run_object(
            results, phase=terminal or "Running", provenance=provenance, sinks=pinned_sinks
        ),
        namespace=fleet.NAMESPACE,
    )
    uid = run["metadata"]["uid"]
    made = [await client.create(SINKS, item, namespace=fleet.NAMESPACE)
            for item in sinks or [sink("verdicts")]]  # fmt: skip
    # The entries are written as the first sink would (ConfigMap sinks own what they write).
    owner = SinkOwner(name=made[0]["metadata"]["name"], uid=made[0]["metadata"]["uid"])
    for node in fleet.NODES:
        await client.create(FINGERPRINTS, fingerprint(node), namespace=OPERATOR_NAMESPACE)
    delivered = fleet.envelopes(results, terminal=terminal, provenance=provenance, uid=uid)
    for envelope in [*delivered, *extra]:
        await store(
            client,
            namespace=fleet.NAMESPACE,
            name="verdicts-cm",
            owner=owner,
            key=envelope.delivery_id,
            value=encode(envelope).decode(),
        )
    return client, delivered


async def verdicts_owner(client: FakeClient, name: str = "verdicts") -> SinkOwner:
    """The BurnInSink ``verdicts-cm`` belongs to, for writing more entries into it."""
    made = await client.get(SINKS, name, namespace=fleet.NAMESPACE)
    return SinkOwner(name=name, uid=str(made["metadata"]["uid"]))

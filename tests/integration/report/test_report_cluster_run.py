"""``glimmer report --run`` against a real kube-apiserver: the run, its ConfigMap sink
(entries written by the sinks' own store) and NodeFingerprints, read by the CLI."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from glimmer.cli.report import report as report_command
from glimmer.contract.envelope import encode
from glimmer.engine import ApiServerClient
from glimmer.report.cluster import FINGERPRINTS, RUNS, SINKS
from glimmer.sinks.configmap import SinkOwner, store
from tests.unit.report import report_fleet as fleet
from tests.unit.report.report_cluster import fingerprint, sink
from tests.unit.report.report_readback import junit_outcomes

pytestmark = pytest.mark.controlplane


async def seed(kubeconfig: str, namespace: str, *, sink_type: str) -> str:
    client = await ApiServerClient.connect(kubeconfig)
    try:
        run = fleet.run_object([], phase="Running")
        run["metadata"] = {**run["metadata"], "namespace": namespace}
        del run["metadata"]["uid"]
        created = await client.create(RUNS, run, namespace=namespace)
        uid = str(created["metadata"]["uid"])
        item = sink("verdicts", type_=sink_type)
        item["metadata"]["namespace"] = namespace
        made = await client.create(SINKS, item, namespace=namespace)
        owner = SinkOwner(name="verdicts", uid=str(made["metadata"]["uid"]))
        for node in fleet.NODES[:2]:
            body = fingerprint(node)
            body["metadata"]["namespace"] = namespace
            made = await client.create(FINGERPRINTS, body, namespace=namespace)
            made["status"] = body["status"]
            await client.replace(FINGERPRINTS, made, namespace=namespace, subresource="status")
        for envelope in fleet.envelopes(uid=uid):
            moved = replace(envelope, run=replace(envelope.run, namespace=namespace))
            await store(
                client,
                namespace=namespace,
                name="verdicts-cm",
                owner=owner,
                key=moved.delivery_id,
                value=encode(moved).decode(),
            )
        return uid
    finally:
        await client.close()


def test_report_run_reads_the_cluster_through_the_cli(
    control_plane: Any, glimmer_crds: None, namespace: str, tmp_path: Path
) -> None:
    kubeconfig = str(control_plane.kubeconfig_path)
    uid = asyncio.run(seed(kubeconfig, namespace, sink_type="ConfigMap"))
    ref = f"{namespace}/{fleet.RUN_NAME}"
    for fmt in ("junit", "ctrf", "html"):
        result = CliRunner().invoke(
            report_command,
            ["--run", ref, "--kubeconfig", kubeconfig, "-o", fmt, "--out", str(tmp_path)],
        )
        assert result.exit_code == 0, result.stderr
    outcomes = junit_outcomes((tmp_path / "junit.xml").read_text())
    assert outcomes["failure"] == 3 and outcomes["error:Error"] == 2
    ctrf = json.loads((tmp_path / "ctrf-report.json").read_text())
    assert ctrf["results"]["extra"]["run"]["uid"] == uid
    html = (tmp_path / "burn-in-report.html").read_text()
    assert "gate: GreaterThanOrEqual 600" in html  # thresholds from the pinned plan
    assert "Node identities" in html and "H200" in html


def test_report_run_with_only_a_webhook_sink_is_refused(
    control_plane: Any, glimmer_crds: None, namespace: str, tmp_path: Path
) -> None:
    kubeconfig = str(control_plane.kubeconfig_path)
    asyncio.run(seed(kubeconfig, namespace, sink_type="Webhook"))
    result = CliRunner().invoke(
        report_command,
        [
            "--run",
            f"{namespace}/{fleet.RUN_NAME}",
            "--kubeconfig",
            kubeconfig,
            "--out",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 2 and "has no ConfigMap sink" in result.stderr

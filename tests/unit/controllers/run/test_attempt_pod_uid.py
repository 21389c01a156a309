"""I18 audit trail: an attempt keeps the UID of the pod it ran in once it is settled,
not only while it is in flight (a pod name is reused by a re-created pod, a UID never)."""

from __future__ import annotations

from typing import Any

from glimmer.verdict.codec import result_from_json
from tests.unit.controllers.run.harness import Cluster, custom_test


def attempts_of(run: dict[str, Any]) -> list[dict[str, Any]]:
    return list(run["status"]["results"][0]["attempts"])


async def test_I18_a_settled_attempt_keeps_its_pod_uid() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run()
    await cluster.reconcile()
    [pod] = cluster.live_pods()
    name, uid = pod["metadata"]["name"], pod["metadata"]["uid"]
    await cluster.kubelet(name, exit_code=0, log="ok=1\n")
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Passed"
    [settled] = attempts_of(run)
    assert (settled["phase"], settled["podName"], settled["podUID"]) == ("Passed", name, uid)
    # and the codec reads it back onto the record
    [record] = result_from_json(run["status"]["results"][0], required=True).attempts
    assert record.pod_uid == uid


async def test_I18_an_error_attempt_and_its_retry_keep_their_own_pod_uids() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run(retryOnErrorLimit=1)
    await cluster.reconcile()
    [first] = cluster.live_pods()
    await cluster.kubelet(first["metadata"]["name"], exit_code=3, log="boom\n")
    await cluster.reconcile()
    [second] = cluster.live_pods()
    assert second["metadata"]["name"] != first["metadata"]["name"]
    await cluster.kubelet(second["metadata"]["name"], exit_code=0, log="ok=1\n")
    await cluster.reconcile()
    run = await cluster.run()
    uids = [a.get("podUID") for a in attempts_of(run)]
    assert uids == [first["metadata"]["uid"], second["metadata"]["uid"]], attempts_of(run)

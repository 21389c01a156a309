"""Runner pods run as the ServiceAccount the manager names (``--runner-service-account``),
never with a token; a pod found under a runner pod's name that runs as another one is
not ours."""

from __future__ import annotations

from glimmer.controllers.run.reconciler import RunOptions, RunReconciler
from tests.unit.controllers.run.harness import Cluster, custom_test


def running_as(cluster: Cluster, service_account: str | None) -> None:
    cluster.reconciler = RunReconciler(
        client=cluster.client,
        options=RunOptions(
            operator_namespace="glimmer-system", runner_service_account=service_account
        ),
        now=lambda: cluster.clock,
    )


async def test_runner_pods_run_as_the_configured_service_account_without_a_token() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    running_as(cluster, "burnin-runner")
    await cluster.create_run()
    await cluster.reconcile()
    [pod] = cluster.pods()
    assert pod["spec"]["serviceAccountName"] == "burnin-runner"
    assert pod["spec"]["automountServiceAccountToken"] is False


async def test_runner_pods_default_to_glimmer_runner() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run()
    await cluster.reconcile()
    [pod] = cluster.pods()
    assert pod["spec"]["serviceAccountName"] == "glimmer-runner"


async def test_no_runner_service_account_leaves_the_namespaces_default_without_a_token() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    running_as(cluster, None)
    await cluster.create_run()
    await cluster.reconcile()
    [pod] = cluster.pods()
    assert "serviceAccountName" not in pod["spec"]
    assert pod["spec"]["automountServiceAccountToken"] is False


async def test_a_pod_under_the_runner_name_running_as_another_account_is_not_adopted() -> None:
    """The pod the manager would build is the one it compares with: after a restart under
    another ``--runner-service-account``, a not-yet-pinned pod of the old one is foreign."""
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    running_as(cluster, "burnin-runner")
    await cluster.create_run()
    await cluster.reconcile()
    [pod] = cluster.pods()
    running_as(cluster, "glimmer-runner")
    await cluster.kubelet(pod["metadata"]["name"], exit_code=0, log="ok\n")
    for _ in range(3):
        await cluster.reconcile()
    run = await cluster.run()
    [result] = run["status"]["results"]
    assert result["phase"] == "Error", result
    assert "foreign pod" in result["message"], result


async def test_pair_pods_run_as_the_configured_service_account_too() -> None:
    """The Pair builder names the same account as the Node builder (both sides)."""
    cluster = Cluster(nodes=2)
    pair = custom_test("echo", scope="Pair")
    await cluster.setup(tests={"link": pair})
    running_as(cluster, "burnin-runner")
    await cluster.create_run(maxConcurrentNodes=2)
    for _ in range(3):
        await cluster.reconcile()
        for pod in cluster.pods():
            assert pod["spec"]["serviceAccountName"] == "burnin-runner"
            assert pod["spec"]["automountServiceAccountToken"] is False
    assert cluster.pods(), "the Pair created no pod"

"""Serving namespaces by label (``--serve-namespace-selector``), on the fake apiserver.

A namespace is served only while it positively carries every label of the selector, read
from the selector-filtered Namespace cache (a miss read live before its run is refused);
never the operator's own namespace; a namespace that loses a label unloads its runs the
way a name removed from ``--serve-namespaces`` does."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from glimmer.controllers.kit import names
from glimmer.controllers.kit.names import RUNS
from glimmer.controllers.operator import operator_registrations
from glimmer.controllers.run.reconciler import RunOptions, RunReconciler
from glimmer.controllers.run.setup import RUNS_BY_NAMESPACE
from glimmer.engine import (
    NAMESPACES,
    ApiError,
    FakeClient,
    InformerEvent,
    InformerFactory,
    Manager,
    ManagerOptions,
    Readers,
    Resource,
)
from glimmer.engine.clock import FakeClock
from tests.unit.controllers.run.harness import NS, Cluster, custom_test

SERVED = {"burnin.glimmer.ai/served": "true"}
SELECTOR = "burnin.glimmer.ai/served=true"


def by_label(cluster: Cluster, *, readers: Readers | None = None, **options: Any) -> None:
    cluster.reconciler = RunReconciler(
        client=cluster.client,
        options=RunOptions(
            operator_namespace="glimmer-system", served_namespace_selector=SERVED, **options
        ),
        now=lambda: cluster.clock,
        readers=readers,
    )


async def namespace(cluster: Cluster, name: str = NS, **labelled: str) -> None:
    await cluster.client.create(NAMESPACES, {"metadata": {"name": name, "labels": labelled}})


async def relabel(cluster: Cluster, name: str = NS, **labelled: str | None) -> None:
    await cluster.client.patch(NAMESPACES, name, {"metadata": {"labels": labelled}})


def admitted(run: dict[str, Any]) -> dict[str, Any]:
    conditions: dict[str, dict[str, Any]] = {
        c["type"]: c for c in run["status"].get("conditions") or []
    }
    return conditions["Admitted"]


def assert_released(cluster: Cluster) -> None:
    for name in cluster.node_names:
        node = cluster.node(name)
        assert not node["spec"].get("unschedulable"), name
        assert names.CORDON_OWNER not in (node["metadata"].get("annotations") or {}), name


def namespace_reads(cluster: Cluster) -> list[tuple[str, str, str | None, str | None]]:
    return [c for c in cluster.client.calls if c[1] == "namespaces" and c[0] == "get"]


async def synced_namespace_cache(client: FakeClient) -> tuple[Readers, InformerFactory]:
    """Readers over a started Namespace informer filtered by the selector, as the run
    controller's watch makes it."""
    informers = InformerFactory(client)
    informers.informer(NAMESPACES, label_selector=SELECTOR)
    informers.start()
    await informers.wait_for_sync()
    return Readers.over(client, informers), informers


async def test_a_run_in_a_namespace_carrying_the_served_labels_is_served() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    await namespace(cluster, **SERVED, other="x")
    by_label(cluster)
    await cluster.create_run()
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Running"
    assert cluster.live_pods()


async def test_a_run_in_a_namespace_without_the_served_labels_is_refused_naming_the_selector() -> (
    None
):
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    await namespace(cluster, **{"burnin.glimmer.ai/served": "false"})
    by_label(cluster)
    await cluster.create_run()
    cluster.client.calls.clear()
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Error"
    condition = admitted(run)
    assert (condition["status"], condition["reason"]) == ("False", "NamespaceNotServed")
    message = condition["message"]
    assert f"namespace '{NS}' does not carry the labels this manager serves ({SELECTOR})" in (
        message
    )
    assert f"kubectl label namespace {NS} {SELECTOR}" in message
    assert "helm upgrade" in message
    assert run["status"]["results"][0]["message"] == message
    assert not cluster.pods()
    assert not [c for c in cluster.client.calls if c[1] in ("nodes", "pods") and c[0] != "list"]
    assert not [c for c in cluster.client.calls if c[1].startswith("burninprofiles")]
    assert_released(cluster)


async def test_a_namespace_every_term_must_match_not_some() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    await namespace(cluster, **SERVED)
    cluster.reconciler = RunReconciler(
        client=cluster.client,
        options=RunOptions(
            operator_namespace="glimmer-system",
            served_namespace_selector={**SERVED, "team": "gpu"},
        ),
        now=lambda: cluster.clock,
    )
    await cluster.create_run()
    await cluster.reconcile()
    run = await cluster.run()
    assert admitted(run)["reason"] == "NamespaceNotServed"
    assert f"kubectl label namespace {NS} {SELECTOR} team=gpu" in admitted(run)["message"]


async def test_a_namespace_that_loses_the_served_label_mid_run_unloads_the_run() -> None:
    cluster = Cluster(nodes=2)
    await cluster.setup(tests={"t": custom_test("echo")})
    await namespace(cluster, **SERVED)
    by_label(cluster)
    await cluster.create_run()
    await cluster.reconcile()
    assert (await cluster.run())["status"]["phase"] == "Running"
    assert cluster.live_pods()
    assert any(cluster.node(n)["spec"].get("unschedulable") for n in cluster.node_names)
    await relabel(cluster, **{"burnin.glimmer.ai/served": None})
    for _ in range(3):
        await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Error"
    assert admitted(run)["reason"] == "NamespaceNotServed"
    assert SELECTOR in admitted(run)["message"]
    assert not cluster.live_pods()
    assert_released(cluster)  # nothing left cordoned
    assert names.FINALIZER not in (run["metadata"].get("finalizers") or [])


async def test_an_unsynced_namespace_cache_never_serves_on_its_own_word() -> None:
    """A cache that cannot answer (not synced yet) is no evidence: the namespace is read
    live, and it is served only if the apiserver shows the labels."""
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    await namespace(cluster)  # unlabelled
    informers = InformerFactory(cluster.client)
    informer = informers.informer(NAMESPACES, label_selector=SELECTOR)  # never started
    assert not informer.has_synced()
    by_label(cluster, readers=Readers.over(cluster.client, informers))
    await cluster.create_run()
    await cluster.reconcile()
    run = await cluster.run()
    assert admitted(run)["reason"] == "NamespaceNotServed"
    assert not cluster.pods()


class NamespaceReadsFail(FakeClient):
    """The apiserver refuses every namespace read (e.g. the manager lacks the grant)."""

    async def get(self, resource: Resource, name: str, *, namespace: str | None = None) -> Any:
        if resource == NAMESPACES:
            raise ApiError(status=403, reason="Forbidden", body={"code": 403})
        return await super().get(resource, name, namespace=namespace)


async def test_a_namespace_that_cannot_be_read_is_not_served_and_nothing_is_done() -> None:
    cluster = Cluster(nodes=1)
    cluster.client = NamespaceReadsFail()
    await cluster.setup(tests={"t": custom_test("echo")})
    await namespace(cluster, **SERVED)
    by_label(cluster)
    await cluster.create_run()
    with pytest.raises(ApiError):
        await cluster.reconcile()  # an error: retried with backoff, never served
    run = await cluster.run()
    assert (run.get("status") or {}).get("phase") in (None, "", "Pending")
    assert not cluster.pods()
    assert_released(cluster)


async def test_a_namespace_missing_from_the_cache_is_read_live_before_its_run_is_refused() -> None:
    """A namespace labelled a moment ago may not have reached the watch yet: refusing
    its run on the cache's miss would end the run for the cache's lag."""
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    await namespace(cluster)
    readers, informers = await synced_namespace_cache(cluster.client)
    await informers.stop()  # the cache stays synced, and misses what happens next
    await relabel(cluster, **SERVED)
    by_label(cluster, readers=readers)
    await cluster.create_run()
    await cluster.reconcile()
    assert (await cluster.run())["status"]["phase"] == "Running"
    assert namespace_reads(cluster)


async def test_a_namespace_in_the_served_cache_is_served_without_a_live_read() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    await namespace(cluster, **SERVED)
    readers, informers = await synced_namespace_cache(cluster.client)
    try:
        by_label(cluster, readers=readers)
        await cluster.create_run()
        cluster.client.calls.clear()
        await cluster.reconcile()
        assert (await cluster.run())["status"]["phase"] == "Running"
        assert not namespace_reads(cluster)
    finally:
        await informers.stop()


async def test_the_operators_own_namespace_is_never_served_even_when_labelled() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.add_profile({"t": custom_test("echo")}, namespace="glimmer-system")
    await namespace(cluster, "glimmer-system", **SERVED)
    readers, informers = await synced_namespace_cache(cluster.client)
    try:
        by_label(cluster, readers=readers)
        await cluster.create_run(namespace="glimmer-system")
        await cluster.reconcile(namespace="glimmer-system")
        run = await cluster.run(namespace="glimmer-system")
    finally:
        await informers.stop()
    assert run["status"]["phase"] == "Error"
    assert admitted(run)["reason"] == "NamespaceNotServed"
    assert "this manager's own namespace, which is never served" in admitted(run)["message"]
    assert not cluster.pods()


async def test_runs_deleted_in_an_unlabelled_namespace_are_still_cleaned_up() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    await namespace(cluster, **SERVED)
    by_label(cluster)
    await cluster.create_run()
    await cluster.reconcile()
    assert cluster.live_pods()
    await relabel(cluster, **{"burnin.glimmer.ai/served": None})
    await cluster.client.delete(RUNS, "r1", namespace=NS)
    for _ in range(3):
        await cluster.reconcile()
    assert not cluster.live_pods()
    assert_released(cluster)


# --- options ----------------------------------------------------------------------------


def test_serving_by_name_and_by_label_at_once_is_refused() -> None:
    with pytest.raises(ValueError, match="exclusive"):
        RunOptions(
            operator_namespace="glimmer-system",
            served_namespaces=frozenset({"a"}),
            served_namespace_selector=SERVED,
        )


@pytest.mark.parametrize(
    "terms", [{}, {"Bad Key": "v"}, {"k": "a value"}, {"-k": "v"}, {"k": "v" * 64}]
)
def test_a_selector_kubernetes_would_refuse_is_refused_by_the_options(
    terms: dict[str, str],
) -> None:
    with pytest.raises(ValueError, match="served_namespace_selector"):
        RunOptions(operator_namespace="glimmer-system", served_namespace_selector=terms)


def test_the_selector_is_rendered_sorted_and_frozen() -> None:
    terms = {"b": "2", "a": "1"}
    options = RunOptions(operator_namespace="glimmer-system", served_namespace_selector=terms)
    terms["c"] = "3"
    assert options.namespace_selector == "a=1,b=2"
    assert options.serves("x", namespace_labels={"a": "1", "b": "2", "z": "9"})
    assert not options.serves("x", namespace_labels={"a": "1"})
    assert not options.serves("x", namespace_labels=None)
    assert not options.serves("glimmer-system", namespace_labels={"a": "1", "b": "2"})


# --- wiring -----------------------------------------------------------------------------


def wired(options: RunOptions, **manager_options: Any) -> tuple[Manager, list[Any]]:
    client = FakeClient()
    m = Manager(
        client,
        options=ManagerOptions(
            leader_elect=False,
            metrics_bind_address="0",
            health_probe_bind_address="0",
            **manager_options,
        ),
        clock=FakeClock(),
    )
    registrations = operator_registrations(manager=m, options=options, served_namespaces=None)
    for registration in registrations:
        m.add_controller(registration)
    return m, registrations


def test_serving_by_label_adds_one_namespace_watch_filtered_by_the_selector() -> None:
    _, registrations = wired(
        RunOptions(operator_namespace="glimmer-system", served_namespace_selector=SERVED)
    )
    [watch] = [w for w in registrations[0].watches if w.resource == NAMESPACES]
    assert watch.label_selector == SELECTOR
    _, registrations = wired(RunOptions(operator_namespace="glimmer-system"))
    assert not [w for r in registrations for w in r.watches if w.resource == NAMESPACES]


async def test_a_served_namespace_event_re_reconciles_every_run_in_that_namespace() -> None:
    m, registrations = wired(
        RunOptions(operator_namespace="glimmer-system", served_namespace_selector=SERVED)
    )
    client = m.client
    assert isinstance(client, FakeClient)
    for ns, name in (("team", "r1"), ("team", "r2"), ("other", "r3")):
        await client.create(
            RUNS, {"metadata": {"name": name}, "spec": {"profileRef": "p"}}, namespace=ns
        )
    m.informers.start()
    try:
        await asyncio.wait_for(m.informers.wait_for_sync(), 10)
        [watch] = [w for w in registrations[0].watches if w.resource == NAMESPACES]
        gone = {"metadata": {"name": "team", "labels": SERVED}}
        assert sorted(watch.to_keys(InformerEvent("delete", gone))) == ["team/r1", "team/r2"]
        assert list(watch.to_keys(InformerEvent("add", {"metadata": {"name": "empty"}}))) == []
        runs = next(i for i in m.informers.informers if i.resource == RUNS)
        assert runs.store.has_index(RUNS_BY_NAMESPACE)
    finally:
        await m.informers.stop()


def test_runs_are_watched_in_every_namespace_when_served_by_label() -> None:
    m, _ = wired(RunOptions(operator_namespace="glimmer-system", served_namespace_selector=SERVED))
    scopes = {(i.resource, i.namespace, i.label_selector) for i in m.informers.informers}
    assert (RUNS, None, None) in scopes
    assert (NAMESPACES, None, SELECTOR) in scopes


async def test_a_run_whose_namespace_cannot_be_found_is_not_served() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})  # no Namespace object at all
    by_label(cluster)
    await cluster.create_run()
    await cluster.reconcile()
    run = await cluster.run()
    assert admitted(run)["reason"] == "NamespaceNotServed"
    assert not cluster.pods()

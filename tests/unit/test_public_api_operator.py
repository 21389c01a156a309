"""The operator's one wiring (`operator_registrations`) and `glimmer manager --serve-namespaces`.

Every way of running the operator (the binary, `glimmer.testing.EmbeddedOperator`, our
tests) goes through `operator_registrations`, so these tests pin what it wires.
"""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

from glimmer.cli import manager as cli_manager
from glimmer.controllers.fingerprint import FINGERPRINT_CONTROLLER
from glimmer.controllers.kit.cordon import compact_cordon_node
from glimmer.controllers.kit.indexes import NODES_BY_CORDON_OWNER, PODS_BY_RUN
from glimmer.controllers.kit.names import FINGERPRINTS, RUNS
from glimmer.controllers.operator import operator_registrations
from glimmer.controllers.run.context import RunOptions
from glimmer.controllers.run.reconciler import RunReconciler
from glimmer.controllers.run.setup import RUN_CONTROLLER
from glimmer.controllers.schedule import SCHEDULE_CONTROLLER, SCHEDULES
from glimmer.engine import (
    NODES,
    PODS,
    FakeClient,
    FakeClock,
    Manager,
    ManagerOptions,
    compact,
    compact_pod,
    strip_managed_fields,
)


def manager(**options: Any) -> Manager:
    opts = ManagerOptions(
        leader_elect=False, metrics_bind_address="0", health_probe_bind_address="0", **options
    )
    return Manager(FakeClient(), options=opts, clock=FakeClock())


def wired(served: frozenset[str] | None, **options: Any) -> tuple[Manager, list[Any]]:
    m = manager(**options)
    registrations = operator_registrations(
        manager=m,
        options=RunOptions(operator_namespace="glimmer-system"),
        served_namespaces=served,
    )
    for registration in registrations:
        m.add_controller(registration)
    return m, registrations


def test_the_operator_is_the_run_fingerprint_and_schedule_controllers() -> None:
    _, registrations = wired(None)
    assert [r.name for r in registrations] == [
        RUN_CONTROLLER,
        FINGERPRINT_CONTROLLER,
        SCHEDULE_CONTROLLER,
    ]
    run = registrations[0]
    assert isinstance(run.reconciler, RunReconciler)
    assert [(w.resource, w.namespace) for w in run.watches] == [
        (RUNS, None),
        (PODS, None),
        (FINGERPRINTS, "glimmer-system"),
    ]
    assert [w.resource for w in registrations[1].watches] == [NODES, FINGERPRINTS, RUNS]
    # A trigger.nodeJoined schedule hears of fingerprints (drift) and tainted nodes.
    assert [w.resource for w in registrations[2].watches] == [
        SCHEDULES,
        RUNS,
        FINGERPRINTS,
        NODES,
    ]


def test_served_namespaces_reach_the_run_options() -> None:
    _, registrations = wired(frozenset({"burnin", "lab"}))
    assert registrations[0].reconciler.ctx.options.served_namespaces == {"burnin", "lab"}
    _, registrations = wired(None)
    assert registrations[0].reconciler.ctx.options.served_namespaces is None


def test_every_cache_strips_managed_fields_and_keeps_the_rest() -> None:
    m, registrations = wired(None)
    watches = [w for r in registrations for w in r.watches]
    # Runs and schedules only lose managedFields; pods and nodes are compacted to what
    # reconcilers read (tests/unit/controllers/run/test_cache_transforms.py); nodes keep of
    # managedFields only who owns spec.unschedulable (the release reads it, E12).
    assert {w.transform for w in watches} == {
        strip_managed_fields,
        compact_pod,
        compact_cordon_node,
        compact,
    }
    assert len(m.informers.informers) == 5  # runs, pods, nodes, fingerprints, schedules
    pod = {"metadata": {"name": "p", "managedFields": [{}], "labels": {"x": "y"}}, "spec": {"a": 1}}
    assert strip_managed_fields(pod) == {"metadata": {"name": "p", "labels": {"x": "y"}},
                                         "spec": {"a": 1}}  # fmt: skip


def test_the_caches_carry_the_indexes_the_cached_reader_offers() -> None:
    m, _ = wired(None)
    by_resource = {i.resource: i for i in m.informers.informers}
    assert by_resource[PODS].store.has_index(PODS_BY_RUN)
    assert by_resource[NODES].store.has_index(NODES_BY_CORDON_OWNER)


def test_the_watch_namespace_scopes_the_run_caches() -> None:
    m, _ = wired(None, namespace="burnin")
    scopes = {(i.resource, i.namespace) for i in m.informers.informers}
    assert scopes == {
        (RUNS, "burnin"),
        (PODS, "burnin"),
        (NODES, None),
        (FINGERPRINTS, "glimmer-system"),
        (SCHEDULES, "burnin"),
    }


def test_reconcile_logs_name_the_run_or_the_node() -> None:
    _, registrations = wired(None)
    run, reaper, schedule = registrations
    assert run.log_context is not None and reaper.log_context is not None
    assert run.log_context("lab/r1") == {"namespace": "lab", "run": "r1"}
    assert reaper.log_context("gpu-7") == {"node": "gpu-7"}
    assert schedule.log_context is not None
    assert schedule.log_context("lab/s1") == {"namespace": "lab", "schedule": "s1"}


# --- glimmer manager --serve-namespaces ---------------------------------------------


@pytest.mark.parametrize(
    ("text", "served"),
    [
        ("*", None),
        ("burnin", frozenset({"burnin"})),
        ("burnin, lab ,qa", frozenset({"burnin", "lab", "qa"})),
    ],
)
def test_serve_namespaces_reads_a_list_or_star(text: str, served: frozenset[str] | None) -> None:
    assert cli_manager.parse_served_namespaces(text) == served


@pytest.mark.parametrize("text", ["", ",", "a,,b", "a,*", "*,*", "Lab", "a_b", "-a"])
def test_serve_namespaces_refuses_what_is_not_a_namespace_list(text: str) -> None:
    with pytest.raises(ValueError):
        cli_manager.parse_served_namespaces(text)


def test_serve_namespaces_defaults_to_the_operators_own_namespace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("POD_NAMESPACE", "glimmer-ops")
    assert cli_manager.served_namespaces_of(flag=None, namespace=None) == {"glimmer-ops"}
    assert cli_manager.served_namespaces_of(flag=None, namespace="watched") == {"watched"}
    assert cli_manager.served_namespaces_of(flag="*", namespace="watched") is None
    monkeypatch.delenv("POD_NAMESPACE")
    monkeypatch.setattr(cli_manager, "_SERVICE_ACCOUNT_NAMESPACE", cli_manager.Path("/absent"))
    assert cli_manager.served_namespaces_of(flag=None, namespace=None) == {"glimmer-system"}


def test_a_bad_serve_namespaces_value_is_a_usage_error_before_anything_starts() -> None:
    result = CliRunner().invoke(cli_manager.manager, ["--serve-namespaces=a,*"])
    assert result.exit_code == 2
    assert "cannot be combined" in result.output


def test_the_flag_is_documented_in_the_help() -> None:
    result = CliRunner().invoke(cli_manager.manager, ["--help"])
    assert result.exit_code == 0
    help_text = " ".join(result.output.split())
    assert "--serve-namespaces" in help_text
    assert "'*' serves every namespace" in help_text


# --- glimmer.testing.wait_for_verdict -------------------------------------------------


async def test_a_verdict_is_a_terminal_phase_with_the_cleanup_finalizer_gone() -> None:
    import asyncio

    from glimmer.testing import wait_for_verdict

    client = FakeClient()
    await client.create(
        RUNS,
        {"metadata": {"name": "r", "finalizers": ["burnin.glimmer.ai/cordon-cleanup"]}},
        namespace="ns",
    )
    await client.patch(
        RUNS, "r", {"status": {"phase": "Passed"}}, namespace="ns", subresource="status"
    )
    waiting = asyncio.create_task(
        wait_for_verdict(client, namespace="ns", name="r", timeout=10, poll=0.01)
    )
    await asyncio.sleep(0.1)
    assert not waiting.done(), "terminal, but its pods and cordons are not cleaned up yet"
    await client.patch(RUNS, "r", {"metadata": {"finalizers": None}}, namespace="ns")
    run = await asyncio.wait_for(waiting, 5)
    assert run["status"]["phase"] == "Passed"


async def test_waiting_for_a_verdict_that_never_comes_times_out_with_the_status() -> None:
    from glimmer.testing import wait_for_verdict

    client = FakeClient()
    await client.create(RUNS, {"metadata": {"name": "r"}}, namespace="ns")
    await client.patch(
        RUNS, "r", {"status": {"phase": "Running"}}, namespace="ns", subresource="status"
    )
    with pytest.raises(TimeoutError, match="Running"):
        await wait_for_verdict(client, namespace="ns", name="r", timeout=0.05, poll=0.01)

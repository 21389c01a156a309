"""The runner environment (api §10, F1, F4, I1, N2)."""

from __future__ import annotations

from typing import Any

import pytest

from glimmer.plan.env import (
    RESERVED_NAMES,
    bare_host_runner_env,
    group_rendezvous,
    pair_rendezvous,
    runner_env,
)
from glimmer.plan.spec import SpecError


def _names(env: list[dict[str, Any]]) -> list[str]:
    return [e["name"] for e in env]


def _values(env: list[dict[str, Any]]) -> dict[str, str]:
    return {e["name"]: e.get("value") for e in env}


def test_api10_assembly_order_for_a_pair_variant_with_limits() -> None:
    spec = {
        "kind": "ib-write-bw",
        "durationSeconds": 120,
        "resources": {"limits": {"nvidia.com/gpu": 8, "memory": "2Gi"}},
        "runner": {"env": [{"name": "AUTHOR", "value": "x"}]},
    }
    env = runner_env(
        spec=spec,
        attempt=2,
        axes={"measurand": "latency", "a_axis": "1"},
        rendezvous=pair_rendezvous(role="client", peer_node="n0", service="bp-svc", namespace="ns"),
    )
    assert _names(env) == [
        "BURNIN_DURATION_SECONDS",
        "BURNIN_ATTEMPT",
        "BURNIN_RESOURCE_LIMITS",
        "BURNIN_VARIANT_A_AXIS",
        "BURNIN_VARIANT_MEASURAND",
        "BURNIN_ROLE",
        "BURNIN_PEER_HOST",
        "BURNIN_PEER_NODE",
        "AUTHOR",
    ]
    values = _values(env)
    assert values["BURNIN_DURATION_SECONDS"] == "120"
    assert values["BURNIN_ATTEMPT"] == "2"
    assert values["BURNIN_RESOURCE_LIMITS"] == "memory=2Gi,nvidia.com/gpu=8"
    assert values["BURNIN_VARIANT_MEASURAND"] == "latency"
    assert values["BURNIN_ROLE"] == "client"
    assert values["BURNIN_PEER_HOST"] == "server.bp-svc.ns.svc"
    assert values["BURNIN_PEER_NODE"] == "n0"


def test_F1_server_peer_host_names_the_client() -> None:
    env = runner_env(
        spec={"kind": "custom"},
        attempt=1,
        rendezvous=pair_rendezvous(role="server", peer_node="n1", service="s", namespace="ns"),
    )
    assert _values(env)["BURNIN_PEER_HOST"] == "client.s.ns.svc"


def test_F4_group_rank_gets_rank_vars_and_no_role() -> None:
    env = runner_env(
        spec={"kind": "nccl"},
        attempt=1,
        rendezvous=group_rendezvous(rank=2, nranks=4, root_node="r0", service="s", namespace="ns"),
    )
    values = _values(env)
    assert "BURNIN_ROLE" not in values
    assert values["BURNIN_RANK"] == "2"
    assert values["BURNIN_NRANKS"] == "4"
    assert values["BURNIN_ROOT_HOST"] == "rank-0.s.ns.svc"
    assert values["BURNIN_ROOT_NODE"] == "r0"


def test_api10_limits_variable_absent_without_limits() -> None:
    env = runner_env(spec={"kind": "custom", "resources": {"requests": {"cpu": "1"}}}, attempt=1)
    assert _names(env) == ["BURNIN_DURATION_SECONDS", "BURNIN_ATTEMPT"]


def test_N2_bare_host_gets_no_limits_variable() -> None:
    spec = {"kind": "custom", "resources": {"limits": {"nvidia.com/gpu": "1"}}}
    env = runner_env(spec=spec, attempt=1, include_resource_limits=False)
    assert "BURNIN_RESOURCE_LIMITS" not in _names(env)


def test_api10_segmented_duration_is_the_segment_window() -> None:
    spec = {"kind": "thermal-soak", "durationSeconds": 7200, "soak": {"segmentSeconds": 1800}}
    assert _values(runner_env(spec=spec, attempt=1))["BURNIN_DURATION_SECONDS"] == "1800"


def test_N2_a_bare_host_runs_a_segmented_soak_as_one_window_of_its_whole_duration() -> None:
    spec = {"kind": "thermal-soak", "durationSeconds": 7200, "soak": {"segmentSeconds": 1800}}
    values = _values(bare_host_runner_env(spec=spec, attempt=1))
    assert values["BURNIN_DURATION_SECONDS"] == "7200"  # in-cluster: 1800 per segment


@pytest.mark.parametrize(
    "spec",
    [
        {"kind": "gpu-burn", "durationSeconds": 900},
        {"kind": "custom"},
        {"kind": "clockprobe", "durationSeconds": 30},
    ],
)
def test_N2_a_bare_host_window_is_the_in_cluster_one_when_not_segmented(
    spec: dict[str, Any],
) -> None:
    assert (
        _values(bare_host_runner_env(spec=spec, attempt=1))["BURNIN_DURATION_SECONDS"]
        == (_values(runner_env(spec=spec, attempt=1))["BURNIN_DURATION_SECONDS"])
    )


def test_N2_bare_host_env_has_every_bare_host_difference_at_once() -> None:
    spec = {
        "kind": "custom",
        "resources": {"limits": {"nvidia.com/gpu": "1"}},
        "runner": {"env": [{"name": "BURNIN_ATTEMPT", "value": "9"}, {"name": "A", "value": "x"}]},
    }
    env = bare_host_runner_env(spec=spec, attempt=2, axes={"size": "big"})
    assert _names(env) == [
        "BURNIN_DURATION_SECONDS",
        "BURNIN_ATTEMPT",
        "BURNIN_VARIANT_SIZE",
        "A",
    ]
    assert _values(env)["BURNIN_ATTEMPT"] == "2"


def test_P8_in_cluster_runner_env_is_appended_last_and_can_override() -> None:
    spec = {"kind": "custom", "runner": {"env": [{"name": "BURNIN_ATTEMPT", "value": "9"}]}}
    env = runner_env(spec=spec, attempt=1)
    assert env[-1] == {"name": "BURNIN_ATTEMPT", "value": "9"}


def test_N2_bare_host_ignores_reserved_names_in_runner_env() -> None:
    author = [
        {"name": "BURNIN_ATTEMPT", "value": "9"},
        {"name": "BURNIN_ROLE", "value": "client"},
        {"name": "BURNIN_VARIANT_X", "value": "kept"},
        {"name": "BURNIN_DEVICE_CONCURRENCY", "value": "all"},
        {"name": "HOST_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}},
    ]
    env = runner_env(
        spec={"kind": "custom", "runner": {"env": author}},
        attempt=1,
        ignore_reserved_runner_env=True,
    )
    assert env[2:] == author[2:]
    assert _values(env)["BURNIN_ATTEMPT"] == "1"


def test_api10_reserved_names_are_the_ten_fixed_names() -> None:
    assert len(RESERVED_NAMES) == 10
    assert not any(name.startswith("BURNIN_VARIANT_") for name in RESERVED_NAMES)


def test_api10_attempt_is_one_based() -> None:
    with pytest.raises(ValueError):
        runner_env(spec={"kind": "custom"}, attempt=0)


def test_api10_non_quantity_limit_is_refused() -> None:
    with pytest.raises(SpecError):
        runner_env(spec={"kind": "custom", "resources": {"limits": {"cpu": {"x": 1}}}}, attempt=1)

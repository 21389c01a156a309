"""``glimmer manager`` rate-limit flags default to ClientOptions() and
accept -1 for no client-side limit."""

from __future__ import annotations

import click
import pytest

from glimmer.cli.manager import manager
from glimmer.engine import ClientOptions


def _param(name: str) -> click.Parameter:
    return next(p for p in manager.params if p.name == name)


def _parse(*args: str) -> dict[str, object]:
    ctx = manager.make_context("manager", list(args), resilient_parsing=False)
    return dict(ctx.params)


def test_the_manager_flags_default_to_the_client_options_defaults() -> None:
    assert _param("kube_api_qps").default == ClientOptions().qps == 200.0
    assert _param("kube_api_burst").default == ClientOptions().burst == 400
    params = _parse()
    assert (params["kube_api_qps"], params["kube_api_burst"]) == (200.0, 400)


def test_kube_api_qps_minus_one_lifts_the_client_side_limit() -> None:
    assert _parse("--kube-api-qps=-1")["kube_api_qps"] == -1.0
    assert _parse("--kube-api-qps=75")["kube_api_qps"] == 75.0


@pytest.mark.parametrize("value", ["0", "0.5"])
def test_kube_api_qps_refuses_a_bucket_that_would_stall(value: str) -> None:
    with pytest.raises(click.BadParameter):
        _parse(f"--kube-api-qps={value}")

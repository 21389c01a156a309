"""``glimmer schedule`` against a real apiserver: the ticks it shows are the ones the
controller then fires, in a non-UTC zone across a clock change."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from glimmer.api import format_time
from glimmer.cli import main
from glimmer.cli.schedule import gather_one, render_text
from glimmer.controllers.schedule import SCHEDULES
from glimmer.engine import ApiServerClient

from .test_schedule_cluster import Clock, fired, reconciler

pytestmark = pytest.mark.controlplane

CURSOR = datetime(2024, 3, 28, 12, 0, tzinfo=UTC)  # three days before Berlin's spring change


@pytest.mark.parametrize(
    ("expression", "zone"),
    [
        ("30 2 * * *", "Europe/Berlin"),
        ("0 9 * * 1-5", "America/New_York"),
        ("@every 36h", "Asia/Kolkata"),
    ],
)
async def test_J3_the_views_ticks_are_the_ones_the_controller_fires(
    kube: ApiServerClient, namespace: str, expression: str, zone: str
) -> None:
    body = {
        "apiVersion": "burnin.glimmer.ai/v1alpha1",
        "kind": "BurnInSchedule",
        "metadata": {"name": "sweep"},
        "spec": {"profileRef": "acceptance", "target": {"nodeNames": ["gpu-1"]},
                 "schedule": expression, "timeZone": zone, "concurrencyPolicy": "Allow"},
    }  # fmt: skip
    created = await kube.create(SCHEDULES, body, namespace=namespace)
    created["status"] = {"lastScheduleTime": format_time(CURSOR)}
    await kube.replace(SCHEDULES, created, namespace=namespace, subresource="status")
    clock = Clock()
    clock.at = CURSOR + timedelta(minutes=1)
    rec = reconciler(kube, clock)
    await rec.reconcile(f"{namespace}/sweep")

    view = await gather_one(kube, name="sweep", namespace=namespace, now=clock.at, ticks=4)
    shown = [t["at"] for t in view["nextTicks"]]
    stored = await kube.get(SCHEDULES, "sweep", namespace=namespace)
    assert shown[0] == stored["status"]["nextScheduleTime"]
    assert view["valid"] == {"status": "True", "reason": "Parsed", "message": "the schedule parses"}
    assert zone in render_text(view)

    # Now let the controller run through those instants, as the workqueue would.
    for _ in range(4 * len(shown)):
        if len(await fired(kube, namespace)) >= len(shown):
            break
        result = await rec.reconcile(f"{namespace}/sweep")
        assert result.requeue_after is not None
        clock.at += timedelta(seconds=result.requeue_after)
    assert await fired(kube, namespace) == shown


def test_the_command_reads_the_schedule_through_the_kubeconfig(
    control_plane: Any, glimmer_crds: None, namespace: str
) -> None:
    body = {
        "apiVersion": "burnin.glimmer.ai/v1alpha1",
        "kind": "BurnInSchedule",
        "metadata": {"name": "nightly", "namespace": namespace},
        "spec": {"profileRef": "acceptance", "target": {"nodeNames": ["gpu-1"]},
                 "schedule": "0 2 * * *", "timeZone": "Australia/Sydney"},
    }  # fmt: skip
    control_plane.kubectl("apply", "-f", "-", input=yaml.safe_dump(body))
    kubeconfig = str(control_plane.kubeconfig_path)
    runner = CliRunner()
    shown = runner.invoke(main, ["schedule", "nightly", "-n", namespace, "--kubeconfig",
                                 kubeconfig, "-o", "json", "--ticks", "2"])  # fmt: skip
    assert shown.exit_code == 0, shown.output
    report = json.loads(shown.output)
    locals_ = [t["local"] for t in report["nextTicks"]]
    assert len(locals_) == 2
    assert all(t.endswith(("02:00:00 AEDT", "02:00:00 AEST")) for t in locals_), locals_
    listed = runner.invoke(main, ["schedule", "-n", namespace, "--kubeconfig", kubeconfig])
    assert (
        listed.exit_code == 0 and "nightly" in listed.output and "Australia/Sydney" in listed.output
    )
    missing = runner.invoke(
        main, ["schedule", "ghost", "-n", namespace, "--kubeconfig", kubeconfig]
    )
    assert missing.exit_code == 2 and "'ghost' not found" in missing.output

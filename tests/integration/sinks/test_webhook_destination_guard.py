"""The webhook destination guard end to end: the real apiserver, a simulated kubelet, the
operator's controllers with the guard ``glimmer manager`` builds (its own apiserver
taken from the kubeconfig, ``--cluster-cidr``), and BurnInSinks naming the cloud
metadata service and the apiserver itself.

Nothing is sent anywhere: the guard's resolver and socket factory are recorders whose
socket factory never opens a socket, so a guard that let a destination through would
show up as a recorded dial, not as a packet to 169.254.169.254.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import pytest
import yaml

from glimmer.cli.manager import destination_guard
from glimmer.controllers.kit.names import RUNS
from glimmer.controllers.operator import operator_registrations
from glimmer.engine import ApiServerClient, ClientOptions, Manager, ManagerOptions
from glimmer.sinks import FanoutOptions
from glimmer.sinks.destinations import APISERVER, METADATA, DestinationGuard
from glimmer.sinks.fanout import SINKS
from glimmer.sinks.webhook import refused
from tests.integration.run.conftest import (
    FAST_RUN_OPTIONS,
    apply_profile,
    create_run,
    custom,
    terminal_run,
    wait_for,
)
from tests.unit.sinks.network import Network

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(240)]

APISERVER_NAME = "control-plane.lab.test"


@contextlib.asynccontextmanager
async def operator_with(kubeconfig: str, guard: DestinationGuard) -> AsyncIterator[None]:
    """The operator's controllers (``operator_registrations``, as the manager wires them)
    delivering through ``guard``."""
    client = await ApiServerClient.connect(kubeconfig, options=ClientOptions(qps=200, burst=400))
    manager = Manager(client, options=ManagerOptions(
        leader_elect=False, metrics_bind_address="0", health_probe_bind_address="0"))  # fmt: skip
    for registration in operator_registrations(
        manager=manager, options=FAST_RUN_OPTIONS, served_namespaces=None,
        fanout_options=FanoutOptions(destinations=guard),
    ):  # fmt: skip
        manager.add_controller(registration)
    stop = asyncio.Event()
    task = asyncio.create_task(manager.run(stop))
    try:
        async with asyncio.timeout(60):
            while not manager.controllers_running:
                assert not task.done(), task
                await asyncio.sleep(0.05)
        yield
    finally:
        stop.set()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await asyncio.wait_for(task, 30)
        await client.close()


async def test_sinks_naming_the_metadata_service_or_the_apiserver_are_refused_quoting_nothing(
    control_plane: Any,
    sink_crds: None,
    kube: ApiServerClient,
    namespace: str,
    sim_nodes: Any,
) -> None:
    kubeconfig = str(control_plane.kubeconfig_path)
    config = yaml.safe_load(control_plane.kubeconfig_path.read_text())
    server = str(config["clusters"][0]["cluster"]["server"]).rstrip("/")
    port = server.rsplit(":", 1)[1]
    # The manager's own guard for this apiserver (what `glimmer manager` builds), with the
    # network seams replaced by recorders.
    guard = await destination_guard(
        kubeconfig=kubeconfig, sink_allow=(), cluster_cidrs=("10.96.0.0/12",)
    )
    apiserver_host = server.split("//", 1)[1].rsplit(":", 1)[0].strip("[]")
    net = Network(answers={APISERVER_NAME: [[apiserver_host]]})
    guard = dataclasses.replace(guard, resolver=net.resolver, socket_factory=net.socket_factory)
    urls = {
        "metadata": "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
        "metadata-mapped": "http://[::ffff:169.254.169.254]/latest/meta-data/",
        "apiserver": f"{server}/api/v1/namespaces/kube-system/secrets",
        "apiserver-by-name": f"https://{APISERVER_NAME}:{port}/api/v1/secrets",
    }
    why = {"metadata": METADATA, "metadata-mapped": METADATA, "apiserver": APISERVER,
           "apiserver-by-name": APISERVER}  # fmt: skip
    hosts = {"metadata": "169.254.169.254", "metadata-mapped": "::ffff:a9fe:a9fe",
             "apiserver": apiserver_host, "apiserver-by-name": APISERVER_NAME}  # fmt: skip
    for name, url in urls.items():
        body = {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInSink",
            "metadata": {"name": name},
            "spec": {"type": "Webhook", "webhook": {"url": url}},
        }
        await kube.create(SINKS, body, namespace=namespace)  # fmt: skip
    nodes = sim_nodes(count=1)
    await apply_profile(kube, namespace, {"only": custom("echo gpuTempC=61")}, sinks=list(urls))

    async with operator_with(kubeconfig, guard):
        await create_run(kube, namespace, "guarded", nodes.names)
        run = await terminal_run(kube, namespace, "guarded")
        assert run["status"]["phase"] == "Passed"  # a refused sink never changes the run

        async def recorded() -> dict[str, str] | None:
            errors = {}
            for name in urls:
                status = (await kube.get(SINKS, name, namespace=namespace)).get("status") or {}
                errors[name] = str(status.get("lastError") or "")
            return errors if all(errors.values()) else None

        errors = await wait_for(recorded, what="every sink's lastError")
        current = await kube.get(RUNS, "guarded", namespace=namespace)

    for name, url in urls.items():
        # Exactly the sink's own URL and host, the kind of destination, and fixed words.
        assert errors[name] == str(refused(url, hosts[name], why[name])), (name, errors[name])
        assert not (await kube.get(SINKS, name, namespace=namespace))["status"].get(
            "lastDelivery"
        )  # fmt: skip
        assert current["status"]["sinkStatus"][name].startswith("Failed ")
        assert current["status"]["sinkStatus"][name].endswith(errors[name])
    assert net.dials == []  # no socket was ever asked for
    # Literals never reach the resolver; the name did, and its answer was refused there.
    assert set(net.lookups) == {APISERVER_NAME}

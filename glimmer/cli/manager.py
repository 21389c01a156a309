"""`glimmer manager`: the operator process (one replica of the Deployment).

Flags mirror a kubebuilder manager's so manifests and runbooks read the same.
Exit status is the contract with the Deployment: 0 after a requested stop
(SIGTERM/SIGINT, drained within the grace period), 1 when the lease was lost
or caches never synced, so the pod restarts as a standby instead of
reconciling on state it can no longer trust.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path

import click
import structlog

from glimmer.controllers.interlock import Interlock
from glimmer.controllers.run.setup import reaper_controller, run_controller
from glimmer.engine import (
    ApiServerClient,
    CacheSyncTimeoutError,
    ClientOptions,
    ControllerRegistration,
    EngineMetrics,
    KubeClient,
    LeadershipLostError,
    Manager,
    ManagerOptions,
    configure_logging,
)
from glimmer.engine.metrics import RunMetrics

_SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
_DEFAULT_LEADER_NAMESPACE = "glimmer-system"

log = structlog.get_logger("glimmer.cli.manager")


def controller_registrations(client: KubeClient, manager: Manager) -> list[ControllerRegistration]:
    """The reconcilers this binary runs: BurnInRuns and the orphan-stamp reaper.

    They share one interlock (which nodes each run holds), rebuilt from the cluster.
    """
    operator_namespace = os.environ.get("POD_NAMESPACE") or _leader_namespace(None)
    return [
        run_controller(
            client=client,
            namespace=manager.options.namespace,
            operator_namespace=operator_namespace,
            interlock=Interlock(),
            metrics=RunMetrics(manager.metrics.registry),
        ),
        reaper_controller(client=client),
    ]


def _leader_namespace(explicit: str | None) -> str:
    if explicit:
        return explicit
    with contextlib.suppress(OSError):
        return _SERVICE_ACCOUNT_NAMESPACE.read_text().strip() or _DEFAULT_LEADER_NAMESPACE
    return _DEFAULT_LEADER_NAMESPACE


async def run_manager(
    *,
    kubeconfig: str | None,
    options: ManagerOptions,
    client_options: ClientOptions | None = None,
) -> int:
    """Run until signalled (exit 0) or until leadership is lost (exit 1)."""
    metrics = EngineMetrics()
    client = await ApiServerClient.connect(kubeconfig, options=client_options, metrics=metrics)
    try:
        manager = Manager(client, options=options, metrics=metrics)
        for registration in controller_registrations(client, manager):
            manager.add_controller(registration)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        try:
            await manager.run(stop)
        except LeadershipLostError:
            log.error("leader lease lost; exiting so a standby can take over")
            return 1
        except CacheSyncTimeoutError as exc:
            log.error("caches did not sync", error=str(exc))
            return 1
        return 0
    finally:
        await client.close()


@click.command()
@click.option(
    "--kubeconfig",
    type=click.Path(dir_okay=False),
    default=None,
    help="Path to a kubeconfig; default: $KUBECONFIG, else in-cluster config.",
)
@click.option(
    "--namespace", default=None, help="Only watch this namespace (default: all namespaces)."
)
@click.option(
    "--metrics-bind-address",
    default=":8080",
    show_default=True,
    help='host:port serving /metrics; "0" disables it.',
)
@click.option(
    "--health-probe-bind-address",
    default=":8081",
    show_default=True,
    help='host:port serving /healthz and /readyz; "0" disables it.',
)
@click.option(
    "--leader-elect/--no-leader-elect",
    default=True,
    show_default=True,
    help="Elect a leader on a Lease; only the leader reconciles.",
)
@click.option(
    "--leader-election-namespace",
    default=None,
    help="Namespace of the Lease (default: the pod's namespace, else glimmer-system).",
)
@click.option(
    "--leader-election-id",
    default="glimmer-manager.burnin.glimmer.ai",
    show_default=True,
    help="Name of the Lease.",
)
@click.option(
    "--graceful-shutdown-timeout",
    type=float,
    default=30.0,
    show_default=True,
    help="Seconds allowed for draining reconciles after SIGTERM.",
)
@click.option(
    "--kube-api-qps",
    type=click.FloatRange(min=1.0),
    default=50.0,
    show_default=True,
    help="Sustained requests per second to the apiserver (a thousand-node run needs more "
    "than client-go's 20).",
)
@click.option(
    "--kube-api-burst",
    type=click.IntRange(min=1),
    default=100,
    show_default=True,
    help="Requests allowed above --kube-api-qps in a burst.",
)
@click.option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning", "error"]),
    default="info",
    show_default=True,
)
def manager(
    *,
    kubeconfig: str | None,
    namespace: str | None,
    metrics_bind_address: str,
    health_probe_bind_address: str,
    leader_elect: bool,
    leader_election_namespace: str | None,
    leader_election_id: str,
    graceful_shutdown_timeout: float,
    kube_api_qps: float,
    kube_api_burst: int,
    log_level: str,
) -> None:
    """Run the Glimmer controller manager."""
    configure_logging(level=log_level)
    options = ManagerOptions(
        namespace=namespace,
        metrics_bind_address=metrics_bind_address,
        health_probe_bind_address=health_probe_bind_address,
        leader_elect=leader_elect,
        leader_election_namespace=_leader_namespace(leader_election_namespace),
        leader_election_id=leader_election_id,
        graceful_shutdown_timeout=graceful_shutdown_timeout,
    )
    client_options = ClientOptions(qps=kube_api_qps, burst=kube_api_burst)
    sys.exit(
        asyncio.run(
            run_manager(kubeconfig=kubeconfig, options=options, client_options=client_options)
        )
    )

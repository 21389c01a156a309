"""``glimmer dev up``: a local cluster for trying the operator by hand.

It runs the same stack the integration tests use - a real etcd + kube-apiserver, nodes
simulated by ``glimmer.sim`` (pods run as local processes) and/or by KWOK (fake nodes
for scale) - in the foreground, and stops all of it on Ctrl-C or SIGTERM. The binaries
come from ``hack/envtest`` (built on first use, reused from its cache afterwards).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from types import FrameType

import click

from glimmer.testing.assets import (
    ENVTEST_SCRIPT,
    Assets,
    AssetsMissingError,
    find_assets,
    require_controller_manager,
)
from glimmer.testing.control_plane import ControlPlane
from glimmer.testing.kubeconfig import write_private
from glimmer.testing.kwok import Kwok
from glimmer.testing.sim_nodes import SimNodes


class _StopSignalError(Exception):
    """Raised from the signal handler to leave the foreground wait."""


def _assets(*, controller_manager: bool) -> Assets:
    try:
        assets = find_assets()
        if controller_manager:
            require_controller_manager(assets)
        return assets
    except AssetsMissingError:
        if not ENVTEST_SCRIPT.exists():
            raise
    click.echo(f"building the control-plane binaries with {ENVTEST_SCRIPT} ...", err=True)
    result = subprocess.run([str(ENVTEST_SCRIPT)], stdout=subprocess.PIPE, text=True, check=True)
    directory = result.stdout.strip().splitlines()[-1]
    return find_assets({**os.environ, "KUBEBUILDER_ASSETS": directory})


def _raise_stop(signum: int, frame: FrameType | None) -> None:
    raise _StopSignalError(signal.Signals(signum).name)


@click.group()
def dev() -> None:
    """Local development cluster (real apiserver, simulated nodes)."""


@dev.command()
@click.option(
    "--sim-nodes",
    type=int,
    default=3,
    show_default=True,
    help="Simulated nodes whose pods run as local processes.",
)
@click.option(
    "--kwok-nodes",
    type=int,
    default=0,
    show_default=True,
    help="KWOK fake nodes (for scale; pods complete per annotation).",
)
@click.option("--gpus-per-node", type=int, default=8, show_default=True)
@click.option(
    "--controller-manager/--no-controller-manager",
    default=True,
    show_default=True,
    help=(
        "Run kube-controller-manager too, so an installed operator (helm install, "
        "kubectl apply -k manifests/default) gets its pod and in-cluster identity; with it "
        "the ServiceAccount admission plugin is on, as in a real cluster."
    ),
)
@click.option(
    "--kubeconfig",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the admin kubeconfig here.",
)
def up(
    *,
    sim_nodes: int,
    kwok_nodes: int,
    gpus_per_node: int,
    controller_manager: bool,
    kubeconfig: Path | None,
) -> None:
    """Start the control plane and nodes in the foreground until Ctrl-C."""
    try:
        assets = _assets(controller_manager=controller_manager)
    except (AssetsMissingError, subprocess.CalledProcessError) as error:
        raise click.ClickException(str(error)) from error
    previous = {s: signal.signal(s, _raise_stop) for s in (signal.SIGINT, signal.SIGTERM)}
    plane = ControlPlane(assets=assets, controller_manager=controller_manager)
    sims: SimNodes | None = None
    kwok: Kwok | None = None
    try:
        began = time.monotonic()
        plane.start()
        click.echo(f"control plane ready in {plane.startup_seconds:.1f}s at {plane.server}")
        if sim_nodes:
            sims = SimNodes(
                kubeconfig=plane.kubeconfig_path,
                work_dir=plane.work_dir,
                count=sim_nodes,
                name_prefix="sim-",
                gpus_per_node=gpus_per_node,
                tls=plane.kubelet_tls,
            ).start()
            click.echo(f"simulated nodes: {', '.join(sims.names)} (log: {sims.log_path})")
        if kwok_nodes:
            kwok = Kwok(plane).start()
            names = kwok.create_nodes(kwok_nodes, name_prefix="kwok-", gpus_per_node=gpus_per_node)
            click.echo(f"kwok nodes: {names[0]} .. {names[-1]} ({len(names)})")
        path = plane.kubeconfig_path
        if kubeconfig is not None:
            write_private(kubeconfig, plane.kubeconfig_path.read_bytes())
            path = kubeconfig
        click.echo(
            f"\nready in {time.monotonic() - began:.1f}s. Use it with:\n"
            f"  export KUBECONFIG={path}\n"
            f"  {assets.kubectl} get nodes\n"
            f"logs and state: {plane.work_dir}\n"
            "Ctrl-C stops everything."
        )
        while True:
            time.sleep(1)
    except _StopSignalError as stop:
        click.echo(f"\n{stop}: stopping ...", err=True)
    finally:
        for part in (kwok, sims):
            if part is not None:
                part.stop()
        plane.stop()
        for signum, handler in previous.items():
            signal.signal(signum, handler)

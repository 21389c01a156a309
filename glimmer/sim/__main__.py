"""``python -m glimmer.sim``: run simulated GPU nodes against a cluster until signalled."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from pathlib import Path

import click

from glimmer.sim._tls import KubeletTLSError
from glimmer.sim.config import SimConfig
from glimmer.sim.images import ImageMap, ImageRule
from glimmer.sim.kubelet import SimKubelet


def _pair(value: str, sep: str) -> tuple[str, str]:
    key, found, rest = value.partition(sep)
    if not found or not key:
        raise click.BadParameter(f"{value!r} is not KEY{sep}VALUE")
    return key, rest


def _taint(value: str) -> tuple[str, str, str]:
    spec, found, effect = value.rpartition(":")
    if not found or effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
        raise click.BadParameter(f"{value!r} is not KEY[=VALUE]:EFFECT")
    key, _, val = spec.partition("=")
    return key, val, effect


@click.command(context_settings={"show_default": True})
@click.option("--kubeconfig", type=click.Path(exists=True, path_type=Path), required=True)
@click.option("--nodes", type=int, default=1, help="Nodes to register (0: only schedule).")
@click.option("--name-prefix", default="sim-", help="Node names are <prefix><index>.")
@click.option("--gpus-per-node", type=int, default=8, help="nvidia.com/gpu allocatable.")
@click.option("--gpu-product", default="NVIDIA-H100-80GB-HBM3")
@click.option("--label", "labels", multiple=True, help="Extra node label KEY=VALUE.")
@click.option("--taint", "taints", multiple=True, help="Node taint KEY[=VALUE]:EFFECT.")
@click.option(
    "--image-map",
    "image_rules",
    multiple=True,
    help="REGEX=COMMAND: run images fully matching REGEX as COMMAND (before the defaults).",
)
@click.option(
    "--sim-gpu",
    default=None,
    help="GLIMMER_SIM_GPU for every container (default: from --gpu-product, e.g. h100x8).",
)
@click.option(
    "--node-sim-gpu",
    "node_sim_gpu",
    multiple=True,
    help="NODE=VALUE: GLIMMER_SIM_GPU on one node, e.g. sim-2=h100x8:ecc-uncorrectable.",
)
@click.option("--env", "container_env", multiple=True, help="KEY=VALUE for every container.")
@click.option("--port", type=int, default=0, help="Kubelet HTTPS port (0: any free one).")
@click.option(
    "--tls-cert-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Serving certificate of the kubelet endpoint (default: a self-signed one).",
)
@click.option(
    "--tls-private-key-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Key of --tls-cert-file.",
)
@click.option(
    "--client-ca-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="CA of the client certificates allowed to read logs (default: the kubeconfig's CA).",
)
@click.option("--pod-ip-block", type=int, default=0, help="Pod IPs are 127.<block>.x.y.")
@click.option("--no-schedule", is_flag=True, help="Do not bind pending pods.")
@click.option(
    "--schedule-selector",
    default=None,
    help="Bind pods onto nodes matching this label selector instead of our own (e.g. type=kwok).",
)
@click.option("--state-dir", type=click.Path(path_type=Path), default=None)
@click.option("--ready-file", type=click.Path(path_type=Path), default=None)
@click.option("--keep-nodes", is_flag=True, help="Leave the nodes registered on exit.")
@click.option("-v", "--verbose", is_flag=True)
def main(
    *,
    kubeconfig: Path,
    nodes: int,
    name_prefix: str,
    gpus_per_node: int,
    gpu_product: str,
    labels: tuple[str, ...],
    taints: tuple[str, ...],
    image_rules: tuple[str, ...],
    sim_gpu: str | None,
    node_sim_gpu: tuple[str, ...],
    container_env: tuple[str, ...],
    port: int,
    tls_cert_file: Path | None,
    tls_private_key_file: Path | None,
    client_ca_file: Path | None,
    pod_ip_block: int,
    no_schedule: bool,
    schedule_selector: str | None,
    state_dir: Path | None,
    ready_file: Path | None,
    keep_nodes: bool,
    verbose: bool,
) -> None:
    """Simulated kubelet: NODES GPU nodes whose pods run as local processes."""
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO)
    try:
        rules = [ImageRule.parse(rule) for rule in image_rules]
    except ValueError as error:
        raise click.BadParameter(str(error)) from error
    config = SimConfig(
        kubeconfig=kubeconfig,
        nodes=nodes,
        name_prefix=name_prefix,
        gpus_per_node=gpus_per_node,
        gpu_product=gpu_product,
        labels=tuple(_pair(label, "=") for label in labels),
        taints=tuple(_taint(taint) for taint in taints),
        images=ImageMap.default(rules),
        sim_gpu=sim_gpu,
        node_sim_gpu=tuple(_pair(v, "=") for v in node_sim_gpu),
        container_env=tuple(_pair(v, "=") for v in container_env),
        port=port,
        tls_cert_file=tls_cert_file,
        tls_private_key_file=tls_private_key_file,
        client_ca_file=client_ca_file,
        pod_ip_block=pod_ip_block,
        schedule=not no_schedule,
        schedule_selector=schedule_selector,
        state_dir=state_dir,
        ready_file=ready_file,
        delete_nodes_on_exit=not keep_nodes,
    )
    try:
        asyncio.run(_run(SimKubelet(config)))
    except KubeletTLSError as error:
        raise click.ClickException(str(error)) from error


async def _run(kubelet: SimKubelet) -> None:
    task = asyncio.create_task(kubelet.run())
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, task.cancel)
    with contextlib.suppress(asyncio.CancelledError):
        await task


if __name__ == "__main__":
    main()

"""Service names of simulated pods: the hosts-file rules, and a real lookup through them.

The first half pins the cluster-DNS rule the records follow (headless Service that
selects the pod, Ready or published not-ready, never terminal, never ambiguous). The
second half starts pods through the simulated kubelet's own wiring (no apiserver: a
recording stand-in takes the status patches) and has their processes resolve the peer's
name with plain ``socket.getaddrinfo``.
"""

from __future__ import annotations

import asyncio
import json
import random
import textwrap
from pathlib import Path
from typing import Any, cast

import pytest

from glimmer.sim import names
from glimmer.sim._kube import Kube
from glimmer.sim.config import SimConfig
from glimmer.sim.kubelet import SimKubelet

JSON = dict[str, Any]
NS = "burnin"
SVC = "bp-pair-1"


def service(*, headless: bool = True, publish: bool = True, selector: JSON | None = None) -> JSON:
    spec: JSON = {
        "clusterIP": "None" if headless else "10.0.0.9",
        "selector": {"burnin.glimmer.ai/unit": "u1"} if selector is None else selector,
    }
    if publish:
        spec["publishNotReadyAddresses"] = True
    return {"metadata": {"name": SVC, "namespace": NS}, "spec": spec}


def pod(
    hostname: str,
    *,
    ready: bool = False,
    phase: str = "Running",
    uid: str | None = None,
    subdomain: str = SVC,
    command: list[str] | None = None,
    **extra: Any,
) -> JSON:
    container: JSON = {"name": "runner", "image": "example.invalid/x:1"}
    if command is not None:
        container["command"] = command
    return {
        "metadata": {
            "name": f"p-{hostname}",
            "namespace": NS,
            "uid": uid or f"uid-{hostname}",
            "labels": {"burnin.glimmer.ai/unit": "u1"},
        },
        "spec": {
            "hostname": hostname,
            "subdomain": subdomain,
            "nodeName": "sim-0",
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 1,
            "containers": [container],
            **extra,
        },
        "status": {
            "phase": phase,
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        },
    }


def records(*pods: tuple[JSON, str | None], **svc: Any) -> dict[str, str]:
    return names.service_records(pods, services={(NS, SVC): service(**svc)})


def test_names_a_headless_service_publishing_not_ready_resolves_both_forms() -> None:
    got = records((pod("server"), "127.9.0.1"), (pod("client"), "127.9.0.2"))
    assert got == {
        f"server.{SVC}.{NS}.svc": "127.9.0.1",
        f"server.{SVC}.{NS}.svc.cluster.local": "127.9.0.1",
        f"client.{SVC}.{NS}.svc": "127.9.0.2",
        f"client.{SVC}.{NS}.svc.cluster.local": "127.9.0.2",
    }


def test_names_without_publish_not_ready_only_a_ready_pod_resolves() -> None:
    got = records(
        (pod("server"), "127.9.0.1"), (pod("client", ready=True), "127.9.0.2"), publish=False
    )
    assert set(got) == {f"client.{SVC}.{NS}.svc", f"client.{SVC}.{NS}.svc.cluster.local"}


@pytest.mark.parametrize(
    "svc",
    [{"headless": False}, {"selector": {"other": "x"}}, {"selector": {}}],
    ids=["cluster-ip-service", "selector-mismatch", "no-selector"],
)
def test_names_only_a_headless_service_that_selects_the_pod_publishes_it(svc: JSON) -> None:
    assert records((pod("server"), "127.9.0.1"), **svc) == {}


def test_names_no_service_no_record() -> None:
    assert names.service_records([(pod("server"), "127.9.0.1")], services={}) == {}


@pytest.mark.parametrize("phase", ["Succeeded", "Failed"])
def test_names_a_terminal_pod_is_not_published(phase: str) -> None:
    assert records((pod("server", phase=phase), "127.9.0.1")) == {}


def test_names_a_deleting_pod_is_not_published() -> None:
    deleting = pod("server")
    deleting["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    assert records((deleting, "127.9.0.1")) == {}


def test_names_a_name_two_pods_claim_is_left_out_never_the_wrong_peer() -> None:
    got = records(
        (pod("server", uid="a"), "127.9.0.1"),
        (pod("server", uid="b"), "127.9.0.3"),
        (pod("client"), "127.9.0.2"),
    )
    assert not any(name.startswith("server.") for name in got)
    assert got[f"client.{SVC}.{NS}.svc"] == "127.9.0.2"


@pytest.mark.parametrize("address", [None, "10.244.0.5", "not-an-ip"])
def test_names_only_reachable_loopback_addresses_are_published(address: str | None) -> None:
    assert records((pod("server"), address)) == {}


def test_names_hosts_file_has_localhost_own_names_then_records() -> None:
    own = pod("client")
    text = names.hosts_file_text(
        pod=own,
        address="127.9.0.2",
        records={f"server.{SVC}.{NS}.svc": "127.9.0.1", f"client.{SVC}.{NS}.svc": "127.9.0.2"},
    )
    lines = text.splitlines()
    assert lines[0] == "127.0.0.1\tlocalhost"
    assert (
        lines[1] == f"127.9.0.2\tclient.{SVC}.{NS}.svc.cluster.local client.{SVC}.{NS}.svc client"
    )
    assert lines[2:] == [f"127.9.0.1\tserver.{SVC}.{NS}.svc"]


def test_names_a_pod_without_subdomain_has_only_its_own_name() -> None:
    plain = pod("x")
    del plain["spec"]["subdomain"], plain["spec"]["hostname"]
    text = names.hosts_file_text(pod=plain, address="127.9.0.7", records={})
    assert text.splitlines()[1] == "127.9.0.7\tp-x"
    assert not names.needs_cluster_names(plain)


def test_names_hosts_file_is_replaced_whole_and_unchanged_text_is_not_rewritten(
    tmp_path: Path,
) -> None:
    target = tmp_path / "hosts"
    assert names.write_atomically(target, "one\n")
    inode = target.stat().st_ino
    assert not names.write_atomically(target, "one\n")
    assert target.stat().st_ino == inode
    assert names.write_atomically(target, "two\n")
    assert target.read_text() == "two\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hosts"]


def test_names_preload_keeps_a_preload_the_pod_set() -> None:
    env = names.resolver_env(library=Path("/l/w.so"), hosts_file=Path("/h"), inherited="/x.so")
    assert env == {"LD_PRELOAD": "/l/w.so:/x.so", "NSS_WRAPPER_HOSTS": "/h"}


# -- through the simulated kubelet's wiring, real processes --------------------------


class RecordingKube:
    """Takes the kubelet's status patches (the apiserver's part, minus the server)."""

    def __init__(self) -> None:
        self.statuses: dict[str, list[JSON]] = {}

    async def merge_patch(self, path: str, body: JSON) -> JSON:
        self.statuses.setdefault(path, []).append(body["status"])
        return body

    async def request(self, method: str, path: str, **_: Any) -> JSON:
        return {}


LISTEN = textwrap.dedent(
    """
    import os, socket, time
    own = socket.getaddrinfo(os.environ["OWN"], 0, type=socket.SOCK_STREAM)[0][4][0]
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((own, 18999)); s.listen()
    print("listening", own, flush=True)
    s.settimeout(20); c, _ = s.accept(); c.sendall(b"hello from " + own.encode()); c.close()
    """
)
CONNECT = textwrap.dedent(
    """
    import os, socket, time
    peer = os.environ["PEER"]
    address = socket.getaddrinfo(peer, 18999, type=socket.SOCK_STREAM)[0][4]
    for _ in range(200):
        try:
            c = socket.create_connection(address, timeout=2); break
        except OSError:
            time.sleep(0.05)
    print("resolved", peer, address[0], c.recv(100).decode(), flush=True)
    """
)


#: Pod addresses 127.<BLOCK>.x.y, away from the blocks simulator processes pick (20..219).
BLOCK = random.randint(230, 250)


def kubelet(tmp_path: Path, *, nss_wrapper: Path | None) -> SimKubelet:
    sim = SimKubelet(
        SimConfig(kubeconfig=tmp_path / "k", nodes=1, nss_wrapper=nss_wrapper, pod_ip_block=BLOCK)
    )
    sim.kube = cast(Kube, RecordingKube())  # PodWorker calls only its two methods
    sim.state_dir = tmp_path
    return sim


async def wait_terminal(sim: SimKubelet, uid: str) -> None:
    async with asyncio.timeout(30):
        while not sim.workers[uid].terminal:
            await asyncio.sleep(0.05)


def with_env(document: JSON, **env: str) -> JSON:
    document["spec"]["containers"][0]["env"] = [{"name": k, "value": v} for k, v in env.items()]
    return document


async def test_names_a_runner_started_by_the_sim_resolves_its_peer_service_to_the_pod_ip(
    tmp_path: Path,
) -> None:
    library = names.find_nss_wrapper()
    assert library is not None, "libnss-wrapper is not installed: run hack/setup"
    sim = kubelet(tmp_path, nss_wrapper=library)
    sim._on_service("ADDED", service())
    server_name, client_name = f"server.{SVC}.{NS}.svc", f"client.{SVC}.{NS}.svc.cluster.local"
    server = with_env(pod("server", command=["python", "-c", LISTEN]), OWN=server_name)
    client = with_env(
        pod("client", command=["python", "-c", CONNECT], ready=False), PEER=server_name
    )
    for document in (server, client):
        document["status"] = {}
    sim._on_pod("ADDED", server)
    sim._on_pod("ADDED", client)
    try:
        await wait_terminal(sim, "uid-client")
        await wait_terminal(sim, "uid-server")
    finally:
        await asyncio.gather(*(w.kill() for w in sim.workers.values()))
    server_ip = sim.workers["uid-server"].pod_ip
    client_ip = sim.workers["uid-client"].pod_ip
    assert server_ip != client_ip and server_ip.startswith(f"127.{BLOCK}.")
    log = (tmp_path / "pods" / "uid-client" / "runner.0.log").read_text()
    assert f"resolved {server_name} {server_ip} hello from {server_ip}" in log
    hosts = (tmp_path / "pods" / "uid-server" / "hosts").read_text()
    assert f"{client_ip}\tclient.{SVC}.{NS}.svc {client_name}" in hosts.splitlines()
    assert "NWRAP_ERROR" not in log
    assert sim.workers["uid-client"].phase == "Succeeded"


async def test_names_without_nss_wrapper_a_pod_needing_names_never_runs_and_says_why(
    tmp_path: Path,
) -> None:
    sim = kubelet(tmp_path, nss_wrapper=None)
    sim._on_service("ADDED", service())
    marker = tmp_path / "ran"
    sim._on_pod("ADDED", pod("client", command=["touch", str(marker)]))
    worker = sim.workers["uid-client"]
    kube = cast(RecordingKube, sim.kube)
    async with asyncio.timeout(10):
        while not any(
            s["containerStatuses"][0]["state"].get("waiting", {}).get("reason")
            == "CreateContainerError"
            for s in kube.statuses.get(worker.path + "/status", [])
        ):
            await asyncio.sleep(0.05)
    await worker.kill()
    waiting = kube.statuses[worker.path + "/status"][-1]["containerStatuses"][0]["state"]["waiting"]
    assert "libnss-wrapper" in waiting["message"] and "hack/setup" in waiting["message"]
    assert not marker.exists()
    assert worker.phase == "Pending"
    assert json.dumps(kube.statuses).count('"Succeeded"') == 0


async def test_names_a_pods_own_names_are_on_disk_before_it_starts_even_with_no_service(
    tmp_path: Path,
) -> None:
    library = names.find_nss_wrapper()
    assert library is not None, "libnss-wrapper is not installed: run hack/setup"
    sim = kubelet(tmp_path, nss_wrapper=library)
    lonely = pod("server", command=["python", "-c", "pass"])
    lonely["status"] = {}
    sim._on_pod("ADDED", lonely)
    worker = sim.workers["uid-server"]
    try:
        # Synchronously after the pod was taken on: before its first process can run.
        text = worker.hosts_file.read_text()
    finally:
        await worker.kill()
    assert (
        f"{worker.pod_ip}\tserver.{SVC}.{NS}.svc.cluster.local server.{SVC}.{NS}.svc server" in text
    )

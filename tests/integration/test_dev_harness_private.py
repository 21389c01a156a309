"""The dev harness is private by default: ``glimmer dev up`` on a shared machine must not
let another local user read runs or forge the logs verdicts are judged from.

- etcd (where every BurnInRun lives) serves TLS only and refuses any client without a
  certificate from the etcd CA - even one holding the cluster admin's certificate;
- the simulated kubelet (where the apiserver reads pod logs) refuses any client without
  a certificate from the cluster CA, and serves one the apiserver verifies;
- every key file is 0600 from the moment it exists (never written, then chmod-ed), in a
  0700 directory.
"""

from __future__ import annotations

import http.client
import os
import ssl
import stat
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from glimmer.sim import _tls
from glimmer.testing import ControlPlane, SimNodes, _pki
from glimmer.testing.kubeconfig import write_kubeconfig
from glimmer.testing.pytest_plugin import SimNodesFactory
from tests.integration.controlplane._waiting import wait_for_phase


def refused(url: str, context: ssl.SSLContext | None, *, data: bytes | None = None) -> bool:
    """Whether the server refused the connection before answering any HTTP at all."""
    try:
        with urllib.request.urlopen(url, data=data, timeout=15, context=context) as response:
            response.read()
    except urllib.error.HTTPError:
        return False  # it answered: the connection was let in
    except (urllib.error.URLError, OSError, http.client.HTTPException):
        return True
    return False


def client_context(ca: Path, pair: _pki.KeyPair | None = None) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(ca))
    if pair is not None:
        context.load_cert_chain(str(pair.cert), str(pair.key))
    return context


def pki_pair(plane: ControlPlane, name: str) -> _pki.KeyPair:
    directory = plane.work_dir / "pki"
    return _pki.KeyPair(cert=directory / f"{name}.crt", key=directory / f"{name}.key")


# --- etcd --------------------------------------------------------------------------------


@pytest.mark.controlplane
def test_etcd_refuses_a_client_without_an_etcd_ca_certificate(
    control_plane: ControlPlane,
) -> None:
    health = f"{control_plane.etcd_url}/health"
    assert control_plane.etcd_url.startswith("https://127.0.0.1:")
    etcd_ca = control_plane.etcd_ca_path
    assert stat.S_IMODE(control_plane.work_dir.stat().st_mode) == 0o700
    assert refused(health, client_context(etcd_ca))  # no certificate at all
    admin = pki_pair(control_plane, "admin")  # the cluster admin's: the cluster CA's
    assert refused(health, client_context(etcd_ca, admin))
    plain = control_plane.etcd_url.replace("https://", "http://") + "/v3/kv/range"
    try:
        with urllib.request.urlopen(plain, data=b'{"key":"Lw=="}', timeout=15) as response:
            leaked = response.status == 200
    except urllib.error.HTTPError as error:
        leaked = error.code == 200
    except (urllib.error.URLError, OSError, http.client.HTTPException):
        leaked = False
    assert not leaked, "etcd answered a plain-HTTP read"
    apiserver = _pki.KeyPair(
        cert=etcd_ca.parent / "apiserver-etcd-client.crt",
        key=etcd_ca.parent / "apiserver-etcd-client.key",
    )
    assert not refused(health, client_context(etcd_ca, apiserver))  # the one it lets in
    assert control_plane.etcd_revision() > 0


# --- the simulated kubelet ---------------------------------------------------------------


@pytest.mark.controlplane
def test_simulated_kubelet_refuses_a_client_without_a_cluster_ca_certificate(
    control_plane: ControlPlane, sim_nodes: SimNodesFactory, tmp_path: Path
) -> None:
    nodes = sim_nodes(1)
    logs = f"https://127.0.0.1:{nodes.port}/containerLogs/default/nobody/main"
    # The client verifies the kubelet against the cluster CA, as the apiserver does.
    assert refused(logs, client_context(control_plane.ca_path))  # no certificate
    foreign = _pki.CertificateAuthority(tmp_path / "foreign").issue(
        name="mallory", common_name="kube-apiserver-kubelet-client", client=True
    )
    assert refused(logs, client_context(control_plane.ca_path, foreign))
    apiserver = pki_pair(control_plane, "apiserver-kubelet-client")
    with pytest.raises(urllib.error.HTTPError) as answered:
        urllib.request.urlopen(
            logs, timeout=15, context=client_context(control_plane.ca_path, apiserver)
        )
    assert answered.value.code == 404  # let in, and told there is no such container


@pytest.mark.controlplane
def test_apiserver_reads_no_log_from_a_kubelet_the_harness_ca_did_not_certify(
    control_plane: ControlPlane, namespace: str, tmp_path: Path
) -> None:
    # A kubelet endpoint with a certificate of its own (here: the simulator's self-signed
    # fallback), as a process that took over a kubelet's port would have.
    with SimNodes(kubeconfig=control_plane.kubeconfig_path, work_dir=tmp_path) as rogue:
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "forged"},
            "spec": {
                "restartPolicy": "Never",
                "nodeSelector": {"kubernetes.io/hostname": rogue.names[0]},
                "containers": [
                    {
                        "name": "main",
                        "image": "example.invalid/any:1",
                        "command": ["python", "-c", "print('GPU_BURN_PASS forged')"],
                    }
                ],
            },
        }
        control_plane.kubectl(
            "apply", f"--namespace={namespace}", "-f", "-", input=yaml.safe_dump(pod)
        )
        assert (
            wait_for_phase(control_plane, namespace=namespace, name="forged")["status"]["phase"]
            == "Succeeded"
        )
        read = control_plane.kubectl("logs", "forged", f"--namespace={namespace}", check=False)
    assert read.returncode != 0
    assert "forged" not in read.stdout
    assert "x509" in read.stderr or "certificate" in read.stderr, read.stderr


def test_simulated_kubelet_cannot_start_without_a_client_ca(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "no-ca.kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: k, cluster: {server: 'https://127.0.0.1:1', "
        "insecure-skip-tls-verify: true}}]\n"
        "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
    )
    with pytest.raises(_tls.KubeletTLSError, match="--client-ca-file"):
        _tls.serving_context(tmp_path, kubeconfig=kubeconfig)


# --- key files ---------------------------------------------------------------------------


@pytest.fixture
def creations(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, tuple[int, int]]]:
    """path -> (permission bits, size) of every file ``os.open`` creates, read from the
    new descriptor before anything is written to it; under umask 0, so nothing narrows
    a mode that was asked for too wide."""
    seen: dict[str, tuple[int, int]] = {}
    real_open = os.open

    def recording_open(path: Any, flags: int, mode: int = 0o777, *args: Any, **kw: Any) -> int:
        fd = real_open(path, flags, mode, *args, **kw)
        if flags & os.O_CREAT:
            status = os.fstat(fd)
            seen[os.path.realpath(os.fsdecode(path))] = (
                stat.S_IMODE(status.st_mode),
                status.st_size,
            )
        return fd

    monkeypatch.setattr(os, "open", recording_open)
    previous = os.umask(0)
    try:
        yield seen
    finally:
        os.umask(previous)


def private_files(root: Path) -> list[Path]:
    """Every file under ``root`` that holds a private key (PEM, or in a kubeconfig)."""
    found = []
    for path in root.rglob("*"):
        if path.is_file():
            text = path.read_bytes()
            if b"PRIVATE KEY" in text or b"client-key-data" in text:
                found.append(path)
    return found


def _created_as(created: Path, key: Path) -> bool:
    """``created`` is ``key`` itself, or the ``.<name>.`` scratch file renamed onto it."""
    same_dir = created.parent == key.resolve().parent
    return same_dir and (created.name == key.name or created.name.startswith(f".{key.name}."))


def assert_private_from_creation(root: Path, creations: dict[str, tuple[int, int]]) -> None:
    keys = private_files(root)
    assert keys, "nothing was written"
    for key in keys:
        # Renamed into place: the scratch file it was created as must have been private.
        created = [
            mode
            for path, (mode, size) in creations.items()
            if _created_as(Path(path), key) and size == 0
        ]
        assert created, f"{key} was not created through os.open (written, then chmod-ed?)"
        assert all(mode == 0o600 for mode in created), (key, [oct(m) for m in created])
        assert stat.S_IMODE(key.stat().st_mode) == 0o600, key
    for directory in {k.parent for k in keys}:
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700, directory


def test_harness_key_files_are_0600_from_creation(
    tmp_path: Path, creations: dict[str, tuple[int, int]]
) -> None:
    plane = ControlPlane(work_dir=tmp_path / "plane")
    plane.work_dir = tmp_path / "plane"
    plane.work_dir.mkdir(mode=0o700)  # as start() makes it (or mkdtemp, also 0700)
    plane._prepare_pki()  # what start() writes before it starts etcd and the apiserver
    write_kubeconfig(
        tmp_path / "plane" / "admin.kubeconfig",
        server="https://127.0.0.1:6443",
        ca_cert=plane.ca_path,
        user="glimmer-admin",
        client_cert=plane.work_dir / "pki" / "admin.crt",
        client_key=plane.work_dir / "pki" / "admin.key",
    )
    assert len(private_files(tmp_path)) >= 7  # 6 leaf keys, the SA key, the kubeconfig
    assert_private_from_creation(tmp_path, creations)


def test_simulated_kubelet_key_file_is_0600_from_creation(
    tmp_path: Path, creations: dict[str, tuple[int, int]]
) -> None:
    ca = _pki.CertificateAuthority(tmp_path / "ca")
    kubeconfig = write_kubeconfig(
        tmp_path / "ca" / "k.kubeconfig", server="https://127.0.0.1:1", ca_cert=ca.cert_path,
        user="u", token="t",
    )  # fmt: skip
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    _tls.serving_context(state, kubeconfig=kubeconfig)  # the self-signed serving key
    assert [p.name for p in private_files(state)] == ["kubelet.key"]
    assert_private_from_creation(state, creations)

"""The simulated kubelet's TLS: who it is to the apiserver, and who may read its logs.

A real kubelet authenticates every client by certificate (``--client-ca-file``) and the
apiserver presents its kubelet-client certificate (``--kubelet-client-certificate``) when
it proxies ``pods/log``. The simulated one does the same: a connection without a
certificate signed by the client CA is refused in the TLS handshake, so no other local
user can read a pod's log, or serve the apiserver forged ones from a port they took
over, without a harness credential. The client CA defaults to the kubeconfig's cluster
CA, which in the harness (and in a kubeadm cluster) is the CA that issued the
apiserver's kubelet-client certificate.

The serving certificate is the one given (``--tls-cert-file``/``--tls-private-key-file``,
in the harness issued by its CA, so an apiserver run with
``--kubelet-certificate-authority`` verifies it); without one a self-signed certificate
for 127.0.0.1 is made, which only an apiserver that does not verify kubelets accepts.
Its key file is 0600 from its first byte.
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import ipaddress
import os
import ssl
from pathlib import Path
from typing import Any

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


class KubeletTLSError(ValueError):
    """The kubelet cannot serve privately; the message names the flag that fixes it."""


def write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to a file that nobody but its owner could ever read: created new
    (an old one is removed first) with mode 0600 in the ``open`` call itself, so no byte
    is ever in a file with wider permissions, whatever the umask."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as stream:
        os.fchmod(stream.fileno(), 0o600)  # a umask can only narrow 0600; make it exact
        stream.write(data)


def _self_signed(directory: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "glimmer-sim-kubelet")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=7))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "kubelet.crt", directory / "kubelet.key"
    write_private(
        key_path,
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
    )
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return cert_path, key_path


def _current_cluster(document: Any) -> dict[str, Any]:
    if not isinstance(document, dict):
        return {}
    contexts = {c.get("name"): c.get("context") or {} for c in document.get("contexts") or []}
    wanted = (contexts.get(document.get("current-context")) or {}).get("cluster")
    for entry in document.get("clusters") or []:
        if isinstance(entry, dict) and entry.get("name") == wanted:
            cluster = entry.get("cluster")
            return cluster if isinstance(cluster, dict) else {}
    return {}


def kubeconfig_ca(kubeconfig: Path) -> str:
    """The PEM of the cluster CA ``kubeconfig``'s current context trusts.

    Raises :class:`KubeletTLSError` when it names none (a kubeconfig that skips TLS
    verification, or trusts the system store): then the client CA must be given."""
    try:
        cluster = _current_cluster(yaml.safe_load(kubeconfig.read_text()))
    except (OSError, yaml.YAMLError) as error:
        raise KubeletTLSError(f"cannot read the kubeconfig {kubeconfig}: {error}") from error
    data = cluster.get("certificate-authority-data")
    if isinstance(data, str) and data:
        return base64.b64decode(data).decode()
    path = cluster.get("certificate-authority")
    if isinstance(path, str) and path:
        return (kubeconfig.parent / path).read_text()
    raise KubeletTLSError(
        f"the kubeconfig {kubeconfig} names no cluster CA, so the simulated kubelet cannot "
        "tell whose client certificates to accept: give --client-ca-file (the CA that "
        "issued the apiserver's --kubelet-client-certificate)"
    )


def serving_context(
    directory: Path,
    *,
    kubeconfig: Path,
    cert_file: Path | None = None,
    key_file: Path | None = None,
    client_ca_file: Path | None = None,
) -> ssl.SSLContext:
    """The kubelet endpoint's TLS: serve ``cert_file`` (else a self-signed one made in
    ``directory``) and require a client certificate signed by ``client_ca_file`` (else
    the CA of ``kubeconfig``'s cluster)."""
    if (cert_file is None) != (key_file is None):
        raise KubeletTLSError("give both --tls-cert-file and --tls-private-key-file, or neither")
    if cert_file is None or key_file is None:
        cert_file, key_file = _self_signed(directory)
    # Not create_default_context: for a server it also trusts the system's CAs, and a
    # client certificate from any public CA would then read the logs.
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(str(cert_file), str(key_file))
    context.verify_mode = ssl.CERT_REQUIRED
    if client_ca_file is not None:
        context.load_verify_locations(cafile=str(client_ca_file))
    else:
        context.load_verify_locations(cadata=kubeconfig_ca(kubeconfig))
    return context

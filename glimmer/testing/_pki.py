"""Throw-away certificate authorities for one test control plane.

Envtest-equivalent security is the point: the apiserver runs with client-certificate
authentication and RBAC, so a manifest that forgets a verb fails here as it would in a
cluster. Every key and certificate is generated fresh per control plane (never checked
in). As in a kubeadm cluster there are two CAs: the cluster CA (apiserver serving, the
client CA, the kubelet-client and kubelet-serving certificates) and an etcd CA that
alone can open etcd, so no cluster credential - not even the admin's - reaches etcd.

The harness must stay private on a shared machine: every private key is written to a
file that is 0600 from its first byte (:func:`glimmer.testing.kubeconfig.write_private`),
never written and then chmod-ed, and the directories holding them are 0700. A CA's own
key never touches the disk.
"""

from __future__ import annotations

import datetime
import ipaddress
from collections.abc import Sequence
from pathlib import Path

import attrs
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from glimmer.testing.kubeconfig import write_private

_VALIDITY = datetime.timedelta(days=7)


@attrs.frozen
class KeyPair:
    """PEM files of one issued certificate and its private key."""

    cert: Path
    key: Path


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> None:
    write_private(
        path,
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
    )


def _name(common_name: str, organizations: Sequence[str] = ()) -> x509.Name:
    attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
    attributes.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
    return x509.Name(attributes)


class CertificateAuthority:
    """A self-signed CA that issues serving and client certificates into ``directory``."""

    def __init__(self, directory: Path, *, common_name: str = "glimmer-test-ca") -> None:
        self.directory = directory
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        name = _name(common_name)
        self._cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(self._key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + _VALIDITY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(
                x509.SubjectKeyIdentifier.from_public_key(self._key.public_key()), critical=False
            )
            .sign(self._key, hashes.SHA256())
        )
        self.cert_path = directory / "ca.crt"
        self.cert_path.write_bytes(self._cert.public_bytes(serialization.Encoding.PEM))

    def issue(
        self,
        *,
        name: str,
        common_name: str,
        organizations: Sequence[str] = (),
        dns_names: Sequence[str] = (),
        ip_addresses: Sequence[str] = (),
        server: bool = False,
        client: bool = False,
    ) -> KeyPair:
        """Issue a leaf certificate; files are ``<name>.crt`` / ``<name>.key``."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        usages = []
        if server:
            usages.append(ExtendedKeyUsageOID.SERVER_AUTH)
        if client:
            usages.append(ExtendedKeyUsageOID.CLIENT_AUTH)
        builder = (
            x509.CertificateBuilder()
            .subject_name(_name(common_name, organizations))
            .issuer_name(self._cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + _VALIDITY)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
            .add_extension(
                x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False
            )
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self._key.public_key()),
                critical=False,
            )
        )
        sans: list[x509.GeneralName] = [x509.DNSName(d) for d in dns_names]
        sans.extend(x509.IPAddress(ipaddress.ip_address(ip)) for ip in ip_addresses)
        if sans:
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        cert = builder.sign(self._key, hashes.SHA256())
        pair = KeyPair(cert=self.directory / f"{name}.crt", key=self.directory / f"{name}.key")
        pair.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        _write_key(pair.key, key)
        return pair


def write_service_account_key(path: Path) -> None:
    """The RSA key the apiserver signs (and verifies) service-account tokens with."""
    _write_key(path, rsa.generate_private_key(public_exponent=65537, key_size=2048))

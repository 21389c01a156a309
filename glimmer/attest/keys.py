"""The ed25519 keys that sign and verify attestations (K9).

The private key is PEM (PKCS#8, ``openssl genpkey -algorithm ed25519``), as the key
Secret holds it under :data:`SECRET_KEY` (Kubernetes base64-encodes Secret data; the
caller hands in the decoded bytes). The public key is PEM (SubjectPublicKeyInfo,
``openssl pkey -in key.pem -pubout``). Both are parsed with ``cryptography`` and
wrapped as ``securesystemslib`` signers and keys, whose keyid (sha256 of the public
key's canonical form) names the key in each DSSE signature.

Both libraries are imported by the functions that read keys, not by this module: a
manager without an attestation key never loads them (see :mod:`glimmer.attest.dsse`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from securesystemslib.signer import CryptoSigner, SSlibKey

#: The Secret data key holding the PEM private key.
SECRET_KEY: Final = "ed25519.pem"
#: What to run to make a key the Secret can hold (said in every key error).
KEY_FIX: Final = (
    "create it with: openssl genpkey -algorithm ed25519 -out ed25519.pem && "
    "kubectl create secret generic NAME -n NAMESPACE --from-file=ed25519.pem"
)


class UnusableKeyError(ValueError):
    """A key that cannot be used; the message names it and the fix."""


def load_signer(pem: bytes, *, source: str) -> CryptoSigner:
    """A signer for an ed25519 PEM private key; ``source`` names where it came from."""
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from securesystemslib.signer import CryptoSigner

    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm) as err:
        raise UnusableKeyError(
            f"{source}: not an unencrypted PEM private key ({err}); {KEY_FIX}"
        ) from err
    if not isinstance(key, Ed25519PrivateKey):
        raise UnusableKeyError(
            f"{source}: a {type(key).__name__}, not an ed25519 private key; {KEY_FIX}"
        )
    return CryptoSigner(key)


def load_public_key(pem: bytes, *, source: str) -> SSlibKey:
    """The verifying key for an ed25519 PEM public key (a private key's public half is
    accepted too, so a signer's own key file verifies)."""
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (
        Ed25519PrivateKey,
        Ed25519PublicKey,
    )
    from securesystemslib.signer import SSlibKey

    try:
        public = serialization.load_pem_public_key(pem)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        try:
            private = serialization.load_pem_private_key(pem, password=None)
        except (ValueError, TypeError, UnsupportedAlgorithm) as err:
            raise UnusableKeyError(f"{source}: not a PEM ed25519 public key ({err})") from err
        if not isinstance(private, Ed25519PrivateKey):
            raise UnusableKeyError(
                f"{source}: a {type(private).__name__}, not an ed25519 key"
            ) from None
        public = private.public_key()
    if not isinstance(public, Ed25519PublicKey):
        raise UnusableKeyError(f"{source}: a {type(public).__name__}, not an ed25519 public key")
    return SSlibKey.from_crypto(public)


def public_pem(signer: CryptoSigner) -> str:
    """The signer's public key as PEM text (what a verifier is given)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    key = Ed25519PublicKey.from_public_bytes(bytes.fromhex(signer.public_key.keyval["public"]))
    return key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode("ascii")

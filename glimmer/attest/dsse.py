"""DSSE envelopes of in-toto statements: signing and verifying (K9, N18).

The envelope is the Dead Simple Signing Envelope (payload type
``application/vnd.in-toto+json``, PAE signing) as ``securesystemslib.dsse`` writes it:
``{"payload": base64, "payloadType": ..., "signatures": [{"keyid", "sig"}]}``. Any DSSE
verifier (cosign's ``verify-blob-attestation``, in-toto's) reads it.

:func:`verify_envelope` checks, in order, and raises :class:`AttestationError` naming the
first check that failed (its ``check`` is the word ``glimmer verify`` prints): the
envelope's shape (``envelope``), the payload type (``payloadType``), a signature by the
given key over the PAE (``signature``), the statement type (``statement``), the
predicate type (``predicateType``), the subject (``subject``), freshness (``expired``:
past the predicate's ``expiresAt``, or issued longer ago than ``max_age``) and, when
asked, certification (``certified``: the predicate's ``certified`` is not true).

securesystemslib (and cryptography under it) is imported by the functions that sign or
verify, not by this module: a manager without an attestation key never loads it (about
9 MiB resident).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

from glimmer.attest.statement import (
    PREDICATE_TYPES,
    STATEMENT_TYPE,
    canonical,
    parse_time,
)
from glimmer.contract.envelope import EnvelopeDecodeError, encode, from_json

if TYPE_CHECKING:
    from securesystemslib.dsse import Envelope
    from securesystemslib.signer import CryptoSigner, Key

JSON = dict[str, Any]

PAYLOAD_TYPE: Final = "application/vnd.in-toto+json"

#: The checks, in the order :func:`verify_envelope` makes them.
CHECKS: Final = (
    "envelope", "payloadType", "signature", "statement", "predicateType", "subject",
    "expired", "certified",
)  # fmt: skip


class AttestationError(ValueError):
    """An attestation that does not verify; ``check`` names the check that failed."""

    def __init__(self, check: str, message: str) -> None:
        super().__init__(f"{check}: {message}")
        self.check = check
        self.detail = message


def sign_statement(statement: Mapping[str, Any], signer: CryptoSigner) -> JSON:
    """The DSSE envelope (as JSON) of ``statement`` signed by ``signer``."""
    from securesystemslib.dsse import Envelope

    envelope = Envelope(payload=canonical(statement), payload_type=PAYLOAD_TYPE, signatures={})
    envelope.sign(signer)
    out: JSON = envelope.to_dict()
    return out


def envelope_bytes(envelope: Mapping[str, Any]) -> bytes:
    """The envelope as stored (sorted keys, compact): what its recorded sha256 is of."""
    return json.dumps(envelope, sort_keys=True, separators=(",", ":")).encode("utf-8")


@dataclass(frozen=True, slots=True)
class Verified:
    """A statement whose envelope verified, and the key that signed it."""

    statement: JSON
    keyid: str

    @property
    def predicate(self) -> JSON:
        value = self.statement.get("predicate")
        return dict(value) if isinstance(value, Mapping) else {}

    @property
    def subjects(self) -> list[str]:
        return [
            str(s.get("name"))
            for s in self.statement.get("subject") or ()
            if isinstance(s, Mapping)
        ]


def _envelope(document: Any) -> Envelope:
    from securesystemslib.dsse import Envelope
    from securesystemslib.exceptions import FormatError

    if not isinstance(document, Mapping):
        raise AttestationError("envelope", "not a JSON object")
    missing = [k for k in ("payload", "payloadType", "signatures") if k not in document]
    if missing:
        raise AttestationError("envelope", f"not a DSSE envelope: no {', '.join(missing)}")
    if not isinstance(document["signatures"], list) or not document["signatures"]:
        raise AttestationError("envelope", "the envelope carries no signature")
    try:
        # from_dict rewrites the signatures it reads: hand it a copy.
        return Envelope.from_dict(json.loads(json.dumps(document)))
    except (KeyError, TypeError, ValueError, FormatError, binascii.Error) as err:
        raise AttestationError("envelope", f"unreadable DSSE envelope ({err})") from err


def verify_envelope(
    document: Any,
    *,
    keys: Iterable[Key],
    now: datetime,
    subject: str | None = None,
    subject_digest: str | None = None,
    predicate_type: str | None = None,
    max_age: timedelta | None = None,
    require_certified: bool = False,
) -> Verified:
    """The statement inside ``document`` (a DSSE envelope as JSON) once every check
    passes (see the module docstring); else :class:`AttestationError`."""
    from securesystemslib.exceptions import VerificationError

    envelope = _envelope(document)
    if envelope.payload_type != PAYLOAD_TYPE:
        raise AttestationError("payloadType", f"{envelope.payload_type!r}, not {PAYLOAD_TYPE!r}")
    wanted = list(keys)
    if not wanted:
        raise AttestationError("signature", "no key to verify with")
    try:
        accepted = envelope.verify(wanted, 1)
    except VerificationError as err:
        names = ", ".join(k.keyid[:12] for k in wanted)
        raise AttestationError(
            "signature",
            f"bad signature: no signature verifies with the given key ({names}): the "
            "payload was altered, or it was signed by another key",
        ) from err
    try:
        statement = json.loads(envelope.payload)
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise AttestationError("statement", f"the payload is not JSON ({err})") from err
    if not isinstance(statement, dict) or statement.get("_type") != STATEMENT_TYPE:
        got = statement.get("_type") if isinstance(statement, dict) else type(statement).__name__
        raise AttestationError("statement", f"_type {got!r}, not {STATEMENT_TYPE!r}")
    kind = statement.get("predicateType")
    allowed = {predicate_type} if predicate_type else PREDICATE_TYPES
    if kind not in allowed:
        raise AttestationError(
            "predicateType", f"{kind!r}, not {' or '.join(sorted(map(repr, allowed)))}"
        )
    verified = Verified(statement=statement, keyid=next(iter(accepted)))
    if not isinstance(statement.get("predicate"), Mapping) or not verified.subjects:
        raise AttestationError("statement", "no predicate or no subject")
    if subject is not None and subject not in verified.subjects:
        raise AttestationError(
            "subject", f"wrong subject: the statement is about {', '.join(verified.subjects)}, "
            f"not {subject}"
        )  # fmt: skip
    if subject_digest is not None and not any(
        isinstance(s, Mapping)
        and isinstance(s.get("digest"), Mapping)
        and s["digest"].get("sha256") == subject_digest
        for s in statement.get("subject") or ()
    ):
        raise AttestationError(
            "subject",
            f"wrong subject: the statement's digest is not the document's ({subject_digest}): "
            "the document it travels in was altered",
        )
    _fresh(verified.predicate, now=now, max_age=max_age)
    if require_certified and verified.predicate.get("certified") is not True:
        raise AttestationError("certified", _uncertified(verified.predicate))
    return verified


def _fresh(predicate: Mapping[str, Any], *, now: datetime, max_age: timedelta | None) -> None:
    try:
        issued = parse_time(str(predicate.get("issuedAt") or ""))
    except ValueError as err:
        raise AttestationError("expired", f"no readable issuedAt ({err})") from err
    if issued > now + timedelta(minutes=5):
        raise AttestationError("expired", f"issued at {predicate.get('issuedAt')}, in the future")
    expires = predicate.get("expiresAt")
    if expires is not None:
        try:
            until = parse_time(str(expires))
        except ValueError as err:
            raise AttestationError("expired", f"unreadable expiresAt ({err})") from err
        if now >= until:
            raise AttestationError("expired", f"expired at {expires} (the verdict's age limit)")
    if max_age is not None and now - issued > max_age:
        raise AttestationError(
            "expired",
            f"stale: issued at {predicate.get('issuedAt')}, older than --max-age "
            f"{int(max_age.total_seconds())}s",
        )


def _uncertified(predicate: Mapping[str, Any]) -> str:
    if "nodeVerdict" in predicate:
        verdict = predicate.get("nodeVerdict") or {}
        state = verdict.get("state") if isinstance(verdict, Mapping) else None
        return f"not certified: node verdict {state}, label {predicate.get('label')}" + (
            f" ({verdict.get('message')})" if isinstance(verdict, Mapping) else ""
        )
    run = predicate.get("run") or {}
    provenance = run.get("provenance") if isinstance(run, Mapping) else None
    return f"not certified: the run does not certify silicon (provenance {provenance})"


def decode_payload(document: Mapping[str, Any]) -> JSON:
    """The statement of an envelope, unverified (for showing it; never for trusting it)."""
    value = json.loads(base64.b64decode(str(document.get("payload") or "")))
    return value if isinstance(value, dict) else {}


#: The ConfigMap data key holding a node's DSSE envelope (K8).
CONFIGMAP_KEY: Final = "envelope.json"
#: The delivery envelope field carrying the run's DSSE envelope (L11).
ENVELOPE_FIELD: Final = "attestation"


def extract_envelope(document: Any) -> Any:
    """The DSSE envelope a document holds: the document itself, a ConfigMap's
    :data:`CONFIGMAP_KEY` (``kubectl get configmap -o json``), or a delivery envelope's
    :data:`ENVELOPE_FIELD`; anything else is returned as is (and fails ``envelope``)."""
    if not isinstance(document, Mapping):
        return document
    if document.get("kind") == "ConfigMap":
        data = document.get("data")
        text = data.get(CONFIGMAP_KEY) if isinstance(data, Mapping) else None
        if not isinstance(text, str):
            raise AttestationError("envelope", f"the ConfigMap has no data key {CONFIGMAP_KEY}")
        try:
            return json.loads(text)
        except json.JSONDecodeError as err:
            raise AttestationError("envelope", f"{CONFIGMAP_KEY} is not JSON ({err})") from err
    if "payload" not in document and isinstance(document.get(ENVELOPE_FIELD), Mapping):
        return document[ENVELOPE_FIELD]
    return document


def delivery_digest(document: Mapping[str, Any]) -> str:
    """The hex sha256 a delivery envelope's attestation subject carries: of the envelope
    encoded (``glimmer.contract.envelope.encode``) without its ``attestation`` field."""
    rest = {k: v for k, v in document.items() if k != ENVELOPE_FIELD}
    try:
        envelope = from_json(rest, strict=False)
    except EnvelopeDecodeError as err:
        raise AttestationError("envelope", f"not a delivery envelope ({err})") from err
    return hashlib.sha256(encode(envelope)).hexdigest()

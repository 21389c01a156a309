"""Signing terminal delivery envelopes (L11, L12) and reading the attestation key (K9).

With ``glimmer manager --attestation-key-secret``, every terminal ``RunPhaseChanged``
envelope carries ``attestation``: the run-verdict in-toto statement
(:func:`glimmer.attest.run_statement`) in a DSSE envelope, whose subject is
``burninrun/<namespace>/<name>`` with the sha256 of the envelope encoded without that
field (:func:`glimmer.attest.delivery_digest`), so the signature covers every other
byte a sink receives. The predicate copies the run's ``certifiesSilicon``, results and
node verdicts as the envelope carries them (decided in :mod:`glimmer.verdict`) and the
pinned plan's digest (read from the run).

Checkpoints and TestCompleted envelopes are not signed: they are not verdicts. A key
that cannot be read, or a run whose plan cannot be read, sends the envelope unsigned
(L12: nothing claims a signature it does not have) and logs why; delivery is never held
back by signing.

:class:`KeySource` reads the key Secret for the sinks and the NodeFingerprint
controller alike: one GET per signing, the parsed key kept per resourceVersion.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

import aiohttp
import structlog

from glimmer.api import GROUP, VERSION
from glimmer.attest import (
    SECRET_KEY,
    UnusableKeyError,
    load_signer,
    plan_digest,
    run_statement,
    sign_statement,
)
from glimmer.attest.keys import KEY_FIX
from glimmer.attest.statement import RunFacts
from glimmer.contract.envelope import (
    REASON_RUN_PHASE_CHANGED,
    Attestation,
    DsseSignature,
    Envelope,
    encode,
)
from glimmer.engine import ApiError, KubeClient, Resource, is_not_found
from glimmer.verdict import Phase

if TYPE_CHECKING:
    from securesystemslib.signer import CryptoSigner

log = structlog.get_logger("glimmer.sinks.attestation")

SECRETS: Final = Resource("", "v1", "secrets", namespaced=True, kind="Secret")
_RUNS: Final = Resource(GROUP, VERSION, "burninruns", namespaced=True, kind="BurnInRun")
_PLAN_ANNOTATION: Final = f"{GROUP}/plan"
_READ_ERRORS: Final = (ApiError, OSError, TimeoutError, aiohttp.ClientError)


#: How long a key found unusable is not read again (a fleet's passes would otherwise each
#: GET the Secret while it is broken).
RETRY_UNUSABLE_SECONDS: Final = 30.0


class KeySource:
    """The attestation signer from a Secret (``namespace``, ``name``), or why not."""

    def __init__(
        self,
        *,
        client: KubeClient,
        secret: tuple[str, str],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.secret = secret
        self.clock = clock
        self._cached: tuple[str, CryptoSigner] | None = None
        #: (when, why) the key was last found unusable.
        self._unusable: tuple[float, str] | None = None

    @property
    def ref(self) -> str:
        return f"{self.secret[0]}/{self.secret[1]}"

    async def signer(self) -> CryptoSigner | str:
        """The signer, or a message naming the Secret, what is wrong and the fix. A key
        found unusable is read again only after :data:`RETRY_UNUSABLE_SECONDS`."""
        if self._unusable is not None:
            when, why = self._unusable
            if self.clock() - when < RETRY_UNUSABLE_SECONDS:
                return why
        found = await self._read()
        self._unusable = (self.clock(), found) if isinstance(found, str) else None
        return found

    async def _read(self) -> CryptoSigner | str:
        namespace, name = self.secret
        try:
            secret = await self.client.get(SECRETS, name, namespace=namespace)
        except _READ_ERRORS as err:
            if is_not_found(err):
                return f"the attestation key Secret {self.ref} does not exist; {KEY_FIX}"
            return (
                f"the attestation key Secret {self.ref} cannot be read ({err}); grant the "
                "manager get on it (the chart's attestation.keySecret does)"
            )
        meta = secret.get("metadata") if isinstance(secret.get("metadata"), Mapping) else {}
        version = str(meta.get("resourceVersion") or "") if isinstance(meta, Mapping) else ""
        if self._cached is not None and version and self._cached[0] == version:
            return self._cached[1]
        data = secret.get("data")
        encoded = data.get(SECRET_KEY) if isinstance(data, Mapping) else None
        if not isinstance(encoded, str) or not encoded:
            return f"the attestation key Secret {self.ref} has no data key {SECRET_KEY}; {KEY_FIX}"
        try:
            pem = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            return f"the attestation key Secret {self.ref}: {SECRET_KEY} is not base64; {KEY_FIX}"
        try:
            signer = load_signer(pem, source=f"Secret {self.ref} key {SECRET_KEY}")
        except UnusableKeyError as err:
            return f"the attestation key {err}"
        self._cached = (version, signer)
        return signer


def signs(envelope: Envelope) -> bool:
    """Whether ``envelope`` is one that gets signed: terminal RunPhaseChanged only."""
    return envelope.reason == REASON_RUN_PHASE_CHANGED and Phase.is_terminal_text(envelope.phase)


def delivery_digest_of(envelope: Envelope) -> str:
    """The hex sha256 of ``envelope`` encoded without its attestation."""
    return hashlib.sha256(encode(dataclasses.replace(envelope, attestation=None))).hexdigest()


@dataclasses.dataclass(frozen=True)
class BareSigning:
    """A bare host's signing key and the digest of the plan it ran (N19)."""

    signer: CryptoSigner
    plan_digest: str


def sign_envelope(
    envelope: Envelope, *, signer: CryptoSigner, plan_digest: str, issued_at: datetime
) -> Envelope:
    """``envelope`` with its ``attestation``: the run-verdict statement over the envelope's
    own verdict (as :mod:`glimmer.verdict` decided it), bound to its bytes, signed. The
    operator's sinks and a bare host's ``glimmer run --attestation-key`` both call it."""
    facts = RunFacts(
        namespace=envelope.run.namespace,
        name=envelope.run.name,
        uid=envelope.run.uid,
        phase=envelope.phase,
        plan_digest=plan_digest,
        provenance=envelope.provenance,
        certifies_silicon=envelope.certifies_silicon,
    )
    statement = run_statement(
        run=facts,
        subject_digest=delivery_digest_of(envelope),
        results=[
            {"name": r.name, "kind": r.kind, "phase": r.phase, "provenance": r.provenance,
             "suspect": r.suspect, "nodes": list(r.nodes), "variantAxes": dict(r.variant_axes)}
            for r in envelope.results
        ],
        node_verdicts=[{"node": v.node, "verdict": v.verdict} for v in envelope.node_verdicts],
        fingerprint=envelope.fingerprint,
        issued_at=issued_at,
    )  # fmt: skip
    signed = sign_statement(statement, signer)
    return dataclasses.replace(
        envelope,
        attestation=Attestation(
            payload=str(signed["payload"]),
            payload_type=str(signed["payloadType"]),
            signatures=tuple(
                DsseSignature(keyid=str(s["keyid"]), sig=str(s["sig"]))
                for s in signed["signatures"]
            ),
        ),
    )


class EnvelopeSigner:
    """Attaches the signed run verdict to terminal envelopes (see the module docstring)."""

    def __init__(self, *, keys: KeySource, now: Callable[[], datetime]) -> None:
        self.keys = keys
        self.now = now

    async def _plan_digest(self, envelope: Envelope) -> str | None:
        try:
            run = await self.keys.client.get(
                _RUNS, envelope.run.name, namespace=envelope.run.namespace
            )
        except _READ_ERRORS:
            return None
        meta: Any = run.get("metadata") or {}
        if str(meta.get("uid") or "") != envelope.run.uid:
            return None
        text = (meta.get("annotations") or {}).get(_PLAN_ANNOTATION)
        return plan_digest(text) if isinstance(text, str) and text else None

    async def attach(self, envelope: Envelope) -> Envelope:
        """``envelope`` with its ``attestation`` when it is one that gets signed and the
        key and plan could be read; else ``envelope`` unchanged (and why, logged)."""
        if not signs(envelope):
            return envelope
        signer = await self.keys.signer()
        if isinstance(signer, str):
            log.error("terminal envelope sent unsigned", run=envelope.run.name, problem=signer)
            return envelope
        digest = await self._plan_digest(envelope)
        if digest is None:
            log.error("terminal envelope sent unsigned: the run's pinned plan cannot be read",
                      run=f"{envelope.run.namespace}/{envelope.run.name}")  # fmt: skip
            return envelope
        return sign_envelope(envelope, signer=signer, plan_digest=digest, issued_at=self.now())

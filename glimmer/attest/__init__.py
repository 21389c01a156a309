"""Signed verdicts: in-toto statements in DSSE envelopes (docs/attestations.md).

:mod:`~glimmer.attest.statement` builds the statements from verdicts decided in
:mod:`glimmer.verdict`, :mod:`~glimmer.attest.dsse` signs and verifies them and
:mod:`~glimmer.attest.keys` reads the ed25519 keys. Nothing here decides a verdict, and
nothing here talks to Kubernetes: the NodeFingerprint controller reads the key Secret
and writes the ConfigMap, the sinks carry the envelope, ``glimmer verify`` checks one.
"""

from glimmer.attest.dsse import (
    CHECKS,
    CONFIGMAP_KEY,
    ENVELOPE_FIELD,
    PAYLOAD_TYPE,
    AttestationError,
    Verified,
    decode_payload,
    delivery_digest,
    envelope_bytes,
    extract_envelope,
    sign_statement,
    verify_envelope,
)
from glimmer.attest.keys import (
    KEY_FIX,
    SECRET_KEY,
    UnusableKeyError,
    load_public_key,
    load_signer,
    public_pem,
)
from glimmer.attest.statement import (
    NODE_PREDICATE,
    RUN_PREDICATE,
    STATEMENT_TYPE,
    RunFacts,
    node_statement,
    plan_digest,
    run_facts,
    run_statement,
)

__all__ = [
    "CHECKS",
    "CONFIGMAP_KEY",
    "ENVELOPE_FIELD",
    "KEY_FIX",
    "NODE_PREDICATE",
    "PAYLOAD_TYPE",
    "RUN_PREDICATE",
    "SECRET_KEY",
    "STATEMENT_TYPE",
    "AttestationError",
    "RunFacts",
    "UnusableKeyError",
    "Verified",
    "decode_payload",
    "delivery_digest",
    "envelope_bytes",
    "extract_envelope",
    "load_public_key",
    "load_signer",
    "node_statement",
    "plan_digest",
    "public_pem",
    "run_facts",
    "run_statement",
    "sign_statement",
    "verify_envelope",
]

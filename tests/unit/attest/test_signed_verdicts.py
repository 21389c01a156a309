"""Signed verdicts (K8, K9, I47, I48): statements, DSSE signing and verification."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given
from hypothesis import strategies as st

from glimmer.attest import (
    NODE_PREDICATE,
    RUN_PREDICATE,
    AttestationError,
    RunFacts,
    UnusableKeyError,
    load_public_key,
    load_signer,
    node_statement,
    public_pem,
    run_statement,
    sign_statement,
    verify_envelope,
)
from glimmer.verdict.attestation import label_agrees, node_certified, signable
from glimmer.verdict.expiry import VerdictState
from glimmer.verdict.nodes import NodeState, PlannedUnit, node_verdict

T0 = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
DIGEST = "glimmer-v1:" + "ab" * 32


def private_pem() -> bytes:
    return Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


SIGNER = load_signer(private_pem(), source="test")
PUBLIC = load_public_key(public_pem(SIGNER).encode(), source="test")
OTHER = load_public_key(public_pem(load_signer(private_pem(), source="other")).encode(), source="o")
RUN = RunFacts(
    namespace="lab",
    name="acceptance",
    uid="u-1",
    phase="Passed",
    plan_digest="cd" * 32,
    provenance="silicon",
    certifies_silicon=True,
)
PLANNED = [PlannedUnit(test="burn", nodes=("n1",), required=True, kind="gpu-burn")]


def result(provenance: str = "silicon", phase: str = "Passed", **extra: Any) -> dict[str, Any]:
    return {
        "name": "burn",
        "kind": "gpu-burn",
        "phase": phase,
        "nodes": ["n1"],
        "provenance": provenance,
        **extra,
    }


def statement(
    results: list[dict[str, Any]] | None = None,
    label: VerdictState = VerdictState.PASSED,
    issued: datetime = T0,
    expires: datetime | None = None,
) -> dict[str, Any]:
    rs = [result()] if results is None else results
    verdict = node_verdict("n1", planned=PLANNED, results=rs)
    return node_statement(
        node="n1",
        fingerprint_digest=DIGEST,
        run=RUN,
        verdict=verdict,
        label=label,
        results=rs,
        issued_at=issued,
        expires_at=expires,
    )


def verify(envelope: Any, **kw: Any) -> Any:
    return verify_envelope(
        envelope, keys=[PUBLIC], now=kw.pop("now", T0 + timedelta(minutes=1)), **kw
    )


# --- the statement ---------------------------------------------------------------------


def test_K8_a_node_statement_names_the_node_its_digest_the_run_and_each_result() -> None:
    doc = statement()
    assert doc["_type"] == "https://in-toto.io/Statement/v1"
    assert doc["predicateType"] == NODE_PREDICATE
    assert doc["subject"] == [{"name": "node/n1", "digest": {"sha256": "ab" * 32}}]
    p = doc["predicate"]
    assert p["fingerprintDigest"] == DIGEST
    assert p["run"]["uid"] == "u-1" and p["plan"] == {"digest": {"sha256": "cd" * 32}}
    assert p["results"] == [
        {
            "test": "burn",
            "kind": "gpu-burn",
            "phase": "Passed",
            "provenance": "silicon",
            "suspect": False,
            "nodes": ["n1"],
        }
    ]
    assert p["nodeVerdict"]["state"] == "Passed" and p["label"] == "Passed"
    assert p["certified"] is True and p["issuedAt"] == "2026-05-01T12:00:00Z"


@pytest.mark.parametrize(
    "rs",
    [
        [result(provenance="sim")],
        [result(suspect=True)],
        [result(provenance="unknown")],
        [result(phase="Error")],
        [result(phase="Failed")],
        [],
    ],
    ids=["simulated", "suspect", "unknown", "error", "failed", "never-run"],
)
def test_certification_never_of_a_simulated_suspect_unjudged_or_failed_verdict(
    rs: list[dict[str, Any]],
) -> None:
    # Even with a label claiming Passed, the run's own node verdict decides.
    assert statement(rs, label=VerdictState.PASSED)["predicate"]["certified"] is False


def test_certification_a_passed_run_verdict_under_an_expired_label_certifies_nothing() -> None:
    assert statement(label=VerdictState.EXPIRED)["predicate"]["certified"] is False


def test_signing_only_states_a_run_decided_are_signable() -> None:
    assert {s for s in VerdictState if signable(s)} == {
        VerdictState.PASSED,
        VerdictState.FAILED,
        VerdictState.SIMULATED,
    }
    verdict = node_verdict("n1", planned=PLANNED, results=[result(provenance="sim")])
    assert label_agrees(verdict, VerdictState.SIMULATED)
    assert not label_agrees(verdict, VerdictState.PASSED)


_RESULT = st.fixed_dictionaries(
    {
        "name": st.sampled_from(["burn", "smoke"]),
        "kind": st.just("gpu-burn"),
        "phase": st.sampled_from(["Passed", "Failed", "Error", "Skipped", "Running"]),
        "nodes": st.just(["n1"]),
        "provenance": st.sampled_from(["silicon", "sim", "unknown", ""]),
        "suspect": st.booleans(),
    }
)


@given(results=st.lists(_RESULT, max_size=4), label=st.sampled_from(list(VerdictState)))
def test_certification_property_certified_means_every_planned_result_passed_on_silicon(
    results: list[dict[str, Any]], label: VerdictState
) -> None:
    planned = [
        PlannedUnit(test=t, nodes=("n1",), required=True, kind="gpu-burn")
        for t in ("burn", "smoke")
    ]
    verdict = node_verdict("n1", planned=planned, results=results)
    certified = node_certified(verdict, label)
    if certified:
        assert label is VerdictState.PASSED and verdict.state is NodeState.PASSED
        for test in ("burn", "smoke"):
            mine = [r for r in results if r["name"] == test]
            assert mine and all(
                r["phase"] == "Passed" and r["provenance"] == "silicon" and not r["suspect"]
                for r in mine
            )


def test_K8_a_run_statement_certifies_exactly_what_certifies_silicon_says() -> None:
    for certifies in (True, False):
        run = RunFacts(
            namespace="lab",
            name="r",
            uid="u",
            phase="Passed",
            plan_digest="cd" * 32,
            certifies_silicon=certifies,
        )
        doc = run_statement(
            run=run,
            subject_digest="ef" * 32,
            results=[result()],
            node_verdicts=[{"node": "n1", "verdict": "Passed"}],
            fingerprint={"n1": DIGEST},
            issued_at=T0,
        )
        assert doc["predicateType"] == RUN_PREDICATE
        assert doc["subject"] == [{"name": "burninrun/lab/r", "digest": {"sha256": "ef" * 32}}]
        assert doc["predicate"]["plan"] == {"digest": {"sha256": "cd" * 32}}
        assert doc["predicate"]["certified"] is certifies


# --- DSSE: round trip and each failed check -----------------------------------------------


def test_K9_round_trip_a_signed_statement_verifies_with_the_public_key() -> None:
    envelope = sign_statement(statement(), SIGNER)
    assert envelope["payloadType"] == "application/vnd.in-toto+json"
    verified = verify(
        envelope, subject="node/n1", max_age=timedelta(hours=1), require_certified=True
    )
    assert verified.predicate["certified"] is True
    assert verified.keyid == SIGNER.public_key.keyid


def test_K9_a_tampered_payload_is_a_bad_signature() -> None:
    envelope = sign_statement(statement(), SIGNER)
    doc = json.loads(base64.b64decode(envelope["payload"]))
    doc["predicate"]["certified"] = True
    doc["predicate"]["nodeVerdict"]["state"] = "Passed"
    doc["subject"][0]["name"] = "node/n2"
    tampered = {**envelope, "payload": base64.b64encode(json.dumps(doc).encode()).decode()}
    with pytest.raises(AttestationError) as err:
        verify(tampered)
    assert err.value.check == "signature" and "bad signature" in str(err.value)


def test_K9_a_tampered_payload_type_fails_its_check() -> None:
    envelope = {**sign_statement(statement(), SIGNER), "payloadType": "text/plain"}
    with pytest.raises(AttestationError) as err:
        verify(envelope)
    assert err.value.check == "payloadType"


def test_K9_another_key_is_a_bad_signature() -> None:
    with pytest.raises(AttestationError) as err:
        verify_envelope(sign_statement(statement(), SIGNER), keys=[OTHER], now=T0)
    assert err.value.check == "signature"


def test_K9_the_wrong_subject_is_refused() -> None:
    with pytest.raises(AttestationError) as err:
        verify(sign_statement(statement(), SIGNER), subject="node/n2")
    assert err.value.check == "subject" and "node/n1" in str(err.value)


def test_K9_a_stale_statement_is_refused_by_max_age_and_by_its_expiry() -> None:
    envelope = sign_statement(statement(), SIGNER)
    with pytest.raises(AttestationError) as err:
        verify(envelope, now=T0 + timedelta(days=2), max_age=timedelta(days=1))
    assert err.value.check == "expired" and "stale" in str(err.value)
    expiring = sign_statement(statement(expires=T0 + timedelta(hours=1)), SIGNER)
    verify(expiring, now=T0 + timedelta(minutes=59))
    with pytest.raises(AttestationError) as err:
        verify(expiring, now=T0 + timedelta(hours=1))
    assert err.value.check == "expired"


def test_K9_a_simulated_verdict_verifies_but_is_not_certified() -> None:
    envelope = sign_statement(
        statement([result(provenance="sim")], label=VerdictState.SIMULATED), SIGNER
    )
    assert verify(envelope).predicate["certified"] is False
    with pytest.raises(AttestationError) as err:
        verify(envelope, require_certified=True)
    assert err.value.check == "certified" and "Simulated" in str(err.value)


def test_K9_another_statement_or_predicate_type_is_refused() -> None:
    for field, value, check in (
        ("_type", "https://in-toto.io/Statement/v0.1", "statement"),
        ("predicateType", "https://slsa.dev/provenance/v1", "predicateType"),
    ):
        doc = {**statement(), field: value}
        with pytest.raises(AttestationError) as err:
            verify(sign_statement(doc, SIGNER))
        assert err.value.check == check


@pytest.mark.parametrize(
    "document",
    [
        [],
        {"payload": "e30="},
        {"payload": "!!", "payloadType": "x", "signatures": [{"keyid": "k", "sig": "!!"}]},
        {"payload": "e30=", "payloadType": "application/vnd.in-toto+json", "signatures": []},
    ],
)
def test_K9_a_document_that_is_no_envelope_names_the_envelope(document: Any) -> None:
    with pytest.raises(AttestationError) as err:
        verify(document)
    assert err.value.check == "envelope"


def test_K9_a_malformed_or_wrong_kind_of_key_names_its_source_and_the_fix() -> None:
    with pytest.raises(UnusableKeyError, match=r"ns/key: not an unencrypted PEM.*openssl genpkey"):
        load_signer(b"not a key", source="ns/key")
    from cryptography.hazmat.primitives.asymmetric import ec

    ecdsa = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    with pytest.raises(UnusableKeyError, match="not an ed25519 private key"):
        load_signer(ecdsa, source="ns/key")
    with pytest.raises(UnusableKeyError, match="not a PEM ed25519 public key"):
        load_public_key(b"junk", source="pub.pem")

"""Signed node verdicts written by the NodeFingerprint controller (K8, K9, I48)."""

from __future__ import annotations

import base64
import hashlib
import json
from datetime import timedelta
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from glimmer.attest import AttestationError, load_public_key, verify_envelope
from glimmer.controllers.fingerprint.attestation import (
    ATTESTATION_ANNOTATION,
    ATTESTATION_SHA_ANNOTATION,
    parse_secret_ref,
)
from glimmer.controllers.kit.names import VERDICT_LABEL
from glimmer.engine import CONFIGMAPS, NODES, FakeClient
from glimmer.sinks.attestation import SECRETS
from tests.unit.controllers.fingerprint.test_fingerprint_rules import (
    OPS,
    T0,
    Clock,
    condition,
    fingerprint,
    node,
    passed_run,
    reconciler,
    relabel,
)

SECRET = ("keys", "glimmer-attestation-key")


def keypair() -> tuple[bytes, Any]:
    private = Ed25519PrivateKey.generate()
    pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    public = private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return pem, load_public_key(public, source="test")


async def key_secret(fake: FakeClient, pem: bytes) -> None:
    body = {
        "metadata": {"name": SECRET[1], "namespace": SECRET[0]},
        "data": {"ed25519.pem": base64.b64encode(pem).decode()},
    }
    await fake.create(SECRETS, body, namespace=SECRET[0])


async def judged(fake: FakeClient, clock: Clock, *, key: bool = True, **run: Any) -> Any:
    await fake.create(NODES, node("n1"))
    rec = reconciler(fake, clock, attestation_key_secret=SECRET if key else None)
    await rec.reconcile("n1")
    await passed_run(
        fake, started=T0 + timedelta(seconds=5), finished=T0 + timedelta(hours=1), **run
    )
    clock.at = T0 + timedelta(hours=2)
    await rec.reconcile("n1")
    return rec


async def envelope_of(fake: FakeClient) -> tuple[dict[str, Any], dict[str, str]]:
    annotations = (await fake.get(NODES, "n1"))["metadata"].get("annotations") or {}
    namespace, name = annotations[ATTESTATION_ANNOTATION].split("/")
    cm = await fake.get(CONFIGMAPS, name, namespace=namespace)
    return json.loads(cm["data"]["envelope.json"]), annotations


async def test_K8_a_passed_node_is_annotated_with_a_signed_certified_verdict() -> None:
    fake, clock = FakeClient(), Clock()
    pem, public = keypair()
    await key_secret(fake, pem)
    await judged(fake, clock)
    envelope, annotations = await envelope_of(fake)
    assert annotations[ATTESTATION_ANNOTATION].startswith(f"{OPS}/attestation-n1-")
    cm_text = json.dumps(envelope, sort_keys=True, separators=(",", ":")).encode()
    assert annotations[ATTESTATION_SHA_ANNOTATION] == hashlib.sha256(cm_text).hexdigest()
    verified = verify_envelope(
        envelope, keys=[public], now=clock.at, subject="node/n1", require_certified=True
    )
    fp = await fingerprint(fake)
    assert verified.predicate["fingerprintDigest"] == fp["status"]["digest"]
    assert verified.predicate["label"] == "Passed"
    assert verified.predicate["run"]["name"] == "acceptance"
    assert verified.predicate["results"][0]["provenance"] == "silicon"
    attested = condition(fp, "Attested")
    assert (attested["status"], attested["reason"]) == ("True", "Signed")
    assert (await fake.get(NODES, "n1"))["metadata"]["labels"][VERDICT_LABEL] == "Passed"


async def test_K8_a_stable_pass_signs_nothing_again() -> None:
    fake, clock = FakeClient(), Clock()
    pem, _ = keypair()
    await key_secret(fake, pem)
    rec = await judged(fake, clock)
    before = [c for c in fake.calls if c[0] in ("create", "replace") and "configmaps" in c[1]]
    clock.at += timedelta(minutes=10)
    await rec.reconcile("n1")
    after = [c for c in fake.calls if c[0] in ("create", "replace") and "configmaps" in c[1]]
    assert before == after and len(before) == 1


async def test_signing_a_simulated_verdict_is_signed_as_simulated_and_never_certified() -> None:
    fake, clock = FakeClient(), Clock()
    pem, public = keypair()
    await key_secret(fake, pem)
    await judged(fake, clock, provenance="sim")
    envelope, _ = await envelope_of(fake)
    verified = verify_envelope(envelope, keys=[public], now=clock.at)
    assert verified.predicate["certified"] is False
    assert verified.predicate["nodeVerdict"]["state"] == "Simulated"
    with pytest.raises(AttestationError) as err:
        verify_envelope(envelope, keys=[public], now=clock.at, require_certified=True)
    assert err.value.check == "certified"


async def test_K8_without_a_key_nothing_is_signed_and_nothing_claims_to_be() -> None:
    fake, clock = FakeClient(), Clock()
    await judged(fake, clock, key=False)
    got = await fake.get(NODES, "n1")
    assert got["metadata"]["labels"][VERDICT_LABEL] == "Passed"
    assert ATTESTATION_ANNOTATION not in (got["metadata"].get("annotations") or {})
    assert fake.objects(CONFIGMAPS) == []
    assert all(c["type"] != "Attested" for c in (await fingerprint(fake))["status"]["conditions"])


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (None, "does not exist"),
        (b"not a pem", "not an unencrypted PEM private key"),
        ("missing", "has no data key ed25519.pem"),
    ],
)
async def test_K9_an_unusable_key_is_a_condition_naming_the_secret_and_the_fix(
    data: Any, says: str
) -> None:
    fake, clock = FakeClient(), Clock()
    if data == "missing":
        await fake.create(
            SECRETS, {"metadata": {"name": SECRET[1]}, "data": {}}, namespace=SECRET[0]
        )
    elif data is not None:
        await key_secret(fake, data)
    await judged(fake, clock)  # the pass completes: no crash loop
    attested = condition(await fingerprint(fake), "Attested")
    assert (attested["status"], attested["reason"]) == ("False", "KeyUnreadable")
    assert "keys/glimmer-attestation-key" in attested["message"] and says in attested["message"]
    assert "openssl genpkey -algorithm ed25519" in attested["message"]
    got = await fake.get(NODES, "n1")
    assert got["metadata"]["labels"][VERDICT_LABEL] == "Passed"
    assert ATTESTATION_ANNOTATION not in (got["metadata"].get("annotations") or {})


async def test_signing_an_expired_verdict_withdraws_the_attestation() -> None:
    fake, clock = FakeClient(), Clock()
    pem, _ = keypair()
    await key_secret(fake, pem)
    rec = await judged(fake, clock)
    await envelope_of(fake)
    clock.at = T0 + timedelta(days=1)
    await relabel(fake, "n1", {"nvidia.com/gpu.product": "NVIDIA-H200"})
    await rec.reconcile("n1")
    got = await fake.get(NODES, "n1")
    assert got["metadata"]["labels"][VERDICT_LABEL] == "Expired"
    assert ATTESTATION_ANNOTATION not in (got["metadata"].get("annotations") or {})
    assert ATTESTATION_SHA_ANNOTATION not in (got["metadata"].get("annotations") or {})
    attested = condition(await fingerprint(fake), "Attested")
    assert (attested["status"], attested["reason"]) == ("False", "NothingToAttest")


def test_K8_the_key_secret_is_name_or_namespace_slash_name() -> None:
    assert parse_secret_ref("k", default_namespace="ops") == ("ops", "k")
    assert parse_secret_ref("keys/k", default_namespace="ops") == ("keys", "k")
    for bad in ("", "a/", "/k", "a/b/c"):
        with pytest.raises(ValueError, match="NAMESPACE/NAME"):
            parse_secret_ref(bad, default_namespace="ops")


async def test_K8_an_annotation_left_by_an_earlier_configuration_is_removed_without_a_key() -> None:
    fake, clock = FakeClient(), Clock()
    annotations = {ATTESTATION_ANNOTATION: f"{OPS}/old", ATTESTATION_SHA_ANNOTATION: "ab"}
    body = node("n1")
    body["metadata"]["annotations"] = annotations
    await fake.create(NODES, body)
    await reconciler(fake, clock).reconcile("n1")
    got = await fake.get(NODES, "n1")
    assert ATTESTATION_ANNOTATION not in (got["metadata"].get("annotations") or {})
    assert ATTESTATION_SHA_ANNOTATION not in (got["metadata"].get("annotations") or {})


def test_K8_a_long_node_name_gives_a_valid_configmap_name() -> None:
    from glimmer.controllers.fingerprint.attestation import configmap_name

    name = configmap_name("n" * 250 + ".example.com", "identity")
    assert len(name) <= 253 and name.startswith("attestation-") and name[-1].isalnum()
    assert configmap_name("n1", "a") != configmap_name("n1", "b")


async def test_K9_a_configmap_that_cannot_be_written_never_holds_the_label_back() -> None:
    from glimmer.engine import ApiError

    fake, clock = FakeClient(), Clock()
    pem, _ = keypair()
    await key_secret(fake, pem)
    await fake.create(NODES, node("n1"))
    rec = reconciler(fake, clock, attestation_key_secret=SECRET)
    await rec.reconcile("n1")
    await passed_run(fake, started=T0 + timedelta(seconds=5), finished=T0 + timedelta(hours=1))
    clock.at = T0 + timedelta(hours=2)
    fake.inject_error("create", ApiError(status=403, reason="Forbidden"))
    await rec.reconcile("n1")
    got = await fake.get(NODES, "n1")
    assert got["metadata"]["labels"][VERDICT_LABEL] == "Passed"
    assert ATTESTATION_ANNOTATION not in (got["metadata"].get("annotations") or {})
    attested = condition(await fingerprint(fake), "Attested")
    assert (attested["status"], attested["reason"]) == ("False", "WriteFailed")
    assert "ConfigMaps in glimmer-system" in attested["message"]

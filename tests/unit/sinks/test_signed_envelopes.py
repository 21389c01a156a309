"""Signed terminal envelopes (L11, L12): the run verdict in a DSSE envelope, bound to the
envelope it travels in; checkpoints unsigned; an unusable key sends it unsigned."""

from __future__ import annotations

import base64
import dataclasses
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from glimmer.attest import AttestationError, delivery_digest, extract_envelope, verify_envelope
from glimmer.attest.keys import load_public_key
from glimmer.cli import exits, main
from glimmer.contract.envelope import Envelope, RunRef, TestResult, encode
from glimmer.engine import CONFIGMAPS, FakeClient
from glimmer.sinks import FanoutOptions, SinkFanout
from glimmer.sinks.attestation import SECRETS, EnvelopeSigner, KeySource, signs
from glimmer.sinks.fanout import SINKS

NS = "team"
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
PLAN_TEXT = '{"tests": []}'
#: The fake apiserver's uid of run team/r (set by setup).
UIDS = ["u"]


def envelope(reason: str = "RunPhaseChanged", phase: str = "Passed", **kw: Any) -> Envelope:
    base = Envelope(
        delivery_id="a" * 32,
        reason=reason,
        sent_at="2026-12-01T12:00:00Z",
        run=RunRef(namespace=NS, name="r", uid=UIDS[0]),
        phase=phase,
        provenance="silicon",
        results=(
            TestResult(name="t", kind="custom", phase="Passed", nodes=("n",), provenance="silicon"),
        ),
    )
    return dataclasses.replace(base, **kw)


async def setup(client: FakeClient, *, pem: bytes | None) -> None:
    from glimmer.sinks.attestation import _RUNS

    run = await client.create(
        _RUNS,
        {
            "metadata": {
                "name": "r",
                "namespace": NS,
                "uid": "u",
                "annotations": {"burnin.glimmer.ai/plan": PLAN_TEXT},
            }
        },
        namespace=NS,
    )
    UIDS[0] = run["metadata"]["uid"]
    if pem is not None:
        await client.create(
            SECRETS,
            {
                "metadata": {"name": "key", "namespace": "ops"},
                "data": {"ed25519.pem": base64.b64encode(pem).decode()},
            },
            namespace="ops",
        )
    await client.create(
        SINKS,
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInSink",
            "metadata": {"name": "cm", "namespace": NS},
            "spec": {"type": "ConfigMap", "configMap": {"name": "out"}},
        },
        namespace=NS,
    )


def fanout(client: FakeClient) -> SinkFanout:
    signer = EnvelopeSigner(keys=KeySource(client=client, secret=("ops", "key")), now=lambda: NOW)
    return SinkFanout(client=client, options=FanoutOptions(), now=lambda: NOW, signer=signer)


def keypair() -> tuple[bytes, bytes]:
    private = Ed25519PrivateKey.generate()
    return (
        private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
        private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        ),
    )


async def delivered(client: FakeClient) -> dict[str, Any]:
    cm = await client.get(CONFIGMAPS, "out", namespace=NS)
    (text,) = cm["data"].values()
    return dict(json.loads(text))


async def test_L11_a_terminal_envelope_carries_its_signed_run_verdict() -> None:
    client = FakeClient()
    pem, pub = keypair()
    await setup(client, pem=pem)
    report = await fanout(client).deliver(
        envelope(certifies_silicon=True), namespace=NS, sinks=["cm"]
    )
    assert report.ok
    doc = await delivered(client)
    assert doc["attestation"]["payloadType"] == "application/vnd.in-toto+json"
    verified = verify_envelope(
        extract_envelope(doc),
        keys=[load_public_key(pub, source="t")],
        now=NOW,
        subject="burninrun/team/r",
        subject_digest=delivery_digest(doc),
        require_certified=True,
    )
    p = verified.predicate
    assert p["run"]["certifiesSilicon"] is True and p["certified"] is True
    assert p["results"][0]["provenance"] == "silicon"
    import hashlib

    assert p["plan"]["digest"]["sha256"] == hashlib.sha256(PLAN_TEXT.encode()).hexdigest()


async def test_L11_an_envelope_altered_around_its_attestation_no_longer_verifies(
    tmp_path: Path,
) -> None:
    client = FakeClient()
    pem, pub = keypair()
    await setup(client, pem=pem)
    await fanout(client).deliver(envelope(), namespace=NS, sinks=["cm"])
    doc = await delivered(client)
    key = tmp_path / "pub.pem"
    key.write_bytes(pub)
    good = tmp_path / "good.json"
    good.write_text(json.dumps(doc))
    ok = CliRunner().invoke(main, ["verify", str(good), "--key", str(key), "--kind", "run"])
    assert ok.exit_code == exits.OK, ok.output
    assert "NOT certified" in ok.output  # certifiesSilicon was not set on this envelope
    doc["results"][0]["phase"] = "Failed"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    out = CliRunner().invoke(main, ["verify", str(bad), "--key", str(key)])
    assert out.exit_code == exits.FAILED and "wrong subject" in out.output
    with pytest.raises(AttestationError):
        verify_envelope(
            extract_envelope(doc),
            keys=[load_public_key(pub, source="t")],
            now=NOW,
            subject_digest=delivery_digest(doc),
        )


@pytest.mark.parametrize(
    "sent",
    [
        envelope(reason="Checkpoint", phase="Running", checkpoint_sequence=1),
        envelope(reason="TestCompleted", phase="Running"),
        envelope(phase="Running"),
    ],
)
def test_L11_only_terminal_run_phase_envelopes_are_signed(sent: Envelope) -> None:
    assert not signs(sent)
    assert signs(envelope()) and signs(envelope(phase="Error"))


@pytest.mark.parametrize("pem", [None, b"junk"], ids=["no-secret", "malformed"])
async def test_L12_an_unusable_key_sends_the_envelope_unsigned_never_held_back(
    pem: bytes | None,
) -> None:
    client = FakeClient()
    await setup(client, pem=pem)
    report = await fanout(client).deliver(envelope(), namespace=NS, sinks=["cm"])
    assert report.ok
    assert "attestation" not in await delivered(client)


async def test_L12_a_run_whose_plan_cannot_be_read_is_sent_unsigned() -> None:
    client = FakeClient()
    pem, _ = keypair()
    await setup(client, pem=pem)
    foreign = dataclasses.replace(envelope(), run=RunRef(namespace=NS, name="r", uid="other"))
    assert (await fanout(client).deliver(foreign, namespace=NS, sinks=["cm"])).ok
    assert "attestation" not in await delivered(client)


def test_L11_the_subject_digest_is_of_the_envelope_without_its_attestation() -> None:
    sent = envelope()
    doc = json.loads(encode(sent))
    import hashlib

    assert (
        delivery_digest({**doc, "attestation": {"x": 1}})
        == hashlib.sha256(encode(sent)).hexdigest()
    )


async def test_K9_an_unusable_key_is_read_again_only_after_a_pause() -> None:
    client = FakeClient()
    now = [0.0]
    keys = KeySource(client=client, secret=("ops", "key"), clock=lambda: now[0])
    assert "does not exist" in str(await keys.signer())
    pem, _ = keypair()
    await client.create(
        SECRETS,
        {
            "metadata": {"name": "key", "namespace": "ops"},
            "data": {"ed25519.pem": base64.b64encode(pem).decode()},
        },
        namespace="ops",
    )
    gets = len([c for c in client.calls if c[0] == "get" and "secrets" in c[1]])
    now[0] = 10.0
    assert "does not exist" in str(await keys.signer())  # not read again yet
    assert len([c for c in client.calls if c[0] == "get" and "secrets" in c[1]]) == gets
    now[0] = 31.0
    assert not isinstance(await keys.signer(), str)

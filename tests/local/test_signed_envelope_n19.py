"""``glimmer run --attestation-key`` (N19): a bare host's terminal envelope carries the
signed run verdict, as the operator's sinks' do, and ``glimmer verify`` checks it."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from glimmer.cli import exits, main
from glimmer.contract.envelope import decode
from tests.local.bare_sides import glimmer_run, profile


def key_files(tmp_path: Path) -> tuple[Path, Path]:
    private = Ed25519PrivateKey.generate()
    key = tmp_path / "attestation.pem"
    key.write_bytes(
        private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    public = tmp_path / "attestation.pub"
    public.write_bytes(
        private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return key, public


def verify(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["verify", *args])
    return result.exit_code, result.output


def test_N19_a_bare_hosts_envelope_is_signed_and_verifies_as_what_it_is(tmp_path: Path) -> None:
    key, public = key_files(tmp_path)
    out = tmp_path / "out"
    result = glimmer_run(
        str(profile(tmp_path / "p.yaml", scope="Node", script="echo tcpRttUs=5; echo OK")),
        "--node", "n0", "--results-dir", str(out), "--attestation-key", str(key),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    path = out / "envelopes" / "001-RunPhaseChanged.json"
    envelope = decode(path.read_bytes())
    assert envelope.phase == "Passed" and envelope.attestation is not None
    subject = f"burninrun/{envelope.run.namespace}/{envelope.run.name}"
    code, shown = verify(str(path), "--key", str(public), "--kind", "run", "--subject", subject)
    assert code == 0, shown
    # A custom script on a bare host declares no silicon: signed, but never certified.
    assert "NOT certified" in shown
    code, shown = verify(str(path), "--key", str(public), "--require-certified")
    assert code == exits.FAILED and "does not certify silicon" in shown
    # The signature covers the envelope around it: an edited verdict no longer verifies.
    doc = json.loads(path.read_text())
    doc["phase"] = "Failed"
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(doc))
    code, shown = verify(str(edited), "--key", str(public), "--kind", "run")
    assert code == exits.FAILED, shown


def test_N19_an_unusable_key_refuses_the_run_before_anything_runs(tmp_path: Path) -> None:
    key = tmp_path / "not-a-key.pem"
    key.write_text("hello\n")
    out = tmp_path / "out"
    result = glimmer_run(
        str(profile(tmp_path / "p.yaml", scope="Node", script="echo OK")),
        "--node", "n0", "--results-dir", str(out), "--attestation-key", str(key),
    )  # fmt: skip
    assert result.exit_code == exits.USAGE, result.output
    assert f"--attestation-key {key}" in result.output and "ed25519" in result.output
    assert not (out / "run.json").exists()

"""``glimmer verify`` (N18): exit codes and messages naming the failed check."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from glimmer.attest import RunFacts, load_signer, node_statement, public_pem, sign_statement
from glimmer.cli import exits, main
from glimmer.verdict.expiry import VerdictState
from glimmer.verdict.nodes import PlannedUnit, node_verdict

PLANNED = [PlannedUnit(test="burn", nodes=("n1",), required=True, kind="gpu-burn")]
RUN = RunFacts(namespace="lab", name="acceptance", uid="u-1", phase="Passed", plan_digest="cd" * 32)


def key_pair(tmp_path: Path, name: str) -> tuple[Any, Path]:
    pem = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    signer = load_signer(pem, source=name)
    public = tmp_path / f"{name}.pub"
    public.write_text(public_pem(signer))
    return signer, public


def envelope_file(
    tmp_path: Path, signer: Any, *, provenance: str = "silicon", issued: datetime | None = None
) -> Path:
    results = [
        {
            "name": "burn",
            "kind": "gpu-burn",
            "phase": "Passed",
            "nodes": ["n1"],
            "provenance": provenance,
        }
    ]
    verdict = node_verdict("n1", planned=PLANNED, results=results)
    label = VerdictState.PASSED if provenance == "silicon" else VerdictState.SIMULATED
    statement = node_statement(
        node="n1",
        fingerprint_digest="glimmer-v1:" + "ab" * 32,
        run=RUN,
        verdict=verdict,
        label=label,
        results=results,
        issued_at=issued or datetime.now(UTC),
    )
    path = tmp_path / f"att-{provenance}.json"
    path.write_text(json.dumps(sign_statement(statement, signer)))
    return path


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["verify", *args])
    return result.exit_code, result.output


def test_N18_a_good_attestation_verifies_and_exits_0(tmp_path: Path) -> None:
    signer, public = key_pair(tmp_path, "k")
    code, out = invoke(
        str(envelope_file(tmp_path, signer)),
        "--key",
        str(public),
        "--subject",
        "node/n1",
        "--max-age",
        "1h",
        "--require-certified",
    )
    assert code == exits.OK, out
    assert out.startswith("verified: node/n1: Passed, certified; run lab/acceptance")


def test_N18_a_configmap_holding_the_envelope_verifies(tmp_path: Path) -> None:
    signer, public = key_pair(tmp_path, "k")
    envelope = envelope_file(tmp_path, signer).read_text()
    cm = tmp_path / "cm.json"
    cm.write_text(json.dumps({"kind": "ConfigMap", "data": {"envelope.json": envelope}}))
    code, out = invoke(str(cm), "--key", str(public), "--kind", "node")
    assert code == exits.OK, out


@pytest.mark.parametrize(
    ("case", "check"),
    [
        ("wrong-key", "bad signature"),
        ("tampered", "bad signature"),
        ("wrong-subject", "wrong subject"),
        ("stale", "stale"),
        ("simulated", "not certified"),
        ("wrong-kind", "predicateType"),
    ],
)
def test_N18_each_failed_check_exits_1_and_is_named(tmp_path: Path, case: str, check: str) -> None:
    signer, public = key_pair(tmp_path, "k")
    _, other = key_pair(tmp_path, "other")
    path = envelope_file(
        tmp_path,
        signer,
        provenance="sim" if case == "simulated" else "silicon",
        issued=datetime.now(UTC) - timedelta(days=3),
    )
    args = [str(path), "--key", str(other if case == "wrong-key" else public)]
    if case == "tampered":
        doc = json.loads(path.read_text())
        doc["payload"] = doc["payload"][:-8] + "AAAAAAA="
        path.write_text(json.dumps(doc))
    args += {
        "wrong-subject": ["--subject", "node/n2"],
        "stale": ["--max-age", "1d"],
        "simulated": ["--require-certified"],
        "wrong-kind": ["--kind", "run"],
    }.get(case, [])
    code, out = invoke(*args)
    assert code == exits.FAILED, out
    assert check in out


def test_N18_an_unreadable_file_or_key_is_a_usage_error(tmp_path: Path) -> None:
    signer, public = key_pair(tmp_path, "k")
    path = envelope_file(tmp_path, signer)
    assert invoke(str(tmp_path / "absent.json"), "--key", str(public))[0] == exits.USAGE
    bad = tmp_path / "bad.pub"
    bad.write_text("junk")
    code, out = invoke(str(path), "--key", str(bad))
    assert code == exits.USAGE and "not a PEM ed25519 public key" in out
    assert invoke(str(path), "--key", str(public), "--max-age", "soon")[0] == exits.USAGE

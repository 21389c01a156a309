"""The manager imports only what it calls: the packages only signing, human output or a
schedule use are not loaded by ``import glimmer.cli.manager`` (docs/performance.md,
"Memory"), and each still loads, and works, where it is used.

Each check runs in a fresh interpreter: this test process has long since imported
everything, and what matters is what a manager's own imports load.
"""

from __future__ import annotations

from tests.unit.fresh_interpreter import run_json

#: Top-level packages a manager loads only when it calls them: securesystemslib and
#: cryptography (signing, with --attestation-key-secret), croniter (a BurnInSchedule's
#: cron expression); and what only other commands use: report rendering
#: (glimmer.report, jinja2, pygal) and bare-host runs (glimmer.local). (rich and
#: pygments are loaded by structlog itself whenever rich is installed.)
DEFERRED = (
    "securesystemslib",
    "cryptography",
    "croniter",
    "jinja2",
    "pygal",
    "glimmer.local",
    "glimmer.report",
)


def test_importing_the_manager_loads_none_of_the_deferred_packages() -> None:
    got = run_json(
        f"""
        import json, sys
        import glimmer.cli.manager
        deferred = {DEFERRED!r}
        print(json.dumps(sorted(
            m for m in sys.modules if any(m == d or m.startswith(d + ".") for d in deferred)
        )))
        """
    )
    assert got == []


def test_after_the_manager_import_each_deferred_package_loads_and_works() -> None:
    """rich prints, a key is read and a statement signed and verified, a cron
    expression steps: the imports moved into the functions still resolve."""
    got = run_json(
        """
        import io, json, sys
        from datetime import UTC, datetime
        import glimmer.cli.manager
        from rich.console import Console
        out = io.StringIO()
        Console(file=out, width=40).print("[bold]ok[/bold]")
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
        from glimmer.attest import load_public_key, load_signer, public_pem
        from glimmer.attest import sign_statement, verify_envelope
        from glimmer.attest.statement import NODE_PREDICATE, STATEMENT_TYPE
        pem = Ed25519PrivateKey.generate().private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        signer = load_signer(pem, source="test")
        now = datetime.now(UTC)
        envelope = sign_statement(
            {"_type": STATEMENT_TYPE, "predicateType": NODE_PREDICATE,
             "subject": [{"name": "node/n", "digest": {"sha256": "0" * 64}}],
             "predicate": {"issuedAt": now.strftime("%Y-%m-%dT%H:%M:%SZ")}},
            signer,
        )
        key = load_public_key(public_pem(signer).encode(), source="test")
        verified = verify_envelope(envelope, keys=[key], now=now, subject="node/n")
        from glimmer.controllers.schedule.cron import parse_schedule
        tick = parse_schedule("30 2 * * *", "UTC").next_after(datetime(2026, 1, 1, tzinfo=UTC))
        print(json.dumps({
            "rich": out.getvalue().strip(),
            "keyid": verified.keyid == key.keyid,
            "tick": tick.isoformat(),
        }))
        """
    )
    assert got == {"rich": "ok", "keyid": True, "tick": "2026-01-01T02:30:00+00:00"}


def test_the_manager_logs_json_tracebacks_without_frame_locals() -> None:
    """An exception is logged as JSON with its type and frames, never a frame's local
    variables (a key, token or kubeconfig read into a local must not reach the log)."""
    got = run_json(
        """
        import io, json
        import structlog
        from glimmer.engine import configure_logging
        stream = io.StringIO()
        configure_logging(level="info", stream=stream)
        def broken():
            secret_number = 41
            raise ValueError("broken spec")
        try:
            broken()
        except ValueError:
            structlog.get_logger("t").exception("reconcile failed")
        line = json.loads(stream.getvalue().splitlines()[-1])
        frames = line["exception"][0]["frames"]
        print(json.dumps({
            "type": line["exception"][0]["exc_type"],
            "frame": frames[-1]["name"],
            "locals": [f for f in frames if f.get("locals")],
            "leaked": "41" in stream.getvalue(),
        }))
        """
    )
    assert got == {"type": "ValueError", "frame": "broken", "locals": [], "leaked": False}

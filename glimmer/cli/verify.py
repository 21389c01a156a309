"""``glimmer verify FILE --key PUB``: check a signed verdict (N18).

FILE (``-`` for stdin) is a DSSE envelope as Glimmer writes it, the ConfigMap holding a
node's attestation (``kubectl get configmap NAME -o json``, key ``envelope.json``) or a
terminal delivery envelope carrying one (field ``attestation``, whose subject digest
must then be the sha256 of that envelope without it). The checks are
:func:`glimmer.attest.verify_envelope`'s, in order: envelope, payloadType, signature,
statement, predicateType, subject, expired, certified; the first that fails is named.

Exit status (:mod:`glimmer.cli.exits`): 0 verified; 1 it does not verify (the message
names the check: a bad signature, the wrong subject, expired or stale, not certified);
2 FILE or the key could not be read.
"""

from __future__ import annotations

import json
import re
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

import click

from glimmer.attest import (
    ENVELOPE_FIELD,
    NODE_PREDICATE,
    RUN_PREDICATE,
    AttestationError,
    UnusableKeyError,
    delivery_digest,
    extract_envelope,
    load_public_key,
    verify_envelope,
)
from glimmer.cli._common import OUTPUT_FORMAT, fail, no_traceback
from glimmer.cli.exits import ERROR, FAILED, USAGE

_DURATION: Final = re.compile(r"^\s*(\d+)\s*([smhd]?)\s*$")
_UNITS: Final = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
_KINDS: Final = {"node": NODE_PREDICATE, "run": RUN_PREDICATE}


def parse_max_age(text: str) -> timedelta:
    """``90``, ``90s``, ``30m``, ``24h`` or ``7d``."""
    match = _DURATION.fullmatch(text)
    if match is None:
        raise click.BadParameter(f"{text!r} is not a duration (e.g. 3600, 30m, 24h, 7d)")
    return timedelta(seconds=int(match.group(1)) * _UNITS[match.group(2)])


def _read(path: str) -> Any:
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        fail(f"cannot read {path}: {err}", code=USAGE)
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        fail(f"{path} is not JSON: {err}", code=USAGE)


@click.command("verify")
@click.argument("file")
@click.option(
    "--key",
    "keys",
    multiple=True,
    required=True,
    help="PEM ed25519 public key file (repeat for several; any one may sign).",
)
@click.option(
    "--subject",
    default=None,
    help="The subject the statement must be about: node/NAME or burninrun/NS/NAME.",
)
@click.option(
    "--kind",
    type=click.Choice(sorted(_KINDS)),
    default=None,
    help="Require a node-verdict or a run-verdict statement.",
)
@click.option(
    "--max-age",
    default=None,
    help="Refuse a statement issued longer ago than this (3600, 30m, 24h, 7d).",
)
@click.option(
    "--require-certified",
    is_flag=True,
    help="Refuse a statement that does not certify (node: Passed on silicon and "
    "current; run: certifiesSilicon).",
)
@click.option("-o", "--output", type=OUTPUT_FORMAT, default="text")
@no_traceback(code=ERROR)
def verify(
    file: str,
    keys: tuple[str, ...],
    subject: str | None,
    kind: str | None,
    max_age: str | None,
    require_certified: bool,
    output: str,
) -> None:
    """Verify a signed verdict FILE with the public key(s) --key."""
    age = parse_max_age(max_age) if max_age is not None else None
    public = []
    for path in keys:
        try:
            public.append(load_public_key(Path(path).read_bytes(), source=path))
        except OSError as err:
            fail(f"cannot read key {path}: {err}", code=USAGE)
        except UnusableKeyError as err:
            fail(str(err), code=USAGE)
    document = _read(file)
    try:
        # A delivery envelope's attestation is bound to the envelope it travels in (L11).
        delivery = isinstance(document, dict) and ENVELOPE_FIELD in document
        verified = verify_envelope(
            extract_envelope(document),
            keys=public,
            now=datetime.now(UTC),
            subject=subject,
            subject_digest=delivery_digest(document) if delivery else None,
            predicate_type=_KINDS[kind] if kind else None,
            max_age=age,
            require_certified=require_certified,
        )
    except AttestationError as err:
        if output == "json":
            click.echo(json.dumps({"verified": False, "check": err.check, "message": err.detail}))
        click.echo(f"glimmer verify: {file}: {err}", err=True)
        sys.exit(FAILED)
    predicate = verified.predicate
    if output == "json":
        click.echo(json.dumps({"verified": True, "keyid": verified.keyid,
                               "statement": verified.statement}, indent=2))  # fmt: skip
        return
    run = predicate.get("run") or {}
    state = (predicate.get("nodeVerdict") or {}).get("state") or run.get("phase")
    certified = "certified" if predicate.get("certified") is True else "NOT certified"
    click.echo(
        f"verified: {', '.join(verified.subjects)}: {state}, {certified}; run "
        f"{run.get('namespace')}/{run.get('name')} (uid {run.get('uid')}); issued "
        f"{predicate.get('issuedAt')}"
        + (f", expires {predicate['expiresAt']}" if predicate.get("expiresAt") else "")
        + f"; key {verified.keyid[:16]}"
    )

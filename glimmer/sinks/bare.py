"""Bare-host delivery (N1-N3): ``glimmer run --sink-url`` posts the verdict envelope.

The deciding side of a bare-host run writes its terminal RunPhaseChanged envelope to
``envelopes/001-RunPhaseChanged.json`` in the results directory (always, so the
verdict is on disk even when no sink is configured or the receiver is down) and, with
``--sink-url``, POSTs the same bytes through the webhook code the operator uses: same
headers, same retry rule (2 attempts about 1 s apart, 408/429/5xx/transport retried),
same signature, same ``User-Agent``. The token is read from its file at send time.

The manager's destination guard is off here (:data:`~glimmer.sinks.destinations.
UNGUARDED`): the person who types ``--sink-url`` is the one running ``glimmer run``,
from that host's own network position, so sending there crosses no boundary (they
could ``curl`` it themselves), and a receiver on the host's loopback is a common
setup. The answer's body is still never quoted.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from glimmer.contract.envelope import (
    REASON_CHECKPOINT,
    Envelope,
    delivery_id,
    encode,
    validate,
)
from glimmer.sinks.attestation import BareSigning, sign_envelope, signs
from glimmer.sinks.build import envelope_from_run_document
from glimmer.sinks.destinations import UNGUARDED
from glimmer.sinks.errors import DeliveryError, permanent
from glimmer.sinks.webhook import WebhookTarget, post
from glimmer.verdict.nodes import PlannedUnit

ENVELOPES_DIR: Final = "envelopes"
#: N3: the one envelope a bare host writes.
TERMINAL_ENVELOPE_FILE: Final = "001-RunPhaseChanged.json"
DEFAULT_TIMEOUT_SECONDS: Final = 15.0


@dataclass(frozen=True)
class BareDelivery:
    """What happened to the envelope: where it was written, whether the sink took it."""

    path: Path
    #: None when no --sink-url was given.
    delivered: bool | None
    error: str = ""


def _read_secret_file(path: Path, *, what: str) -> str:
    try:
        value = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as err:
        raise permanent(f"{what} file {path}: {err}") from None
    if not value:
        raise permanent(f"{what} file {path} is empty")
    return value


def write_envelope(results_dir: Path, envelope: Envelope) -> Path:
    """``<results_dir>/envelopes/001-RunPhaseChanged.json``, whole or not at all."""
    folder = results_dir / ENVELOPES_DIR
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / TERMINAL_ENVELOPE_FILE
    partial = folder / f".{TERMINAL_ENVELOPE_FILE}.partial"
    partial.write_bytes(encode(envelope) + b"\n")
    os.replace(partial, path)
    return path


async def send_envelope(
    envelope: Envelope,
    *,
    url: str,
    token_file: Path | None = None,
    insecure_skip_verify: bool = False,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    ca_file: Path | None = None,
    signing_key_file: Path | None = None,
    attempts: int = 2,
    retry_delay: float = 1.0,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    wall: Callable[[], float] | None = None,
) -> None:
    """POST ``envelope`` to ``url`` (raises :class:`DeliveryError`); ``timeout`` is the
    whole budget, both attempts included."""
    validate(envelope)
    body = encode(envelope)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    clock = wall or (lambda: datetime.now(UTC).timestamp())
    for attempt in range(1, max(1, attempts) + 1):
        try:
            target = WebhookTarget(
                url=url,
                token=_read_secret_file(token_file, what="token") if token_file else None,
                ca_pem=_read_secret_file(ca_file, what="CA")
                if ca_file and not insecure_skip_verify
                else None,
                insecure_skip_verify=insecure_skip_verify,
                signing_key=_read_secret_file(signing_key_file, what="signing key").encode()
                if signing_key_file
                else None,
            )
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise DeliveryError(f"the {timeout:g} s sink timeout ran out", permanent=False)
            await post(target, body=body, delivery_id=envelope.delivery_id,
                       timestamp=int(clock()), timeout=remaining, guard=UNGUARDED)  # fmt: skip
            return
        except DeliveryError as err:
            if err.permanent or attempt >= attempts or loop.time() + retry_delay >= deadline:
                raise
        await sleep(retry_delay)


def deliver_run_document(
    document: Mapping[str, Any],
    *,
    results_dir: Path,
    sink_url: str | None = None,
    sink_token_file: Path | None = None,
    sink_insecure_skip_tls_verify: bool = False,
    sink_timeout: float = DEFAULT_TIMEOUT_SECONDS,
    sink_ca_file: Path | None = None,
    sink_signing_key_file: Path | None = None,
    baseline: bool = False,
    now: datetime | None = None,
    planned: Sequence[PlannedUnit] | None = None,
    uid: str | None = None,
    signing: BareSigning | None = None,
) -> BareDelivery:
    """What ``glimmer run`` calls once ``run.json`` is written (deciding side only).

    Writes ``envelopes/001-RunPhaseChanged.json`` and, with ``sink_url``, sends it.
    Never raises for a delivery failure: the verdict and exit code stand, and the
    returned error is for the operator to print (N4 exit codes judge hardware).
    ``uid`` is the run's (the one its Checkpoint envelopes carry); None: a random one.
    ``signing`` (``glimmer run --attestation-key``) attaches the signed run verdict to the
    terminal envelope, as the operator's sinks do (N19)."""
    sent_at = now or datetime.now(UTC)
    envelope = envelope_from_run_document(
        document, sent_at=sent_at, baseline=baseline, planned=planned, uid=uid
    )
    if signing is not None and signs(envelope):
        envelope = sign_envelope(
            envelope, signer=signing.signer, plan_digest=signing.plan_digest, issued_at=sent_at
        )
    path = write_envelope(results_dir, envelope)
    if not sink_url:
        return BareDelivery(path=path, delivered=None)
    error = _post(
        envelope, url=sink_url, token_file=sink_token_file,
        insecure_skip_verify=sink_insecure_skip_tls_verify, timeout=sink_timeout,
        ca_file=sink_ca_file, signing_key_file=sink_signing_key_file,
    )  # fmt: skip
    if error:
        return BareDelivery(path=path, delivered=False, error=error)
    return BareDelivery(path=path, delivered=True)


def _post(
    envelope: Envelope,
    *,
    url: str,
    token_file: Path | None,
    insecure_skip_verify: bool,
    timeout: float,
    ca_file: Path | None,
    signing_key_file: Path | None,
) -> str:
    """One webhook delivery from a bare host; "" when the sink took it, else why not."""
    try:
        asyncio.run(
            send_envelope(
                envelope,
                url=url,
                token_file=token_file,
                insecure_skip_verify=insecure_skip_verify,
                timeout=timeout,
                ca_file=ca_file,
                signing_key_file=signing_key_file,
            )
        )
    except (DeliveryError, ValueError) as err:
        return str(err)
    return ""


def checkpoint_envelope(
    document: Mapping[str, Any], *, uid: str, sequence: int, sent_at: datetime
) -> Envelope:
    """H2, N6: the ``Checkpoint`` envelope of a bare host's run while it runs
    (``document`` as ``glimmer.local.results.checkpoint_document`` builds it): the run
    document's envelope with the Checkpoint reason, its sequence and the delivery ID
    derived from them (L3), so a receiver deduplicates it as it would the operator's."""
    envelope = envelope_from_run_document(document, sent_at=sent_at, uid=uid)
    return dataclasses.replace(
        envelope,
        reason=REASON_CHECKPOINT,
        delivery_id=delivery_id(uid, REASON_CHECKPOINT, str(sequence)),
        checkpoint_sequence=sequence,
    )


def send_checkpoint(
    document: Mapping[str, Any],
    *,
    uid: str,
    sequence: int,
    sink_url: str,
    sink_token_file: Path | None = None,
    sink_insecure_skip_tls_verify: bool = False,
    sink_timeout: float = DEFAULT_TIMEOUT_SECONDS,
    sink_ca_file: Path | None = None,
    sink_signing_key_file: Path | None = None,
    now: datetime | None = None,
) -> str:
    """POST one Checkpoint envelope through the webhook code the verdict uses (the same
    headers, signature and retry rule); "" when the sink took it, else why not. Never
    raises: a checkpoint is not re-sent later (H2) and a failure never changes the run."""
    envelope = checkpoint_envelope(
        document, uid=uid, sequence=sequence, sent_at=now or datetime.now(UTC)
    )
    return _post(
        envelope, url=sink_url, token_file=sink_token_file,
        insecure_skip_verify=sink_insecure_skip_tls_verify, timeout=sink_timeout,
        ca_file=sink_ca_file, signing_key_file=sink_signing_key_file,
    )  # fmt: skip

"""``--sink-*``: deliver a bare host's verdict like a BurnInSink webhook would (N1, N3).

Only the deciding side delivers (a Pair client, ``glimmer merge`` for a Group, any
Node-scope run); servers and ranks decide nothing, so they send nothing. The envelope
is always written to ``envelopes/001-RunPhaseChanged.json``; a failed delivery is
printed and never changes the verdict or the exit status (N4 judges hardware, not the
receiver).

The manager's webhook destination guard does not apply here: the person choosing
``--sink-url`` is the one running the command, from this host's own network position
(docs/sinks.md#bare-hosts). Requests still say ``User-Agent: glimmer/<version>`` and an
error never quotes the receiver's body.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from glimmer.verdict.nodes import PlannedUnit

if TYPE_CHECKING:
    from glimmer.sinks.attestation import BareSigning

F = TypeVar("F", bound=Callable[..., Any])

_FILE = click.Path(path_type=Path, exists=True, dir_okay=False, readable=True)


@dataclass(frozen=True)
class SinkFlags:
    url: str | None
    token_file: Path | None
    insecure_skip_tls_verify: bool
    timeout: float
    ca_file: Path | None
    signing_key_file: Path | None


def sink_options(command: F) -> F:
    """The ``--sink-*`` options, shared by ``glimmer run`` and ``glimmer merge``."""
    options = (
        click.option(
            "--sink-url", default=None, metavar="URL", help="POST the verdict envelope here."
        ),
        click.option(
            "--sink-token-file",
            type=_FILE,
            default=None,
            help="Bearer token for --sink-url, read at delivery time.",
        ),
        click.option(
            "--sink-insecure-skip-tls-verify",
            is_flag=True,
            help="Do not verify the receiver's TLS certificate (testing only).",
        ),
        click.option(
            "--sink-timeout",
            type=click.FloatRange(min=0, min_open=True),
            default=15.0,
            show_default=True,
            help="Seconds for the whole delivery (two attempts).",
        ),
        click.option(
            "--sink-ca-file", type=_FILE, default=None, help="CA bundle that signs the receiver."
        ),
        click.option(
            "--sink-signing-key-file",
            type=_FILE,
            default=None,
            help="HMAC key: sign the body (X-Glimmer-Signature, see docs/sinks.md).",
        ),
    )
    for option in reversed(options):
        command = option(command)
    return command


def sink_flags(
    *,
    sink_url: str | None,
    sink_token_file: Path | None,
    sink_insecure_skip_tls_verify: bool,
    sink_timeout: float,
    sink_ca_file: Path | None,
    sink_signing_key_file: Path | None,
) -> SinkFlags:
    """The flags as one value; the other ``--sink-*`` flags need ``--sink-url``."""
    given = [
        name
        for name, value in (
            ("--sink-token-file", sink_token_file),
            ("--sink-insecure-skip-tls-verify", sink_insecure_skip_tls_verify),
            ("--sink-ca-file", sink_ca_file),
            ("--sink-signing-key-file", sink_signing_key_file),
        )
        if value
    ]
    if given and not sink_url:
        raise click.UsageError(f"{', '.join(given)} need --sink-url (where to deliver)")
    return SinkFlags(
        url=sink_url,
        token_file=sink_token_file,
        insecure_skip_tls_verify=sink_insecure_skip_tls_verify,
        timeout=sink_timeout,
        ca_file=sink_ca_file,
        signing_key_file=sink_signing_key_file,
    )


def deliver(
    document: Mapping[str, Any],
    *,
    results_dir: Path,
    flags: SinkFlags,
    baseline: bool,
    planned: Sequence[PlannedUnit] | None = None,
    uid: str | None = None,
    signing: BareSigning | None = None,
) -> None:
    """Write the envelope, send it when asked, and say what happened on stderr.
    ``planned`` (the plan's units) gives the envelope its node verdicts; ``uid`` is
    the run's, shared with its Checkpoint envelopes (None: a random one)."""
    from glimmer.sinks import deliver_run_document

    outcome = deliver_run_document(
        document,
        results_dir=results_dir,
        sink_url=flags.url,
        sink_token_file=flags.token_file,
        sink_insecure_skip_tls_verify=flags.insecure_skip_tls_verify,
        sink_timeout=flags.timeout,
        sink_ca_file=flags.ca_file,
        sink_signing_key_file=flags.signing_key_file,
        baseline=baseline,
        planned=planned,
        uid=uid,
        signing=signing,
    )
    if outcome.delivered is True:
        click.echo(f"glimmer: verdict delivered to {flags.url}", err=True)
    elif outcome.delivered is False:
        click.echo(
            f"glimmer: warning: verdict NOT delivered to {flags.url}: {outcome.error} "
            f"(the envelope is in {outcome.path}; the verdict stands)",
            err=True,
        )

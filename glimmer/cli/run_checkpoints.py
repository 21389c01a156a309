"""What ``glimmer run`` does with each checkpoint: show it, and deliver it (H1, H2, N6).

The dispatcher takes a deciding side's checkpoints (:mod:`glimmer.local.checkpoints`)
and tells this listener from the thread that follows the runner's output. The listener
shows each on the terminal (:meth:`glimmer.local.progress.RunProgress.checkpoint`) and,
with ``--sink-url``, delivers the ``Checkpoint`` envelope through the webhook code the
verdict's envelope uses (:func:`glimmer.sinks.bare.send_checkpoint`), once per H2
sequence, under the run's one UID so a receiver files checkpoints and verdict together.

Delivery runs on a worker thread of its own, so a slow receiver never delays the
runner's output or the next checkpoint. A failed delivery is printed and never changes
the run; checkpoints are not re-sent. :meth:`CheckpointDelivery.close` lets what is
queued go before the verdict's envelope, for at most the sink timeout.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Sequence
from typing import Any

import click

from glimmer.cli.sinkflags import SinkFlags
from glimmer.local.model import LocalResult
from glimmer.local.progress import RunProgress
from glimmer.local.results import checkpoint_document

_Item = tuple[dict[str, Any], int]


class CheckpointDelivery:
    """The :class:`glimmer.local.model.CheckpointListener` ``glimmer run`` installs."""

    def __init__(
        self,
        *,
        progress: RunProgress,
        sinks: SinkFlags,
        uid: str,
        node: str,
        profile: str,
        sim: str | None,
        started_at: float,
        baseline: bool,
    ) -> None:
        self._progress = progress
        self._sinks = sinks
        self._uid = uid
        self._node = node
        self._profile = profile
        self._sim = sim
        self._started_at = started_at
        self._baseline = baseline
        self._queue: queue.Queue[_Item | None] = queue.Queue()
        self._worker: threading.Thread | None = None
        self._abandon = threading.Event()
        self.delivered = 0
        self.failed = 0

    def checkpoint(
        self,
        *,
        result: LocalResult,
        results: Sequence[LocalResult],
        envelope_sequence: int | None,
    ) -> None:
        self._progress.checkpoint(result=result)
        if not self._sinks.url or envelope_sequence is None:
            return  # L4: no sink, nothing delivered; a sequence already sent is not re-sent
        # Built now, while the attempt runs: the document is what the run holds now.
        document = checkpoint_document(
            results,
            node=self._node,
            profile=self._profile,
            sim=self._sim,
            started_at=self._started_at,
            baseline=self._baseline,
        )
        if self._worker is None:
            self._worker = threading.Thread(
                target=self._deliver_queued, name="checkpoint-delivery", daemon=True
            )
            self._worker.start()
        self._queue.put((document, envelope_sequence))

    def close(self) -> None:
        """Wait (at most the sink timeout) for the queued envelopes, then drop the rest:
        a checkpoint delivered after the verdict would read as news of a live run."""
        if self._worker is None:
            return
        self._queue.put(None)
        self._worker.join(timeout=self._sinks.timeout)
        if self._worker.is_alive():
            self._abandon.set()
            click.echo(
                "glimmer: warning: checkpoint envelopes still queued for "
                f"{self._sinks.url} were dropped (the receiver is slow); the verdict stands",
                err=True,
            )

    def _deliver_queued(self) -> None:
        from glimmer.sinks.bare import send_checkpoint

        while True:
            item = self._queue.get()
            if item is None or self._abandon.is_set():
                return
            document, sequence = item
            assert self._sinks.url is not None
            error = send_checkpoint(
                document,
                uid=self._uid,
                sequence=sequence,
                sink_url=self._sinks.url,
                sink_token_file=self._sinks.token_file,
                sink_insecure_skip_tls_verify=self._sinks.insecure_skip_tls_verify,
                sink_timeout=self._sinks.timeout,
                sink_ca_file=self._sinks.ca_file,
                sink_signing_key_file=self._sinks.signing_key_file,
            )
            if error:
                self.failed += 1
                click.echo(
                    f"glimmer: warning: checkpoint {sequence} NOT delivered to "
                    f"{self._sinks.url}: {error} (the run goes on)",
                    err=True,
                )
            else:
                self.delivered += 1

"""JSON logs with the reconcile context on every line.

Controllers bind `controller`, `key` and `reconcile_id` with structlog
contextvars for the duration of one reconcile; a registration's `log_context`
adds its own keys (the run controller: namespace and run; the reaper: node) the
same way. `merge_contextvars` then stamps them onto every line logged in
that task, including lines from helpers that never saw the key, which is what
makes a single reconcile traceable in a fleet's worth of logs.
"""

from __future__ import annotations

import logging
import sys
from typing import TextIO

import structlog


def configure_logging(*, level: str = "info", stream: TextIO | None = None) -> None:
    """Configure structlog (and stdlib logging) to write one JSON object per line."""
    numeric = logging.getLevelNamesMapping().get(level.upper())
    if numeric is None:
        raise ValueError(f"unknown log level {level!r}")
    out = stream if stream is not None else sys.stderr
    shared: list[structlog.typing.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    structlog.configure(
        processors=[
            *shared,
            structlog.processors.StackInfoRenderer(),
            # No frame locals in the JSON traceback: a key, token or kubeconfig in a
            # local variable must never reach the log.
            structlog.processors.ExceptionRenderer(
                structlog.tracebacks.ExceptionDictTransformer(show_locals=False)
            ),
            structlog.processors.JSONRenderer(),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=out),
        cache_logger_on_first_use=False,
    )
    # Libraries (aiohttp, kubernetes-asyncio) log through stdlib: render them
    # as JSON too, so the stream stays machine-readable.
    handler = logging.StreamHandler(out)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.JSONRenderer(),
            ],
            foreign_pre_chain=[*shared, structlog.stdlib.add_logger_name],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(max(numeric, logging.WARNING))

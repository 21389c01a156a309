"""How a delivery fails: permanent (retrying cannot help) or retryable (L5, L6).

The distinction decides only whether the fan-out tries a second time now; either
kind leaves the run untouched, and a terminal envelope is re-sent later whatever the
kind (E19), since a sink's configuration can be fixed while the verdict waits.
"""

from __future__ import annotations


class DeliveryError(Exception):
    """A sink did not accept an envelope; ``permanent`` when a retry cannot help."""

    def __init__(self, message: str, *, permanent: bool) -> None:
        super().__init__(message)
        self.permanent = permanent


def permanent(message: str) -> DeliveryError:
    return DeliveryError(message, permanent=True)


def retryable(message: str) -> DeliveryError:
    return DeliveryError(message, permanent=False)

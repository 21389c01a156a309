"""The phase vocabulary shared by attempts, results and runs (api §1.4)."""

from __future__ import annotations

import enum


class Phase(enum.StrEnum):
    PENDING = "Pending"
    RUNNING = "Running"
    PASSED = "Passed"
    FAILED = "Failed"
    ERROR = "Error"
    SKIPPED = "Skipped"
    CANCELLED = "Cancelled"

    @property
    def terminal(self) -> bool:
        return self not in (Phase.PENDING, Phase.RUNNING)


class Provenance(enum.StrEnum):
    """Whether a result was measured on real silicon or on the simulated GPU."""

    SILICON = "silicon"
    SIM = "sim"


def resolve_provenance(declared: str | None, *, dispatcher: Provenance | None) -> Provenance:
    """Combine what the runner printed with what the dispatcher knows.

    Simulation wins from either side. A runner that names anything other than
    ``silicon`` or ``sim`` cannot vouch for silicon. A runner that says nothing
    (e.g. an image written for the Go implementation) ran on the node it was
    scheduled to, so it is silicon unless the dispatcher knows otherwise.
    """
    if dispatcher is Provenance.SIM:
        return Provenance.SIM
    if declared is None:
        return dispatcher or Provenance.SILICON
    return Provenance.SILICON if declared == Provenance.SILICON else Provenance.SIM

"""The phase vocabulary shared by attempts, results and runs (api §1.4)."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import Final


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

    @classmethod
    def is_terminal_text(cls, text: object) -> bool:
        """Does raw status text name a terminal phase? Absent or misspelt text does not."""
        phase = cls.parse_or_none(text)
        return phase is not None and phase.terminal

    @classmethod
    def parse_or_none(cls, text: object) -> Phase | None:
        """The phase ``text`` names exactly, or None (absent, misspelt, not a string)."""
        if not isinstance(text, str):
            return None
        try:
            return cls(text)
        except ValueError:
            return None


class Provenance(enum.StrEnum):
    """Whether a result was measured on real silicon, on the simulated GPU, or nobody
    said (ordered weakest first: ``sim < unknown < silicon``)."""

    SIM = "sim"
    UNKNOWN = "unknown"
    SILICON = "silicon"

    @property
    def rank(self) -> int:
        return _RANK[self]


_RANK: Final[dict[Provenance, int]] = {
    Provenance.SIM: 0,
    Provenance.UNKNOWN: 1,
    Provenance.SILICON: 2,
}


def weakest(provenances: Iterable[Provenance]) -> Provenance:
    """The weakest of ``provenances``; nothing at all is UNKNOWN, never SILICON."""
    found = [Provenance(p) for p in provenances]
    if not found:
        return Provenance.UNKNOWN
    return min(found, key=lambda p: p.rank)


def resolve_provenance(declared: str | None, *, dispatcher: Provenance | None) -> Provenance:
    """Combine what the runner printed with what the dispatcher knows (I14).

    Positive and fail closed: the dispatcher's ``sim`` always wins; otherwise the
    runner's declaration decides, and only the word ``silicon`` reads silicon. No
    declaration is ``unknown`` on every kind (an image written for the Go
    implementation prints none: we cannot vouch for it), and a dispatcher can only
    weaken, never vouch for what the runner did not declare.
    """
    if declared == Provenance.SIM:
        runner = Provenance.SIM
    elif declared == Provenance.SILICON:
        runner = Provenance.SILICON
    else:
        runner = Provenance.UNKNOWN
    return weakest((runner, dispatcher or Provenance.SILICON))

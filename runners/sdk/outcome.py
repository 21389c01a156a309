"""How a runner ends: exceptions for the two exits that are not a measurement.

Why exceptions: "could not measure" (exit 3) and "declared skip" (exit 2) can arise deep
inside a hardware read; raising lets that code stop the runner without threading a
status back up, and the entry wrapper turns each into its exit code and marker line.
A *measured* shortfall is never an exception: a runner returns :class:`Failed` only after
printing the evidence that shows it (A16).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

EXIT_PASS: Final = 0
EXIT_FAIL: Final = 1
EXIT_SKIP: Final = 2
EXIT_ERROR: Final = 3


class RunnerError(Exception):
    """The runner could not measure (no device, driver error, bad config): exit 3."""


class DeclaredSkip(Exception):  # noqa: N818 - it is a declaration, not an error
    """The test does not apply here; printed as ``<PREFIX>_SKIP: reason``, exit 2."""


@dataclass(frozen=True)
class Passed:
    """Everything the runner gates itself was measured and within its limits."""


@dataclass(frozen=True)
class Failed:
    """A measured shortfall; ``reason`` names the measurement."""

    reason: str


Verdict = Passed | Failed

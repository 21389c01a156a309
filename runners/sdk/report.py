"""Printing a runner's evidence: metric lines, ``n/a`` declarations and the verdict line.

Why one printer: the controller reads stdout line by line (A4) and the last non-metric
line becomes the message, so every runner must print metrics as ``key=value`` with a
canonical name, refuse to print a non-finite number (fail closed: ``nan`` must never be
compared against a threshold), and print the verdict marker strictly last.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import TextIO

from runners.sdk.names import is_valid_metric_name
from runners.sdk.outcome import EXIT_ERROR, EXIT_FAIL, EXIT_PASS, EXIT_SKIP, Failed, Verdict

MetricValue = int | float | str | bool


class NonFiniteMetricError(ValueError):
    """A runner tried to print NaN or infinity as a measurement."""


@dataclass(frozen=True)
class Markers:
    """The verdict lines a runner prints (§O).

    ``skip`` is None for runners that never skip; ``passed`` is None for runners that print
    no line on exit 0 (fingerprint-probe).
    """

    passed: str | None
    failed: str
    error: str
    skip: str | None

    @classmethod
    def for_prefix(cls, prefix: str) -> Markers:
        return cls(
            passed=f"{prefix}_PASS",
            failed=f"{prefix}_FAIL",
            error=f"{prefix}_ERROR",
            skip=f"{prefix}_SKIP",
        )


def format_value(value: MetricValue) -> str:
    """Render a metric value; refuses non-finite floats and multi-line strings."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise NonFiniteMetricError(f"non-finite value {value!r}")
        if value == 0 or abs(value) >= 1e-3:
            text = f"{value:.4f}".rstrip("0").rstrip(".")
            return text if text not in ("", "-0") else "0"
        return f"{value:.6e}"
    text = value.strip()
    if not text or "\n" in text or "\r" in text:
        raise ValueError(f"metric value must be one non-empty line, got {value!r}")
    return text


def _one_line(text: str) -> str:
    return " ".join(text.split())


class Report:
    """Writes the runner's stdout; the only place that prints for a runner."""

    def __init__(self, *, markers: Markers, out: TextIO | None = None) -> None:
        self.markers = markers
        self._out = out if out is not None else sys.stdout
        self._concluded = False
        self.printed: dict[str, str] = {}

    def _emit(self, line: str) -> None:
        if self._concluded:
            raise RuntimeError("evidence printed after the verdict line")
        self._out.write(line + "\n")
        self._out.flush()

    def metric(self, name: str, value: MetricValue) -> None:
        """Print ``name=value``; the name must be canonical (B1)."""
        if not is_valid_metric_name(name):
            raise ValueError(f"{name!r} is not a canonical metric name")
        rendered = format_value(value)
        self.printed[name] = rendered
        self._emit(f"{name}={rendered}")

    def unmeasurable(self, name: str) -> None:
        """Declare ``n/a``: a positive finding that this part cannot produce ``name`` (A8)."""
        if not is_valid_metric_name(name):
            raise ValueError(f"{name!r} is not a canonical metric name")
        self.printed[name] = "n/a"
        self._emit(f"{name}=n/a")

    def note(self, text: str) -> None:
        """An evidence line that is not a metric (it must not parse as one, A4)."""
        line = _one_line(text)
        head = line.split("=", 1)[0]
        if "=" in line and " " not in head and "\t" not in head and not line.startswith("="):
            raise ValueError(f"note would parse as a metric: {line!r}")
        self._emit(line)

    def artifact(self, *, name: str, media_type: str, payload: str) -> None:
        """A fenced evidence document (A11); never read as metrics."""
        self._emit(f"-----BEGIN BURNIN ARTIFACT {name} {media_type}-----")
        for line in payload.splitlines():
            self._emit(line)
        self._emit("-----END BURNIN ARTIFACT-----")

    def conclude(self, verdict: Verdict) -> int:
        """Print the verdict marker line last and return the exit code."""
        if isinstance(verdict, Failed):
            self._final(f"{self.markers.failed}: {_one_line(verdict.reason)}")
            return EXIT_FAIL
        if self.markers.passed is not None:
            self._final(self.markers.passed)
        self._concluded = True
        return EXIT_PASS

    def skip(self, reason: str) -> int:
        if self.markers.skip is None:
            return self.error(f"runner has no skip and tried to skip: {reason}")
        self._final(f"{self.markers.skip}: {_one_line(reason)}")
        return EXIT_SKIP

    def error(self, reason: str) -> int:
        self._final(f"{self.markers.error}: {_one_line(reason)}")
        return EXIT_ERROR

    def _final(self, line: str) -> None:
        if self._concluded:
            return
        self._emit(line)
        self._concluded = True

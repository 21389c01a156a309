"""The runner's configuration, read once from the environment the dispatcher injects.

Why strict parsing: a malformed or unknown value must stop the runner with exit 3
(A16: refuse unknown variant values rather than defaulting), because a runner that
silently falls back to a default measures something the author did not ask for.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from runners.sdk.outcome import RunnerError

_QUANTITY = re.compile(r"([0-9]+(?:\.[0-9]+)?)([KMGTPE]i?|k|m)?\Z")
_FACTORS: dict[str, float] = {
    "": 1,
    "m": 1e-3,
    "k": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "E": 1e18,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "Ei": 2**60,
}
GPU_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu")


def parse_quantity(text: str) -> float:
    """A Kubernetes resource quantity (the subset limits use) as a plain number."""
    match = _QUANTITY.match(text.strip())
    if match is None:
        raise RunnerError(f"unreadable resource quantity {text!r}")
    return float(match.group(1)) * _FACTORS[match.group(2) or ""]


def parse_resource_limits(text: str) -> dict[str, str]:
    """``memory=2Gi,nvidia.com/gpu=8`` (api env table) to a mapping."""
    limits: dict[str, str] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise RunnerError(f"unreadable BURNIN_RESOURCE_LIMITS entry {item!r}")
        limits[name.strip()] = value.strip()
    return limits


@dataclass(frozen=True)
class RunnerEnv:
    """What the dispatcher told this runner (api §env)."""

    duration_budget_s: float | None
    resource_limits: dict[str, str]
    device_concurrency: str | None
    raw: Mapping[str, str] = field(repr=False)

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> RunnerEnv:
        budget: float | None = None
        text = environ.get("BURNIN_DURATION_SECONDS", "").strip()
        if text:
            try:
                budget = float(text)
            except ValueError:
                raise RunnerError(f"BURNIN_DURATION_SECONDS={text!r} is not a number") from None
            if not budget > 0:
                raise RunnerError(f"BURNIN_DURATION_SECONDS={text!r} must be positive")
        concurrency = environ.get("BURNIN_DEVICE_CONCURRENCY", "").strip() or None
        if concurrency not in (None, "all", "sequential"):
            raise RunnerError(f"BURNIN_DEVICE_CONCURRENCY={concurrency!r} is not all|sequential")
        return cls(
            duration_budget_s=budget,
            resource_limits=parse_resource_limits(environ.get("BURNIN_RESOURCE_LIMITS", "")),
            device_concurrency=concurrency,
            raw=dict(environ),
        )

    @property
    def allocated_gpus(self) -> int | None:
        """GPUs the scheduler allocated, when the limits say (None on a bare host)."""
        for resource in GPU_RESOURCES:
            if resource in self.resource_limits:
                return int(parse_quantity(self.resource_limits[resource]))
        return None

    @property
    def memory_limit_bytes(self) -> int | None:
        if "memory" not in self.resource_limits:
            return None
        return int(parse_quantity(self.resource_limits["memory"]))

    def window_s(self, *, default: float, cap: float, margin: float = 0.0) -> float:
        """A measuring window: ``default`` capped by ``cap`` and by the budget less ``margin``."""
        window = min(default, cap)
        if self.duration_budget_s is not None:
            window = min(window, max(self.duration_budget_s - margin, 1.0))
        return window

    def number(self, name: str, *, default: float, low: float, high: float) -> float:
        """A numeric setting; out-of-range or unreadable values are refused (exit 3)."""
        text = self.raw.get(name, "").strip()
        if not text:
            return default
        try:
            value = float(text)
        except ValueError:
            raise RunnerError(f"{name}={text!r} is not a number") from None
        if not low <= value <= high:
            raise RunnerError(f"{name}={text!r} is outside [{low:g}, {high:g}]")
        return value

    def choice(self, name: str, *, default: str, allowed: tuple[str, ...]) -> str:
        """An enumerated setting; unknown values are refused (exit 3), never defaulted."""
        text = self.raw.get(name, "").strip()
        if not text:
            return default
        if text not in allowed:
            raise RunnerError(f"{name}={text!r} is not one of {', '.join(allowed)}")
        return text

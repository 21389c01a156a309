"""Which DCGM plugins run, and which of their results are judged.

``BURNIN_DCGM_ALLOW`` has the Go reference's meaning: the DCGM plugins to enable past
DCGM's own per-SKU allowlist. DCGM gates its CUDA-backed plugins per part, and a part
it does not list (GB10) skips them; each name becomes ``<name>.is_allowed=true`` in
``dcgmi diag -p`` (clauses joined by ``;``), so the allowlist stays DCGM's and a
profile says what its hardware supports. Enabling a plugin is not passing it: it runs,
and its result is judged like any other.

``BURNIN_DCGM_JUDGE_ONLY`` narrows which results are judged: tests of other plugins
still run and are printed (count and any failure among them), so an excluded failure
stays visible, but do not gate. It is for a plugin that cannot pass on a part for a
reason the profile accepts (on GB10, ``software`` fails on persistence mode).

Both take DCGM's own plugin names (``dcgmi diag -r pcie,memory``): ``software`` (the
level-1 deployment tests), ``pcie``, ``memory``, ``memory_bandwidth``, ``diagnostic``,
``targeted_stress``, ``targeted_power``, ``memtest``, ``pulse_test``, ``sm_stress``,
``context_create``, ``nvbandwidth``, ``eud``. An unknown name is refused (exit 3): a
typo must neither leave a plugin gated nor quietly exclude one.
"""

from __future__ import annotations

import re

from runners.dcgm_diag.parse import TestOutcome
from runners.sdk.outcome import RunnerError

ALLOW_ENV = "BURNIN_DCGM_ALLOW"
JUDGE_ONLY_ENV = "BURNIN_DCGM_JUDGE_ONLY"

KNOWN_PLUGINS: frozenset[str] = frozenset(
    {
        "software",
        "pcie",
        "memory",
        "memory_bandwidth",
        "diagnostic",
        "targeted_stress",
        "targeted_power",
        "memtest",
        "pulse_test",
        "sm_stress",
        "context_create",
        "nvbandwidth",
        "eud",
    }
)
#: JSON test names that are not their plugin's name once normalised.
_TEST_TO_PLUGIN = {"gpu_memory": "memory"}


def plugin_of(test: TestOutcome) -> str:
    """The plugin a test of the JSON document belongs to."""
    if test.category.strip().lower() in ("deployment", "software"):
        return "software"
    key = re.sub(r"[^a-z0-9]+", "_", test.name.strip().lower()).strip("_")
    return _TEST_TO_PLUGIN.get(key, key)


def parse_plugins(text: str, *, variable: str) -> frozenset[str] | None:
    """The plugins ``variable`` names, or None when it is unset or blank."""
    if not text.strip():
        return None
    names = frozenset(part.strip().lower() for part in text.split(",") if part.strip())
    if not names:
        raise RunnerError(f"{variable}={text!r} names no plugin")
    unknown = sorted(names - KNOWN_PLUGINS)
    if unknown:
        raise RunnerError(
            f"{variable} names unknown plugin(s) {', '.join(unknown)} "
            f"(known: {', '.join(sorted(KNOWN_PLUGINS))})"
        )
    return names


def allow_parameters(allowed: frozenset[str] | None) -> str:
    """``dcgmi diag -p``'s value enabling ``allowed`` past DCGM's per-SKU allowlist."""
    return ";".join(f"{name}.is_allowed=true" for name in sorted(allowed or ()))

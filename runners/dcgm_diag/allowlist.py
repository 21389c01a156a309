"""``BURNIN_DCGM_ALLOW``: the DCGM plugins whose results the runner judges.

Why: some parts (GB10) cannot run every plugin of a level, and a plugin that cannot run
there would fail every such node forever. The author names the plugins that count, in
DCGM's own plugin names (``dcgmi diag -r pcie,memory``): ``software`` (the level-1
deployment tests), ``pcie``, ``memory``, ``memory_bandwidth``, ``diagnostic``,
``targeted_stress``, ``targeted_power``, ``memtest``, ``pulse_test``, ``sm_stress``,
``context_create``, ``nvbandwidth``, ``eud``. An unknown name is refused (exit 3: a typo
must not quietly exclude a plugin); tests outside the list are still printed (count and
any failure among them), so an excluded failure is visible, but do not gate.
"""

from __future__ import annotations

import re

from runners.dcgm_diag.parse import TestOutcome
from runners.sdk.outcome import RunnerError

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


def parse_allowlist(text: str) -> frozenset[str] | None:
    """The allowed plugins, or None when no list is set (every test is judged)."""
    names = frozenset(part.strip().lower() for part in text.split(",") if part.strip())
    if not text.strip():
        return None
    if not names:
        raise RunnerError(f"BURNIN_DCGM_ALLOW={text!r} names no plugin")
    unknown = sorted(names - KNOWN_PLUGINS)
    if unknown:
        raise RunnerError(
            f"BURNIN_DCGM_ALLOW names unknown plugin(s) {', '.join(unknown)} "
            f"(known: {', '.join(sorted(KNOWN_PLUGINS))})"
        )
    return names

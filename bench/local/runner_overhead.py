"""Each runner's own overhead: process start to its first measurement. Prints figures.

    .venv/bin/python bench/local/runner_overhead.py [--repeat 5] [--sim h200] [KIND ...]

Runs every Node runner of the catalog (or the KINDs named) as ``python -m <module>`` on the
simulated GPU and reads its stdout as it arrives: *first line* is interpreter start-up
plus imports plus the platform choice (``provenance=…``); *first measurement* is the
first metric line that is not an echo of configuration. The simulated clock is virtual,
so windows cost no wall time and the figures are the runner's own overhead, not its
measuring window. Never a timed assertion: a report for humans.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from runners.catalog import RUNNERS

#: Lines that echo configuration or identity rather than measure.
ECHOES = frozenset(
    {"provenance", "durationRequestedS", "gemmPrecision", "diagLevel", "builtCudaArch"}
)


def once(module: str, env: dict[str, str]) -> tuple[float, float | None, float]:
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", module], stdout=subprocess.PIPE, env=env, text=True
    )
    assert proc.stdout is not None
    first_line = first_measure = None
    for line in proc.stdout:
        now = time.perf_counter() - started
        if first_line is None:
            first_line = now
        key, sep, _ = line.partition("=")
        if first_measure is None and sep and key.strip() not in ECHOES and " " not in key:
            first_measure = now
    proc.wait()
    total = time.perf_counter() - started
    return first_line if first_line is not None else total, first_measure, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("kinds", nargs="*")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sim", default="h200")
    args = parser.parse_args()
    kinds = args.kinds or [k for k, s in RUNNERS.items() if s.scope == "Node" and s.reads_gpu]
    base = {k: v for k, v in os.environ.items() if not k.startswith(("BURNIN_", "GLIMMER_"))}
    base["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    print(f"runner overhead on the simulated {args.sim} (median of {args.repeat}, wall ms)")
    print(f"{'kind':<18}{'first line':>12}{'first measurement':>20}{'whole run':>12}")
    for kind in kinds:
        spec = RUNNERS[kind]
        env = {**base, **spec.test_env, "GLIMMER_SIM_GPU": args.sim}
        runs = [once(spec.module, env) for _ in range(args.repeat)]
        firsts = [r[0] for r in runs]
        measures = [r[1] for r in runs if r[1] is not None]
        totals = [r[2] for r in runs]
        measure = f"{statistics.median(measures) * 1000:.0f}" if measures else "none"
        print(
            f"{kind:<18}{statistics.median(firsts) * 1000:>12.0f}{measure:>20}"
            f"{statistics.median(totals) * 1000:>12.0f}"
        )


if __name__ == "__main__":
    main()

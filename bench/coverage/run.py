"""How long ``glimmer coverage`` takes on the bundled acceptance profile, and on what.

    .venv/bin/python bench/coverage/run.py [--jobs N] [--repeat N] [PROFILE.yaml]

Prints the machine (cores this process may use, load average before and after), then per
repeat the wall time of the whole command and the summary line it printed, then the
slowest cases (from the JSON document). The target (docs/coverage.md): the acceptance
profile's coverage in under 60 s on 2 cores. A loaded machine reads slower: quote the
load average with the figure.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("profile", nargs="?", default=None)
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    command = [sys.executable, "-c", "from glimmer.cli import main; main()", "coverage"]
    command += [args.profile] if args.profile else []
    command += ["-o", "json"] + (["--jobs", str(args.jobs)] if args.jobs else [])
    print(f"cores: {_cores()}  load average (1, 5, 15 min) before: {_load()}")
    print(f"command: {' '.join(command[3:])}")
    for index in range(args.repeat):
        started = time.monotonic()
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        wall = time.monotonic() - started
        if done.returncode not in (0, 1):
            print(done.stderr, file=sys.stderr)
            raise SystemExit(f"glimmer coverage exited {done.returncode}")
        doc = json.loads(done.stdout)
        cases = [*doc["control"], *doc["faults"]]
        print(
            f"repeat {index + 1}: {wall:.1f} s wall, {len(cases)} runs, {doc['jobs']} at a "
            f"time; {doc['summary']['line']}"
        )
        slowest = sorted(cases, key=lambda c: -c["seconds"])[:3]
        print("  slowest: " + ", ".join(f"{c['fault']} {c['seconds']:.1f} s" for c in slowest))
        print(f"  mean run: {sum(c['seconds'] for c in cases) / len(cases):.1f} s")
    print(f"load average after: {_load()}")


if __name__ == "__main__":
    main()

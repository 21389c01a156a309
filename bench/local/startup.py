"""Time from ``glimmer run`` launch to the first runner process starting. Prints figures.

    .venv/bin/python bench/local/startup.py [--repeat 10]

The first test's runner is ``date +%s.%N``; its printed start time minus the launch
time is the start-up cost (imports, YAML, plan) a fleet engineer waits through. Goal:
at most 0.5 s, so heavy imports stay out of the start-up path.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

PROFILE = """\
kind: BurnInProfile
metadata: {name: startup}
spec:
  tests:
  - inline:
      kind: custom
      runner: {command: ["sh", "-c", "echo started=$(date +%s.%N)"]}
"""


def once(glimmer: str, folder: Path) -> float:
    profile = folder / "profile.yaml"
    profile.write_text(PROFILE)
    launched = time.time()
    subprocess.run(
        [glimmer, "run", str(profile), "--report-dir", str(folder / "r")],
        check=True,
        capture_output=True,
    )
    doc = json.loads((folder / "r" / "run.json").read_text())
    return float(doc["results"][0]["metrics"]["started"]) - launched


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--glimmer", default=str(Path(".venv/bin/glimmer").resolve()))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        samples = [once(args.glimmer, Path(tmp)) for _ in range(args.repeat)]
    print(
        f"launch -> first runner start over {len(samples)} runs: "
        f"median {statistics.median(samples) * 1000:.0f} ms, "
        f"min {min(samples) * 1000:.0f} ms, max {max(samples) * 1000:.0f} ms (goal <= 500 ms)"
    )


if __name__ == "__main__":
    main()

"""A deliberately broken runner: ``glimmer conformance`` must fail exactly its three faults.

It borrows the contract of ``fingerprint-probe`` by running the real runner and
rewriting what it prints, so everything else stays correct:

1. it never declares provenance (the ``provenance=`` line is dropped): clause
   ``provenance``;
2. it exits 2 without its ``FINGERPRINT_PROBE_SKIP`` marker (the marker is dropped):
   clause ``skip-marker``;
3. after an injected crash (``GLIMMER_SIM_GPU=<profile>:crash``) it prints a metric
   before its error marker: clause ``crash-no-metrics``.

Check it with (it fails those three clauses, exit 1)::

    glimmer conformance --kind fingerprint-probe \
        --command "python runners/examples/broken_runner.py"

It is an example, not a runner of the catalog: no image, no kind of its own.
"""

from __future__ import annotations

import os
import subprocess
import sys

from glimmer.contract import SIM_GPU_ENV

REAL = (sys.executable, "-m", "runners.fingerprint_probe")
SKIP_MARKER = "FINGERPRINT_PROBE_SKIP"
ERROR_MARKER = "FINGERPRINT_PROBE_ERROR:"


def main() -> int:
    done = subprocess.run(REAL, capture_output=True, text=True, check=False)
    sys.stderr.write(done.stderr)
    crashed = os.environ.get(SIM_GPU_ENV, "").endswith(":crash")
    for line in done.stdout.splitlines():
        if line.startswith("provenance="):
            continue  # fault 1: no provenance
        if done.returncode == 2 and line.startswith(SKIP_MARKER):
            continue  # fault 2: exit 2 without the skip marker
        if crashed and line.startswith(ERROR_MARKER):
            print("deviceCount=8")  # fault 3: a metric after the crash
        print(line)
    return done.returncode


if __name__ == "__main__":
    raise SystemExit(main())

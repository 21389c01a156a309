"""A deliberately broken Pair runner: ``glimmer conformance`` must fail exactly its faults.

It borrows the contract of ``tcp-baseline`` by running the real runner (a server or a
client, as ``BURNIN_ROLE`` says) and rewriting what it prints, so the link itself, the
rendezvous and everything else stay correct:

1. it never declares provenance (the ``provenance=`` line is dropped): clause
   ``provenance``;
2. after an injected crash (``GLIMMER_SIM_GPU=<profile>:crash``) it prints a metric
   before its error marker: clause ``crash-no-metrics``;
3. an Error that could not reach its peer hides the peer's address (``BURNIN_PEER_HOST``
   becomes "its peer" in the last line), so nobody can tell which node to look at:
   clauses ``fault:no-rendezvous`` and ``fault:dead-peer``.

Check it with (it fails those four clauses, exit 1)::

    glimmer conformance --kind tcp-baseline \
        --command "python runners/examples/broken_link_runner.py"

It is an example, not a runner of the catalog: no image, no kind of its own.
"""

from __future__ import annotations

import os
import subprocess
import sys

from glimmer.contract import SIM_GPU_ENV

REAL = (sys.executable, "-m", "runners.tcp_baseline")
ERROR_MARKER = "TCP_BASELINE_ERROR:"


def main() -> int:
    done = subprocess.run(REAL, capture_output=True, text=True, check=False)
    sys.stderr.write(done.stderr)
    crashed = os.environ.get(SIM_GPU_ENV, "").endswith(":crash")
    peer = os.environ.get("BURNIN_PEER_HOST", "")
    for line in done.stdout.splitlines():
        if line.startswith("provenance="):
            continue  # fault 1: no provenance
        printed = line
        if line.startswith(ERROR_MARKER):
            if crashed:
                print("tcpThroughputGbps=1")  # fault 2: a metric after the crash
            if peer:
                printed = line.replace(peer, "its peer")  # fault 3: the peer not named
        print(printed)
    return done.returncode


if __name__ == "__main__":
    raise SystemExit(main())

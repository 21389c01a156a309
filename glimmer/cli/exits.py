"""The exit status of every ``glimmer`` command, in one table (N10).

One meaning per number, whichever command exits with it, so a script or a CI gate
reads any command's status the same way. 2 is click's own status for a usage error
(an unknown option, a bad choice, a missing required option), so every refusal of the
input before anything is done (a file that does not exist, an unknown ``--profile``,
a bad ``--sim``, a manifest ``lint`` or ``evaluate`` cannot read) exits 2 too.
"""

from __future__ import annotations

from typing import Final

#: Done: the run or attempt Passed, the report was written, the view was shown.
OK: Final = 0
#: The hardware Failed (``run``, ``evaluate``), or ``lint`` found a gate that cannot
#: mean what its author intends (Malformed, or a gate it says can only fail), or
#: ``verify``'s attestation does not verify (a bad signature, wrong subject, expired).
FAILED: Final = 1
#: A usage error: the input was refused before anything ran (click's own 2).
USAGE: Final = 2
#: ``run``: nothing was judged (every required test skipped, a Pair server or Group
#: rank that decides nothing), N4's 2: never 0, so a gate on 0 never passes on it.
NOTHING_JUDGED: Final = 2
#: Error or not run: an Error verdict, a refused plan, a cluster that could not be
#: read, an interrupt or an internal error; never 1, which is the hardware's.
ERROR: Final = 3
#: ``evaluate``: the runner reported Skipped.
SKIPPED: Final = 4

#: The table as ``docs/cli.md`` shows it: status -> meaning.
TABLE: Final = {
    OK: "done: Passed, written or shown",
    FAILED: (
        "the hardware Failed; lint: a Malformed gate, or one that can only fail; "
        "coverage: a --require'd fault missed; conformance: a clause failed; "
        "verify: the attestation does not verify"
    ),
    USAGE: "usage error: the input was refused before anything ran (run: also nothing judged)",
    ERROR: "Error or not run: a refused plan, an unreadable cluster, an interrupt, a bug",
    SKIPPED: "evaluate: the runner reported Skipped",
}

"""Run a snippet in a fresh interpreter and read the JSON it prints last: what a process's
own imports load can only be seen from a process that has not imported everything yet."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap


def run_json(code: str) -> dict[str, object]:
    """The last stdout line of ``code`` (dedented), run by this interpreter, as JSON."""
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result

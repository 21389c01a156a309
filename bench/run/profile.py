"""Summarise a py-spy ``--format raw`` profile (what ``run.py --profile`` writes).

    .venv/bin/python bench/run/profile.py PROFILE.txt [--top 30] [--filter glimmer/]

Shares are of *busy* samples: a sample whose innermost frame is the event loop waiting
in ``select`` or an executor thread waiting for work is idle, not CPU. Prints the top
functions by self time, then by inclusive time (a function with everything it called),
as ``file:function``, paths shortened to the package.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

IDLE_LEAVES = ("selectors.py:EpollSelector.select", "concurrent/futures/thread.py:_worker")
_FRAME = re.compile(r"(.*) \((.*?):\d+\)$")


def frame_key(frame: str) -> str:
    match = _FRAME.match(frame)
    if match is None:
        return frame
    function, path = match.groups()
    path = re.sub(r".*/site-packages/", "", path)
    path = re.sub(r".*/(glimmer|runners)/", r"\1/", path)
    path = re.sub(r".*/lib/python3\.\d+/", "", path)
    return f"{path}:{function}"


def summarise(path: Path) -> tuple[int, int, Counter[str], Counter[str]]:
    """(all samples, busy samples, self counts, inclusive counts) over busy samples."""
    total = busy = 0
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        total += n
        keys = [frame_key(f) for f in stack.split(";")]
        if keys[-1] in IDLE_LEAVES:
            continue
        busy += n
        own[keys[-1]] += n
        for key in set(keys):
            inclusive[key] += n
    return total, busy, own, inclusive


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("profile", type=Path)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--filter", default="glimmer/", help="inclusive list: paths containing")
    args = parser.parse_args()
    total, busy, own, inclusive = summarise(args.profile)
    print(f"{args.profile}: {total} samples, {busy} busy ({100 * busy / max(total, 1):.0f}%)")
    print("\nself time, % of busy samples")
    for key, n in own.most_common(args.top):
        print(f"{100 * n / busy:6.1f}%  {key}")
    print(f"\ninclusive time, % of busy samples ({args.filter!r} only)")
    shown = 0
    for key, n in inclusive.most_common():
        if args.filter in key:
            print(f"{100 * n / busy:6.1f}%  {key}")
            shown += 1
            if shown >= args.top:
                break


if __name__ == "__main__":
    main()

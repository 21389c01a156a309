"""Contract + verdict throughput and memory. Prints figures; asserts nothing.

    .venv/bin/python bench/contract/run.py [--large-mb 100] [--small 10000]

- large: one runner output of ``--large-mb`` MB (metric lines, prose, a 1 MB line,
  artifact fences) streamed through the reader in 1 MiB chunks, then judged;
  reports MB/s and the peak RSS of the process (interpreter included).
- small: ``--small`` typical runner outputs (~40 lines each) parsed and judged.
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from pathlib import Path

from glimmer.contract import ReportReader, read_report
from glimmer.verdict import Threshold, judge_attempt

THRESHOLDS = [
    Threshold("sustainedClockPct", "GreaterThanOrEqual", "90"),
    Threshold("gpuTempC", "LessThanOrEqual", "85"),
    Threshold("throttleEvents", "Equal", "0"),
    Threshold("sustainedClockSpreadPct", "LessThanOrEqual", "5", "RequiredIfMeasurable"),
]


def _block(i: int) -> bytes:
    return (
        f"smClockMHz={1900 + i % 80}\nsustainedClockPct={90 + i % 9}.5\n"
        f"gpuTempC={60 + i % 20}\nthrottleEvents=0\nsample {i}: all good, clocks steady\n"
        f"sustainedClockSpreadPct=n/a\nhost_health_stage=sampling-{i % 7}\n"
    ).encode()


def write_large(path: Path, megabytes: int) -> int:
    target = megabytes * 1_000_000
    written = 0
    artifact = (
        b"-----BEGIN BURNIN ARTIFACT samples.json application/json-----\n"
        + b'{"sample": [1, 2, 3]}\n' * 2000
        + b"-----END BURNIN ARTIFACT-----\n"
    )
    with path.open("wb") as out:
        out.write(b"configWarnings=" + b"x" * 1_000_000 + b"\n")
        written += 1_000_016
        i = 0
        while written < target:
            chunk = b"".join(_block(i + k) for k in range(200))
            if i % 20_000 == 0:
                chunk += artifact
            out.write(chunk)
            written += len(chunk)
            i += 200
        out.write(b"CLOCKPROBE_PASS\n")
    return written


def bench_large(megabytes: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "runner.log"
        size = write_large(path, megabytes)
        start = time.perf_counter()
        reader = ReportReader(kind="clockprobe")
        with path.open("rb") as handle:
            while chunk := handle.read(1 << 20):
                reader.feed(chunk)
        report = reader.finish(exit_code=0)
        verdict = judge_attempt(report, kind="clockprobe", thresholds=THRESHOLDS)
        elapsed = time.perf_counter() - start
        peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(f"large output: {size / 1e6:.1f} MB in {elapsed:.2f} s = {size / 1e6 / elapsed:.1f} MB/s")
    print(
        f"large output: peak RSS of the whole process {peak_rss / 1e6:.1f} MB "
        f"(input {size / 1e6:.0f} MB; phase {verdict.phase}, {len(report.metrics)} metrics, "
        f"{len(report.artifacts)} artifacts)"
    )


def bench_small(count: int) -> None:
    outputs = [
        b"".join(_block(i + k) for k in range(6)) + b"CLOCKPROBE_PASS\n" for i in range(count)
    ]
    start = time.perf_counter()
    phases: dict[str, int] = {}
    for data in outputs:
        report = read_report(data, kind="clockprobe", exit_code=0)
        verdict = judge_attempt(report, kind="clockprobe", thresholds=THRESHOLDS)
        phases[verdict.phase] = phases.get(verdict.phase, 0) + 1
    elapsed = time.perf_counter() - start
    print(
        f"small outputs: {count} in {elapsed:.2f} s = {count / elapsed:,.0f} outputs/s "
        f"({elapsed / count * 1e6:.0f} us each; phases {phases})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--large-mb", type=int, default=100)
    parser.add_argument("--small", type=int, default=10_000)
    args = parser.parse_args()
    print(f"python pid {os.getpid()}; cpu count {os.cpu_count()}")
    bench_small(args.small)
    bench_large(args.large_mb)


if __name__ == "__main__":
    main()

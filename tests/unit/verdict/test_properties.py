"""Hypothesis properties of the whole contract + verdict pipeline.

(a) nothing yields Passed unless exit is 0 and every Required threshold's metric was
    printed last, after any orphan artifact END, as a finite number satisfying it;
(b) inserting non-metric lines anywhere never changes the result;
(c) last occurrence wins;
(d) evaluation is deterministic;
(e) the report is identical however the output is split, at every byte (I10);
(f) lines before an orphan END are never metrics (I12);
(g) an over-long line never lets an older value pass, and chunking never changes
    what is read around it (I13).

(a)-(d) run 10,000 examples each; (e) 1,000, (f) 1,000, (g) 200 (each a 1 MiB line).
"""

from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glimmer.contract import ReportReader, RunnerReport, parse_go_float, read_report
from glimmer.contract.report import MAX_LINE_BYTES
from glimmer.verdict import AttemptVerdict, Phase, Threshold, judge_attempt
from glimmer.verdict.thresholds import compare

EXAMPLES = settings(
    max_examples=10_000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

NAMES = st.sampled_from(["bw", "gpuTempC", "miscompares", "eccErrors", "xidEvents", "Bad_x"])
VALUES = st.one_of(
    st.integers(-5, 200).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(
        ["n/a", "N/A", "NaN", "-nan", "Inf", "", "abc", "1e400", "0x1p3", " 7 ", "1_0", "unknown"]
    ),
)
METRIC_LINE = st.tuples(NAMES, VALUES).map(lambda kv: f"{kv[0]}={kv[1]}")
NOISE_LINE = st.sampled_from(
    [
        "",
        "   ",
        "hello world",
        "=oops",
        "has space=1",
        "RUNNER_PASS",
        "RUNNER_FAIL: x",
        "A_SKIP: nope",
        "tab\tkey=3",
        "no equals",
    ]
)
THRESHOLD = st.builds(
    Threshold,
    metric=st.sampled_from(["bw", "gpuTempC", "miscompares", "eccErrors", "xidEvents"]),
    comparison=st.sampled_from(
        ["GreaterThanOrEqual", "LessThanOrEqual", "Equal", "NotEqual", "Bogus"]
    ),
    value=st.sampled_from(["0", "1", "50", "100", "-3.5", "NaN", "x", "1e3"]),
    applicability=st.sampled_from(["Required", "RequiredIfMeasurable", ""]),
)
EXIT = st.sampled_from([0, 0, 0, 1, 2, 3, 4, 137, -1])
END_LINE = "-----END BURNIN ARTIFACT-----"
FENCE_LINE = st.sampled_from(
    [
        END_LINE,
        "-----BEGIN BURNIN ARTIFACT a.json application/json-----",
        "-----BEGIN BURNIN ARTIFACT bad-----",
        "-----BEGIN BURNIN ARTIFACT-----",
        "-----END BURNIN ARTIFACT----- ",
        "provenance=sim",
        "provenance=silicon",
    ]
)


def _after_last_orphan_end(lines: list[str]) -> list[str]:
    """With no BEGIN among ``lines``, every END is an orphan: only what follows the last
    one can be output (I12)."""
    ends = [i for i, line in enumerate(lines) if line == END_LINE]
    return lines[ends[-1] + 1 :] if ends else lines


def _last_values(lines: list[str]) -> dict[str, str]:
    seen: dict[str, str] = {}
    for line in _after_last_orphan_end(lines):
        key, sep, value = line.partition("=")
        if sep and key in {"bw", "gpuTempC", "miscompares", "eccErrors", "xidEvents"}:
            seen[key] = value.strip()
    return seen


def _judge(lines: list[str], exit_code: int, thresholds: list[Threshold]) -> AttemptVerdict:
    report = read_report("\n".join(lines).encode(), kind="custom", exit_code=exit_code)
    return judge_attempt(report, kind="custom", thresholds=thresholds)


@EXAMPLES
@given(
    st.lists(st.one_of(METRIC_LINE, NOISE_LINE, NOISE_LINE, st.just(END_LINE)), max_size=12),
    EXIT,
    st.lists(THRESHOLD, max_size=5),
)
def test_property_a_passed_only_with_exit0_and_every_required_gate_satisfied(
    lines: list[str], exit_code: int, thresholds: list[Threshold]
) -> None:
    verdict = _judge(lines, exit_code, thresholds)
    if verdict.phase is not Phase.PASSED:
        return
    assert exit_code == 0
    last = _last_values(lines)
    for t in thresholds:
        printed = last.get(t.metric)
        if (
            t.applicability == "RequiredIfMeasurable"
            and printed is not None
            and printed.lower() == "n/a"
        ):
            continue
        assert printed is not None, t
        got, want = parse_go_float(printed), parse_go_float(t.value)
        assert got is not None and math.isfinite(got), t
        assert want is not None and math.isfinite(want), t
        assert compare(t.comparison, got, want), t


@EXAMPLES
@given(
    st.lists(METRIC_LINE, max_size=8),
    st.lists(NOISE_LINE.filter(lambda s: "_SKIP" not in s), max_size=6),
    st.randoms(use_true_random=False),
    EXIT,
    st.lists(THRESHOLD, max_size=4),
)
def test_property_b_non_metric_lines_never_change_the_result(
    metrics: list[str],
    noise: list[str],
    rnd: object,
    exit_code: int,
    thresholds: list[Threshold],
) -> None:
    import random

    assert isinstance(rnd, random.Random)
    mixed = list(metrics)
    for line in noise:
        mixed.insert(rnd.randint(0, len(mixed)), line)
    a, b = _judge(metrics, exit_code, thresholds), _judge(mixed, exit_code, thresholds)
    assert (a.phase, a.metrics, a.unmeasurable, a.violations, a.not_evaluated) == (
        b.phase,
        b.metrics,
        b.unmeasurable,
        b.violations,
        b.not_evaluated,
    )


@EXAMPLES
@given(st.lists(METRIC_LINE, min_size=1, max_size=12))
def test_property_c_last_occurrence_wins(lines: list[str]) -> None:
    report = read_report("\n".join(lines).encode(), kind="custom", exit_code=0)
    for name, value in _last_values(lines).items():
        if value.lower() == "n/a":
            assert name in report.unmeasurable and name not in report.metrics
        else:
            assert report.metrics[name] == value and name not in report.unmeasurable


@EXAMPLES
@given(
    st.lists(st.one_of(METRIC_LINE, NOISE_LINE), max_size=10), EXIT, st.lists(THRESHOLD, max_size=5)
)
def test_property_d_evaluation_is_deterministic(
    lines: list[str], exit_code: int, thresholds: list[Threshold]
) -> None:
    assert _judge(lines, exit_code, thresholds) == _judge(list(lines), exit_code, list(thresholds))


@settings(max_examples=2_000, deadline=None)
@given(st.binary(max_size=400), st.integers(-2, 300))
def test_property_arbitrary_bytes_never_crash_and_never_invent_metrics(
    data: bytes, exit_code: int
) -> None:
    report = read_report(data, kind="custom", exit_code=exit_code)
    text = data.decode("utf-8", "replace")
    # A5 canonicalises the key (`-A` -> `a`, `gpu_temp_c` -> `gpuTempC`): the name's
    # letters and digits, case folded, still stand in the output in order.
    folded = "".join(c for c in text.casefold() if c.isalnum())
    for name, value in report.metrics.items():
        assert name.casefold() in folded and value in text


def _split_reads(data: bytes, cuts: list[int], *, exit_code: int) -> RunnerReport:
    reader = ReportReader(kind="custom")
    previous = 0
    for cut in sorted(cuts):
        reader.feed(data[previous:cut])
        previous = cut
    reader.feed(data[previous:])
    return reader.finish(exit_code=exit_code)


@settings(max_examples=1_000, deadline=None)
@given(
    st.lists(st.one_of(METRIC_LINE, NOISE_LINE, FENCE_LINE), max_size=10),
    st.sampled_from(["\n", "\r\n"]),
    st.booleans(),
    EXIT,
)
def test_property_e_report_is_identical_at_every_chunk_boundary(
    lines: list[str], newline: str, trailing: bool, exit_code: int
) -> None:
    data = (newline.join(lines) + (newline if trailing else "")).encode()
    whole = read_report(data, kind="custom", exit_code=exit_code)
    for cut in range(len(data) + 1):
        assert _split_reads(data, [cut], exit_code=exit_code) == whole, cut


@settings(max_examples=1_000, deadline=None)
@given(
    st.lists(st.one_of(METRIC_LINE, NOISE_LINE), max_size=8),
    st.lists(st.one_of(METRIC_LINE, NOISE_LINE), max_size=8),
    st.lists(st.integers(0, 400), max_size=3),
)
def test_property_f_lines_before_an_orphan_end_are_never_metrics(
    before: list[str], after: list[str], cuts: list[int]
) -> None:
    data = "\n".join([*before, END_LINE, *after]).encode()
    got = _split_reads(data, [c for c in cuts if c <= len(data)], exit_code=0)
    only_after = read_report("\n".join(after).encode(), kind="custom", exit_code=0)
    assert got.metrics == only_after.metrics
    assert got.unmeasurable == only_after.unmeasurable
    assert got.invalid_names == only_after.invalid_names
    assert got.message == only_after.message


@settings(max_examples=200, deadline=None)
@given(
    st.lists(METRIC_LINE, max_size=6),
    st.lists(METRIC_LINE, max_size=4),
    NAMES,
    st.integers(1, 3),
    st.lists(THRESHOLD, min_size=1, max_size=3),
)
def test_property_g_an_overlong_line_never_lets_an_older_value_pass(
    before: list[str], after: list[str], name: str, extra: int, thresholds: list[Threshold]
) -> None:
    long_line = f"{name}=1".encode() + b" " * (MAX_LINE_BYTES + extra)
    head = "\n".join(before).encode() + (b"\n" if before else b"")
    data = head + long_line + b"\n" + "\n".join(after).encode()
    whole = read_report(data, kind="custom", exit_code=0)
    assert whole.unreadable_lines == 1
    assert judge_attempt(whole, kind="custom", thresholds=thresholds).phase is Phase.ERROR
    start, end = len(head), len(head) + len(long_line)
    for cut in {start - 1, start, start + 1, end - 1, end, end + 1, MAX_LINE_BYTES}:
        if 0 <= cut <= len(data):
            assert _split_reads(data, [cut], exit_code=0) == whole, cut

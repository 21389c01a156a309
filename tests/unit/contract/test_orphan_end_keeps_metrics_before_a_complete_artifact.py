"""An orphan artifact END discards only the lines since the last fence boundary (A11).

A boundary is the stream's start or any END. Lines from the last boundary up to an END
with no open fence may be a payload's tail and are never metrics (nor invalid names,
overflows, unreadable lines or the message); metrics printed before a complete
artifact stand. The reader stays streaming: what follows the last boundary is held
only as tentative declarations until the next END or the end of the stream.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glimmer.contract import DropReason, ReportReader, RunnerReport, read_report
from glimmer.contract import report as report_module
from glimmer.contract.artifacts import Artifact, DroppedArtifact
from glimmer.contract.report import MAX_LINE_BYTES

BEGIN = "-----BEGIN BURNIN ARTIFACT"
END = "-----END BURNIN ARTIFACT-----"
ARTIFACT = f'{BEGIN} evidence.json application/json-----\n{{"x": 1}}\ngpuTempC=50\n{END}\n'


def report(data: str | bytes, *, kind: str = "custom") -> RunnerReport:
    raw = data.encode() if isinstance(data, str) else data
    return read_report(raw, kind=kind, exit_code=0)


def test_orphan_end_keeps_metrics_printed_before_a_complete_artifact() -> None:
    r = report(f"miscompares=0\n{ARTIFACT}poisonedByPayload=666\n{END}\n", kind="gpu-burn")
    assert r.metrics == {"miscompares": "0"}
    assert [type(a) for a in r.artifacts_in_order] == [Artifact, DroppedArtifact]
    (drop,) = r.dropped_artifacts
    assert drop.reason is DropReason.ORPHAN_END
    assert drop.size == len("poisonedByPayload=666\n")  # only the discarded segment


def test_a_value_between_the_last_boundary_and_an_orphan_end_never_replaces_an_older_one() -> None:
    r = report(f"bw=12\n{ARTIFACT}bw=3\n{END}\n")
    assert r.metrics == {"bw": "12"}


def test_an_n_a_between_the_last_boundary_and_an_orphan_end_is_discarded_too() -> None:
    r = report(f"bw=12\n{ARTIFACT}bw=n/a\nlat=n/a\n{END}\n")
    assert r.metrics == {"bw": "12"} and not r.unmeasurable


def test_everything_a_discarded_segment_said_is_discarded() -> None:
    overlong = "y" * (MAX_LINE_BYTES + 3)
    r = report(
        f"bw=12\nRUNNER_OK\n9bad=1\n{ARTIFACT}"
        f"provenance=silicon\n8bad=1\nprose from a payload\n{overlong}\n{END}\n"
    )
    assert r.metrics == {"bw": "12"}
    assert r.message == "RUNNER_OK"
    assert r.invalid_name_count == 1 and r.invalid_names == ("9bad",)
    assert r.unreadable_lines == 0
    # Provenance is sticky-weak: the over-long line still weakens it (never strengthens).
    assert r.provenance == "unknown"


def test_silicon_before_a_complete_artifact_stands_and_after_it_vouches_for_nothing() -> None:
    assert report(f"provenance=silicon\n{ARTIFACT}x=1\n{END}\n").provenance == "silicon"
    assert report(f"x=1\n{ARTIFACT}provenance=silicon\n{END}\n").provenance is None


def test_an_overflow_in_a_discarded_segment_leaves_the_settled_value() -> None:
    r = report(f"bw=12\n{ARTIFACT}bw={'9' * (report_module.MAX_VALUE_BYTES + 1)}\n{END}\n")
    assert r.metrics == {"bw": "12"} and r.overflow_names == ()


def test_an_overflow_in_a_settled_segment_removes_the_older_value() -> None:
    r = report(f"bw=12\n{ARTIFACT}bw={'9' * (report_module.MAX_VALUE_BYTES + 1)}\n")
    assert "bw" not in r.metrics and r.overflow_names == ("bw",)


def test_each_orphan_end_discards_only_its_own_segment() -> None:
    r = report(f"a=1\n{ARTIFACT}b=2\n{END}\nc=3\n{ARTIFACT}d=4\n{END}\n{END}\ne=5\n")
    assert r.metrics == {"a": "1", "c": "3", "e": "5"}
    assert [d.size for d in r.dropped_artifacts] == [len("b=2\n"), len("d=4\n"), 0]


def test_a_dropped_but_closed_fence_is_a_boundary_too() -> None:
    r = report(f"a=1\n{BEGIN} only-a-name-----\npayload\n{END}\nb=2\n{END}\n")
    assert r.metrics == {"a": "1"}
    assert [d.reason for d in r.dropped_artifacts] == [DropReason.BAD_HEADER, DropReason.ORPHAN_END]


def test_the_rule_holds_however_the_output_is_chunked() -> None:
    data = f"miscompares=0\nOK\n{ARTIFACT}poisonedByPayload=666\nBAD\n{END}\r\n".encode()
    whole = report(data, kind="gpu-burn")
    assert whole.metrics == {"miscompares": "0"} and whole.message == "OK"
    for cut in range(len(data) + 1):
        reader = ReportReader(kind="gpu-burn")
        reader.feed(data[:cut])
        reader.feed(data[cut:])
        assert reader.finish(exit_code=0) == whole


def test_a_segment_is_held_within_the_metric_budget_and_settling_never_exceeds_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(report_module, "MAX_METRIC_BYTES", 40)
    settled = "k0=1234\nk1=1234\na0=1234\na1=1234\n"  # 4 x 6 budget bytes
    # The segment replaces k0, k1 with longer values and adds more names: the budget
    # counts what the settled layer would hold after settling, so the segment stops there.
    segment = "".join(f"k{i}=123456789\n" for i in range(6))
    reader = ReportReader(kind="custom")
    reader.feed(f"{settled}{ARTIFACT}{segment}".encode())
    r = reader.finish(exit_code=0)
    assert sum(len(k) + len(v) for k, v in r.metrics.items()) <= 40
    assert r.metrics == {"a0": "1234", "a1": "1234", "k0": "123456789", "k1": "123456789"}
    assert r.overflow_names == ("k2", "k3", "k4", "k5")


def test_an_overflowed_name_is_removed_from_the_settled_layer_never_left_at_its_old_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(report_module, "MAX_METRIC_BYTES", 20)
    r = report(f"a0=1234\nk0=1234\n{ARTIFACT}k9=12345\nk0=123456789012\n")
    assert r.metrics == {"a0": "1234", "k9": "12345"}
    assert r.overflow_names == ("k0",)


# --- the property over generated streams -------------------------------------------------

_NAMES = ("bw", "lat", "miscompares", "gpuTempC")


@st.composite
def _streams(draw: st.DrawFn) -> list[tuple[str, str]]:
    """A stream as tokens: ("metric", name), ("artifact", payload metric name),
    ("orphan", ""), ("prose", ""). Every artifact is complete, so every bare END is an
    orphan."""
    kinds = st.sampled_from(["metric", "metric", "metric", "artifact", "orphan", "prose"])
    tokens = []
    for kind in draw(st.lists(kinds, max_size=24)):
        name = draw(st.sampled_from(_NAMES)) if kind in ("metric", "artifact") else ""
        tokens.append((kind, name))
    return tokens


def _render(tokens: list[tuple[str, str]]) -> tuple[bytes, dict[str, str], set[str], set[str]]:
    """The output bytes; the metrics a reader must keep (a model of the rule); every
    value printed in a discarded segment; every value printed before a complete artifact.
    Each metric line carries a value no other line carries."""
    lines: list[str] = []
    settled: dict[str, str] = {}
    segment: dict[str, str] = {}
    segment_values: set[str] = set()
    discarded: set[str] = set()
    before_artifact: set[str] = set()
    for index, (kind, name) in enumerate(tokens):
        value = f"v{index}"
        if kind == "metric":
            lines.append(f"{name}={value}")
            segment.pop(name, None)
            segment[name] = value
            segment_values.add(value)
        elif kind == "artifact":
            lines += [f"{BEGIN} a{index}.json application/json-----", f"{name}=p{index}", END]
            settled.update(segment)
            before_artifact |= segment_values
            segment, segment_values = {}, set()
        elif kind == "orphan":
            lines.append(END)
            discarded |= segment_values
            segment, segment_values = {}, set()
        else:
            lines.append("some prose")
    settled.update(segment)
    return ("\n".join(lines) + "\n").encode(), settled, discarded, before_artifact


@settings(max_examples=300, deadline=None)
@given(tokens=_streams(), cuts=st.lists(st.integers(min_value=0), max_size=4))
def test_property_metrics_before_a_complete_artifact_survive_and_an_orphan_segment_never_counts(
    tokens: list[tuple[str, str]], cuts: list[int]
) -> None:
    data, expected, discarded, before_artifact = _render(tokens)
    reader = ReportReader(kind="custom")
    offsets = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    for start, stop in itertools.pairwise(offsets):
        reader.feed(data[start:stop])
    r = reader.finish(exit_code=0)
    assert r.metrics == expected
    values = set(r.metrics.values())
    assert not values & discarded, "a line between a boundary and an orphan END became a metric"
    assert not any(v.startswith("p") for v in values), "a payload line became a metric"
    # Each name printed before a complete artifact is still reported (at that value or
    # a later one printed in a segment that was settled).
    for value in before_artifact:
        assert tokens[int(value[1:])][1] in r.metrics

"""Verdict-integrity rules held by the contract's streaming reader (I12, I13, I14, I31)."""

from __future__ import annotations

from glimmer.contract import DropReason, ReportReader, RunnerReport, read_report
from glimmer.contract.artifacts import Artifact, DroppedArtifact
from glimmer.contract.report import MAX_LINE_BYTES, MAX_VALUE_BYTES

BEGIN = "-----BEGIN BURNIN ARTIFACT"
END = "-----END BURNIN ARTIFACT-----"


def report(data: str | bytes, *, exit_code: int = 0) -> RunnerReport:
    raw = data.encode() if isinstance(data, str) else data
    return read_report(raw, kind="custom", exit_code=exit_code)


def every_split(data: bytes, *, exit_code: int = 0) -> list[RunnerReport]:
    """The same output fed in two chunks split at every offset."""
    out = []
    for cut in range(len(data) + 1):
        reader = ReportReader(kind="custom")
        reader.feed(data[:cut])
        reader.feed(data[cut:])
        out.append(reader.finish(exit_code=exit_code))
    return out


# --- I12: orphan END ---------------------------------------------------------------


def test_I12_lines_before_orphan_end_are_not_metrics() -> None:
    r = report(f"gpuTempC=50\nBad_Name=1\nsome prose\nbw=n/a\n{END}\nxidEvents=0\nOK\n")
    assert r.metrics == {"xidEvents": "0"}
    assert not r.unmeasurable
    assert r.invalid_name_count == 0 and not r.invalid_names
    assert r.message == "OK"


def test_I12_lines_before_orphan_end_are_not_the_message_either() -> None:
    r = report(f"payload tail line\n{END}\n")
    assert r.message == "" and not r.metrics


def test_I12_orphan_end_is_recorded_as_dropped_with_the_discarded_size() -> None:
    r = report(f"a=1\nbb=22\n{END}\nc=3\n")
    (drop,) = r.dropped_artifacts
    assert drop.reason is DropReason.ORPHAN_END
    assert drop.size == len("a=1\nbb=22\n")


def test_I12_an_end_that_closes_a_fence_is_not_an_orphan() -> None:
    r = report(f"a=1\n{BEGIN} x t-----\np=1\n{END}\nb=2\n")
    assert r.metrics == {"a": "1", "b": "2"}
    assert not r.dropped_artifacts


def test_I12_second_end_after_a_closed_fence_is_an_orphan() -> None:
    r = report(f"a=1\n{BEGIN} x t-----\np=1\n{END}\nb=2\n{END}\nc=3\n")
    assert r.metrics == {"a": "1", "c": "3"}  # only what followed the closed fence goes
    assert [type(e) for e in r.artifacts_in_order] == [Artifact, DroppedArtifact]


def test_I12_orphan_end_holds_however_the_output_is_chunked() -> None:
    data = f"gpuTempC=50\nprose\n{END}\r\ngpuTempC=99\nOK\n".encode()
    whole = report(data)
    assert whole.metrics == {"gpuTempC": "99"}
    assert all(r == whole for r in every_split(data))


def test_I12_orphan_end_never_clears_a_sim_declaration() -> None:
    r = report(f"provenance=sim\n{END}\nprovenance=silicon\n")
    assert r.provenance == "sim"


def test_I12_silicon_before_an_orphan_end_vouches_for_nothing() -> None:
    r = report(f"provenance=silicon\n{END}\nx=1\n")
    assert r.provenance is None


# --- I13: over-long lines ----------------------------------------------------------


def test_I13_overlong_line_is_counted_unreadable_and_never_a_metric() -> None:
    data = b"gpuTempC=50\ngpuTempC=99" + b" " * MAX_LINE_BYTES + b"\n"
    r = report(data)
    assert r.unreadable_lines == 1
    assert r.metrics == {"gpuTempC": "50"}  # the verdict refuses to judge it (I13)


def test_I13_a_line_at_the_limit_is_read() -> None:
    line = b"k=" + b"7" * (MAX_LINE_BYTES - 2)
    assert len(line) == MAX_LINE_BYTES
    r = report(line + b"\n")
    assert r.unreadable_lines == 0 and "k" not in r.metrics  # value too long to keep
    assert r.overflow_names == ("k",)


def test_I13_overlong_line_is_never_the_message() -> None:
    r = report(b"RUNNER_PASS\n" + b"x" * (MAX_LINE_BYTES + 5) + b"\n")
    assert r.message == "RUNNER_PASS" and r.unreadable_lines == 1


def test_I13_overlong_line_is_never_a_marker() -> None:
    fake_begin = f"{BEGIN} a b".encode() + b"-" * (MAX_LINE_BYTES + 10)
    r = report(fake_begin + b"\nk=1\n")
    assert r.unreadable_lines == 1
    assert not r.dropped_artifacts and not r.artifacts


def test_I13_overlong_line_inside_a_fence_is_payload_with_its_true_size() -> None:
    big = b"y" * (MAX_LINE_BYTES + 100)
    r = report(f"{BEGIN} big t-----\n".encode() + big + f"\n{END}\nk=1\n".encode())
    assert r.unreadable_lines == 0
    (drop,) = r.dropped_artifacts
    assert drop.reason is DropReason.OVERSIZED and drop.size == len(big) + 1
    assert r.metrics == {"k": "1"}


def test_I13_overlong_line_is_counted_however_the_output_is_chunked() -> None:
    data = b"a=1\n" + b"b=" + b"9" * (MAX_LINE_BYTES + 3) + b"\nc=2\n"
    whole = report(data)
    assert whole.unreadable_lines == 1
    for size in (1 << 16, 1 << 20, (1 << 20) + 1, 4093):
        reader = ReportReader(kind="custom")
        for start in range(0, len(data), size):
            reader.feed(data[start : start + size])
        assert reader.finish(exit_code=0) == whole


# --- I14: provenance is positive and sticky ----------------------------------------


def test_I14_sim_anywhere_wins_over_a_later_silicon() -> None:
    assert report("provenance=sim\nx=1\nprovenance=silicon\n").provenance == "sim"


def test_I14_a_later_na_never_clears_sim() -> None:
    assert report("provenance=sim\nprovenance=n/a\n").provenance == "sim"


def test_I14_an_overlong_value_never_clears_sim() -> None:
    value = "s" * (MAX_VALUE_BYTES + 1)
    r = report(f"provenance=sim\nprovenance={value}\n")
    assert r.provenance == "sim" and "provenance" not in r.metrics


def test_I14_an_overlong_line_never_clears_sim_and_never_reads_silicon() -> None:
    long_silicon = b"provenance=silicon" + b" " * MAX_LINE_BYTES + b"\n"
    assert report(b"provenance=sim\n" + long_silicon).provenance == "sim"
    assert report(b"provenance=silicon\n" + long_silicon).provenance == "unknown"


def test_I14_any_other_declaration_weakens_silicon_to_unknown() -> None:
    assert report("provenance=silicon\nprovenance=n/a\n").provenance == "unknown"
    assert report("provenance=emulated\nprovenance=silicon\n").provenance == "unknown"


def test_I14_only_the_exact_key_vouches_for_silicon_but_any_spelling_says_sim() -> None:
    assert report("PROVENANCE=silicon\n").provenance == "unknown"
    assert report("Provenance=SIM\nprovenance=silicon\n").provenance == "sim"
    assert report("provenance=SILICON\n").provenance == "silicon"


def test_I14_no_declaration_is_none() -> None:
    assert report("x=1\n").provenance is None


def test_I14_a_declaration_inside_a_payload_is_not_a_declaration() -> None:
    assert report(f"{BEGIN} a t-----\nprovenance=silicon\n{END}\n").provenance is None


# --- I31: artifacts in document order ---------------------------------------------


def test_I31_artifacts_are_listed_in_document_order() -> None:
    r = report(
        f"{BEGIN} first t-----\n1\n{END}\n"
        f"{BEGIN} outer t-----\n2\n{BEGIN} inner t-----\n3\n{END}\n"
        f"{BEGIN} bad.name/ t-----\n4\n{END}\n"
        f"{BEGIN} tail t-----\n5\n"
    )
    assert [(e.name, type(e).__name__) for e in r.artifacts_in_order] == [
        ("first", "Artifact"),
        ("outer", "DroppedArtifact"),
        ("inner", "Artifact"),
        ("bad.name/", "Artifact"),
        ("tail", "DroppedArtifact"),
    ]
    assert r.artifacts + r.dropped_artifacts == tuple(
        e for e in r.artifacts_in_order if isinstance(e, Artifact)
    ) + tuple(e for e in r.artifacts_in_order if isinstance(e, DroppedArtifact))

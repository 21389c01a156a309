"""Group verdict (F6), metric election (F7), dissent message (F8), F5/F9 paths."""

from __future__ import annotations

from dataclasses import replace

import pytest

from glimmer.contract import Outcome
from glimmer.verdict import (
    Applicability,
    Phase,
    SideReport,
    combine_group,
    group_outcome,
    judge_attempt,
)
from glimmer.verdict.dissent import (
    MAX_LINE_CHARS,
    MAX_SUMMARY_BYTES,
    SUMMARY_SUFFIX,
    rank_summary,
)
from tests.unit.verdict.helpers import gte, lte
from tests.unit.verdict.links_builders import artifact, parsed, ranks, report

# F6 -------------------------------------------------------------------------------


def test_F6_no_rank_reported_is_error_exit_minus_one() -> None:
    combined = combine_group(ranks(None, None, None))
    assert combined.outcome is Outcome.ERROR
    assert combined.exit_code == -1
    assert combine_group([]).outcome is Outcome.ERROR


def test_F6_any_error_decides_with_the_lowest_erroring_ranks_code() -> None:
    combined = combine_group(
        ranks(report("Fail"), report("Error", exit_code=137), None, report("Error", exit_code=3))
    )
    assert combined.outcome is Outcome.ERROR
    assert combined.exit_code == 137


def test_F6_any_fail_decides_with_the_lowest_failing_rank_even_when_ranks_are_missing() -> None:
    combined = combine_group(ranks(report("Pass"), None, report("Fail"), report("Skip")))
    assert combined.outcome is Outcome.FAIL
    assert combined.exit_code == 1


def test_F6_skip_never_from_a_subset() -> None:
    combined = combine_group(ranks(report("Skip"), report("Skip"), None))
    assert combined.outcome is Outcome.ERROR
    assert combined.exit_code == 2  # rank 0's code
    assert combined.skip_declared  # consistent with rank 0, so not an "undeclared skip"
    assert "1 of 3 ranks did not report" in combined.message
    verdict = judge_attempt(combined, kind="custom", thresholds=[])
    assert verdict.phase is Phase.ERROR and not verdict.undeclared_skip


def test_F6_pass_never_from_a_subset_rank_0_code_or_minus_one() -> None:
    combined = combine_group(ranks(report("Pass", metrics={"bw": "9"}), None))
    assert combined.outcome is Outcome.ERROR and combined.exit_code == 0
    verdict = judge_attempt(combined, kind="custom", thresholds=[gte("bw", "1")])
    assert verdict.phase is Phase.ERROR
    missing_root = combine_group(ranks(None, report("Pass")))
    assert missing_root.outcome is Outcome.ERROR and missing_root.exit_code == -1
    assert group_outcome([None, report("Pass")]).decider is None


def test_F6_skip_when_every_rank_reported_lowest_skipping_rank() -> None:
    combined = combine_group(
        ranks(report("Pass"), report("Skip", message="A_SKIP: one"), report("Skip"))
    )
    assert combined.outcome is Outcome.SKIP and combined.exit_code == 2
    assert judge_attempt(combined, kind="custom", thresholds=[]).phase is Phase.SKIPPED


def test_F6_pass_carries_rank_0s_exit_code() -> None:
    combined = combine_group(ranks(report("Pass"), report("Pass"), report("Pass")))
    assert combined.outcome is Outcome.PASS and combined.exit_code == 0


def test_F6_an_undeclared_exit_2_rank_is_error_through_judge() -> None:
    combined = combine_group(ranks(report("Pass"), parsed("fatal error\n", exit_code=2)))
    verdict = judge_attempt(combined, kind="custom", thresholds=[])
    assert verdict.phase is Phase.ERROR and verdict.undeclared_skip


def test_F5_overdue_group_is_error_naming_the_ranks_and_harvests_nothing() -> None:
    sides = [
        SideReport("rank 0", "node-0", report("Pass", artifacts=(artifact("r0"),))),
        SideReport("rank 1", "node-1", None, absent="never finished"),
        SideReport("rank 2", "node-2", None, absent="never started"),
    ]
    combined = combine_group(sides, overdue=True)
    assert combined.outcome is Outcome.ERROR
    assert combined.artifacts == () and combined.metrics == {}
    assert "rank 1 (node-1) never finished" in combined.message
    assert "rank 2 (node-2) never started" in combined.message


def test_F9_root_ending_before_workers_existed_harvests_no_artifact() -> None:
    sides = [SideReport("rank 0", "node-0", report("Pass", artifacts=(artifact("r0"),)))] + [
        SideReport(f"rank {i}", f"node-{i}", None, absent="never started") for i in (1, 2)
    ]
    combined = combine_group(sides, workers_created=False)
    assert combined.outcome is Outcome.ERROR
    assert combined.artifacts == () and combined.artifacts_in_order == ()
    assert "rank 0 ended before the workers existed" in combined.message


def test_F9_artifacts_from_every_reporting_rank_in_rank_order() -> None:
    combined = combine_group(
        ranks(
            report(artifacts=(artifact("a0"),)),
            None,
            report("Fail", artifacts=(artifact("a2"), artifact("b2"))),
        )
    )
    assert [a.name for a in combined.artifacts] == ["a0", "a2", "b2"]


# F7 -------------------------------------------------------------------------------


def test_F7_one_ranks_na_makes_the_key_unmeasurable_never_hidden_by_others_zero() -> None:
    combined = combine_group(
        ranks(
            report(metrics={"eccErrors": "0", "busBandwidthGBs": "180"}),
            report(na={"eccErrors", "busBandwidthGBs"}),
            report(metrics={"eccErrors": "0"}),
        )
    )
    assert "eccErrors" not in combined.metrics
    assert "eccErrors" in combined.unmeasurable
    # Collective too: the lowest rank's value does not outvote another rank's n/a.
    assert "busBandwidthGBs" not in combined.metrics
    assert "busBandwidthGBs" in combined.unmeasurable
    verdict = judge_attempt(combined, kind="custom", thresholds=[lte("eccErrors", "0")])
    assert verdict.phase is Phase.FAILED  # UnmeasurableRequired, never a Pass on others' 0


def test_F7_collective_keeps_the_lowest_reporting_ranks_value_as_printed() -> None:
    combined = combine_group(
        ranks(
            report(metrics={}),
            report(metrics={"busBandwidthGBs": "180.50"}),
            report(metrics={"busBandwidthGBs": "170"}),
        )
    )
    assert combined.metrics["busBandwidthGBs"] == "180.50"


def test_F7_ranks_silent_on_a_key_do_not_vote() -> None:
    combined = combine_group(
        ranks(report(metrics={"miscompares": "2"}), report(), report(metrics={"miscompares": "3"}))
    )
    assert combined.metrics["miscompares"] == "5"


@pytest.mark.parametrize(
    ("name", "readings", "expected"),
    [
        ("miscompares", ["5.0"], "5"),  # Sum, re-rendered even for one reading
        ("miscompares", ["1e3", "0"], "1000"),
        ("miscompares", ["0.1", "0.2"], "0.30000000000000004"),
        ("latencyUs", ["2.50", "1", "2.5"], "2.5"),  # Max
        ("elapsedS", ["1e21", "3"], "1000000000000000000000"),  # Max, never an exponent
        ("bandwidthGbps", ["400", "0x1p3", "395.5"], "8"),  # Min, hex-float readings parse
        ("miscompares", ["Inf", "1"], "+Inf"),
        ("latencyUs", ["-0", "0"], "0"),  # Max prefers +0 whatever the rank order
        ("latencyUs", ["0", "-0"], "0"),
        ("bandwidthGbps", ["0", "-0"], "-0"),  # Min prefers -0
        ("bandwidthGbps", ["-0", "0"], "-0"),
        ("miscompares", ["inf", "-inf"], "NaN"),
    ],
)
def test_F7_numeric_folds_are_re_rendered_as_go_formatfloat(
    name: str, readings: list[str], expected: str
) -> None:
    combined = combine_group(ranks(*(report(metrics={name: v}) for v in readings)))
    assert combined.metrics[name] == expected


def test_F7_a_nan_reading_makes_the_fold_nan_and_the_gate_fails() -> None:
    combined = combine_group(
        ranks(report(metrics={"latencyUs": "3"}), report(metrics={"latencyUs": "NaN"}))
    )
    assert combined.metrics["latencyUs"] == "NaN"
    verdict = judge_attempt(combined, kind="custom", thresholds=[lte("latencyUs", "10")])
    assert verdict.phase is Phase.FAILED


@pytest.mark.parametrize("bad", ["abc", "", "1e400", " 7", "-nan"])
def test_F7_an_unparseable_reading_drops_a_numeric_fold_as_unmeasurable(bad: str) -> None:
    combined = combine_group(
        ranks(report(metrics={"miscompares": "0"}), report(metrics={"miscompares": bad}))
    )
    assert "miscompares" not in combined.metrics
    assert "miscompares" in combined.unmeasurable


@pytest.mark.parametrize("name", ["peakBandwidthGbps", "customThing", "gpuName"])
def test_F7_unclassified_keys_are_kept_only_when_byte_identical(name: str) -> None:
    same = combine_group(ranks(report(metrics={name: "7.0"}), report(metrics={name: "7.0"})))
    assert same.metrics[name] == "7.0"  # not re-rendered: no fold happened
    differ = combine_group(ranks(report(metrics={name: "7.0"}), report(metrics={name: "7"})))
    assert name not in differ.metrics and name in differ.unmeasurable


def test_F7_a_key_only_declared_na_is_unmeasurable() -> None:
    combined = combine_group(ranks(report(na={"sustainedClockSpreadPct"}), report()))
    assert combined.unmeasurable == {"sustainedClockSpreadPct"}
    verdict = judge_attempt(
        combined,
        kind="custom",
        thresholds=[
            gte("sustainedClockSpreadPct", "0", Applicability.REQUIRED_IF_MEASURABLE.value)
        ],
    )
    assert verdict.phase is Phase.PASSED
    assert [n.metric for n in verdict.not_evaluated] == ["sustainedClockSpreadPct"]


def test_F7_invalid_names_deduped_and_sorted() -> None:
    combined = combine_group(ranks(report(invalid=("z_z", "a_a")), report(invalid=("a_a",))))
    assert combined.invalid_names == ("a_a", "z_z")


def test_F7_nothing_measured_by_any_rank_is_an_empty_harvest_error() -> None:
    combined = combine_group(ranks(report(), report()))
    verdict = judge_attempt(combined, kind="custom", thresholds=[gte("bw", "1")])
    assert verdict.phase is Phase.ERROR and verdict.empty_harvest


def test_F7_provenance_weakest_of_every_rank() -> None:
    combined = combine_group(
        ranks(report(provenance="silicon"), report(provenance="sim"), report(provenance=None))
    )
    assert combined.declared_provenance == "sim"
    assert combine_group(ranks(report(), report())).declared_provenance == "unknown"
    silent = ranks(report(provenance="silicon"), None)
    assert combine_group(silent).declared_provenance == "unknown"
    assert (
        combine_group(ranks(report(provenance="silicon"), report())).declared_provenance
        == "unknown"
    )


# F8 -------------------------------------------------------------------------------


def test_F8_lead_clause_then_ranks_grouped_by_verdict_word_sorted() -> None:
    combined = combine_group(
        ranks(report("Pass", message="OK"), report("Fail", message="BAD"), None)
    )
    assert combined.message.startswith(
        "group of 3 ranks: the verdict (Fail) is about the COLLECTIVE"
    )
    fail = combined.message.index("rank 1 (node-1) Fail (exit 1): BAD")
    passed = combined.message.index("rank 0 (node-0) Pass (exit 0): OK")
    silent = combined.message.index("rank 2 (node-2) did not report")
    assert fail < passed < silent


def test_F8_a_group_of_four_or_fewer_is_listed_in_full_with_lines_cut() -> None:
    line = "L" * 1000
    combined = combine_group(ranks(*(report("Pass", message=line) for _ in range(3))))
    for i in range(3):
        assert f"rank {i} (node-{i}) Pass (exit 0): " in combined.message
    assert "L" * MAX_LINE_CHARS not in combined.message
    assert "L" * (MAX_LINE_CHARS - 1) in combined.message


def test_F8_a_verdict_group_over_four_is_a_count_with_the_first_four_named() -> None:
    reps = [report("Fail") for _ in range(6)] + [report("Pass")]
    combined = combine_group(ranks(*reps))
    assert (
        "6 ranks Fail: rank 0 (node-0), rank 1 (node-1), rank 2 (node-2), rank 3 (node-3), "
        "and 2 more" in combined.message
    )
    assert "rank 6 (node-6) Pass (exit 0)" in combined.message


def test_F8_all_n_over_four_agreeing_gives_one_exemplar_line() -> None:
    combined = combine_group(ranks(*(report("Pass", message=f"OK {i}") for i in range(8))))
    assert "all 8 ranks Pass, e.g. rank 0 (node-0) Pass (exit 0): OK 0" in combined.message
    assert "OK 1" not in combined.message


def test_F8_disagreed_note_names_the_rule_and_a_re_rendered_fold_is_a_disagreement() -> None:
    combined = combine_group(
        ranks(
            report(metrics={"miscompares": "5.0", "busBandwidthGBs": "180"}),
            report(metrics={"miscompares": "0", "busBandwidthGBs": "175"}),
        )
    )
    assert (
        "[ranks differed by 2.8 % on busBandwidthGBs: kept 180 from rank 0 (node-0) (Collective: "
        "the lowest reporting rank's value); rank 1 (node-1)=175]" in combined.message
    )
    assert (
        "[ranks differed by 100.0 % on miscompares: kept 5 (Sum of 2 readings, re-rendered); "
        "rank 0 (node-0)=5.0, rank 1 (node-1)=0]" in combined.message
    )


def test_F8_disagreed_note_for_a_dropped_key_names_the_offending_rank_first() -> None:
    reps = [report(metrics={"eccErrors": "0"}) for _ in range(9)] + [report(na={"eccErrors"})]
    combined = combine_group(ranks(*reps))
    assert (
        "[ranks differed on eccErrors: dropped as unmeasurable (a rank declared it n/a); "
        "rank 9 (node-9)=n/a, rank 0 (node-0)=0, rank 1 (node-1)=0, rank 2 (node-2)=0, "
        "and 6 more]" in combined.message
    )


def test_F8_no_disagreed_note_when_readings_agree_or_all_declared_na() -> None:
    combined = combine_group(
        ranks(
            report(metrics={"miscompares": "0", "gpuName": "H200"}, na={"eccErrors"}),
            report(metrics={"miscompares": "0", "gpuName": "H200"}, na={"eccErrors"}),
        )
    )
    assert "ranks differed" not in combined.message


def test_F8_disagreed_notes_name_at_most_four_keys() -> None:
    names = [f"custom{i}" for i in range(7)]
    combined = combine_group(
        ranks(report(metrics=dict.fromkeys(names, "1")), report(metrics=dict.fromkeys(names, "2")))
    )
    assert combined.message.count("[ranks differed by 50.0 % on custom") == 4
    assert "[ranks differed on 3 more keys]" in combined.message


def test_F8_rank_summary_clamped_to_4096_bytes_and_the_disagreed_note_after_the_clamp() -> None:
    line = "\U0001f600" * 300  # 4 UTF-8 bytes each: four ranks overflow 4096 bytes
    reps = [
        report("Fail" if i % 2 else "Pass", message=line, metrics={"customX": str(i)})
        for i in range(4)
    ]
    sides = [SideReport(f"rank {i}", "N" * 5000, r) for i, r in enumerate(reps)]
    combined = combine_group(sides)
    summary = rank_summary(sides, outcome=Outcome.FAIL, why="")
    assert summary.endswith(SUMMARY_SUFFIX)
    assert len(summary.encode()) <= MAX_SUMMARY_BYTES + len(SUMMARY_SUFFIX.encode())
    assert combined.message.startswith(summary + " [ranks differed by 100.0 % on customX")


def test_F6_an_outcome_outside_the_four_words_is_error_never_pass_by_elimination() -> None:
    # A word outside Outcome, as a damaged rank record could decode to.
    damaged = replace(report("Pass"), outcome="Passed")  # type: ignore[arg-type]  # on purpose
    combined = combine_group(ranks(report("Pass"), damaged))
    assert combined.outcome is Outcome.ERROR
    assert "rank 1 (node-1) Error" in combined.message


def test_F8_a_healthy_one_percent_spread_reads_as_ranks_differed_by_it_not_an_alarm() -> None:
    reps = [report("Pass", metrics={"busBandwidthGBs": value}) for value in ("400", "396")]
    combined = combine_group([SideReport(f"rank {i}", f"node-{i}", r) for i, r in enumerate(reps)])
    assert combined.outcome is Outcome.PASS
    assert "[ranks differed by 1.0 % on busBandwidthGBs:" in combined.message
    assert "DISAGREED" not in combined.message

"""A key the Group election drops (F7) never hides one rank's measured violation.

F7 drops a key whose readings conflict and marks it unmeasurable, so a
``RequiredIfMeasurable`` gate on it is not evaluated. Without the guard in
``judge_attempt`` (``_expose_violating_readings``) a rank that measured 7 uncorrected
ECC errors passes behind a neighbour's ``n/a``: a false Pass on the part that is
broken. The group value stays dropped; only a reading that alone violates a gate is
judged.
"""

from __future__ import annotations

from glimmer.verdict import Phase, combine_group, judge_attempt
from tests.unit.verdict.helpers import gte, lte
from tests.unit.verdict.links_builders import ranks, report

MAYBE = "RequiredIfMeasurable"


def test_F7_fail_closed_a_ranks_measured_violation_fails_behind_anothers_na() -> None:
    combined = combine_group(
        ranks(
            report(metrics={"eccErrors": "0"}),
            report(na=("eccErrors",)),
            report(metrics={"eccErrors": "7"}),
        )
    )
    assert "eccErrors" not in combined.metrics and "eccErrors" in combined.unmeasurable
    verdict = judge_attempt(combined, kind="custom", thresholds=[lte("eccErrors", "0", MAYBE)])
    assert verdict.phase is Phase.FAILED
    assert "eccErrors=7 is rank 2 (node-2)'s own reading" in verdict.message
    assert "eccErrors" not in verdict.metrics  # the group value stays dropped (F7)
    assert [v.metric for v in verdict.violations] == ["eccErrors"]


def test_F7_fail_closed_readings_that_satisfy_the_gate_leave_it_not_evaluated() -> None:
    combined = combine_group(ranks(report(metrics={"eccErrors": "0"}), report(na=("eccErrors",))))
    verdict = judge_attempt(combined, kind="custom", thresholds=[lte("eccErrors", "0", MAYBE)])
    assert verdict.phase is Phase.PASSED
    assert [n.metric for n in verdict.not_evaluated] == ["eccErrors"]


def test_F7_fail_closed_differing_unclassified_readings_are_each_judged() -> None:
    combined = combine_group(
        ranks(report(metrics={"customRate": "6"}), report(metrics={"customRate": "4"}))
    )
    assert "customRate" in combined.unmeasurable
    failed = judge_attempt(combined, kind="custom", thresholds=[gte("customRate", "5", MAYBE)])
    assert failed.phase is Phase.FAILED
    assert "customRate=4 is rank 1 (node-1)'s own reading" in failed.message


def test_F7_fail_closed_a_required_gate_still_fails_once_not_twice() -> None:
    combined = combine_group(ranks(report(metrics={"eccErrors": "3"}), report(na=("eccErrors",))))
    verdict = judge_attempt(combined, kind="custom", thresholds=[lte("eccErrors", "0")])
    assert verdict.phase is Phase.FAILED
    assert len(verdict.violations) == 1

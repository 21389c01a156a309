"""The node verdict: a node is Passed by a run only when every required unit of the
pinned plan naming it Passed on silicon, not suspect (glimmer.verdict.nodes)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from glimmer.verdict.nodes import NodeState, PlannedUnit, node_verdict


def unit(test: str, *nodes: str, required: bool = True) -> PlannedUnit:
    return PlannedUnit(test=test, nodes=nodes or ("n1",), required=required)


def result(test: str, phase: str = "Passed", *nodes: str, **extra: Any) -> dict[str, Any]:
    return {"name": test, "kind": "custom", "phase": phase, "nodes": list(nodes or ("n1",)),
            "provenance": "silicon", **extra}  # fmt: skip


PLAN = (unit("smoke"), unit("gpu-burn"), unit("memory"))


def test_node_verdict_fail_fast_leaves_the_untested_node_not_judged_naming_what_never_ran() -> None:
    """failFast stopped the run after smoke Failed elsewhere: n1 has one Passed result and
    none for gpu-burn or memory, so it is not judged (never Passed)."""
    verdict = node_verdict("n1", planned=PLAN, results=[result("smoke")])
    assert verdict.state is NodeState.NOT_JUDGED
    assert verdict.missing == ("gpu-burn", "memory")
    assert "never ran: gpu-burn, memory" in verdict.message


def test_node_verdict_every_required_unit_passed_on_silicon_is_passed() -> None:
    results = [result("smoke"), result("gpu-burn"), result("memory")]
    assert node_verdict("n1", planned=PLAN, results=results).state is NodeState.PASSED


def test_node_verdict_a_failed_required_unit_is_failed_even_with_others_missing() -> None:
    verdict = node_verdict("n1", planned=PLAN, results=[result("smoke", "Failed")])
    assert verdict.state is NodeState.FAILED and verdict.failed == ("smoke",)


def test_node_verdict_a_skipped_only_node_is_not_judged() -> None:
    results = [result(t.test, "Skipped") for t in PLAN]
    verdict = node_verdict("n1", planned=PLAN, results=results)
    assert verdict.state is NodeState.NOT_JUDGED and len(verdict.unjudged) == 3


def test_node_verdict_a_skipped_required_unit_beside_passes_is_not_judged() -> None:
    results = [result("smoke"), result("gpu-burn"), result("memory", "Skipped")]
    verdict = node_verdict("n1", planned=PLAN, results=results)
    assert verdict.state is NodeState.NOT_JUDGED and verdict.unjudged == ("memory",)


def test_node_verdict_only_simulated_passes_read_simulated_not_passed() -> None:
    results = [result(t.test, provenance="sim", suspect=True) for t in PLAN]
    assert node_verdict("n1", planned=PLAN, results=results).state is NodeState.SIMULATED


def test_node_verdict_a_pass_nobody_declared_silicon_is_not_judged() -> None:
    results = [result("smoke"), result("gpu-burn", provenance="unknown"), result("memory")]
    verdict = node_verdict("n1", planned=PLAN, results=results)
    assert verdict.state is NodeState.NOT_JUDGED and verdict.weak == ("gpu-burn",)


def test_node_verdict_a_suspect_silicon_pass_is_not_passed() -> None:
    results = [result("smoke"), result("gpu-burn", suspect=True), result("memory")]
    assert node_verdict("n1", planned=PLAN, results=results).state is not NodeState.PASSED


def test_node_verdict_every_variant_cell_must_pass() -> None:
    cells = (
        PlannedUnit("burn", ("n1",), True, (("size", "s"),)),
        PlannedUnit("burn", ("n1",), True, (("size", "l"),)),
    )
    one = [result("burn", variantAxes={"size": "s"})]
    assert node_verdict("n1", planned=cells, results=one).state is NodeState.NOT_JUDGED
    both = [*one, result("burn", variantAxes={"size": "l"})]
    assert node_verdict("n1", planned=cells, results=both).state is NodeState.PASSED


def test_node_verdict_a_pass_short_of_its_repeats_is_not_judged() -> None:
    results = [result("smoke", repeatsRequired=3, repeatsCompleted=2)]
    verdict = node_verdict("n1", planned=(unit("smoke"),), results=results)
    assert verdict.state is NodeState.NOT_JUDGED


def test_node_verdict_non_required_tests_never_decide() -> None:
    plan = (unit("smoke"), unit("extra", required=False))
    results = [result("smoke"), result("extra", "Failed")]
    assert node_verdict("n1", planned=plan, results=results).state is NodeState.PASSED


def test_node_verdict_a_pair_unit_must_pass_for_both_of_its_nodes() -> None:
    plan = (unit("smoke", "a"), unit("smoke", "b"), unit("link", "a", "b"))
    results = [result("smoke", "Passed", "a"), result("smoke", "Passed", "b")]
    assert node_verdict("a", planned=plan, results=results).missing == ("link",)
    results.append(result("link", "Passed", "a", "b"))
    assert node_verdict("b", planned=plan, results=results).state is NodeState.PASSED


def test_node_verdict_no_readable_plan_or_a_baseline_judges_nothing() -> None:
    results = [result(t.test) for t in PLAN]
    assert node_verdict("n1", planned=None, results=results).state is NodeState.NOT_JUDGED
    baseline = node_verdict("n1", planned=PLAN, results=results, baseline=True)
    assert baseline.state is NodeState.NOT_JUDGED
    assert node_verdict("n9", planned=PLAN, results=results).state is NodeState.NOT_JUDGED


# --- property -------------------------------------------------------------------------

PHASES = ("Passed", "Failed", "Error", "Skipped", "Cancelled", "Running", "")
PROVENANCES = ("silicon", "sim", "unknown", "", "Silicon")


@st.composite
def plans_and_results(draw: st.DrawFn) -> tuple[list[PlannedUnit], list[dict[str, Any]]]:
    tests = draw(st.lists(st.sampled_from("abcdef"), min_size=1, max_size=5, unique=True))
    planned = [PlannedUnit(t, ("n1",), draw(st.booleans())) for t in tests]
    results = []
    for t in draw(st.lists(st.sampled_from("abcdefg"), max_size=8)):
        results.append(
            {
                "name": t,
                "kind": draw(st.sampled_from(("custom", "gpu-burn", ""))),
                "phase": draw(st.sampled_from(PHASES)),
                "nodes": draw(st.sampled_from((["n1"], ["n2"], ["n1", "n2"]))),
                "provenance": draw(st.sampled_from(PROVENANCES)),
                "suspect": draw(st.sampled_from((True, False, None))),
            }
        )
    return planned, results


def _truly_passed(planned: list[PlannedUnit], results: list[dict[str, Any]]) -> bool:
    for u in planned:
        if not u.required:
            continue
        mine = [r for r in results if r["kind"] and r["name"] == u.test and r["nodes"] == ["n1"]]
        if not mine or not all(
            r["phase"] == "Passed" and r["provenance"] == "silicon" and r["suspect"] is not True
            for r in mine
        ):
            return False
    return any(u.required for u in planned)


@settings(max_examples=400, deadline=None)
@given(plans_and_results(), st.data())
def test_node_verdict_property_passed_only_if_every_required_unit_passed_on_silicon(
    drawn: tuple[list[PlannedUnit], list[dict[str, Any]]], data: st.DataObject
) -> None:
    planned, results = drawn
    state = node_verdict("n1", planned=planned, results=results).state
    assert (state is NodeState.PASSED) == _truly_passed(planned, results)
    # Adding a missing unit or a weaker result never turns a non-Passed verdict Passed.
    if state is not NodeState.PASSED:
        extra_unit = PlannedUnit("zz", ("n1",), True)
        weakness = data.draw(st.sampled_from(("Error", "Skipped", "sim", "unknown", "suspect")))
        worse = {
            "name": data.draw(st.sampled_from([u.test for u in planned])),
            "kind": "custom",
            "phase": weakness if weakness in ("Error", "Skipped") else "Passed",
            "nodes": ["n1"],
            "provenance": weakness if weakness in ("sim", "unknown") else "silicon",
            "suspect": weakness == "suspect",
        }
        assert (
            node_verdict("n1", planned=[*planned, extra_unit], results=results).state
            is not NodeState.PASSED
        )
        assert (
            node_verdict("n1", planned=planned, results=[*results, worse]).state
            is not NodeState.PASSED
        )


def test_node_verdict_a_plan_of_inventory_kinds_only_identifies_and_never_passes() -> None:
    plan = (PlannedUnit("probe", ("n1",), True, (), "fingerprint-probe"),)
    verdict = node_verdict("n1", planned=plan, results=[result("probe")])
    assert verdict.state is NodeState.NOT_JUDGED and "judge nothing" in verdict.message
    both = (*plan, PlannedUnit("burn", ("n1",), True, (), "gpu-burn"))
    results = [result("probe"), result("burn")]
    assert node_verdict("n1", planned=both, results=results).state is NodeState.PASSED

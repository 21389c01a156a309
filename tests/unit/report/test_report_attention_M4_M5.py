"""M4 (the report leads with what needs action) and M5 (a chart only where it helps;
a runner-declared Fail is drawn failing), over the HTML report."""

from __future__ import annotations

import re
from typing import Any

from glimmer.report import Report, assemble, render
from glimmer.report.charts import distributions
from glimmer.report.model import Gate
from glimmer.verdict import Phase
from glimmer.verdict.attention import needs_action, urgency
from tests.unit.report import report_fleet as fleet

NODES = fleet.NODES
GATES = (
    Gate("gpu-burn", "gflops", ">=", "9000"),
    Gate("gpu-burn", "miscompares", "<=", "0"),
)


def burn(node: str, phase: str, gflops: str, **fields: Any) -> dict[str, Any]:
    metrics = {"gflops": gflops, "miscompares": "0"}
    return fleet.result("gpu-burn", [node], phase, metrics=metrics, **fields)


def mixed_fleet() -> Report:
    """Passes first in node order; then a gate violation, a runner-declared Fail whose
    value is far from the rest, and an Error, so any first-seen order would be wrong."""
    results = [burn(n, "Passed", f"{10000 + i}") for i, n in enumerate(NODES[:5])]
    results.append(
        burn(
            NODES[5],
            "Failed",
            "8000",
            violations=[
                {"index": 0, "metric": "gflops", "cause": "Measurement", "kind": "Violated"}
            ],
        )
    )
    results.append(burn(NODES[6], "Failed", "100", message="GPU_BURN_FAIL: fault"))
    results.append(burn(NODES[7], "Error", "", message="the runner crashed"))
    return assemble(fleet.envelopes(results, terminal="Failed"), source="t", gates=GATES)


def html(report: Report) -> str:
    return render(report, "html")["burn-in-report.html"]


def test_M4_attention_orders_failed_then_error_and_open_needs_action() -> None:
    order = sorted(Phase, key=urgency)
    assert order[:2] == [Phase.FAILED, Phase.ERROR]
    assert {p for p in Phase if needs_action(p)} == {
        Phase.FAILED,
        Phase.ERROR,
        Phase.RUNNING,
        Phase.PENDING,
    }
    assert needs_action(None)


def test_M4_the_action_list_comes_first_with_the_deciding_gate_and_value() -> None:
    page = html(mixed_fleet())
    body = page.split("<body>", 1)[1]
    action = body.index('id="needs-action"')
    assert action < body.index("run phase of record") < body.index("Verdicts: node x test")
    section = body[action : body.index("</section>")]
    rows = [section.index(n) for n in (NODES[5], NODES[6], NODES[7])]
    assert rows == sorted(rows), "Failed nodes come before the Error"
    assert "gate gflops &gt;= 9000: read 8000" in section
    assert "the runner itself declared Fail" in section
    assert "the runner crashed" in section
    assert all(n not in section for n in NODES[:5]), "passes need no action"


def test_M4_the_grid_lists_failing_nodes_first() -> None:
    page = html(mixed_fleet())
    grid = page[page.index("Verdicts: node x test") :]
    heads = [grid.index(f"<tr><th>{n}</th>") for n in NODES]
    assert sorted(range(8), key=lambda i: heads[i]) == [5, 6, 7, 0, 1, 2, 3, 4]


def test_M5_a_runner_declared_fail_is_drawn_failing_never_far_from_the_median() -> None:
    report = mixed_fleet()
    (gflops,) = [d for d in distributions(report) if d.gate.metric == "gflops"]
    assert gflops.declared_failing == (NODES[6],)
    assert NODES[6] not in gflops.outliers
    page = html(report)
    caption = page[page.index("Fleet distributions") :]
    assert f"declared by the runner, no gate recorded):</b> {NODES[6]}" in caption
    assert "Far from the fleet median" not in caption
    assert "FAILED (declared by the runner)" in gflops.svg


def test_M5_a_counter_every_node_read_as_zero_is_one_line_not_a_chart() -> None:
    report = mixed_fleet()
    page = html(report)
    folded = page[page.index('id="folded"') :]
    assert "gpu-burn: miscompares (gate &lt;= 0): all 8 node(s) read 0" in folded
    assert page.count("<svg") == 1, "only gflops is charted"


def test_M5_a_small_fleets_chart_names_each_node_once_never_beside_a_dot_on_the_ticks() -> None:
    (gflops,) = [d for d in distributions(mixed_fleet()) if d.gate.metric == "gflops"]
    for node in gflops.values:  # drawn text only (a <desc> is tooltip metadata)
        assert len(re.findall(rf"<text[^>]*>{node}<", gflops.svg)) == 1, node

"""Reports show each node's verdict as the terminal envelope carries it (decided by
glimmer.verdict.nodes): a node a failFast run never tested reads NOT JUDGED with the
tests that never ran, never PASS."""

from __future__ import annotations

from glimmer.report.assemble import assemble
from glimmer.report.html import render_html
from glimmer.report.markdown import render_markdown
from glimmer.report.model import Report
from tests.unit.sinks.test_envelope_node_verdicts import envelope, result


def fail_fast_report() -> Report:
    sent = envelope("Failed", [result("smoke", "n1", "Passed"), result("smoke", "n2", "Failed")])
    return assemble([sent], source="test")


def test_node_verdict_the_markdown_report_names_the_untested_node_not_judged() -> None:
    text = render_markdown(fail_fast_report())
    section = text.split("## Node verdicts", 1)[1].split("\n## ", 1)[0]
    n1 = next(line for line in section.splitlines() if line.startswith("| `n1`"))
    assert "NOT JUDGED" in n1 and "never ran: burn" in n1 and "PASS" not in n1
    n2 = next(line for line in section.splitlines() if line.startswith("| `n2`"))
    assert "FAIL" in n2


def test_node_verdict_the_html_report_marks_each_node_with_its_verdict() -> None:
    page = render_html(fail_fast_report())
    assert 'data-node-verdict="NotJudged"' in page and 'data-node-verdict="Failed"' in page
    assert 'data-node-verdict="Passed"' not in page


def test_node_verdict_an_incomplete_report_shows_no_node_verdicts() -> None:
    sent = envelope("Running", [result("smoke", "n1", "Passed")])
    report = assemble([sent], source="test")
    assert report.node_verdicts == () and "## Node verdicts" not in render_markdown(report)

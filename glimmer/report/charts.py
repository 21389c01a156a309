"""Fleet distributions, drawn with pygal (SVG), one per gated metric.

Each chart places every node that reported the metric on one axis (value) against
its rank, draws the threshold as a line when the input says what it is, and names
the nodes worth walking to: those whose result records a violation of this gate, and
those far from the fleet (more than :data:`OUTLIER_MADS` median absolute deviations
from the median). A gate with ``relativeTo`` also draws each cohort's band as the run
recorded it (its median, and median +/- the allowed deviation, I41). The chart never
re-judges: which nodes violated comes from the delivered violations, not from comparing
values here.

pygal writes an inline ``<script>`` (its tooltip config) into every SVG; it is removed
from the tree before serialising, so the report needs no JavaScript and a node name
can never reach a script context.
"""

from __future__ import annotations

import math
import statistics
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

import pygal
from pygal.etree import etree as pygal_etree
from pygal.style import Style

from glimmer.contract.numbers import parse_go_float
from glimmer.report.model import CohortBand, Gate, Report
from glimmer.verdict import Phase

# pygal builds its tree with lxml whenever lxml is importable (a dev dependency, for the
# JUnit schema test); the charts are serialised with the standard library's ElementTree,
# so pygal is held to it: otherwise an installed lxml makes every chart unserialisable.
pygal_etree.to_etree()

OUTLIER_MADS: Final = 3.5
#: Up to this many nodes, each row of a chart is labelled with its node.
MAX_NAMED_ROWS: Final = 40
_SVG: Final = "{http://www.w3.org/2000/svg}"

#: Colour-blind-safe hues (Okabe-Ito); shapes and words carry the meaning too.
_STYLE: Final = Style(
    background="white",
    plot_background="white",
    foreground="#222",
    foreground_strong="#000",
    foreground_subtle="#555",
    colors=("#0072B2", "#D55E00", "#D55E00", "#CC79A7", "#000000"),
    font_family="DejaVu Sans, Arial, sans-serif",
    label_font_size=11,
    major_label_font_size=11,
    value_label_font_size=10,
    title_font_size=14,
    legend_font_size=11,
)


@dataclass(frozen=True)
class Distribution:
    """One gated metric over the fleet, with everything the chart and caption say."""

    gate: Gate
    values: dict[str, float] = field(default_factory=dict)
    violators: tuple[str, ...] = ()
    outliers: tuple[str, ...] = ()
    unreadable: dict[str, str] = field(default_factory=dict)
    unreported: tuple[str, ...] = ()
    unmeasurable: tuple[str, ...] = ()
    #: Nodes whose result Failed with no violation of this gate (the runner declared it).
    declared_failing: tuple[str, ...] = ()
    threshold: float | None = None
    #: C9: each cohort's recorded band for this gate (median +/- allowed deviation).
    bands: tuple[CohortBand, ...] = ()
    svg: str = ""

    @property
    def uniform(self) -> bool:
        """Every node read one value and none violates this gate: a chart would show one
        dot column, so the report folds it into one line (M5). (A runner-declared Fail
        is not about this value; the action list names it.)"""
        return (
            len(set(self.values.values())) == 1
            and not (self.violators or self.unreadable)
            and not (self.unreported or self.unmeasurable)
        )

    @property
    def flagged(self) -> bool:
        return bool(self.violators or self.declared_failing)


def _robust_outliers(values: dict[str, float]) -> tuple[str, ...]:
    if len(values) < 4:
        return ()
    median = statistics.median(values.values())
    mad = statistics.median(abs(v - median) for v in values.values())
    if mad == 0:
        return tuple(n for n, v in values.items() if v != median)
    return tuple(n for n, v in values.items() if abs(v - median) / mad > OUTLIER_MADS)


def distribution(report: Report, gate: Gate) -> Distribution:
    values: dict[str, float] = {}
    unreadable: dict[str, str] = {}
    unreported: list[str] = []
    unmeasurable: list[str] = []
    violators: list[str] = []
    declared: list[str] = []
    for result in report.node_results:
        if result.name != gate.test or not result.nodes:
            continue
        node = result.nodes[0]
        if any(v.metric == gate.metric for v in result.violations):
            violators.append(node)
        elif result.phase is Phase.FAILED and not result.violations:
            declared.append(node)  # M5: drawn failing, never as "far from the median"
        raw = result.metrics.get(gate.metric)
        if raw is None:
            (unmeasurable if gate.metric in result.unmeasurable else unreported).append(node)
            continue
        number = parse_go_float(raw)
        if number is None or not math.isfinite(number):
            unreadable[node] = raw
        else:
            values[node] = number
    threshold = parse_go_float(gate.value) if gate.known else None
    if threshold is not None and not math.isfinite(threshold):
        threshold = None
    outliers = tuple(
        n for n in _robust_outliers(values) if n not in violators and n not in declared
    )
    found = Distribution(
        gate=gate,
        values=values,
        violators=tuple(violators),
        outliers=outliers,
        unreadable=unreadable,
        unreported=tuple(unreported),
        unmeasurable=tuple(unmeasurable),
        declared_failing=tuple(declared),
        threshold=threshold,
        bands=tuple(
            b for b in report.cohort_bands if b.test == gate.test and b.metric == gate.metric
        ),
    )
    if found.uniform:
        return found
    return Distribution(**{**found.__dict__, "svg": _svg(found)})


def _title(gate: Gate) -> str:
    rule = f" (gate: {gate.comparison} {gate.value})" if gate.known else " (threshold not in input)"
    return f"{gate.test}: {gate.metric}{rule}"


def _svg(found: Distribution) -> str:
    if not found.values:
        return ""
    chart = pygal.XY(
        style=_STYLE,
        js=[],
        disable_xml_declaration=True,
        explicit_size=True,
        width=720,
        height=max(240, min(560, 110 + 22 * len(found.values))),
        print_labels=True,
        show_y_labels=False,
        show_y_guides=False,
        stroke=False,
        dots_size=5,
        legend_at_bottom=True,
        title=_title(found.gate),
        x_title=found.gate.metric,
        truncate_legend=-1,
    )
    ordered = sorted(found.values.items(), key=lambda item: (item[1], item[0]))
    span = [v for _, v in ordered] + ([found.threshold] if found.threshold is not None else [])
    span += [edge for b in found.bands for edge in (b.median - b.allowed, b.median + b.allowed)]
    pad = (max(span) - min(span)) * 0.15 or abs(max(span)) * 0.1 or 1.0
    chart.xrange = (min(span) - pad, max(span) + pad)  # room for the names beside the dots
    named = set(found.violators) | set(found.outliers) | set(found.declared_failing)
    rows = {node: rank + 1 for rank, (node, _) in enumerate(ordered)}
    if len(ordered) <= MAX_NAMED_ROWS:  # small fleets: every row names its node
        chart.y_labels = [{"label": node, "value": rows[node]} for node, _ in ordered]
        chart.show_y_labels = True
        # M5: the row's label names the node already; a second label beside the dot
        # would sit on the x axis's ticks for the lowest row.
        chart.print_labels = False
    series = (
        ("node", [(v, rows[n]) for n, v in ordered if n not in named], 5),
        (
            "VIOLATES this gate",
            [{"value": (v, rows[n]), "label": n} for n, v in ordered if n in found.violators],
            8,
        ),
        (
            "FAILED (declared by the runner)",
            [
                {"value": (v, rows[n]), "label": n}
                for n, v in ordered
                if n in found.declared_failing
            ],
            8,
        ),
        (
            "far from the fleet median",
            [{"value": (v, rows[n]), "label": n} for n, v in ordered if n in found.outliers],
            8,
        ),
    )
    for title, points, size in series:  # all three, always: the order fixes the hues
        chart.add(title, points, dots_size=size)
    if found.threshold is not None:
        chart.add(
            f"threshold: {found.gate.comparison} {found.gate.value}",
            [(found.threshold, 0.5), (found.threshold, len(ordered) + 0.5)],
            stroke=True,
            show_dots=False,
            stroke_style={"width": 3, "dasharray": "8, 4"},
        )
    for band in found.bands:  # C9: what the run judged each cohort against
        top = len(ordered) + 0.5
        chart.add(
            f"{band.label}: median {band.median:g}",
            [(band.median, 0.5), (band.median, top)],
            stroke=True,
            show_dots=False,
            stroke_style={"width": 2, "dasharray": "2, 3"},
        )
        chart.add(
            f"{band.label}: band median \u00b1 {band.allowed:g}",
            [(band.median - band.allowed, 0.5), (band.median - band.allowed, top), None,
             (band.median + band.allowed, top), (band.median + band.allowed, 0.5)],
            stroke=True,
            show_dots=False,
            allow_interruptions=True,
            stroke_style={"width": 2, "dasharray": "6, 3"},
        )  # fmt: skip
    tree = chart.render_tree()
    for parent in list(tree.iter()):
        for child in list(parent):
            if child.tag in (f"{_SVG}script", "script"):
                parent.remove(child)
    ET.register_namespace("", "http://www.w3.org/2000/svg")
    ET.register_namespace("xlink", "http://www.w3.org/1999/xlink")
    return ET.tostring(tree, encoding="unicode")


def distributions(report: Report) -> Sequence[Distribution]:
    """One per gate of a Node-scope test (a link's value belongs to no one node); the
    ones that name a failing node first, in gate order otherwise."""
    node_tests = {r.name for r in report.node_results}
    found = [distribution(report, gate) for gate in report.gates if gate.test in node_tests]
    return sorted(found, key=lambda d: not d.flagged)

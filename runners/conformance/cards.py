"""One card per kind: every suite the kind's contract claims, folded into one card.

A kind is checked by the suites of every scope it runs in: a Node kind by
:mod:`.node`; a Pair or Group kind of ``LINK_FAULT_MATRIX`` (``tcp-baseline``,
``ring-allreduce``) by :mod:`.links`; one of ``FABRIC_FAULT_MATRIX`` by :mod:`.fabric`.
``nccl`` is a Node kind in the catalog that also runs as a Pair and a Group, so its card
is its Node cases and its fabric cases together: a runner that claims nccl's contract
and only works on one node does not conform. Its fabric cases' problems name their
case ``fabric <label>``.

The Node cases run on ``command``; the Pair and Group cases on ``link_command`` (default
the same), since under a container runtime the sides must share the host's loopback
(``glimmer conformance`` runs them with ``--network host``) while a Node case needs no
network at all.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Final

from runners.catalog import RunnerSpec
from runners.conformance import fabric, links, node
from runners.conformance.clauses import Card, Finding, fold, run_all
from runners.fault_matrix import FABRIC_FAULT_MATRIX, LINK_FAULT_MATRIX

NODE: Final = "node"
LINK: Final = "link"
FABRIC: Final = "fabric"

#: A fabric case's problems in a card that also has Node cases: ``fabric <label>``.
FABRIC_CASE_PREFIX: Final = "fabric "


def suites_of(spec: RunnerSpec) -> tuple[str, ...]:
    """The suites that check a kind, in the order its card runs them (none: no suite
    knows the kind's cases, and it cannot be checked)."""
    suites = []
    if spec.scope == "Node":
        suites.append(NODE)
    elif spec.kind in LINK_FAULT_MATRIX:
        suites.append(LINK)
    if spec.kind in FABRIC_FAULT_MATRIX:
        suites.append(FABRIC)
    return tuple(suites)


def runs_links(spec: RunnerSpec) -> bool:
    """Whether any case of the kind's card starts Pair or Group sides that must meet."""
    return any(suite in (LINK, FABRIC) for suite in suites_of(spec))


def kind_card(
    spec: RunnerSpec,
    *,
    command: Sequence[str],
    link_command: Sequence[str] | None = None,
    jobs: int | None = None,
    notes: Sequence[str] = (),
) -> Card:
    """Every case of every suite of ``spec``'s kind, folded into one row per clause;
    cases run at once up to ``jobs`` (each link or fabric case has its own loopback
    block, so none meets another's sides)."""
    suites = suites_of(spec)
    if not suites:
        raise ValueError(f"{spec.kind}: no conformance suite knows its cases")
    sides_command = tuple(link_command or command)
    runs: list[Callable[[], tuple[list[Finding], set[str]]]] = []
    if NODE in suites:
        runs += [
            functools.partial(_node_case, spec, case, tuple(command))
            for case in node.cases_for(spec.kind)
        ]
    if LINK in suites:
        runs += links.case_runs(spec, command=sides_command)
    if FABRIC in suites:
        prefix = FABRIC_CASE_PREFIX if NODE in suites else ""
        runs += fabric.case_runs(spec, command=sides_command, case_prefix=prefix)
    results = run_all(runs, jobs=jobs)
    return fold(spec.kind, command if NODE in suites else sides_command, results, notes=notes)


def _node_case(
    spec: RunnerSpec, case: node.Case, command: tuple[str, ...]
) -> tuple[list[Finding], set[str]]:
    found, judged, _stdout = node.case_findings(spec, case, command=command)
    return found, judged

"""The messages of a link result: the Pair's two sides (F3) and a Group's dissent (F8).

A link verdict is about the link, never one endpoint, so the message says so first
and then names every side with its own verdict: the ranks worth walking to. Status
size stays bounded for any N and any line: each runner line is cut to 300 characters,
at most four ranks are named per verdict, and the rank summary is clamped to 4096
bytes plus a visible suffix. The ranks-differed notes come after the clamp (F8), each
bounded by its own limits (four keys, four ranks, short readings). A note reports a
spread, never a verdict: the gate on the kept value decides, so a healthy Group whose
ranks read 1 % apart is told in plain words ("ranks differed by 1.0 %"), not alarmed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from glimmer.contract.numbers import parse_go_float
from glimmer.contract.registry import Combination
from glimmer.contract.report import Outcome
from glimmer.verdict.group import Elected, outcome_of
from glimmer.verdict.termination import clamp_utf8

if TYPE_CHECKING:
    from glimmer.verdict.links import SideReport

#: F8: the rank summary (lead clause + verdict groups) is clamped to this, plus SUFFIX.
MAX_SUMMARY_BYTES: Final = 4096
SUMMARY_SUFFIX: Final = " …[summary truncated]"
#: F8: a rank's (or side's) own line is cut to this many characters.
MAX_LINE_CHARS: Final = 300
#: F8: how many ranks a verdict group names, keys the differed notes name, ranks per key.
MAX_NAMED: Final = 4
#: A label, node, key or reading inside a message is cut to this many characters.
MAX_FIELD_CHARS: Final = 120
DID_NOT_REPORT: Final = "did not report"


def clamp_chars(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def clamp_summary(text: str) -> str:
    """F8: at most ``MAX_SUMMARY_BYTES`` bytes (never inside a character) + the suffix."""
    if len(text.encode("utf-8")) <= MAX_SUMMARY_BYTES:
        return text
    return clamp_utf8(text, MAX_SUMMARY_BYTES) + SUMMARY_SUFFIX


def _field(text: str) -> str:
    return clamp_chars(text, MAX_FIELD_CHARS)


def verdict_word(side: SideReport) -> str:
    """The word a rank is grouped under: its outcome, or what became of it."""
    return outcome_of(side.report).value if side.report is not None else _field(side.absent)


def side_clause(side: SideReport, *, group: bool) -> str:
    """``server n0 Pass (exit 0): line`` (Pair) or ``rank 1 (n1) Fail (exit 1): line`` (Group)."""
    label, node = _field(side.label), _field(side.node)
    who = f"{label} ({node})" if group else f"{label} {node}"
    report = side.report
    if report is None:
        return f"{who} {verdict_word(side)}"
    clause = f"{who} {outcome_of(report).value} (exit {report.exit_code})"
    line = clamp_chars(report.message, MAX_LINE_CHARS)
    return f"{clause}: {line}" if line else clause


def pair_summary(
    *,
    outcome: Outcome,
    sides: tuple[SideReport, SideReport | None],
    decider: SideReport | None,
    why: str,
) -> str:
    """F3: the link clause, then each side's ``role node verdict (exit N): line``."""
    lead = f"link verdict {outcome.value}: about the LINK between the two nodes, not either alone"
    if decider is not None:
        lead += f" (decided by the {_field(decider.label)})"
    parts = [lead, *(side_clause(s, group=False) for s in sides if s is not None)]
    if why:
        parts.append(why)
    return clamp_summary("; ".join(parts))


def rank_summary(ranks: Sequence[SideReport], *, outcome: Outcome, why: str) -> str:
    """F8's rank summary: lead clause, then the ranks grouped by verdict word (sorted)."""
    n = len(ranks)
    lead = (
        f"group of {n} rank{'' if n == 1 else 's'}: the verdict ({outcome.value}) is about "
        "the COLLECTIVE, not any one node"
    )
    if why:
        lead += f" ({why})"
    groups: dict[str, list[SideReport]] = {}
    for side in ranks:
        groups.setdefault(verdict_word(side), []).append(side)
    described = [_describe_group(word, groups[word], n) for word in sorted(groups)]
    return clamp_summary(lead + (": " + "; ".join(described) if described else ""))


def _describe_group(word: str, members: list[SideReport], n: int) -> str:
    if len(members) == n and n > MAX_NAMED:
        return f"all {n} ranks {word}, e.g. {side_clause(members[0], group=True)}"
    if len(members) <= MAX_NAMED:
        return "; ".join(side_clause(m, group=True) for m in members)
    named = ", ".join(f"{_field(m.label)} ({_field(m.node)})" for m in members[:MAX_NAMED])
    return f"{len(members)} ranks {word}: {named}, and {len(members) - MAX_NAMED} more"


def disagreed_notes(ranks: Sequence[SideReport], contested: Sequence[Elected]) -> str:
    """F8: one bracketed note per key whose readings differed from the kept string."""
    notes = [_disagreed(ranks, e) for e in contested[:MAX_NAMED]]
    rest = len(contested) - MAX_NAMED
    if rest > 0:
        notes.append(f"[ranks differed on {rest} more key{'' if rest == 1 else 's'}]")
    return " ".join(notes)


def _disagreed(ranks: Sequence[SideReport], elected: Elected) -> str:
    if elected.value is None:
        rule = f"dropped as unmeasurable ({elected.dropped_because})"
    elif elected.combination is Combination.COLLECTIVE:
        first = elected.readings[0][0]
        rule = (
            f"kept {_field(elected.value)} from {_rank_name(ranks, first)} "
            "(Collective: the lowest reporting rank's value)"
        )
    else:
        rule = (
            f"kept {_field(elected.value)} ({elected.combination.value} of "
            f"{len(elected.readings)} readings, re-rendered)"
        )
    dissenters = elected.dissenters
    named = ", ".join(
        f"{_rank_name(ranks, rank)}={_field(reading)}" for rank, reading in dissenters[:MAX_NAMED]
    )
    if len(dissenters) > MAX_NAMED:
        named += f", and {len(dissenters) - MAX_NAMED} more"
    return f"[ranks differed{_spread(elected)} on {_field(elected.name)}: {rule}; {named}]"


def _spread(elected: Elected) -> str:
    """`` by X %``: the numeric readings' range over the largest magnitude; empty when
    fewer than two are finite numbers or all are zero (a spread of what, then?)."""
    numbers = [parse_go_float(reading) for _, reading in elected.readings]
    finite = [n for n in numbers if n is not None and math.isfinite(n)]
    largest = max((abs(n) for n in finite), default=0.0)
    if len(finite) < 2 or largest == 0.0:
        return ""
    return f" by {(max(finite) - min(finite)) / largest * 100:.1f} %"


def _rank_name(ranks: Sequence[SideReport], rank: int) -> str:
    side = ranks[rank]
    return f"{_field(side.label)} ({_field(side.node)})"

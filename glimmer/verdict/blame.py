"""Link blame: whose fault a failed Pair is, from two re-pairs (F10-F13).

A Pair result names both nodes (F3): a point-to-point measurement is a property of the
link, so a Failed Pair (A, B) says "this link is short" and nothing about which end.
With ``spec.linkBlame`` the operator re-pairs each side with a node whose own link
Passed in this run, (A, C) and (B, D), and attributes the failure from those two
settled results (F11):

=============  =============  ===============
(A, C)         (B, D)         blame
=============  =============  ===============
Passed         Passed         ``link`` (the cable, transceivers or switch ports between A and B)
Failed         Passed         ``node/A``
Passed         Failed         ``node/B``
Failed         Failed         ``undetermined`` (both ends, or something they share)
anything else                 ``undetermined``
=============  =============  ===============

Fail closed: a node is named only on two settled results, one Passed and one Failed.
An Error, Skipped, Cancelled or still running re-pair, one that never ran (no partner,
the budget or the run's deadline spent) is unjudged, so the answer is ``undetermined``
with the reason (F12). Only a Pair that settled Failed is attributed at all: an Error
was never measured, so there is nothing to attribute (F10).

The partner of a side is chosen by :func:`choose_partner` (F13): a node of another Pair
unit of the same test that settled Passed in this run, never either end of the failed
link, and, when a topology label is configured, only one with the same value as the
side (the same leaf or rail), so a re-pair does not cross a switch the original link
did not; a side without the label has no partner.

The re-pairs are diagnostic: they are kept beside the results (``status.linkBlame``),
never among them, so the node verdict (:func:`~glimmer.verdict.nodes.node_verdict`),
the run's phase, its counters and its certification never see them: a bad node failing
again with a healthy partner does not fail that partner.

A blame is only as strong as its evidence: :attr:`Attribution.provenance` is the weakest
over the failed link and both re-pairs (a blame reached on the simulated fabric proves
the rule, never a part).

Pure: standard library only, shared by every dispatcher.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from glimmer.verdict.phases import Phase, Provenance, weakest

#: The blame words (``node/<name>`` is :func:`node_blame`).
LINK: Final = "link"
UNDETERMINED: Final = "undetermined"
NODE_PREFIX: Final = "node/"

#: Why a blame is undetermined (the ``reason`` of F12), one word-set each.
NOT_FAILED: Final = "the link did not settle Failed: only a measured Fail is attributed"
NO_PARTNER: Final = "no partner"
BUDGET: Final = "the run's maxExtraPairs budget is spent"
DEADLINE: Final = "a re-pair would run past the run's deadline"
BOTH_FAILED: Final = (
    "both ends fail with a partner whose link passed: both nodes, or something they share "
    "(a switch), are suspect"
)


def node_blame(node: str) -> str:
    """The blame word that names ``node``."""
    return f"{NODE_PREFIX}{node}"


@dataclass(frozen=True, slots=True)
class Repair:
    """One re-pair of one side of a failed link: the side's node, its partner, and the
    re-pair's settled phase and provenance (None: it never ran or has not settled)."""

    node: str
    partner: str | None
    phase: Phase | None
    provenance: Provenance = Provenance.UNKNOWN
    #: Why it never ran ("" when it ran): no partner, the budget, the deadline.
    skipped: str = ""


@dataclass(frozen=True, slots=True)
class Attribution:
    """What the evidence says of a failed link."""

    blame: str
    reason: str
    #: The weakest over the failed link and both re-pairs (never stronger than them).
    provenance: Provenance

    @property
    def node(self) -> str | None:
        """The node blamed, or None (``link`` or ``undetermined``)."""
        return self.blame[len(NODE_PREFIX) :] if self.blame.startswith(NODE_PREFIX) else None


def _account(repair: Repair | None, *, side: str) -> str:
    if repair is None:
        return f"the re-pair of {side} was not run"
    if repair.skipped:
        return f"the re-pair of {side} was not run: {repair.skipped}"
    if repair.phase is None:
        return f"the re-pair of {side} with {repair.partner} has not settled"
    return f"{side}+{repair.partner} {repair.phase}"


def attribute(
    *,
    link: tuple[str, str],
    phase: Phase,
    repairs: tuple[Repair | None, Repair | None],
    link_provenance: Provenance = Provenance.UNKNOWN,
) -> Attribution:
    """The blame for the Pair ``link`` = (A, B), settled with ``phase``, from the
    re-pair of A (``repairs[0]``) and of B (``repairs[1]``); see the module docstring.

    A re-pair counts only when it names its side's node, a partner that is neither end
    of the link, and settled Passed or Failed; anything else is unjudged.
    """
    a, b = link
    repair_a, repair_b = repairs
    provenance = weakest(
        [link_provenance, *(r.provenance for r in repairs if r is not None and r.phase)]
    )
    if phase is not Phase.FAILED:
        return Attribution(UNDETERMINED, NOT_FAILED, provenance)
    accounts = f"{_account(repair_a, side=a)}; {_account(repair_b, side=b)}"
    judged = [_judged(r, node=n, link=link) for r, n in ((repair_a, a), (repair_b, b))]
    if judged[0] is None or judged[1] is None:
        return Attribution(UNDETERMINED, f"unjudged evidence: {accounts}", provenance)
    verdict_a, verdict_b = judged
    if verdict_a is Phase.PASSED and verdict_b is Phase.PASSED:
        return Attribution(LINK, f"each end passes with another partner: {accounts}", provenance)
    if verdict_a is Phase.FAILED and verdict_b is Phase.PASSED:
        return Attribution(
            node_blame(a), f"{a} fails with another partner too: {accounts}", provenance
        )
    if verdict_a is Phase.PASSED and verdict_b is Phase.FAILED:
        return Attribution(
            node_blame(b), f"{b} fails with another partner too: {accounts}", provenance
        )
    return Attribution(UNDETERMINED, f"{BOTH_FAILED}: {accounts}", provenance)


def _judged(repair: Repair | None, *, node: str, link: tuple[str, str]) -> Phase | None:
    """The re-pair's phase when it is evidence about ``node``, else None."""
    if repair is None or repair.skipped or repair.node != node:
        return None
    if repair.partner is None or repair.partner in link:
        return None
    if repair.phase in (Phase.PASSED, Phase.FAILED):
        return repair.phase
    return None


def healthy_partners(units: Iterable[tuple[Sequence[str], Phase | None]]) -> tuple[str, ...]:
    """Every node of a unit (of the failed link's test) that settled Passed, in the
    order given, each once."""
    found: dict[str, None] = {}
    for nodes, phase in units:
        if phase is Phase.PASSED:
            found.update(dict.fromkeys(nodes))
    return tuple(found)


def choose_partner(
    side: str,
    *,
    link: tuple[str, str],
    healthy: Sequence[str],
    topology: Mapping[str, str] | None = None,
    avoid: Collection[str] = (),
) -> str | None:
    """The partner for re-pairing ``side`` of ``link``: the first ``healthy`` node that
    is neither end of the link and, when ``topology`` (node -> label value) is given,
    carries the same value as ``side`` (F13); one not in ``avoid`` (the other side's
    partner) first, so the two re-pairs can run at once. None when there is none."""
    fits = [n for n in healthy if n not in link and _same_place(side, n, topology)]
    for node in fits:
        if node not in avoid:
            return node
    return fits[0] if fits else None


def _same_place(side: str, node: str, topology: Mapping[str, str] | None) -> bool:
    if topology is None:
        return True
    mine = topology.get(side)
    return bool(mine) and topology.get(node) == mine


# --- Group bisection (I44) ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Probe:
    """One diagnostic sub-group of a failed Group: its ranks (rank 0 first) and its
    settled phase (None: not settled, or never run)."""

    nodes: tuple[str, ...]
    phase: Phase | None
    provenance: Provenance = Provenance.UNKNOWN


#: Why a Group bisection is undetermined (beside the Pair reasons above).
TOO_FEW: Final = "fewer than four ranks: no half is a group, and no rank is known good"
HALVES_PASS: Final = (
    "each half passes alone: the collective fails only across the halves (a link or "
    "switch between them)"
)
NO_SINGLE: Final = "not exactly one suspect fails beside a known-good rank"


def bisect(
    ranks: Sequence[str], probes: Sequence[Probe], *, provenance: Provenance
) -> tuple[str, ...] | Attribution:
    """The next sub-group to run for the failed Group over ``ranks``, or the answer.

    Halve the suspects (every rank, at first) while each half is a group of two or
    more: the half that Fails while the other Passes holds the culprit (and the other
    gives a known-good rank); then pair each remaining suspect with a known-good rank:
    exactly one Failed pairing, every other Passed, names that rank (I44). Both halves
    Passing is ``link`` (the collective fails only across them); anything else, an
    unjudged or missing probe included, is ``undetermined``. Pure and deterministic: the
    probes run so far decide the next one, so a restarted manager asks for the same.
    ``provenance`` is the failed Group's own; the answer's is the weakest with the probes'.
    """
    known = {probe.nodes: probe for probe in probes}
    strength = weakest([provenance, *(p.provenance for p in probes if p.phase is not None)])
    suspects = tuple(ranks)
    good: str | None = None

    def account(groups: Sequence[tuple[str, ...]]) -> str:
        return "; ".join(f"{'+'.join(g)} {known[g].phase or 'unsettled'}" for g in groups)

    while len(suspects) >= 4:
        half = len(suspects) // 2
        left, right = suspects[:half], suspects[half:]
        for group in (left, right):
            if group not in known:
                return group
        phases = (known[left].phase, known[right].phase)
        if any(p not in (Phase.PASSED, Phase.FAILED) for p in phases):
            return Attribution(
                UNDETERMINED, f"unjudged evidence: {account((left, right))}", strength
            )
        if phases == (Phase.FAILED, Phase.PASSED):
            suspects, good = left, right[0]
        elif phases == (Phase.PASSED, Phase.FAILED):
            suspects, good = right, left[0]
        elif phases == (Phase.PASSED, Phase.PASSED):
            return Attribution(LINK, f"{HALVES_PASS}: {account((left, right))}", strength)
        else:
            return Attribution(UNDETERMINED, f"{BOTH_FAILED}: {account((left, right))}", strength)
    if good is None:
        return Attribution(UNDETERMINED, TOO_FEW, strength)
    pairings = [(suspect, good) for suspect in suspects]
    for group in pairings:
        if group not in known:
            return group
    paired = [known[g].phase for g in pairings]
    if any(p not in (Phase.PASSED, Phase.FAILED) for p in paired):
        return Attribution(UNDETERMINED, f"unjudged evidence: {account(pairings)}", strength)
    failed = [s for s, p in zip(suspects, paired, strict=True) if p is Phase.FAILED]
    if len(failed) == 1:
        return Attribution(
            node_blame(failed[0]),
            f"{failed[0]} drags the collective: {account(pairings)} (good rank {good})",
            strength,
        )
    return Attribution(UNDETERMINED, f"{NO_SINGLE}: {account(pairings)}", strength)

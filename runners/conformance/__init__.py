"""Conformance suite: does a runner command honour the runner contract under simulation?

Usable on any runner command (``python -m runners.x``, a container wrapper, another
language's binary): it only runs the command with an environment and reads exit code and
stdout through ``glimmer.contract.read_report`` — the same reader the controller uses.
What it checks (phase judgment with thresholds is the verdict layer's job):

- a healthy simulated profile exits 0 and prints every metric the runner registers;
- each simulated fault gives the exit code the fault matrix says;
- an injected exception (``<profile>:crash``) and a missing dependency exit 3;
- every exit 2 carries a declared ``_SKIP`` marker; exit 1/3 end with the fail/error
  marker; measurements carry ``provenance=sim`` (``silicon`` for host-only runners).

One suite a module, by how many processes a case runs and how it is judged:
:mod:`.node` (one process), :mod:`.links` (a Pair or Group on loopback, each side judged
on its own), :mod:`.fabric` (the whole Pair or Group judged as the verdict layer combines
it); :mod:`.execution` runs the commands for all three and holds the rules every run
keeps; :mod:`.clauses` names each rule as a clause with its fix (``glimmer
conformance`` prints one row per clause); :mod:`.cards` folds every suite a kind is
checked by into the kind's one card (:func:`kind_card`). Every name is importable from
here.
"""

from runners.conformance.cards import kind_card, suites_of
from runners.conformance.clauses import (
    CLAUSES,
    Card,
    Finding,
    Row,
)
from runners.conformance.execution import (
    DEFAULT_TIMEOUT_S,
    Execution,
    contract_problems,
    execute,
    execute_together,
)
from runners.conformance.fabric import (
    FabricCase,
    FabricSide,
    check_fabric,
    combined_phase,
    fabric_cases_for,
)
from runners.conformance.links import (
    LinkCase,
    Side,
    check_link,
    link_cases_for,
    loopback_addresses,
    pair_env,
)
from runners.conformance.node import Case, card_for, case_findings, cases_for, check

__all__ = [
    "CLAUSES",
    "DEFAULT_TIMEOUT_S",
    "Card",
    "Case",
    "Execution",
    "FabricCase",
    "FabricSide",
    "Finding",
    "LinkCase",
    "Row",
    "Side",
    "card_for",
    "case_findings",
    "cases_for",
    "check",
    "check_fabric",
    "check_link",
    "combined_phase",
    "contract_problems",
    "execute",
    "execute_together",
    "fabric_cases_for",
    "kind_card",
    "link_cases_for",
    "loopback_addresses",
    "pair_env",
    "suites_of",
]

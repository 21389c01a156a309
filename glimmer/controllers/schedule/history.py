"""A schedule's owned runs: the status they imply (J1) and the ones to delete (J2). Pure.

Failures get the larger budget (10 against 3 Passed by default) because a failed run is
the diagnostic evidence someone will want; a Passed one is mostly a timestamp.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from glimmer.api import API_VERSION, GROUP
from glimmer.controllers.kit.view import ObjectView, RunView
from glimmer.verdict.phases import Phase

JSON = dict[str, Any]

SCHEDULE_LABEL: Final = f"{GROUP}/schedule"
SCHEDULED_AT: Final = f"{GROUP}/scheduled-at"
#: J2: what counts against failedJobsHistoryLimit (the diagnostic evidence).
FAILED_KIND: Final = frozenset({Phase.FAILED, Phase.ERROR, Phase.CANCELLED})


def owned_by(run: Mapping[str, Any], schedule_uid: str) -> bool:
    """Controlled by this very schedule (a same-named predecessor's runs are not ours)."""
    return any(
        ref.get("kind") == "BurnInSchedule"
        and ref.get("controller")
        and ref.get("uid") == schedule_uid
        for ref in ObjectView(run).owner_references
    )


def phase_of(run: Mapping[str, Any]) -> str:
    return RunView(run).phase_text


def is_active(run: Mapping[str, Any]) -> bool:
    return not Phase.is_terminal_text(phase_of(run))


def _recency(run: Mapping[str, Any]) -> tuple[str, str]:
    """Newest first by scheduled-at, else creation; the tie goes to the larger name."""
    view = ObjectView(run)
    stamp = view.annotations.get(SCHEDULED_AT) or view.created_at or ""
    return (str(stamp), view.name)


def newest_first(runs: Iterable[Mapping[str, Any]]) -> list[JSON]:
    """J1's order: newest by scheduled-at, else creation; the tie goes to the larger name."""
    return sorted((dict(r) for r in runs), key=_recency, reverse=True)


def _finished(run: Mapping[str, Any]) -> str:
    return str(RunView(run).finished_at or "")


@dataclass(frozen=True, slots=True)
class RunsView:
    active: list[JSON]
    last_run_name: str | None
    last_run_phase: str | None
    last_successful_time: str | None
    to_delete: list[JSON]


def view_runs(
    runs: Iterable[Mapping[str, Any]], *, successful_limit: int, failed_limit: int
) -> RunsView:
    ordered = newest_first(runs)
    newest = ordered[0] if ordered else None
    passed = [r for r in ordered if Phase.parse_or_none(phase_of(r)) is Phase.PASSED]
    failed = [r for r in ordered if Phase.parse_or_none(phase_of(r)) in FAILED_KIND]
    successes = sorted((_finished(r) for r in passed if _finished(r)), reverse=True)
    return RunsView(
        active=[r for r in ordered if is_active(r)],
        last_run_name=ObjectView(newest).name if newest else None,
        last_run_phase=(phase_of(newest) or "Pending") if newest else None,
        last_successful_time=successes[0] if successes else None,
        to_delete=passed[max(0, successful_limit) :] + failed[max(0, failed_limit) :],
    )


def reference(run: Mapping[str, Any]) -> JSON:
    view = ObjectView(run)
    return {
        "apiVersion": API_VERSION,
        "kind": "BurnInRun",
        "namespace": view.namespace or None,
        "name": view.name or None,
        "uid": view.uid or None,
    }

"""metav1.Condition semantics of glimmer.api.conditions (meta.SetStatusCondition)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from glimmer.api import (
    KubeCondition,
    clamp_message,
    find_condition,
    is_condition_true,
    set_condition,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
T1 = T0 + timedelta(minutes=5)


def _admitted(status: str = "True") -> list[KubeCondition]:
    return set_condition(
        None, type_="Admitted", status=status, reason="TargetsAvailable", message="ok", now=T0
    )


def test_a_new_condition_transitions_now() -> None:
    (condition,) = _admitted()
    assert condition.last_transition_time == T0
    assert (condition.type, condition.status, condition.reason) == (
        "Admitted",
        "True",
        "TargetsAvailable",
    )


def test_transition_time_stays_when_only_reason_message_or_generation_change() -> None:
    updated = set_condition(
        _admitted(),
        type_="Admitted",
        status="True",
        reason="AdmittedByForce",
        message="forced",
        now=T1,
        observed_generation=7,
    )
    (condition,) = updated
    assert condition.last_transition_time == T0
    assert (condition.reason, condition.message, condition.observed_generation) == (
        "AdmittedByForce",
        "forced",
        7,
    )


def test_transition_time_moves_when_status_changes() -> None:
    updated = set_condition(
        _admitted(), type_="Admitted", status="False", reason="TargetsBusy", message="busy", now=T1
    )
    assert updated[0].last_transition_time == T1
    assert updated[0].status == "False"


def test_other_conditions_keep_their_place_and_values() -> None:
    both = set_condition(
        _admitted(), type_="ThresholdsSound", status="True", reason="Reviewed", message="", now=T1
    )
    again = set_condition(
        both, type_="Admitted", status="False", reason="TargetsBusy", message="", now=T1
    )
    assert [c.type for c in again] == ["Admitted", "ThresholdsSound"]
    assert again[1] == both[1]


def test_the_input_list_is_not_modified() -> None:
    original = _admitted()
    set_condition(
        original, type_="Admitted", status="False", reason="TargetsBusy", message="", now=T1
    )
    assert original[0].status == "True"


def test_status_outside_true_false_unknown_is_refused() -> None:
    with pytest.raises(ValueError, match="True, False or Unknown"):
        set_condition(None, type_="Admitted", status="Yes", reason="R", message="", now=T0)


def test_messages_are_clamped_to_1024_bytes_without_splitting_a_character() -> None:
    message = "é" * 600  # 1200 bytes
    (condition,) = set_condition(
        None,
        type_="PlanExpanded",
        status="True",
        reason="VariantsExpanded",
        message=message,
        now=T0,
    )
    assert len(condition.message.encode()) <= 1024
    assert condition.message == "é" * 512


def test_clamp_keeps_short_messages_verbatim() -> None:
    assert clamp_message("short") == "short"


def test_is_condition_true_reads_absent_and_unknown_as_not_true() -> None:
    assert is_condition_true(_admitted(), "Admitted")
    assert not is_condition_true(_admitted("Unknown"), "Admitted")
    assert not is_condition_true(_admitted(), "Drifted")
    assert not is_condition_true(None, "Admitted")
    assert find_condition(_admitted(), "Drifted") is None

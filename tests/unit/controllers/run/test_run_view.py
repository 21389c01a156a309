"""RunView's reads (I7): each field's default is the glimmer.api model's, and a value it
cannot read reads as that default. That no controller walks a run (or any object) outside
the views is tests/unit/controllers/kit/test_kit_view.py's scan."""

from __future__ import annotations

import attrs

from glimmer.api import BurnInRunSpec, CancelPolicy, TargetSelector
from glimmer.api.fields import spec_of
from glimmer.controllers.kit.view import RunView
from glimmer.verdict import Phase


def test_I7_an_empty_spec_reads_as_the_api_model_defaults() -> None:
    model = BurnInRunSpec(profile_ref="p", target=TargetSelector())
    empty = RunView({"metadata": {}, "spec": {}})
    expected = {
        "maxConcurrentNodes": empty.max_concurrent_nodes,
        "retryOnErrorLimit": empty.retry_on_error_limit,
        "suspend": empty.suspend,
        "baseline": empty.baseline,
        "force": empty.force,
        "cancel": empty.cancel,
        "cancelPolicy": empty.cancel_policy,
    }
    for attribute in attrs.fields(BurnInRunSpec):
        wire = spec_of(attribute).json
        if wire in expected:
            assert expected[wire] == getattr(model, attribute.name), wire
    assert empty.cancel_policy == CancelPolicy.GRACEFUL
    assert empty.phase is Phase.PENDING  # the status default
    assert empty.deadline_seconds == 0  # unset: no deadline


def test_I7_unreadable_values_read_as_the_default_never_crash() -> None:
    odd = RunView(
        {
            "metadata": {"annotations": None},
            "spec": {"maxConcurrentNodes": "many", "retryOnErrorLimit": -3, "target": []},
            "status": {"phase": "Bogus", "cordonedNodes": "n0", "results": [1, {"name": "t"}]},
        }
    )
    assert odd.max_concurrent_nodes == 1
    assert odd.retry_on_error_limit == 0
    assert odd.node_names == []
    assert odd.phase is None and not odd.terminal
    assert odd.cordoned_nodes == []
    assert odd.results == [{"name": "t"}]


def test_I7_the_status_a_write_edits_is_the_objects_own_dict() -> None:
    obj: dict[str, object] = {"metadata": {}, "spec": {}, "status": {"extra": 1}}
    RunView(obj).status["phase"] = "Running"
    assert obj["status"] == {"extra": 1, "phase": "Running"}  # unknown fields kept

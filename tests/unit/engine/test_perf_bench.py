"""bench/run's measurements count what they claim (a miscounted bench misleads the lead).

The bench is a script directory, not a package: its modules are loaded from their
files, as `python bench/run/run.py` loads them.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[3] / "bench" / "run"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # `trial` imports `measure` by this name, as the script does
    spec.loader.exec_module(module)
    return module


measure = _load("measure")
trial = _load("trial")

USER = "system:serviceaccount:glimmer-system:operator"


def _event(
    *,
    user: str = USER,
    at: str = "2026-12-01T12:00:01.500000Z",
    verb: str = "get",
    resource: str = "nodes",
    subresource: str = "",
    code: int = 200,
) -> str:
    ref: dict[str, Any] = {"resource": resource}
    if subresource:
        ref["subresource"] = subresource
    return json.dumps({
        "stage": "ResponseComplete", "user": {"username": user}, "verb": verb,
        "objectRef": ref, "responseStatus": {"code": code}, "requestReceivedTimestamp": at,
    })  # fmt: skip


def test_the_audit_count_is_the_operators_own_requests_in_the_window(tmp_path: Path) -> None:
    start = measure.parse_time("2026-12-01T12:00:00Z")
    lines = [
        _event(),
        _event(verb="update", resource="burninruns", subresource="status", code=409),
        _event(verb="patch", resource="nodes", code=409),
        _event(verb="create", resource="events", code=403),
        _event(user="system:admin"),  # someone else's request
        _event(at="2026-12-01T11:59:58Z"),  # before the run
        _event(at="2026-12-01T12:00:20Z"),  # after it
        '{"cut by a stop',
    ]
    path = tmp_path / "audit.log"
    path.write_text("\n".join(lines) + "\n")
    got = measure.read_audit(path, user=USER, start=start, end=start + 10)
    assert got.requests == 4
    assert got.status_conflicts == 1
    assert dict(got.conflicts) == {"burninruns/status": 1, "nodes": 1}
    assert dict(got.errors) == {"403": 1}
    assert got.by_verb["get nodes"] == 1 and got.peak_per_second == 4


def test_a_cordon_hold_runs_from_cordon_to_uncordon_and_open_ones_to_the_end() -> None:
    watch = measure.CordonWatch(["a", "b"])
    watch.ingest({"metadata": {"name": "a"}, "spec": {"unschedulable": True}})
    watch.ingest({"metadata": {"name": "b"}, "spec": {"unschedulable": True}})
    watch.ingest({"metadata": {"name": "other"}, "spec": {"unschedulable": True}})
    watch.ingest({"metadata": {"name": "a"}, "spec": {}})
    assert len(watch.holds) == 1 and watch.still_cordoned() == 1 and watch.cordons == 2
    assert len(watch.holds_until(float("inf"))) == 2


def test_a_result_counts_as_settled_only_once_and_only_when_terminal() -> None:
    run = measure.RunWatch(namespace="bench", name="fleet")
    result = {"name": "t", "nodes": ["a"], "phase": "Running", "attempts": [{"podName": "p"}]}
    run.ingest({"metadata": {"finalizers": ["f"]}, "status": {"results": [result]}})
    assert run.settled_at == {}
    run.ingest({"metadata": {"finalizers": ["f"]}, "status": {"results": [
        {**result, "phase": "Passed"}], "phase": "Passed"}})  # fmt: skip
    first = run.settled_at[("t", "a")]
    run.ingest({"metadata": {}, "status": {"results": [{**result, "phase": "Passed"}],
                                           "phase": "Passed"}})  # fmt: skip
    assert run.settled_at[("t", "a")] == first and run.pod_of[("t", "a")] == "p"
    assert run.verdict_at is not None and run.done_at is not None


def test_a_scenario_gets_the_fleet_and_cap_unless_it_names_its_own(tmp_path: Path) -> None:
    path = tmp_path / "pair.yaml"
    path.write_text(
        "kind: BurnInTest\nmetadata: {name: pair}\nspec: {kind: custom, scope: Pair}\n---\n"
        "kind: BurnInRun\nmetadata: {name: fleet}\nspec: {profileRef: p}\n"
    )
    documents = trial.load_scenario(path, ["n1", "n2"], cap=100)
    run = documents[1]
    assert run["spec"]["target"] == {"nodeNames": ["n1", "n2"]}
    assert run["spec"]["maxConcurrentNodes"] == 100
    path.write_text(
        "kind: BurnInRun\nmetadata: {name: a}\n---\nkind: BurnInRun\nmetadata: {name: b}\n"
    )
    with pytest.raises(SystemExit):
        trial.load_scenario(path, ["n1"], cap=1)
    path.write_text(
        "kind: Secret\nmetadata: {name: s}\n---\nkind: BurnInRun\nmetadata: {name: a}\n"
    )
    with pytest.raises(SystemExit):
        trial.load_scenario(path, ["n1"], cap=1)

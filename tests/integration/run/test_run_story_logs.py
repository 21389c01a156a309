"""E27: at info, the manager's log tells the story of a run, one JSON line per step.

A fleet engineer reading ``kubectl logs`` of the manager (or a log pipeline) follows a
run by its ``run`` field and sees, per node, when it was cordoned, when its pod was
created, how its test settled and by which gate, when the node was handed back, and
the run's verdict; nothing else at info is needed to answer "what happened to node X".
"""

from __future__ import annotations

import io
import json
import logging
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import structlog

from glimmer.engine.logconfig import configure_logging
from tests.integration.run.conftest import (
    Operator,
    apply_profile,
    create_run,
    custom,
    terminal_run,
)

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(300)]


@pytest.fixture
def json_log() -> Iterator[io.StringIO]:
    """The manager's own log configuration (JSON, info), into a buffer; restored after."""
    buffer = io.StringIO()
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    configure_logging(level="info", stream=buffer)
    try:
        yield buffer
    finally:
        structlog.reset_defaults()
        root.handlers[:] = handlers
        root.setLevel(level)


def story(buffer: io.StringIO, run: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in buffer.getvalue().splitlines() if line.strip()]
    return [line for line in lines if line.get("run") == run]


async def test_E27_the_info_log_tells_a_runs_story_with_run_test_and_node_bound(
    operator: Operator, kube: Any, namespace: str, sim_nodes: Any, json_log: io.StringIO
) -> None:
    nodes = sim_nodes(count=2).names
    # The first pod to start measures a shortfall (exit 0, Fail by its gate), the other passes.
    marker = f"/tmp/glimmer-story-{uuid.uuid4().hex}"
    score = f"if mkdir {marker} 2>/dev/null; then echo score=1; else echo score=9; fi"
    gate = [{"metric": "score", "comparison": "GreaterThanOrEqual", "value": "5"}]
    await apply_profile(kube, namespace, {"t": custom(score, thresholds=gate)})
    await create_run(kube, namespace, "r", nodes)
    run = await terminal_run(kube, namespace, "r")
    assert run["status"]["phase"] == "Failed", run["status"]
    phases = {r["nodes"][0]: r["phase"] for r in run["status"]["results"]}
    bad = next(n for n in nodes if phases[n] == "Failed")
    good = next(n for n in nodes if n != bad)

    lines = story(json_log, "r")
    assert lines, json_log.getvalue()[-2000:]
    events = [line["event"] for line in lines]
    assert events.count("run admitted") == 1, events
    for node in (good, bad):
        mine = [line for line in lines if line.get("node") == node]
        steps = [line["event"] for line in mine]
        for step in ("node cordoned", "pod created", "test settled", "node released"):
            assert steps.count(step) == 1, (node, steps)
        order = [steps.index(s) for s in ("node cordoned", "pod created", "test settled")]
        assert order == sorted(order), (node, steps)
        assert all(line.get("test") == "t" for line in mine if line["event"] != "node released")
        assert all(line.get("namespace") == namespace for line in mine)
    settled = {line["node"]: line for line in lines if line["event"] == "test settled"}
    assert settled[good]["phase"] == "Passed" and "gate" not in settled[good]
    assert settled[bad]["phase"] == "Failed" and settled[bad]["gate"] == "score", settled[bad]
    [verdict] = [line for line in lines if line["event"] == "run finished"]
    assert verdict["phase"] == "Failed" and verdict["failed"] == 1 and verdict["passed"] == 1
    assert events.index("run finished") > max(
        i for i, e in enumerate(events) if e == "test settled"
    )

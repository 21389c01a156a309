"""One vocabulary (I5): a name both dispatchers and the runners must agree on is
defined once, in ``glimmer.contract`` or ``glimmer.api``, and imported everywhere."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Final

import glimmer.sim.config
import runners.sdk.platform
from glimmer.api import API_VERSION
from glimmer.contract import SIM_GPU_ENV
from glimmer.local.dispatcher import LocalOptions
from glimmer.local.launch import _env
from glimmer.local.results import run_document
from glimmer.plan import PinnedPlan, build_plan

ROOT: Final = Path(__file__).resolve().parents[2]
#: Defined in another change's files, not yet importing the contract (remove each entry
#: when it does; the test then holds the whole tree to one definition).
PENDING: Final[frozenset[str]] = frozenset()


def _string_constants(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.add(node.value)
    return found


def test_17_2_the_sim_gpu_env_name_is_spelled_once_in_the_tree() -> None:
    """Only ``glimmer/contract/environment.py`` holds the string: a second spelling could
    drift, and a runner reading another name than the dispatcher sets would take the
    simulator for silicon. Tests may spell the wire value on purpose, to pin it."""
    spelled = {
        str(path.relative_to(ROOT))
        for top in ("glimmer", "runners")
        for path in (ROOT / top).rglob("*.py")
        if "tests" not in path.relative_to(ROOT).parts and SIM_GPU_ENV in _string_constants(path)
    }
    assert spelled - PENDING == {"glimmer/contract/environment.py"}


def test_17_2_glimmer_run_sets_the_name_the_runners_and_the_simulator_read() -> None:
    plan = build_plan(
        profile={"tests": [{"testRef": "t"}]},
        tests={"t": {"kind": "custom", "runner": {"command": ["true"]}}},
        targets=["host"],
        max_concurrent_nodes=1,
    )
    assert isinstance(plan, PinnedPlan)
    env = _env(plan.tests[0], attempt=1, options=LocalOptions(node="host", sim="h200x2"))
    assert runners.sdk.platform._sim_spec_text(env) == "h200x2"
    assert runners.sdk.platform.SIM_ENV is SIM_GPU_ENV
    assert glimmer.sim.config.SIM_GPU_ENV is SIM_GPU_ENV


def test_17_2_run_json_names_the_api_version_of_the_api() -> None:
    document = run_document([], node="host", profile="p", sim=None, started_at=0.0, finished_at=0.0)
    assert document["apiVersion"] == API_VERSION

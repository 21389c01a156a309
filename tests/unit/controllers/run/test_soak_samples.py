"""The soak sample (manifests/samples/soak) is a soak that plans and lints clean."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from glimmer.plan import execution_window_seconds, segments_required
from glimmer.plan.gates import threshold_from_wire
from glimmer.verdict import lint_thresholds

SAMPLES = Path(__file__).resolve().parents[4] / "manifests" / "samples" / "soak"


def documents() -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for path in sorted(SAMPLES.glob("soak-*.yaml")):
        found.extend(d for d in yaml.safe_load_all(path.read_text()) if d)
    return found


def test_G1_C5_the_soak_sample_is_a_week_of_hour_segments_with_sound_gates() -> None:
    [test] = [d for d in documents() if d["kind"] == "BurnInTest"]
    spec = test["spec"]
    assert segments_required(spec) == 168
    assert execution_window_seconds(spec) == 3600
    gates = [threshold_from_wire(t) for t in spec["thresholds"]]
    assert lint_thresholds(spec["kind"], gates) == []
    kustomization = yaml.safe_load((SAMPLES / "kustomization.yaml").read_text())
    assert sorted(kustomization["resources"]) == sorted(p.name for p in SAMPLES.glob("soak-*"))

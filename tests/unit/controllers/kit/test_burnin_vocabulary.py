"""I5: one definition of each burn-in name, and none of them in the engine."""

from __future__ import annotations

from pathlib import Path

import glimmer.engine
from glimmer.api import API_VERSION, GROUP, KINDS_BY_NAME
from glimmer.controllers.kit import names as kit_names
from glimmer.controllers.kit.cordon import owner_of
from glimmer.controllers.kit.ref import RunRef
from glimmer.controllers.run.pods import PodRequest, build_pod
from glimmer.plan import PlannedTest
from glimmer.sinks.prometheus import PHASES as RUN_PHASES
from glimmer.verdict import Phase

ENGINE = Path(glimmer.engine.__file__).parent


def test_I5_the_engine_source_names_no_burn_in_label_annotation_or_metric() -> None:
    for path in sorted(ENGINE.glob("*.py")):
        text = path.read_text()
        for word in ("burnin.glimmer.ai", "glimmer_run_", "cordon-owner", "BurnInRun"):
            assert word not in text, f"{path.name} names {word!r}"


def test_I5_the_engine_exports_nothing_of_burn_in() -> None:
    names = {n.lower() for n in glimmer.engine.__all__}
    assert not {n for n in names if "run_label" in n or "cordon" in n or n == "pods_by_run"}


def test_I5_run_phases_are_the_verdict_phases() -> None:
    assert tuple(str(p) for p in Phase) == RUN_PHASES


def test_I5_run_resources_come_from_the_api_kind_table() -> None:
    for resource in (kit_names.RUNS, kit_names.PROFILES, kit_names.TESTS, kit_names.FINGERPRINTS):
        info = KINDS_BY_NAME[resource.kind]
        assert (resource.group, resource.plural) == (GROUP, info.plural)
        assert resource.api_version == API_VERSION
    assert f"{GROUP}/run" == kit_names.RUN_LABEL


def test_I5_a_cordon_stamp_and_a_pod_owner_are_one_run_ref() -> None:
    run = {"metadata": {"namespace": "ns", "name": "r", "uid": "u-1"}}
    ref = RunRef.of(run)
    node = {"metadata": {"name": "n0", "annotations": {kit_names.CORDON_OWNER: ref.render()}}}
    assert owner_of(node) == ref
    pod = build_pod(
        run=ref,
        request=PodRequest(
            test_index=0,
            test=PlannedTest(name="t", required=True, spec={"kind": "custom"}),
            node="n0",
            attempt=1,
            image="example.com/x:1",
        ),
    )
    owner = pod["metadata"]["ownerReferences"][0]
    assert (owner["apiVersion"], owner["name"], owner["uid"]) == (API_VERSION, ref.name, ref.uid)

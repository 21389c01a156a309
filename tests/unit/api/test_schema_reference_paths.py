"""Every field the reference's CRDs define is a field ours define, at the same path.

A manifest written for the Go implementation must apply here unchanged, and the
apiserver prunes a field its CRD lacks *silently*: before ``fileKeyRef`` was modelled,
``env[].valueFrom.fileKeyRef`` applied cleanly and vanished. So each property path of
each reference CRD (``spec.tests[].runner.env[].valueFrom.fileKeyRef.path``) must be
one of ours. The other way, Glimmer's additive fields are listed below by name, so a
new difference in either direction is a visible change to this file, not a quiet drift.

The reference paths come from ``reference_schema_paths.txt`` (written by
``hack/reference-schema-paths`` from the reference CRDs), so this test needs no
reference checkout; where one is next to the repository, the fixture is checked
against it too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from glimmer.api.crd import crd_manifest
from glimmer.api.kinds import KINDS
from tests.unit.api.schema_paths import crd_paths, directory_paths, read_fixture

REFERENCE_CRDS = Path(__file__).resolve().parents[3].parent / "shared" / "perf" / "crd"
REGENERATE = "run: hack/reference-schema-paths ../shared/perf/crd"

#: Glimmer's own fields beyond the reference's schema: additive, since a reference
#: manifest never sets them and their absence means the reference's behaviour.
#: Cohort-relative gates (C7-C10, docs/thresholds.md): one threshold's relativeTo.
_RELATIVE_TO: frozenset[str] = frozenset(
    {
        "relativeTo",
        "relativeTo.cohort",
        "relativeTo.maxDeviation",
        "relativeTo.maxDeviation.floorPercent",
        "relativeTo.maxDeviation.percent",
        "relativeTo.maxDeviation.robustSigma",
        "relativeTo.minCohortSize",
    }
)


def _relative_to_at(*lists: str) -> frozenset[str]:
    return frozenset(f"{where}.{path}" for where in lists for path in _RELATIVE_TO)


KNOWN_ADDITIVE: dict[str, frozenset[str]] = {
    "BurnInProfile": frozenset(
        {
            # The last `glimmer coverage --write-status` (N16, docs/coverage.md).
            "status.coverage",
            "status.coverage.caught",
            "status.coverage.computedAt",
            "status.coverage.glimmerVersion",
            "status.coverage.missed",
            "status.coverage.modelled",
            "status.coverage.profileGeneration",
            "status.coverage.sims",
            "status.coverage.state",
            "status.coverage.summary",
            "status.coverage.unjudged",
        }
    )
    | _relative_to_at("spec.tests[].inline.thresholds[]", "spec.tests[].variants[].thresholds[]"),
    "BurnInRun": frozenset(
        {
            # Provenance and certification (docs/api.md).
            "status.certifiesSilicon",
            "status.provenance",
            "status.results[].provenance",
            "status.results[].suspect",
            "status.results[].attempts[].deciding",
            "status.results[].attempts[].podUID",
            "status.results[].attempts[].provenance",
            # Runs with thousands of results (docs/status-shards.md).
            "status.results[].evidence",
            "status.fingerprintShards",
            "status.packedResults",
            "status.packedResults[].evidence",
            "status.packedResults[].indexes",
            "status.packedResults[].kind",
            "status.packedResults[].name",
            "status.packedResults[].nodes",
            "status.packedResults[].phase",
            "status.packedResults[].provenance",
            "status.packedResults[].suspect",
            "status.packedResults[].variantAxes",
            # Cohort-relative gates, the run-level judgement (docs/thresholds.md).
            "status.cohortVerdicts",
            *(
                f"status.cohortVerdicts[].{key}"
                for key in (
                    "allowedDeviation",
                    "comparison",
                    "evaluated",
                    "excluded",
                    "fingerprint",
                    "judgedAt",
                    "mad",
                    "median",
                    "members",
                    "metric",
                    "outliers",
                    "outliersNotNamed",
                    "reason",
                    "size",
                    "test",
                    "thresholdIndex",
                )
            ),
        }
    ),
    "BurnInSchedule": frozenset(
        {
            "spec.maxVerdictAgeSeconds",
            "spec.targetVerdicts",
            "status.nextScheduleTime",
            # Qualify on join (J6-J9, docs/qualify.md).
            "spec.trigger",
            "spec.trigger.nodeJoined",
            "spec.trigger.nodeJoined.batchWindowSeconds",
            "spec.trigger.nodeJoined.retaintOnDrift",
            "spec.trigger.nodeJoined.selector",
            "spec.trigger.nodeJoined.taint",
            "spec.trigger.nodeJoined.taint.effect",
            "spec.trigger.nodeJoined.taint.key",
            "spec.trigger.nodeJoined.taint.value",
            "status.qualification",
            "status.qualification.batch",
            "status.qualification.nodes",
            "status.qualification.outcomes",
            "status.qualification.outcomes[].message",
            "status.qualification.outcomes[].node",
            "status.qualification.outcomes[].outcome",
            "status.qualification.outcomes[].reason",
            "status.qualification.phase",
            "status.qualification.runName",
            "status.qualification.windowOpenedAt",
        }
    ),
    "BurnInSink": frozenset(
        {
            "spec.webhook.caSecretRef",
            "spec.webhook.caSecretRef.key",
            "spec.webhook.caSecretRef.name",
            "spec.webhook.caSecretRef.optional",
            "spec.webhook.signingSecretRef",
            "spec.webhook.signingSecretRef.key",
            "spec.webhook.signingSecretRef.name",
            "spec.webhook.signingSecretRef.optional",
        }
    ),
    "BurnInTest": frozenset() | _relative_to_at("spec.thresholds[]"),
    "NodeFingerprint": frozenset(
        {
            "spec.maxVerdictAgeSeconds",
            "status.hardwareIdentity",
            "status.hardwareIdentity.gpuUuids",
            "status.hardwareIdentity.identity",
            "status.hardwareIdentity.observedAt",
            "status.hardwareIdentity.runName",
            "status.hardwareIdentity.runNamespace",
            "status.verdict",
            "status.verdict.digest",
            "status.verdict.finishedAt",
            "status.verdict.hardwareIdentity",
            "status.verdict.phase",
            "status.verdict.runName",
            "status.verdict.runNamespace",
            "status.verdict.runUID",
            "status.verdict.startedAt",
        }
    ),
}

REFERENCE = read_fixture()
OURS = dict(crd_paths(crd_manifest(info)) for info in KINDS)

#: Link blame (F10-F13, docs/link-blame.md): the spec block, the status list, and each
#: re-pair's own result, which has exactly the shape of a ``status.results[]`` entry.
_RESULT = "status.results[]"
_REPAIR_RESULT = "status.linkBlame[].repairs[].result"
KNOWN_ADDITIVE["BurnInRun"] = KNOWN_ADDITIVE["BurnInRun"] | {
    "spec.linkBlame",
    "spec.linkBlame.maxExtraPairs",
    "spec.linkBlame.topologyLabel",
    "status.linkBlame",
    "status.linkBlame[].blame",
    "status.linkBlame[].nodes",
    "status.linkBlame[].provenance",
    "status.linkBlame[].reason",
    "status.linkBlame[].repairs",
    "status.linkBlame[].repairs[].node",
    "status.linkBlame[].repairs[].nodes",
    "status.linkBlame[].repairs[].partner",
    "status.linkBlame[].repairs[].skipped",
    "status.linkBlame[].test",
    _REPAIR_RESULT,
    *(
        _REPAIR_RESULT + path[len(_RESULT) :]
        for path in OURS["BurnInRun"]
        if path.startswith(_RESULT + ".")
    ),
}


def test_the_reference_and_glimmer_define_the_same_kinds() -> None:
    assert sorted(REFERENCE) == sorted(OURS) == sorted(KNOWN_ADDITIVE)


@pytest.mark.parametrize("kind", sorted(REFERENCE))
def test_every_reference_field_path_is_one_of_ours(kind: str) -> None:
    missing = ", ".join(sorted(REFERENCE[kind] - OURS[kind]))
    assert not missing, f"{kind} lacks reference fields (the apiserver would prune them): {missing}"


@pytest.mark.parametrize("kind", sorted(REFERENCE))
def test_our_fields_beyond_the_reference_are_exactly_the_known_additive_set(kind: str) -> None:
    extra = OURS[kind] - REFERENCE[kind]
    unlisted = ", ".join(sorted(extra - KNOWN_ADDITIVE[kind]))
    assert not unlisted, f"{kind}: fields beyond the reference, not in KNOWN_ADDITIVE: {unlisted}"
    stale = ", ".join(sorted(KNOWN_ADDITIVE[kind] - extra))
    assert not stale, f"{kind}: KNOWN_ADDITIVE lists paths that are no longer additive: {stale}"


def test_env_value_from_carries_every_corev1_source_at_every_env_list() -> None:
    """The paths that prompted this test, spelled out: fileKeyRef at all three env lists."""
    env_lists = {
        ("BurnInTest", "spec.runner.env[]"),
        ("BurnInProfile", "spec.tests[].inline.runner.env[]"),
        ("BurnInProfile", "spec.tests[].variants[].env[]"),
    }
    for kind, env in env_lists:
        for leaf in ("volumeName", "path", "key", "optional"):
            assert f"{env}.valueFrom.fileKeyRef.{leaf}" in OURS[kind]


@pytest.mark.skipif(
    not REFERENCE_CRDS.is_dir(),
    # The path diff itself reads the committed fixture and always runs; this only checks
    # the fixture against the reference CRDs where a checkout of them sits beside us.
    reason="../shared/perf/crd absent: the committed fixture stands for it",
)
def test_the_fixture_is_the_reference_crds_paths() -> None:
    assert directory_paths(REFERENCE_CRDS) == REFERENCE, REGENERATE

"""I5: the API's word sets that the verdict decides in are the verdict's own
classes, so a value can never be allowed by the schema and unknown to the verdict."""

from __future__ import annotations

from glimmer import api, verdict
from glimmer.api import vocabulary


def test_I5_api_enums_are_the_verdict_definitions() -> None:
    assert vocabulary.RunPhase is verdict.Phase
    assert vocabulary.AttemptTrigger is verdict.Trigger
    assert vocabulary.Comparison is verdict.Comparison
    assert vocabulary.Applicability is verdict.Applicability
    assert vocabulary.Provenance is verdict.Provenance
    assert api.RunPhase is verdict.Phase and api.Provenance is verdict.Provenance


def test_I5_provenance_words_include_unknown() -> None:
    assert [p.value for p in api.Provenance] == ["sim", "unknown", "silicon"]

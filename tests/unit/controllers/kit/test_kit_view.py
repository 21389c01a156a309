"""The kit's object view: any kind's metadata read one way, never crashing on a
malformed value (an unreadable entry is skipped, an unreadable map reads empty)."""

from __future__ import annotations

from glimmer.controllers.kit.view import ObjectView, RunView


def test_an_object_view_reads_metadata_and_skips_unreadable_entries() -> None:
    obj = {
        "metadata": {
            "name": "p",
            "namespace": "lab",
            "uid": "u1",
            "labels": {"a": "b"},
            "ownerReferences": [
                "garbage",
                {"uid": "run-1", "controller": True},
                {"uid": "other", "controller": False},
            ],
        },
        "status": {"conditions": [None, {"type": "Ready", "status": "True"}]},
    }
    view = ObjectView(obj)
    assert (view.key, view.uid, dict(view.labels)) == ("lab/p", "u1", {"a": "b"})
    assert view.controlled_by("run-1") and not view.controlled_by("other")
    assert view.owned_by("other") and not view.owned_by("nobody")
    assert [c["type"] for c in view.conditions] == ["Ready"]


def test_an_object_view_of_a_malformed_object_reads_empty_never_crashes() -> None:
    view = ObjectView({"metadata": "x", "status": ["y"]})
    assert (view.name, view.uid, dict(view.labels), view.owner_references) == ("", "", {}, [])
    assert view.conditions == [] and not view.controlled_by("")


def test_the_run_view_is_an_object_view() -> None:
    assert isinstance(RunView({"metadata": {"name": "r"}}), ObjectView)

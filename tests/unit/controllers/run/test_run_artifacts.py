"""A12: artifact storage decisions."""

from __future__ import annotations

from glimmer.contract import Artifact, DroppedArtifact, DropReason
from glimmer.contract.artifacts import digest_of
from glimmer.controllers.run.artifacts import BUDGET_BYTES, merge_refs, plan_store, store_failed


def art(name: str, payload: bytes) -> Artifact:
    return Artifact(name=name, media_type="text/plain", payload=payload, digest=digest_of(payload))


def test_A12_keys_carry_test_and_pod_and_text_goes_to_data() -> None:
    plan = plan_store(
        configmap="r-artifacts",
        data={},
        binary_data={},
        test="t",
        pod="p1",
        found=[art("a.json", b"{}\n"), art("b.bin", b"\xff\x00")],
    )
    assert plan.data == {"t.p1.a.json": "{}\n"}
    assert list(plan.binary_data) == ["t.p1.b.bin"]
    assert plan.refs[0]["key"] == "t.p1.a.json" and plan.refs[0]["configMap"] == "r-artifacts"


def test_A12_bad_names_are_dropped_never_sanitised() -> None:
    plan = plan_store(
        configmap="c",
        data={},
        binary_data={},
        test="t",
        pod="p",
        found=[art("../x", b"1")],
    )
    assert plan.data == {} and plan.refs[0]["dropped"] == str(DropReason.BAD_NAME)


def test_A12_budget_counts_what_is_already_stored() -> None:
    existing = {"old": "x" * (BUDGET_BYTES - 10)}
    plan = plan_store(
        configmap="c",
        data=existing,
        binary_data={},
        test="t",
        pod="p",
        found=[art("a", b"0123456789")],
    )
    assert plan.data == {}
    assert plan.refs == [
        {"name": "a", "mediaType": "text/plain", "sizeBytes": 10, "dropped": str(DropReason.BUDGET)}
    ]


def test_A12_dropped_fences_become_dropped_refs_with_true_size() -> None:
    drop = DroppedArtifact(name="big", media_type="t", size=300_000, reason=DropReason.OVERSIZED)
    plan = plan_store(configmap="c", data={}, binary_data={}, test="t", pod="p", found=[drop])
    assert plan.refs[0]["sizeBytes"] == 300_000


def test_A12_refs_deduplicated_and_store_failure_turns_refs_into_drops() -> None:
    plan = plan_store(
        configmap="c",
        data={},
        binary_data={},
        test="t",
        pod="p",
        found=[art("a", b"1")],
    )
    assert merge_refs(plan.refs, plan.refs) == plan.refs
    (failed,) = store_failed(plan.refs)
    assert failed["dropped"] == str(DropReason.STORE_FAILED) and "key" not in failed


def test_I31_refs_follow_document_order_accepted_and_dropped_interleaved() -> None:
    first = art("first.txt", b"1")
    drop = DroppedArtifact(name="big", media_type="t", size=300_000, reason=DropReason.OVERSIZED)
    last = art("last.txt", b"2")
    plan = plan_store(
        configmap="c", data={}, binary_data={}, test="t", pod="p", found=[first, drop, last]
    )
    assert [r["name"] for r in plan.refs] == ["first.txt", "big", "last.txt"]
    assert [bool(r.get("key")) for r in plan.refs] == [True, False, True]


def test_A12_a_second_fence_of_the_same_name_never_puts_another_payload_under_a_ref() -> None:
    plan = plan_store(
        configmap="r-artifacts",
        data={},
        binary_data={},
        test="t",
        pod="p1",
        found=[art("a.json", b"first\n"), art("a.json", b"second\n")],
    )
    merged = merge_refs([], plan.refs)
    assert plan.data == {"t.p1.a.json": "first\n"}
    assert [r["digest"] for r in merged] == [digest_of(b"first\n")]

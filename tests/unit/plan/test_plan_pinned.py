"""The pinned plan annotation (api §11, E1, E5): exact wire shape, size rule, fail-closed reads."""

from __future__ import annotations

import base64
import gzip
import json
import random
import tracemalloc
import zlib
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glimmer.plan.pinned import (
    MAX_ANNOTATION_BYTES,
    PinnedPlan,
    PlanDecodeError,
    PlannedTest,
    PlanTooLargeError,
)


def _plan(**overrides: Any) -> PinnedPlan:
    fields: dict[str, Any] = {
        "targets": ("node-a", "node-b"),
        "tests": (
            PlannedTest(
                name="smoke", required=True, spec={"kind": "compute-smoke", "scope": "Node"}
            ),
        ),
    }
    fields.update(overrides)
    return PinnedPlan(**fields)


def _padded_plan(*, env_bytes: int, seed: int = 0, compressible: bool = False) -> PinnedPlan:
    rng = random.Random(seed)
    value = "x" * env_bytes if compressible else rng.randbytes(env_bytes // 2).hex()
    spec = {"kind": "custom", "scope": "Node", "runner": {"env": [{"name": "PAD", "value": value}]}}
    return _plan(tests=(PlannedTest(name="padded", required=False, spec=spec),))


def test_api11_small_plan_is_stored_as_raw_json() -> None:
    text = _plan().to_annotation()
    assert text.startswith("{")
    assert json.loads(text)["version"] == 1


def test_api11_keys_follow_go_struct_order_with_omitempty() -> None:
    bare = json.loads(_plan().to_json())
    assert list(bare) == ["version", "targets", "tests"]
    assert list(bare["tests"][0]) == ["name", "required", "spec"]

    full = _plan(
        sinks=("hook",),
        fail_fast=True,
        baseline=True,
        profile_entries=3,
        tests=(
            PlannedTest(
                name="p-v",
                required=False,
                spec={"kind": "custom"},
                axes={"b": "2", "a": "1"},
                parent="p",
            ),
        ),
    )
    document = json.loads(full.to_json())
    assert list(document) == [
        "version",
        "targets",
        "sinks",
        "failFast",
        "baseline",
        "profileEntries",
        "tests",
    ]
    assert list(document["tests"][0]) == ["name", "required", "spec", "axes", "parent"]
    assert document["tests"][0]["required"] is False


def test_api11_map_keys_are_sorted_like_go() -> None:
    spec = {"scope": "Node", "kind": "custom", "runner": {"image": "x", "args": ["b", "a"]}}
    text = _plan(
        tests=(PlannedTest(name="t", required=True, spec=spec, axes={"z": "1", "a": "2"}),)
    ).to_json()
    assert '"spec":{"kind":"custom","runner":{"args":["b","a"],"image":"x"},"scope":"Node"}' in text
    assert '"axes":{"a":"2","z":"1"}' in text


def test_api11_encoding_escapes_html_characters_as_go_does() -> None:
    spec = {"kind": "custom", "runner": {"args": ["a<b>&c\u2028"]}}
    text = _plan(tests=(PlannedTest(name="t", required=True, spec=spec),)).to_json()
    assert "\\u003c" in text and "\\u003e" in text and "\\u0026" in text and "\\u2028" in text
    assert "<" not in text and "&" not in text
    assert PinnedPlan.from_annotation(text).tests[0].spec == spec


def test_api11_encoding_is_deterministic() -> None:
    big = _padded_plan(env_bytes=200_000, compressible=True)
    assert big.to_annotation() == big.to_annotation()


def test_api11_plan_over_128KiB_is_gzip_base64_and_round_trips() -> None:
    plan = _padded_plan(env_bytes=MAX_ANNOTATION_BYTES + 10, compressible=True)
    text = plan.to_annotation()
    assert not text.lstrip().startswith("{")
    assert len(text) <= MAX_ANNOTATION_BYTES
    assert gzip.decompress(base64.b64decode(text)).decode() == plan.to_json()
    assert PinnedPlan.from_annotation(text) == plan


def test_api11_raw_limit_is_inclusive_at_131072_bytes() -> None:
    probe = _padded_plan(env_bytes=0, compressible=True)
    overhead = len(probe.to_json().encode())
    exact = _padded_plan(env_bytes=MAX_ANNOTATION_BYTES - overhead, compressible=True)
    assert len(exact.to_json().encode()) == MAX_ANNOTATION_BYTES
    assert exact.to_annotation().startswith("{")
    over = _padded_plan(env_bytes=MAX_ANNOTATION_BYTES - overhead + 1, compressible=True)
    assert not over.to_annotation().startswith("{")


def test_E4_plan_still_over_128KiB_after_compression_is_refused() -> None:
    plan = _padded_plan(env_bytes=300_000)
    with pytest.raises(PlanTooLargeError, match="131072"):
        plan.to_annotation()


def test_api11_reader_sniffs_first_non_space_character() -> None:
    plan = _plan()
    assert PinnedPlan.from_annotation("  \n\t" + plan.to_annotation()) == plan
    packed = base64.b64encode(gzip.compress(plan.to_json().encode())).decode()
    assert PinnedPlan.from_annotation("\n" + packed) == plan


def test_api11_reader_accepts_go_written_field_order_and_nulls() -> None:
    go_text = (
        '{"tests":[{"parent":"p","axes":{"n":"1"},"spec":{"scope":"Pair","kind":"nccl"},'
        '"required":true,"name":"p-x"}],"sinks":null,"targets":["a","b"],"version":1}'
    )
    plan = PinnedPlan.from_annotation(go_text)
    assert plan.targets == ("a", "b")
    assert plan.sinks == ()
    assert plan.tests[0].axes == {"n": "1"}
    assert plan.tests[0].parent == "p"
    assert plan.expanded_variants


@pytest.mark.parametrize("version", [0, 2, "1", 1.0, True, None])
def test_E1_plan_version_other_than_1_is_a_decode_error(version: Any) -> None:
    document = json.loads(_plan().to_json())
    document["version"] = version
    with pytest.raises(PlanDecodeError, match="version"):
        PinnedPlan.from_annotation(json.dumps(document))


def test_api11_gzip_bomb_is_refused_without_inflating_it() -> None:
    compressor = zlib.compressobj(1, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    chunk = b" " * (1024 * 1024)
    packed = b"".join(compressor.compress(chunk) for _ in range(64)) + compressor.flush()
    bomb = base64.b64encode(packed).decode()
    tracemalloc.start()
    try:
        with pytest.raises(PlanDecodeError, match="limit"):
            PinnedPlan.from_annotation(bomb)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 1024 * 1024


def test_api11_decompressed_size_is_capped_at_4MiB() -> None:
    bomb = base64.b64encode(gzip.compress(b"{" + b" " * (5 * 1024 * 1024) + b"}")).decode()
    with pytest.raises(PlanDecodeError, match="limit"):
        PinnedPlan.from_annotation(bomb)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "not a plan",
        "{not json",
        "[]",
        base64.b64encode(b"not gzip").decode(),
        base64.b64encode(gzip.compress(b"\xff\xfe")).decode(),
        base64.b64encode(gzip.compress(b'{"version":1}')[:-6]).decode(),
    ],
)
def test_E1_undecodable_annotation_is_a_decode_error(text: str) -> None:
    with pytest.raises(PlanDecodeError):
        PinnedPlan.from_annotation(text)


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("targets",), []),
        (("targets",), ["a", 1]),
        (("tests",), []),
        (("tests", 0, "required"), None),
        (("tests", 0, "required"), "true"),
        (("tests", 0, "name"), ""),
        (("tests", 0, "spec"), None),
        (("tests", 0, "spec", "kind"), None),
        (("tests", 0, "spec", "scope"), 3),
        (("tests", 0, "axes"), {"a": 1}),
        (("failFast",), "yes"),
        (("profileEntries",), "2"),
    ],
)
def test_E1_plan_with_missing_or_mistyped_fields_fails_closed(
    path: tuple[Any, ...], value: Any
) -> None:
    document = json.loads(_plan().to_json())
    target = document
    for key in path[:-1]:
        target = target[key]
    if value is None:
        target.pop(path[-1], None)
    else:
        target[path[-1]] = value
    with pytest.raises(PlanDecodeError):
        PinnedPlan.from_annotation(json.dumps(document))


def test_E1_non_json_constants_are_refused() -> None:
    text = _plan().to_json().replace('"version":1', '"version":1,"x":NaN')
    with pytest.raises(PlanDecodeError):
        PinnedPlan.from_annotation(text)


_json_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**31), 2**31 - 1), st.text(max_size=20)
)
_json_value = st.recursive(
    _json_leaf,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
_specs = st.fixed_dictionaries(
    {"kind": st.text(min_size=1, max_size=12), "scope": st.sampled_from(["Node", "Pair", "Group"])},
    optional={"extra": _json_value, "padding": st.text(max_size=5000)},
)
_tests = st.builds(
    PlannedTest,
    name=st.text(min_size=1, max_size=30),
    required=st.booleans(),
    spec=_specs,
    axes=st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=3),
    parent=st.text(max_size=10),
)
_plans = st.builds(
    PinnedPlan,
    targets=st.lists(st.text(min_size=1, max_size=20), min_size=1, max_size=5).map(tuple),
    tests=st.lists(_tests, min_size=1, max_size=40).map(tuple),
    sinks=st.lists(st.text(max_size=10), max_size=3).map(tuple),
    fail_fast=st.booleans(),
    baseline=st.booleans(),
    profile_entries=st.integers(0, 1000),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=_plans, big_padding=st.integers(0, 3))
def test_api11_annotation_round_trip_is_lossless(plan: PinnedPlan, big_padding: int) -> None:
    if big_padding:
        # Repetitive padding keeps the plan compressible while pushing it past 128 KiB.
        pad = PlannedTest(
            name="pad",
            required=True,
            spec={"kind": "custom", "padding": "ab" * 50_000 * big_padding},
        )
        plan = PinnedPlan(
            targets=plan.targets,
            tests=(*plan.tests, pad),
            sinks=plan.sinks,
            fail_fast=plan.fail_fast,
            baseline=plan.baseline,
            profile_entries=plan.profile_entries,
        )
    text = plan.to_annotation()
    assert len(text.encode()) <= MAX_ANNOTATION_BYTES
    assert text.startswith("{") == (len(plan.to_json().encode()) <= MAX_ANNOTATION_BYTES)
    decoded = PinnedPlan.from_annotation(text)
    assert decoded == plan
    assert decoded.to_annotation() == text


_doc_keys = st.sampled_from(
    [
        "version",
        "targets",
        "sinks",
        "failFast",
        "baseline",
        "profileEntries",
        "tests",
        "name",
        "required",
        "spec",
        "axes",
        "parent",
    ]
)
_documents = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-1, 3), st.text(max_size=5)),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_doc_keys, inner, max_size=6),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(document=_documents, packed=st.booleans())
def test_E1_any_document_decodes_to_a_plan_or_a_decode_error(document: Any, packed: bool) -> None:
    text = json.dumps(document)
    if packed:
        text = base64.b64encode(gzip.compress(text.encode())).decode()
    try:
        plan = PinnedPlan.from_annotation(text)
    except PlanDecodeError:
        return
    assert plan.version == 1 and plan.targets and plan.tests


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=200))
def test_E1_any_text_decodes_to_a_plan_or_a_decode_error(text: str) -> None:
    with pytest.raises(PlanDecodeError):
        PinnedPlan.from_annotation(text)

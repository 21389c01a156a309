"""Plan building: expansion (E2, I1) and every plan-time refusal (E4, C5), plus the
Unsound advisory for ``ThresholdsSound``."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import glimmer.plan
from glimmer.plan import (
    PinnedPlan,
    PlanRefusal,
    build_plan,
    describe_findings,
    unsound_findings,
)

_GATE = {"metric": "miscompares", "comparison": "LessThanOrEqual", "value": "0"}


def _entry(ref: str, **extra: Any) -> dict[str, Any]:
    return {"testRef": ref, **extra}


def _build(
    entries: list[dict[str, Any]],
    tests: dict[str, dict[str, Any]] | None = None,
    *,
    targets: tuple[str, ...] = ("n1", "n2"),
    cap: int | None = 2,
    baseline: bool = False,
    several_pairs: bool = False,
    **profile: Any,
) -> PinnedPlan | PlanRefusal:
    return build_plan(
        profile={"tests": entries, **profile},
        tests=tests or {},
        targets=targets,
        baseline=baseline,
        max_concurrent_nodes=cap,
        several_pairs=several_pairs,
    )


def _plan(*args: Any, **kwargs: Any) -> PinnedPlan:
    result = _build(*args, **kwargs)
    assert isinstance(result, PinnedPlan), result
    return result


def _refusal(*args: Any, **kwargs: Any) -> str:
    result = _build(*args, **kwargs)
    assert isinstance(result, PlanRefusal), result
    return result.message


def test_E5_plan_pins_targets_order_sinks_failfast_baseline_and_entries() -> None:
    plan = _plan(
        [_entry("burn"), {"inline": {"kind": "nccl", "scope": "Node"}, "required": False}],
        {"burn": {"kind": "gpu-burn"}},
        targets=("z", "a"),
        sinks=["hook"],
        failFast=True,
    )
    assert plan.targets == ("z", "a")
    assert plan.sinks == ("hook",)
    assert plan.fail_fast is True
    assert plan.baseline is False
    assert plan.profile_entries == 2
    assert [(t.name, t.required) for t in plan.tests] == [
        ("burn", True),
        ("inline-1-nccl", False),
    ]
    assert plan.tests[0].spec["scope"] == "Node"
    assert PinnedPlan.from_annotation(plan.to_annotation()) == plan


def test_I1_variants_are_expanded_before_planning() -> None:
    entry = _entry(
        "sweep",
        variants=[
            {"name": "fp8", "axes": {"precision": "fp8"}},
            {"name": "bf16", "axes": {"precision": "bf16"}},
        ],
    )
    plan = _plan([entry], {"sweep": {"kind": "gemm-sweep"}})
    assert [t.name for t in plan.tests] == ["sweep-fp8", "sweep-bf16"]
    assert plan.expanded_variants
    assert plan.profile_entries == 1


def test_E4_profile_entry_with_both_testref_and_inline_is_refused() -> None:
    message = _refusal([_entry("burn", inline={"kind": "custom"})], {"burn": {"kind": "custom"}})
    assert "profile entry 0 sets both testRef" in message


def test_E4_profile_entry_with_neither_testref_nor_inline_is_refused() -> None:
    assert "sets neither testRef nor inline" in _refusal([{"required": True}])


def test_E2_missing_testref_is_refused_and_reported_for_the_grace_period() -> None:
    result = _build([_entry("ghost"), _entry("burn")], {"burn": {"kind": "custom"}})
    assert isinstance(result, PlanRefusal)
    assert result.unresolved_refs == ("ghost",)
    assert "'ghost' was not found" in result.message


def test_E4_every_refusal_is_reported_not_just_the_first() -> None:
    result = _build([{"required": True}, _entry("ghost")])
    assert isinstance(result, PlanRefusal)
    assert len(result.messages) == 2


def test_E4_unsupported_scope_is_refused() -> None:
    message = _refusal([_entry("t")], {"t": {"kind": "custom", "scope": "Rack"}})
    assert "scope 'Rack' is not supported" in message


def test_E4_variant_axis_that_is_not_env_safe_is_refused() -> None:
    entry = _entry("t", variants=[{"name": "v", "axes": {"bad-axis": "1", "ok_axis": "2"}}])
    message = _refusal([entry], {"t": {"kind": "custom"}})
    assert "'bad-axis'" in message and "ok_axis" not in message


def test_E4_duplicate_planned_names_are_refused() -> None:
    entries = [_entry("t", variants=[{"name": "a"}]), _entry("t-a")]
    message = _refusal(entries, {"t": {"kind": "custom"}, "t-a": {"kind": "custom"}})
    assert "'t-a' occurs 2 times" in message


@pytest.mark.parametrize("targets", [("n1",), ("n1", "n2", "n3"), ("a", "b", "c", "d")])
def test_E4_pair_needs_exactly_two_targets(targets: tuple[str, ...]) -> None:
    """Without spec.linkBlame a Pair takes exactly two targets, as the reference has it."""
    message = _refusal(
        [_entry("link")], {"link": {"kind": "ib-write-bw", "scope": "Pair"}}, targets=targets
    )
    assert (
        "needs exactly 2 target nodes (server, client), "
        f"but the run targets {len(targets)}" in message
    )


@pytest.mark.parametrize("targets", [("n1",), ("n1", "n2", "n3")])
def test_F10_several_pairs_need_an_even_number_of_targets(targets: tuple[str, ...]) -> None:
    message = _refusal([_entry("link")], {"link": {"kind": "ib-write-bw", "scope": "Pair"}},
                       targets=targets, several_pairs=True)  # fmt: skip
    assert (
        f"needs an even number of target nodes paired in order, but the run targets {len(targets)}"
        in message
    )


def test_F10_with_link_blame_an_even_number_of_pair_targets_is_paired_in_order() -> None:
    from glimmer.plan import units_of_test

    plan = _plan([_entry("link")], {"link": {"kind": "ib-write-bw", "scope": "Pair"}},
                 targets=("a", "b", "c", "d"), cap=2, several_pairs=True)  # fmt: skip
    assert [u.nodes for u in units_of_test(plan, 0)] == [("a", "b"), ("c", "d")]


@pytest.mark.parametrize(
    ("targets", "words"),
    [(("a", "b", "a", "c"), "the targets repeat a"), (("a", "b", "c", "c"), "same node (c)")],
)
def test_F10_pairs_over_several_targets_never_share_a_node(
    targets: tuple[str, ...], words: str
) -> None:
    message = _refusal([_entry("link")], {"link": {"kind": "ib-write-bw", "scope": "Pair"}},
                       targets=targets, cap=2, several_pairs=True)  # fmt: skip
    assert words in message


def test_E4_pair_needs_two_distinct_targets() -> None:
    message = _refusal(
        [_entry("link")], {"link": {"kind": "ib-write-bw", "scope": "Pair"}}, targets=("n1", "n1")
    )
    assert "both targets are node 'n1'" in message


@pytest.mark.parametrize("cap", [None, 0, 1])
def test_E4_pair_needs_max_concurrent_nodes_of_at_least_two(cap: int | None) -> None:
    message = _refusal(
        [_entry("link")], {"link": {"kind": "ib-write-bw", "scope": "Pair"}}, cap=cap
    )
    assert "maxConcurrentNodes is 1; set spec.maxConcurrentNodes to at least 2" in message


def test_E4_pair_with_two_distinct_targets_and_room_is_planned() -> None:
    plan = _plan([_entry("link")], {"link": {"kind": "ib-write-bw", "scope": "Pair"}}, cap=2)
    assert plan.tests[0].scope == "Pair"


def test_E4_group_needs_at_least_two_targets() -> None:
    message = _refusal([_entry("g")], {"g": {"kind": "nccl", "scope": "Group"}}, targets=("n1",))
    assert "needs at least 2 target nodes" in message


def test_E4_group_needs_distinct_targets() -> None:
    message = _refusal(
        [_entry("g")], {"g": {"kind": "nccl", "scope": "Group"}}, targets=("a", "b", "a"), cap=3
    )
    assert "targets repeat a" in message


def test_E4_group_needs_max_concurrent_nodes_of_at_least_n() -> None:
    message = _refusal(
        [_entry("g")], {"g": {"kind": "nccl", "scope": "Group"}}, targets=("a", "b", "c"), cap=2
    )
    assert "set spec.maxConcurrentNodes to at least 3" in message


def test_E4_group_default_image_must_be_group_capable() -> None:
    message = _refusal([_entry("g")], {"g": {"kind": "gpu-burn", "scope": "Group"}})
    assert "does not speak the Group rendezvous" in message


def test_P5_images_by_vendor_does_not_unlock_group_scope() -> None:
    spec = {
        "kind": "gpu-burn",
        "scope": "Group",
        "runner": {"imagesByVendor": [{"vendor": "nvidia", "image": "mine:1"}]},
    }
    assert "does not speak the Group rendezvous" in _refusal([_entry("g")], {"g": spec})


def test_E4_explicit_runner_image_unlocks_group_scope() -> None:
    spec = {"kind": "gpu-burn", "scope": "Group", "runner": {"image": "mine:1"}}
    assert _plan([_entry("g")], {"g": spec}).tests[0].scope == "Group"


def test_E4_nccl_default_image_is_group_capable() -> None:
    assert _plan([_entry("g")], {"g": {"kind": "nccl", "scope": "Group"}}).tests[0].name == "g"


@pytest.mark.parametrize(
    ("mounts", "expected"),
    [
        ([{"path": "", "mountPath": "/x"}], "hostPaths path '' must be a non-empty absolute path"),
        ([{"path": "rel", "mountPath": "/x"}], "hostPaths path 'rel'"),
        ([{"path": "/dev", "mountPath": "dev"}], "hostPaths mountPath 'dev'"),
        ([{"path": "/dev"}], "hostPaths mountPath None"),
        (
            [{"path": "/a", "mountPath": "/m"}, {"path": "/b", "mountPath": "/m"}],
            "mounts '/m' 2 times",
        ),
    ],
)
def test_E4_host_paths_must_be_absolute_and_mount_paths_unique(
    mounts: list[dict[str, Any]], expected: str
) -> None:
    spec = {"kind": "custom", "runner": {"hostPaths": mounts}}
    assert expected in _refusal([_entry("t")], {"t": spec})


def _soak(**overrides: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "kind": "thermal-soak",
        "durationSeconds": 3600,
        "soak": {"segmentSeconds": 900},
    }
    spec.update(overrides)
    return spec


def test_E4_valid_soak_is_planned() -> None:
    assert _plan([_entry("s")], {"s": _soak()}).tests[0].name == "s"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (_soak(kind="compute-smoke"), "is burst-only"),
        (_soak(kind="fingerprint-probe"), "is burst-only"),
        (_soak(soak={"segmentSeconds": 299}), "segments must be at least 300"),
        (_soak(durationSeconds=0), "durationSeconds > 0"),
        (_soak(durationSeconds=None), "durationSeconds > 0"),
        (_soak(durationSeconds=600), "exceeds durationSeconds (600)"),
        (_soak(repeatCount=2), "repeatCount must be 1"),
        (_soak(soak={}), "segmentSeconds is required"),
    ],
)
def test_E4_soak_rules(spec: dict[str, Any], expected: str) -> None:
    assert expected in _refusal([_entry("s")], {"s": spec})


def test_E4_soak_rules_apply_to_variant_cells() -> None:
    entry = _entry("s", variants=[{"name": "short", "durationSeconds": 300}])
    assert "exceeds durationSeconds (300)" in _refusal([entry], {"s": _soak()})


def test_E4_zero_repeat_count_is_refused_rather_than_settled_unrun() -> None:
    entry = _entry("t", variants=[{"name": "v", "repeatCount": 0}])
    assert "repeatCount must be at least 1" in _refusal([entry], {"t": {"kind": "custom"}})


def test_E4_negative_variant_duration_is_refused() -> None:
    entry = _entry("t", variants=[{"name": "v", "durationSeconds": -5}])
    assert "durationSeconds must not be negative" in _refusal([entry], {"t": {"kind": "custom"}})


def test_C5_malformed_thresholds_refuse_the_run() -> None:
    bad = {"metric": "gpu_temp", "comparison": "LessThanOrEqual", "value": "90"}
    message = _refusal([_entry("t")], {"t": {"kind": "gpu-burn", "thresholds": [bad]}})
    assert "malformed thresholds" in message and "t: metric 'gpu_temp'" in message


def test_C5_malformed_thresholds_in_a_variant_cell_refuse_the_run() -> None:
    bad = {"metric": "miscompares", "comparison": "Below", "value": "1"}
    entry = _entry("t", variants=[{"name": "v", "thresholds": [bad]}])
    assert "t-v: comparison 'Below'" in _refusal([entry], {"t": {"kind": "gpu-burn"}})


def test_C5_malformed_refusal_names_at_most_five_offenders() -> None:
    bad = [{"metric": f"Bad{i}", "comparison": "Equal", "value": "1"} for i in range(7)]
    message = _refusal([_entry("t")], {"t": {"kind": "custom", "thresholds": bad}})
    assert message.count("is not a valid name") == 5
    assert "and 2 more" in message


def test_C5_mistyped_threshold_fields_are_malformed() -> None:
    bad = {"metric": "miscompares", "comparison": "LessThanOrEqual", "value": 0}
    assert "threshold value must be a string" in _refusal(
        [_entry("t")], {"t": {"kind": "gpu-burn", "thresholds": [bad]}}
    )


def test_C5_unsound_thresholds_do_not_refuse_but_are_exposed() -> None:
    unsound = {"metric": "gpuTempC", "comparison": "Equal", "value": "80"}
    plan = _plan([_entry("t")], {"t": {"kind": "gpu-burn", "thresholds": [_GATE, unsound]}})
    findings = unsound_findings(plan)
    assert [(f.test, f.metric, f.severity) for f in findings] == [("t", "gpuTempC", "Unsound")]
    assert describe_findings(findings).startswith("t: Equal on gpuTempC")


def test_C5_unsound_description_names_at_most_five() -> None:
    gate = {"metric": "gpuTempC", "comparison": "Equal", "value": "80"}
    tests = {f"t{i}": {"kind": "gpu-burn", "thresholds": [gate]} for i in range(6)}
    plan = _plan([_entry(name) for name in tests], tests)
    assert describe_findings(unsound_findings(plan)).endswith("; and 1 more")


def test_E4_baseline_with_any_thresholds_is_refused_naming_up_to_five_tests() -> None:
    tests = {f"t{i}": {"kind": "gpu-burn", "thresholds": [_GATE]} for i in range(7)}
    tests["clean"] = {"kind": "gpu-burn"}
    message = _refusal([_entry(name) for name in tests], tests, baseline=True)
    assert "t0, t1, t2, t3, t4, and 2 more" in message
    assert "clean" not in message


def test_E4_baseline_without_thresholds_is_planned() -> None:
    plan = _plan([_entry("t")], {"t": {"kind": "gpu-burn", "thresholds": []}}, baseline=True)
    assert plan.baseline is True


def test_E4_baseline_refuses_thresholds_introduced_by_a_variant() -> None:
    entry = _entry("t", variants=[{"name": "v", "thresholds": [_GATE]}])
    assert "t-v" in _refusal([entry], {"t": {"kind": "gpu-burn"}}, baseline=True)


def test_E4_plan_over_128KiB_after_compression_is_refused() -> None:
    noise = "".join(f"{(i * 2654435761) % 4294967296:08x}" for i in range(40_000))
    spec = {"kind": "custom", "runner": {"env": [{"name": "PAD", "value": noise}]}}
    assert "annotation limit" in _refusal([_entry("t")], {"t": spec})


def test_E4_profile_without_tests_is_refused() -> None:
    assert "lists no tests" in _refusal([])


def test_E2_run_without_targets_is_refused() -> None:
    assert "no target nodes" in _refusal([_entry("t")], {"t": {"kind": "custom"}}, targets=())


@pytest.mark.parametrize(
    "spec",
    [
        {"kind": ""},
        {"kind": "custom", "durationSeconds": "600"},
        {"kind": "custom", "repeatCount": True},
        {"kind": "custom", "thresholds": "none"},
        {"kind": "custom", "runner": ["x"]},
    ],
)
def test_E4_mistyped_spec_fields_are_refused_not_coerced(spec: dict[str, Any]) -> None:
    assert isinstance(_build([_entry("t")], {"t": spec}), PlanRefusal)


def test_E5_building_never_mutates_the_inputs() -> None:
    spec = {"kind": "custom", "runner": {"args": ["a"]}}
    entry = _entry("t", variants=[{"name": "v", "args": ["b"]}])
    _plan([entry], {"t": spec})
    assert spec == {"kind": "custom", "runner": {"args": ["a"]}}
    assert entry == _entry("t", variants=[{"name": "v", "args": ["b"]}])


def test_public_surface_is_pinned() -> None:
    assert sorted(glimmer.plan.__all__) == sorted(
        [
            "GateFinding",
            "GroupRendezvous",
            "ImageError",
            "PairRendezvous",
            "PinnedPlan",
            "PlanDecodeError",
            "PlanRefusal",
            "PlanTooLargeError",
            "PlannedTest",
            "SpecError",
            "Unit",
            "active_deadline_seconds",
            "admit_launches",
            "build_plan",
            "can_launch",
            "candidate_images",
            "current_test",
            "default_image",
            "depends_on_vendor",
            "describe_findings",
            "execution_window_seconds",
            "group_ranks",
            "group_rendezvous",
            "heat_expiry_seconds",
            "host_path_volume_name",
            "label_value",
            "overdue_after_seconds",
            "pair_rendezvous",
            "pair_roles",
            "plan_units",
            "pod_name",
            "resolve_image",
            "runner_env",
            "segments_required",
            "service_name",
            "slots",
            "units_of_test",
            "unsound_findings",
            "wave_schedule",
        ]
    )


def test_E2_node_listed_twice_is_refused_for_node_scope() -> None:
    message = _refusal([_entry("t")], {"t": {"kind": "custom"}}, targets=("a", "b", "a"))
    assert "targets list a more than once" in message


def test_I1_null_required_means_the_default_true() -> None:
    plan = _plan([_entry("t", required=None)], {"t": {"kind": "custom"}})
    assert plan.tests[0].required is True


_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5000),
    st.sampled_from(["", "Node", "Pair", "Group", "nccl", "custom", "/x", "t", "a-b", "0"]),
)
_json = st.recursive(
    _leaf,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "kind",
                    "scope",
                    "testRef",
                    "inline",
                    "variants",
                    "name",
                    "axes",
                    "thresholds",
                    "runner",
                    "soak",
                    "segmentSeconds",
                    "durationSeconds",
                    "repeatCount",
                    "hostPaths",
                    "path",
                    "mountPath",
                    "image",
                    "required",
                    "metric",
                    "value",
                    "comparison",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(
    entries=st.lists(_json, max_size=4),
    tests=st.dictionaries(st.sampled_from(["t", "a-b", "0"]), _json, max_size=3),
    targets=st.lists(st.sampled_from(["a", "b", "c"]), max_size=4),
    cap=st.one_of(st.none(), st.integers(-1, 4)),
    baseline=st.booleans(),
)
def test_E4_arbitrary_input_yields_a_plan_or_a_refusal_never_a_crash(
    entries: list[Any], tests: dict[str, Any], targets: list[str], cap: int | None, baseline: bool
) -> None:
    result = build_plan(
        profile={"tests": entries},
        tests=tests,
        targets=targets,
        baseline=baseline,
        max_concurrent_nodes=cap,
    )
    if isinstance(result, PlanRefusal):
        assert result.messages
    else:
        assert PinnedPlan.from_annotation(result.to_annotation()) == result

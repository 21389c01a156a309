"""Deterministic pod/Service names and clamped label values (E13, api §9.3, §9.4, §12)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from glimmer.plan.names import (
    host_path_volume_name,
    is_valid_label_value,
    label_value,
    pod_name,
    service_name,
)

_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")


def _valid_dns_label(name: str) -> bool:
    return len(name) <= 63 and _DNS1123_LABEL.fullmatch(name) is not None


def test_E13_pod_name_follows_the_upstream_convention() -> None:
    name = pod_name(run_name="nightly", run_uid="uid-1", test_index=2, node="n1", attempt=3)
    assert re.fullmatch(r"nightly-t2-a3-[0-9a-f]{8}", name)
    paired = pod_name(
        run_name="nightly", run_uid="uid-1", test_index=2, node="n1", attempt=3, role="server"
    )
    assert re.fullmatch(r"nightly-t2-a3-server-[0-9a-f]{8}", paired)


def test_E13_pod_name_keeps_at_most_36_characters_of_the_run_name() -> None:
    name = pod_name(run_name="r" * 100, run_uid="u", test_index=0, node="n", attempt=1)
    assert name.startswith("r" * 36 + "-t0-a1-")


def test_E13_pod_name_is_a_valid_label_for_awkward_run_names() -> None:
    for run in ("A.B.C", "x" * 35 + ".y", "...", "-a-", "Ü"):
        name = pod_name(
            run_name=run, run_uid="u", test_index=7, node="n", attempt=1, role="rank-12"
        )
        assert _valid_dns_label(name), name


def test_api94_service_name_follows_the_upstream_convention() -> None:
    name = service_name(run_name="n" * 40, run_uid="u", test_index=1, attempt=2)
    assert re.fullmatch(r"bp-n{26}-t1-a2-[0-9a-f]{8}", name)
    assert _DNS1035_LABEL.fullmatch(name)


def test_api12_short_label_values_are_verbatim() -> None:
    assert label_value("gpu-burn-fp8") == "gpu-burn-fp8"
    assert label_value("") == ""


def test_api12_long_label_values_are_clamped_with_a_hash() -> None:
    long = "t" * 80
    clamped = label_value(long)
    assert len(clamped) == 63
    assert is_valid_label_value(clamped)
    assert clamped.startswith("t" * 54 + "-")
    assert label_value(long) == clamped
    assert label_value(long + "x") != clamped


_names = st.text(
    alphabet=st.characters(codec="utf-8", exclude_characters="\0"), min_size=1, max_size=300
)
_inputs = st.tuples(
    _names,
    st.text(max_size=40),
    st.integers(0, 9999),
    _names,
    st.integers(1, 2**31 - 1),
    st.one_of(
        st.none(),
        st.sampled_from(["server", "client"]),
        st.integers(0, 9999).map(lambda r: f"rank-{r}"),
    ),
)


def _pod(args: tuple[str, str, int, str, int, str | None]) -> str:
    run, uid, index, node, attempt, role = args
    return pod_name(
        run_name=run, run_uid=uid, test_index=index, node=node, attempt=attempt, role=role
    )


@given(args=_inputs)
def test_E13_pod_names_are_deterministic_valid_dns1123_labels(
    args: tuple[str, str, int, str, int, str | None],
) -> None:
    name = _pod(args)
    assert name == _pod(args)
    assert _valid_dns_label(name), name


@given(a=_inputs, b=_inputs)
def test_E13_distinct_inputs_give_distinct_pod_names(
    a: tuple[str, str, int, str, int, str | None], b: tuple[str, str, int, str, int, str | None]
) -> None:
    if a != b:
        assert _pod(a) != _pod(b)


@given(
    run=_names,
    uid=st.text(max_size=40),
    index=st.integers(0, 9999),
    attempt=st.integers(1, 2**31 - 1),
)
def test_api94_service_names_are_valid_dns1035_labels(
    run: str, uid: str, index: int, attempt: int
) -> None:
    name = service_name(run_name=run, run_uid=uid, test_index=index, attempt=attempt)
    assert len(name) <= 63 and _DNS1035_LABEL.fullmatch(name), name


@given(value=_names)
def test_api12_every_label_value_is_valid(value: str) -> None:
    assert is_valid_label_value(label_value(value))


def test_api93_host_path_volume_names_are_indexed_sanitised_and_short() -> None:
    assert host_path_volume_name(index=0, mount_path="/dev/infiniband") == "host-0-dev-infiniband"
    assert host_path_volume_name(index=1, mount_path="/") == "host-1"
    long = host_path_volume_name(index=12, mount_path="/" + "Very_Long" * 20)
    assert _valid_dns_label(long)
    assert long.startswith("host-12-very-longvery-long")


@given(base=_inputs, field=st.integers(0, 5), other=_inputs)
def test_E13_changing_any_one_input_changes_the_pod_name(
    base: tuple[str, str, int, str, int, str | None],
    field: int,
    other: tuple[str, str, int, str, int, str | None],
) -> None:
    changed = (*base[:field], other[field], *base[field + 1 :])
    if changed != base:
        assert _pod(changed) != _pod(base)


def test_E13_pod_names_differ_per_node_attempt_and_role() -> None:
    def name(node: str = "n1", attempt: int = 1, role: str | None = "server") -> str:
        return pod_name(
            run_name="r", run_uid="u", test_index=0, node=node, attempt=attempt, role=role
        )

    assert (
        len({name(), name(node="n2"), name(attempt=2), name(role="client"), name(role=None)}) == 5
    )

"""The generated CRDs install on a real apiserver and behave as the reference table says."""

from __future__ import annotations

import json
from typing import Any

import pytest

from glimmer.api.kinds import KINDS

pytestmark = [pytest.mark.controlplane, pytest.mark.usefixtures("installed_crds")]


def test_every_crd_is_established(control_plane: Any) -> None:
    for info in KINDS:
        crd = json.loads(control_plane.kubectl("get", "crd", info.crd_name, "-o", "json").stdout)
        conditions = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
        assert conditions.get("Established") == "True", info.kind
        assert conditions.get("NamesAccepted") == "True", info.kind


def _run(name: str) -> str:
    return json.dumps(
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInRun",
            "metadata": {"name": name},
            "spec": {"profileRef": "node-acceptance", "target": {"nodeNames": ["n1"]}},
        }
    )


def test_kubectl_get_prints_the_reference_printer_columns(
    control_plane: Any, namespace: str
) -> None:
    control_plane.kubectl("create", "-n", namespace, "-f", "-", input=_run("columns"))
    header = control_plane.kubectl("get", "bir", "-n", namespace).stdout.splitlines()[0].split()
    # The reference's columns, then our additive Measured and Certified (I16).
    assert header == [
        "NAME", "PROFILE", "PHASE", "PASSED", "FAILED", "MEASURED", "CERTIFIED", "AGE"
    ]  # fmt: skip
    wide = control_plane.kubectl("get", "bir", "-n", namespace, "-o", "wide").stdout
    assert wide.splitlines()[0].split() == [
        "NAME",
        "PROFILE",
        "PHASE",
        "BASELINE",
        "PASSED",
        "FAILED",
        "MEASURED",
        "CERTIFIED",
        "PROVENANCE",
        "AGE",
    ]
    assert "node-acceptance" in wide.splitlines()[1]


def test_kubectl_get_burnin_lists_every_kind_in_the_category(
    control_plane: Any, namespace: str
) -> None:
    control_plane.kubectl("create", "-n", namespace, "-f", "-", input=_run("category"))
    sink = {
        "apiVersion": "burnin.glimmer.ai/v1alpha1",
        "kind": "BurnInSink",
        "metadata": {"name": "category"},
        "spec": {"type": "Prometheus"},
    }
    control_plane.kubectl("create", "-n", namespace, "-f", "-", input=json.dumps(sink))
    listed = control_plane.kubectl("get", "burnin", "-n", namespace, "-o", "name").stdout.split()
    assert sorted(listed) == [
        "burninrun.burnin.glimmer.ai/category",
        "burninsink.burnin.glimmer.ai/category",
    ]


@pytest.mark.parametrize("info", KINDS, ids=lambda i: i.kind)
def test_short_names_resolve(control_plane: Any, namespace: str, info: Any) -> None:
    (short,) = info.short_names
    result = control_plane.kubectl("get", short, "-n", namespace, "-o", "name")
    assert result.returncode == 0


def test_kubectl_explain_describes_the_target(control_plane: Any) -> None:
    text = control_plane.kubectl("explain", "burninrun.spec.target").stdout
    assert "nodeNames" in text
    assert "verbatim and in order" in text
    assert "tolerations" in text

"""Python model -> apiserver -> model is lossless for every kind.

Objects are drawn from the attrs types (tests.unit.api.model_strategies), created,
given their status through the status subresource, read back and compared: a field
the CRD prunes, a default the model does not carry, or a value the schema rewrites
would all show up as a difference here.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glimmer.api import KINDS, KindInfo, ObjectMeta, from_json, to_json
from tests.integration.api.kube_helpers import as_list
from tests.unit.api.model_strategies import model

pytestmark = [pytest.mark.controlplane, pytest.mark.usefixtures("installed_crds")]

BATCH = 10  # objects per apiserver round trip; 5 examples x 10 = 50 objects per kind


def _listed(control_plane: Any, namespace: str, info: KindInfo) -> dict[str, dict[str, Any]]:
    listed = json.loads(
        control_plane.kubectl("get", info.plural, "-n", namespace, "-o", "json").stdout
    )
    return {item["metadata"]["name"]: item for item in listed["items"]}


def _round_trip(
    control_plane: Any, namespace: str, info: KindInfo, objects: list[Any]
) -> list[Any]:
    batch = uuid.uuid4().hex[:8]
    named = [
        attrs.evolve(obj, metadata=ObjectMeta(name=f"obj-{batch}-{i}", namespace=namespace))
        for i, obj in enumerate(objects)
    ]
    specs = [{k: v for k, v in to_json(obj).items() if k != "status"} for obj in named]
    control_plane.kubectl("create", "-n", namespace, "-f", "-", input=as_list(specs))
    versions = {
        name: item["metadata"]["resourceVersion"]
        for name, item in _listed(control_plane, namespace, info).items()
    }
    with_status = []
    for obj in named:
        if obj.status is None:
            continue
        wire = to_json(obj)
        wire["metadata"]["resourceVersion"] = versions[obj.metadata.name]
        with_status.append(wire)
    if with_status:
        control_plane.kubectl(
            "replace",
            "--subresource=status",
            "-n",
            namespace,
            "-f",
            "-",
            input=as_list(with_status),
        )
    listed = json.loads(
        control_plane.kubectl("get", info.plural, "-n", namespace, "-o", "json").stdout
    )
    by_name = {item["metadata"]["name"]: from_json(item, info.model) for item in listed["items"]}
    return [by_name[obj.metadata.name] for obj in named]


@pytest.mark.parametrize("info", KINDS, ids=lambda i: i.kind)
def test_model_survives_the_apiserver_unchanged(
    control_plane: Any, namespace: str, info: KindInfo
) -> None:
    @settings(
        max_examples=5,
        deadline=None,
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
        ],
    )
    @given(st.lists(model(info.model), min_size=1, max_size=BATCH))
    def check(objects: list[Any]) -> None:
        read = _round_trip(control_plane, namespace, info, objects)
        for original, back in zip(objects, read, strict=True):
            assert back.spec == original.spec
            assert back.status == original.status

    check()


def _run_with_status(name: str, status: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "burnin.glimmer.ai/v1alpha1",
        "kind": "BurnInRun",
        "metadata": {"name": name},
        "spec": {"profileRef": "p", "target": {"nodeNames": ["n1"]}},
        "status": status,
    }


def _put_status(control_plane: Any, namespace: str, obj: dict[str, Any]) -> Any:
    spec_only = {k: v for k, v in obj.items() if k != "status"}
    control_plane.kubectl("create", "-n", namespace, "-f", "-", input=json.dumps(spec_only))
    current = json.loads(
        control_plane.kubectl(
            "get", "burninrun", obj["metadata"]["name"], "-n", namespace, "-o", "json"
        ).stdout
    )
    current["status"] = obj["status"]
    return control_plane.kubectl(
        "replace", "--subresource=status", "-n", namespace, "-f", "-",
        input=json.dumps(current), check=False,
    )  # fmt: skip


def test_I14_status_keeps_unknown_provenance_and_the_deciding_flag(
    control_plane: Any, namespace: str
) -> None:
    attempt = {"attempt": 1, "trigger": "Initial", "phase": "Passed", "provenance": "unknown"}
    result = {
        "name": "t",
        "kind": "custom",
        "phase": "Passed",
        "provenance": "unknown",
        "metrics": {"bw": "1"},
        "attempts": [{**attempt, "deciding": True}],
    }
    status = {"phase": "Passed", "provenance": "unknown", "results": [result]}
    written = _put_status(control_plane, namespace, _run_with_status("prov-unknown", status))
    assert written.returncode == 0, written.stderr
    back = json.loads(
        control_plane.kubectl(
            "get", "burninrun", "prov-unknown", "-n", namespace, "-o", "json"
        ).stdout
    )["status"]
    assert back["provenance"] == "unknown"
    assert back["results"][0]["provenance"] == "unknown"
    assert back["results"][0]["attempts"][0] == {**attempt, "deciding": True}


def test_I14_status_refuses_a_provenance_outside_the_enum(
    control_plane: Any, namespace: str
) -> None:
    status = {"phase": "Passed", "provenance": "emulated"}
    written = _put_status(control_plane, namespace, _run_with_status("prov-bogus", status))
    assert written.returncode != 0
    assert "status.provenance" in written.stderr


def test_I16_kubectl_get_shows_measured_and_certified(control_plane: Any, namespace: str) -> None:
    condition = {
        "type": "Measured",
        "status": "False",
        "reason": "NothingMeasured",
        "message": "no required result was measured",
        "lastTransitionTime": "2024-01-01T00:00:00Z",
    }
    status = {"phase": "Passed", "certifiesSilicon": False, "conditions": [condition]}
    written = _put_status(control_plane, namespace, _run_with_status("shown", status))
    assert written.returncode == 0, written.stderr
    table = control_plane.kubectl("get", "burninrun", "shown", "-n", namespace).stdout
    header, row = table.splitlines()[:2]
    # Cells are aligned under their headers (empty ones are blank, so split by position).
    starts = [header.index(name) for name in header.split()]
    bounds = zip(starts, [*starts[1:], None], strict=True)
    cells = {header[a:b].strip(): row[a:b].strip() for a, b in bounds}
    assert cells["MEASURED"] == "False"
    assert cells["CERTIFIED"] == "false"

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

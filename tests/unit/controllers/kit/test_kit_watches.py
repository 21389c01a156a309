"""Watch wiring: every controller's watch of a kind takes that kind's one ingest
transform (one shared informer per kind: the factory refuses two), declared once in
the kit, and the registrations read as for_/owns/watches."""

from __future__ import annotations

import pytest

from glimmer.controllers.fingerprint import FingerprintOptions, fingerprint_controller
from glimmer.controllers.kit.names import RUNS, SCHEDULES
from glimmer.controllers.kit.watches import TRANSFORMS, Wiring, no_keys, transform_of
from glimmer.controllers.run.setup import owner_run_keys, run_controller
from glimmer.controllers.schedule import schedule_controller
from glimmer.engine import PODS, FakeClient, InformerFactory, Readers, Resource
from glimmer.engine.manager import own_key


def test_every_watch_of_a_kind_takes_the_kinds_one_transform() -> None:
    client = FakeClient()
    readers = Readers.over(client, InformerFactory(client))
    registrations = [
        run_controller(client=client, namespace=None, operator_namespace="ops"),
        fingerprint_controller(
            client=client, readers=readers, options=FingerprintOptions(operator_namespace="ops")
        ),
        schedule_controller(client=client, readers=readers, operator_namespace="ops"),
    ]
    watches = [w for r in registrations for w in r.watches]
    assert len(watches) >= 8
    for watch in watches:
        assert watch.transform is TRANSFORMS[watch.resource], watch.resource


def test_a_kind_with_no_declared_transform_is_refused_naming_the_table() -> None:
    other = Resource("example.com", "v1", "widgets", True, "Widget")
    with pytest.raises(KeyError, match="TRANSFORMS"):
        transform_of(other)
    with pytest.raises(KeyError, match="TRANSFORMS"):
        Wiring.for_(other)


def test_the_wiring_builds_watches_in_the_order_declared() -> None:
    watches = (
        Wiring.for_(RUNS, namespace="lab")
        .owns(PODS, namespace="lab", via=owner_run_keys, label_selector="x")
        .watches(SCHEDULES, to_keys=no_keys)
        .build()
    )
    assert [w.resource for w in watches] == [RUNS, PODS, SCHEDULES]
    assert [w.to_keys for w in watches] == [own_key, owner_run_keys, no_keys]
    assert watches[1].label_selector == "x" and watches[1].namespace == "lab"

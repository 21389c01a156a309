"""The rendezvous Service of a Pair or Group attempt (F1, F4; api §9.4).

One headless, portless Service per (run, test index, attempt): ``clusterIP: None`` so
that ``<hostname>.<service>.<namespace>.svc`` names each pod rather than a virtual IP,
no ports since the runners pick their own, and ``publishNotReadyAddresses`` so that the
server's (or rank 0's) name resolves before it is Ready: the readiness gate is the
controller's (the client is created only once the server is Ready), not DNS's.

The name is deterministic (a restarted manager finds the Service it created), so a
Service found under it is used only when it is provably ours: controlled by this run
and selecting exactly this attempt's pods. Anyone allowed to create Services in the
namespace could otherwise point ``BURNIN_PEER_HOST`` at a pod of their own, and a
link verdict would describe a link to it. A Service is owned by the run (garbage
collected with it) and deleted once its attempt has settled, after the status write.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from glimmer.controllers.kit import names
from glimmer.controllers.kit.core_view import ServiceView
from glimmer.controllers.kit.ref import RunRef
from glimmer.plan import label_value

JSON = dict[str, Any]

#: The scopes whose unit is one execution over several pods, met at a rendezvous Service.
LINK_SCOPES: Final = frozenset({"Pair", "Group"})


def service_selector(run: RunRef, *, test: str, attempt: int) -> dict[str, str]:
    """The run/test/attempt labels every pod of the attempt carries (and nothing else does)."""
    return {
        names.RUN_LABEL: label_value(run.name),
        names.TEST_LABEL: label_value(test),
        names.ATTEMPT_LABEL: str(attempt),
    }


def build_service(*, run: RunRef, name: str, test: str, attempt: int) -> JSON:
    """The manifest of one attempt's rendezvous Service."""
    selector = service_selector(run, test=test, attempt=attempt)
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": name,
            "namespace": run.namespace,
            "labels": dict(selector),
            "ownerReferences": [run.owner_reference()],
        },
        "spec": {
            "clusterIP": "None",
            "publishNotReadyAddresses": True,
            "selector": dict(selector),
        },
    }


def foreign_service_reason(found: Mapping[str, Any], *, expected: Mapping[str, Any]) -> str | None:
    """Why ``found`` is not the Service :func:`build_service` made, or None when it is."""
    service, want = ServiceView(found), ServiceView(expected)
    refs = [r for r in service.owner_references if r.get("controller")]
    if [r.get("uid") for r in refs] != [want.owner_references[0].get("uid")]:
        return "it does not name this run as its controller"
    if service.selector != want.selector:
        return "its selector is not this attempt's pods"
    if service.cluster_ip != "None" or not service.publishes_not_ready:
        return "it is not headless with publishNotReadyAddresses"
    if service.has_ports:
        return "it has ports"
    return None

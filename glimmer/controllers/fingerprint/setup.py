"""The NodeFingerprint controller's registration: what it watches and how events map
to node keys.

Nodes: an add, and an update that changes what a pass reads (labels, ``nodeInfo``,
allocatable, the cordon-owner stamp), enqueue the node. Heartbeats (conditions,
``lastHeartbeatTime``) change none of these and enqueue nothing, which is what keeps a
5,000-node fleet quiet. A node's deletion enqueues nothing: its fingerprint stays by
design (api §7), and the periodic resync drops its metric.

Its own NodeFingerprints: a change or deletion enqueues the node it names, so a
deleted fingerprint is recreated and an edited ``spec.maxVerdictAgeSeconds`` applies.

BurnInRuns: a terminal run enqueues every node its results name, which is how a new
verdict reaches the node's fingerprint.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Final

from glimmer.controllers.fingerprint.metrics import VerdictMetrics
from glimmer.controllers.fingerprint.reconciler import (
    RUNS_BY_NODE,
    FingerprintOptions,
    FingerprintReconciler,
    now_utc,
    runs_by_node,
)
from glimmer.controllers.kit.core_view import NodeView
from glimmer.controllers.kit.indexes import node_watch
from glimmer.controllers.kit.names import CORDON_OWNER, FINGERPRINTS, RUNS
from glimmer.controllers.kit.reaper import StampReaper
from glimmer.controllers.kit.view import FingerprintView, ObjectView
from glimmer.controllers.kit.watches import Wiring
from glimmer.engine import (
    ControllerOptions,
    ControllerRegistration,
    InformerEvent,
    KubeClient,
    Readers,
)

FINGERPRINT_CONTROLLER: Final = "nodefingerprint"


def _relevant(node: Mapping[str, Any]) -> tuple[Any, ...]:
    view = NodeView(node)
    return (
        view.labels,
        view.annotations.get(CORDON_OWNER),
        view.node_info,
        view.allocatable,
    )


def node_keys(event: InformerEvent) -> list[str]:
    """Which node keys a Node event concerns (see the module docstring)."""
    if event.type == "delete":
        return []
    unchanged = event.old is not None and _relevant(event.old) == _relevant(event.obj)
    if event.type == "update" and unchanged:
        return []
    return [ObjectView(event.obj).name]


def fingerprint_keys(event: InformerEvent) -> list[str]:
    node = FingerprintView(event.obj).node_name
    return [node] if node else []


def run_keys(event: InformerEvent) -> list[str]:
    if event.type == "delete":
        return []  # a verdict, once bound, lives in the fingerprint; the run may go
    return runs_by_node(event.obj)


def node_log_context(key: str) -> dict[str, str]:
    return {"node": key}


def fingerprint_controller(
    *,
    client: KubeClient,
    readers: Readers,
    options: FingerprintOptions,
    runs_namespace: str | None = None,
    metrics: VerdictMetrics | None = None,
    now: Callable[[], datetime] = now_utc,
    workers: int = 4,
) -> ControllerRegistration:
    """NodeFingerprints for every node, with the orphan-stamp reaper inside (E21).

    ``runs_namespace`` is the namespace the run informer watches (the manager's; None for
    all). ``metrics``: register it on the manager's registry to export
    ``glimmer_node_verdict``.
    """
    reconciler = FingerprintReconciler(
        client=client,
        readers=readers,
        options=options,
        reaper=StampReaper(client=client, readers=readers),
        metrics=metrics,
        now=now,
    )
    # One shared informer per kind: the transforms are the kit's (the run controller's
    # watches of these kinds get the same), and Nodes carry the cordon-owner index the
    # reaper reads.
    watches = (
        node_watch(to_keys=node_keys),
        *Wiring()
        .watches(FINGERPRINTS, namespace=options.operator_namespace, to_keys=fingerprint_keys)
        .watches(RUNS, namespace=runs_namespace, to_keys=run_keys,
                 index={RUNS_BY_NODE: runs_by_node})
        .build(),
    )  # fmt: skip
    return ControllerRegistration(
        name=FINGERPRINT_CONTROLLER,
        reconciler=reconciler,
        watches=watches,
        options=ControllerOptions(max_concurrent_reconciles=workers),
        log_context=node_log_context,
    )

"""Registrations the manager wires in: the run controller and the stamp reaper.

Both are keyed so that the workqueue gives one worker per object, which is all the
concurrency safety the run reconciler needs: it keeps no state between passes that a
decision reads (its reads' memory only saves requests; every decision is the cluster's).

The caches they fill store objects without ``managedFields`` (the ingest transforms):
that is usually the largest part of an object and no rule reads it. Nodes and runner
pods, cached by the thousand, go through :func:`~glimmer.engine.compact_node` /
:func:`~glimmer.engine.compact_pod` (equal strings shared; on nodes the kubelet's image
list and volume bookkeeping dropped, which no rule reads either), so every field a
reconciler reads is kept (tests/unit/controllers/run/test_cache_transforms.py). Runs keep
:func:`~glimmer.engine.strip_managed_fields` only: a run is re-ingested on every status
write, and sharing the strings of a megabyte of status would cost CPU each time for
one object. Pods are indexed by run, nodes by cordon owner, for the cached reader (see
:mod:`glimmer.engine.reader`).

Served by label (``--serve-namespace-selector``), one more watch: the Namespaces that
carry the labels, filtered by the apiserver (a namespace losing a label leaves the watch
as a deletion, gaining one enters it as an addition). Its cache is what
:meth:`RunOptions.serves` is asked about, and each of its events re-reconciles every run
in that namespace (runs indexed by namespace), so a run whose namespace loses the labels
is unloaded at once, not at its next backstop requeue.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Final

from glimmer.controllers.kit import names
from glimmer.controllers.kit.indexes import (
    PODS_BY_RUN,
    pods_by_run,
)
from glimmer.controllers.kit.names import FINGERPRINTS, RUNS
from glimmer.controllers.kit.view import ObjectView
from glimmer.controllers.kit.watches import Wiring, no_keys
from glimmer.controllers.run.delivery import Deliverer
from glimmer.controllers.run.reconciler import RunOptions, RunReconciler, now_utc
from glimmer.engine import (
    NAMESPACES,
    PODS,
    CachedReader,
    ControllerOptions,
    ControllerRegistration,
    InformerEvent,
    KubeClient,
    NotCachedError,
    Readers,
    object_key,
)
from glimmer.engine.manager import KeyMapper
from glimmer.sinks import RunExporter

RUN_CONTROLLER: str = "burninrun"

#: Runs by namespace, so a Namespace event finds the runs it concerns.
RUNS_BY_NAMESPACE: Final = "runs-by-namespace"


def runs_by_namespace(obj: Mapping[str, Any]) -> list[str]:
    namespace = ObjectView(obj).namespace
    return [namespace] if namespace else []


def run_log_context(key: str) -> dict[str, str]:
    """Every log line of a run's reconcile names the run."""
    namespace, _, name = key.partition("/")
    return {"namespace": namespace, "run": name}


def owner_run_keys(event: InformerEvent) -> list[str]:
    """A runner pod's event concerns the BurnInRun that controls it."""
    pod = ObjectView(event.obj)
    return [
        f"{pod.namespace}/{ref.get('name')}"
        for ref in pod.owner_references
        if ref.get("kind") == "BurnInRun" and ref.get("controller")
    ]


def namespace_run_keys(cached: CachedReader | None) -> KeyMapper:
    """A served Namespace's event concerns every run in it (from the run cache; none
    while that cache cannot answer: its own sync then enqueues every run anyway)."""

    def keys(event: InformerEvent) -> list[str]:
        name = ObjectView(event.obj).name
        if cached is None or not name:
            return []
        try:
            return list(
                cached.by_index_view(RUNS, RUNS_BY_NAMESPACE, name, view=object_key, namespace=name)
            )
        except NotCachedError:
            return []

    return keys


def run_controller(
    *,
    client: KubeClient,
    namespace: str | None,
    operator_namespace: str,
    deliverer: Deliverer | None = None,
    options: RunOptions | None = None,
    now: Callable[[], datetime] = now_utc,
    workers: int = 4,
    readers: Readers | None = None,
    exporter: RunExporter | None = None,
) -> ControllerRegistration:
    """The BurnInRun controller. ``namespace`` None watches every namespace.

    ``readers`` (cached over this manager's informers, and live) are the reconciler's;
    None reads everything live through ``client`` (see ``reads``). ``exporter``: the
    Prometheus sink's collector, whose series of a run are dropped with the run (E20).
    """
    forgets = [exporter.forget] if exporter is not None else []

    def forget(namespace: str, name: str) -> None:
        for each in forgets:
            each(namespace, name)

    reconciler = RunReconciler(
        client=client,
        options=options or RunOptions(operator_namespace=operator_namespace),
        deliverer=deliverer,
        now=now,
        forget=forget if forgets else None,
        readers=readers,
    )
    selector = reconciler.ctx.options.namespace_selector
    wiring = (
        Wiring.for_(RUNS, namespace=namespace, index={RUNS_BY_NAMESPACE: runs_by_namespace})
        .owns(PODS, namespace=namespace, label_selector=names.RUN_LABEL, via=owner_run_keys,
              index={PODS_BY_RUN: pods_by_run})
        # E14: each launch reads its node's GPU vendor; cached, a miss confirmed live.
        .watches(FINGERPRINTS, namespace=operator_namespace, to_keys=no_keys)
    )  # fmt: skip
    if selector is not None:
        # Served by label: a Namespace gaining or losing the labels requeues its runs.
        cached = readers.cached if readers is not None else None
        wiring.watches(NAMESPACES, label_selector=selector, to_keys=namespace_run_keys(cached))
    return ControllerRegistration(
        name=RUN_CONTROLLER,
        reconciler=reconciler,
        watches=wiring.build(),
        options=ControllerOptions(max_concurrent_reconciles=workers),
        log_context=run_log_context,
    )

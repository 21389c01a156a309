"""The BurnInSchedule controller's registration.

Schedules enqueue themselves; a BurnInRun enqueues the schedule that controls it, so a
run finishing updates ``lastRunPhase`` at once and a Forbid schedule sees its run end.
Ticks are requeue-afters computed from the schedule, never a poll. A schedule with
``trigger.nodeJoined`` also hears of Nodes carrying its taint key and of NodeFingerprint
changes (drift), and looks again every minute besides.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Final

from glimmer.controllers.kit.indexes import node_watch
from glimmer.controllers.kit.names import FINGERPRINTS, RUNS, SCHEDULES
from glimmer.controllers.kit.view import ObjectView
from glimmer.controllers.kit.watches import Wiring
from glimmer.controllers.schedule.reconciler import ScheduleReconciler, now_utc
from glimmer.engine import (
    ControllerOptions,
    ControllerRegistration,
    InformerEvent,
    KubeClient,
    Readers,
)

SCHEDULE_CONTROLLER: Final = "burninschedule"


def owner_schedule_keys(event: InformerEvent) -> list[str]:
    run = ObjectView(event.obj)
    return [
        f"{run.namespace}/{ref.get('name')}"
        for ref in run.owner_references
        if ref.get("kind") == "BurnInSchedule" and ref.get("controller")
    ]


def schedule_log_context(key: str) -> dict[str, str]:
    namespace, _, name = key.partition("/")
    return {"namespace": namespace, "schedule": name}


def schedule_controller(
    *,
    client: KubeClient,
    readers: Readers,
    operator_namespace: str,
    namespace: str | None = None,
    now: Callable[[], datetime] = now_utc,
    workers: int = 2,
) -> ControllerRegistration:
    """``namespace`` None watches the manager's namespace (all when that is None)."""
    reconciler = ScheduleReconciler(
        client=client,
        readers=readers,
        schedules=SCHEDULES,
        operator_namespace=operator_namespace,
        now=now,
    )

    def tainted_node_keys(event: InformerEvent) -> list[str]:
        """J6/J7: a Node carrying (or, as the old object of an update, having carried) a
        trigger's taint key concerns that trigger's schedule."""
        taints = ObjectView(event.obj).spec.get("taints")
        keys = (
            {t.get("key") for t in taints if isinstance(t, dict)}
            if isinstance(taints, list)
            else set()
        )
        return sorted(k for k, taint in reconciler.trigger_keys.items() if taint in keys)

    def trigger_keys(event: InformerEvent) -> list[str]:
        """J8: a NodeFingerprint change may be drift: every trigger schedule hears of it."""
        return sorted(reconciler.trigger_keys)

    return ControllerRegistration(
        name=SCHEDULE_CONTROLLER,
        reconciler=reconciler,
        watches=(
            *Wiring.for_(SCHEDULES, namespace=namespace)
            .owns(RUNS, namespace=namespace, via=owner_schedule_keys)
            .watches(FINGERPRINTS, namespace=operator_namespace, to_keys=trigger_keys)
            .build(),
            node_watch(to_keys=tainted_node_keys),
        ),
        options=ControllerOptions(max_concurrent_reconciles=workers),
        log_context=schedule_log_context,
    )

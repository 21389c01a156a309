"""What ``glimmer plan`` (= ``glimmer run --dry-run``) shows for each execution.

Everything comes from the functions the attempts themselves call (image resolution,
the local command, the assembled environment, the pinned gates), so the plan shown is
the plan that would run, and no GPU is needed to see it. An execution whose image
cannot be justified reads ``UNRESOLVED`` with the reason (P4: in-cluster that is a
per-execution Error at launch), never a guessed default.
"""

from __future__ import annotations

from typing import Any

from glimmer.local.dispatcher import LocalOptions, planned_env, runner_command
from glimmer.local.links import GroupFlags, PairFlags, plan_targets, rendezvous_of
from glimmer.plan import ImageError, PinnedPlan, resolve_image
from glimmer.plan import spec as specs

UNRESOLVED = "UNRESOLVED"


def plan_view(
    plan: PinnedPlan, *, options: LocalOptions, flags: PairFlags | GroupFlags | None
) -> list[dict[str, Any]]:
    """One entry per planned execution, in plan order."""
    rendezvous = rendezvous_of(flags)
    nodes = plan_targets(node=options.node, flags=flags)
    view = []
    for test in plan.tests:
        image = resolve_image(kind=test.kind, runner=specs.runner(test.spec), node_vendor=None)
        command = runner_command(test, options)
        view.append(
            {
                "name": test.name,
                "kind": test.kind,
                "scope": test.scope,
                "required": test.required,
                "nodes": nodes,
                "image": image if isinstance(image, str) else UNRESOLVED,
                "imageProblem": image.message if isinstance(image, ImageError) else "",
                "command": command if isinstance(command, list) else None,
                "commandProblem": command if isinstance(command, str) else "",
                "repeatCount": specs.repeat_count(test.spec),
                "durationSeconds": specs.duration_seconds(test.spec),
                "gates": [dict(t) for t in specs.thresholds(test.spec)],
                "variantAxes": dict(test.axes),
                "env": [
                    {"name": n, "value": v}
                    for n, v in planned_env(test, options=options, rendezvous=rendezvous)
                ],
            }
        )
    return view

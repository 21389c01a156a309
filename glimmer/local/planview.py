"""What ``glimmer plan`` (= ``glimmer run --dry-run``) shows for each execution.

Everything comes from the functions the attempts themselves call (image resolution,
the first attempt's process or container command, the assembled environment, the
pinned gates), so the plan shown is the plan that would run, and no GPU is needed to
see it. An execution whose image cannot be justified reads ``UNRESOLVED`` with the
reason (P4: in-cluster that is a per-execution Error at launch), never a guessed
default.
"""

from __future__ import annotations

from typing import Any

from glimmer.local.dispatcher import LocalOptions, execution_image, launch, planned_env
from glimmer.local.links import GroupFlags, PairFlags, plan_targets, rendezvous_of
from glimmer.plan import ImageError, PinnedPlan
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
        image = execution_image(test)
        how = launch(test, attempt=1, options=options, rendezvous=rendezvous)
        view.append(
            {
                "name": test.name,
                "kind": test.kind,
                "scope": test.scope,
                "required": test.required,
                "nodes": nodes,
                "image": image if isinstance(image, str) else UNRESOLVED,
                "imageProblem": image.message if isinstance(image, ImageError) else "",
                "runtime": how.runtime if not isinstance(how, str) else None,
                "command": how.command if not isinstance(how, str) else None,
                "commandProblem": how if isinstance(how, str) else "",
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

"""What ``glimmer plan`` (= ``glimmer run --dry-run``) shows for each execution.

Everything comes from the functions the attempts themselves call (image resolution,
the first attempt's process or container command, the assembled environment, the
pinned gates), so the plan shown is the plan that would run, and no GPU is needed to
see it. An execution whose image cannot be justified reads ``UNRESOLVED`` with the
reason (P4: in-cluster that is a per-execution Error at launch), never a guessed
default. The host probe (N6) the images were resolved for heads the plan, and an image
a local runner stands in for says so (N7: ``image X -> local runner <kind>``).
"""

from __future__ import annotations

from typing import Any

from glimmer.local.dispatcher import LocalOptions, execution_image, launch, planned_env
from glimmer.local.host import HostProbe, this_host
from glimmer.local.launch import standing_in
from glimmer.local.links import GroupFlags, PairFlags, plan_targets, rendezvous_of
from glimmer.plan import ImageError, PinnedPlan
from glimmer.plan import spec as specs

UNRESOLVED = "UNRESOLVED"


def plan_view(
    plan: PinnedPlan,
    *,
    options: LocalOptions,
    flags: PairFlags | GroupFlags | None,
    host: HostProbe | None = None,
) -> list[dict[str, Any]]:
    """One entry per planned execution, in plan order."""
    host = host or this_host(options.sim)
    rendezvous = rendezvous_of(flags)
    nodes = plan_targets(node=options.node, flags=flags)
    view = []
    for test in plan.tests:
        image = execution_image(test, host=host)
        how = launch(test, attempt=1, options=options, rendezvous=rendezvous, host=host)
        known = None if isinstance(how, str) else standing_in(test, options=options, host=host)
        view.append(
            {
                "name": test.name,
                "kind": test.kind,
                "scope": test.scope,
                "required": test.required,
                "nodes": nodes,
                "image": image if isinstance(image, str) else UNRESOLVED,
                "imageProblem": image.message if isinstance(image, ImageError) else "",
                "imageRunsAs": f"local runner {known.kind}" if known is not None else None,
                "runtime": how.runtime if not isinstance(how, str) else None,
                "command": how.command if not isinstance(how, str) else None,
                "commandProblem": how if isinstance(how, str) else "",
                "repeatCount": specs.repeat_count(test.spec),
                "durationSeconds": specs.duration_seconds(test.spec),
                "gates": [dict(t) for t in specs.thresholds(test.spec)],
                "variantAxes": dict(test.axes),
                # What the image declares to its runner comes first: the plan's own
                # variables and runner.env override it, as in a container.
                "env": [
                    {"name": n, "value": v}
                    for n, v in [
                        *(known.declarations().items() if known is not None else ()),
                        *planned_env(test, options=options, rendezvous=rendezvous),
                    ]
                ],
            }
        )
    return view


def image_line(entry: dict[str, Any]) -> str:
    """The plan's ``image:`` line: the image, what stands in for it here, or why none."""
    image = entry["image"]
    if image == UNRESOLVED:
        return f"{UNRESOLVED}: {entry['imageProblem']}"
    runs_as = entry.get("imageRunsAs")
    return f"{image} -> {runs_as}" if runs_as else str(image)


def host_line(host: HostProbe) -> str:
    """The plan's first line: what the images were resolved for (N6)."""
    vendor = host.vendor or "unknown (resolved as a node with no GPU labels)"
    return f"host: {host.summary()}; GPU vendor {vendor}; fingerprint {host.digest}"

"""What ``glimmer plan`` (= ``glimmer run --dry-run``) shows for each execution.

Everything comes from the functions the attempts themselves call (image resolution,
the first attempt's process or container command, the assembled environment, the
pinned gates), so the plan shown is the plan that would run, and no GPU is needed to
see it. An execution whose image cannot be justified reads ``UNRESOLVED`` with the
reason (P4: in-cluster that is a per-execution Error at launch), never a guessed
default. The host probe (N8) the images were resolved for heads the plan, and an image
a local runner stands in for says so (N7: ``image X -> local runner <kind>``).

The environment shown is the one the first attempt's runner is given
(``runner_variables``), value for value: a segmented soak therefore shows its whole
``durationSeconds`` as ``BURNIN_DURATION_SECONDS``, the one window a bare host runs
(N2), never the segment length an operator's pod would get. Names the host leaves unset
are listed too, with no value. What a stand-in's image declares to its runner comes
first, overridden by the plan's own variables, as in a container.
"""

from __future__ import annotations

from typing import Any

from glimmer.local.dispatcher import (
    LocalOptions,
    execution_image,
    launch,
    planned_env,
    runner_variables,
)
from glimmer.local.host import HostProbe, this_host
from glimmer.local.launch import host_window, standing_in
from glimmer.local.links import GroupFlags, PairFlags, plan_targets, rendezvous_of
from glimmer.plan import ImageError, PinnedPlan, PlannedTest
from glimmer.plan import spec as specs
from glimmer.plan.env import GroupRendezvous, PairRendezvous

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
                "hostWindow": _host_window(test, options=options),
                "gates": [dict(t) for t in specs.thresholds(test.spec)],
                "variantAxes": dict(test.axes),
                "env": with_declarations(
                    known.declarations() if known is not None else {},
                    shown_env(test, options=options, rendezvous=rendezvous),
                ),
            }
        )
    return view


def shown_env(
    test: PlannedTest,
    *,
    options: LocalOptions,
    rendezvous: PairRendezvous | GroupRendezvous | None,
) -> list[dict[str, str | None]]:
    """The first attempt's runner environment, in assembly order, one entry per name.

    Values come from ``runner_variables``, the function the attempt itself calls, so
    nothing shown can differ from what the runner gets; ``planned_env`` contributes only
    the order and the names a bare host leaves unset (value None, N2).
    """
    given = runner_variables(test, attempt=1, options=options, rendezvous=rendezvous)
    names = dict.fromkeys(
        name for name, _ in planned_env(test, options=options, rendezvous=rendezvous)
    )
    names.update(dict.fromkeys(given))
    return [{"name": name, "value": given.get(name)} for name in names]


def with_declarations(
    declared: dict[str, str], shown: list[dict[str, str | None]]
) -> list[dict[str, str | None]]:
    """What the image declares, then the runner's own environment, one entry per name:
    a name in both reads as the plan sets it (a container's ``ENV``, then ``-e``)."""
    own = {entry["name"] for entry in shown}
    first: list[dict[str, str | None]] = [
        {"name": n, "value": v} for n, v in declared.items() if n not in own
    ]
    return [*first, *shown]


def _host_window(test: PlannedTest, *, options: LocalOptions) -> dict[str, Any] | None:
    """N9: the real host window ``--host-window`` gives this test under ``--sim``."""
    window = host_window(test, options=options)
    if window is None:
        return None
    return {"givenSeconds": window.given, "askedSeconds": window.asked, "note": window.describe()}


def image_line(entry: dict[str, Any]) -> str:
    """The plan's ``image:`` line: the image, what stands in for it here, or why none."""
    image = entry["image"]
    if image == UNRESOLVED:
        return f"{UNRESOLVED}: {entry['imageProblem']}"
    runs_as = entry.get("imageRunsAs")
    return f"{image} -> {runs_as}" if runs_as else str(image)


def host_line(host: HostProbe) -> str:
    """The plan's first line: what the images were resolved for (N8)."""
    vendor = host.vendor or "unknown (resolved as a node with no GPU labels)"
    return f"host: {host.summary()}; GPU vendor {vendor}; fingerprint {host.digest}"

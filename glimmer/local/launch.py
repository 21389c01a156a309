"""How one attempt starts on this host: the command, its environment, and for a container
what stops it.

Each execution runs either as a local process (this repository's runners,
``runner.command``, ``--image-command``) or as its image under a container runtime
(``LocalOptions.runtime``, :mod:`glimmer.local.runtimes`). Either way the runner gets
only the plan's variables (api §10 as N2 adjusts it: reserved ``BURNIN_*`` names in
``runner.env`` are ignored, a ``valueFrom`` a bare host cannot answer is left unset) and,
for a Pair or Group side, the rendezvous environment and the peer's address as given
(host networking, N2). A test nothing here can run is refused before anything runs
(:func:`unlaunchable`), naming the fix.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from glimmer.contract import SIM_GPU_ENV
from glimmer.local.model import LocalOptions
from glimmer.local.runtimes import ContainerStop, container_command, container_name
from glimmer.plan import (
    GroupRendezvous,
    ImageError,
    PairRendezvous,
    PinnedPlan,
    PlannedTest,
    resolve_image,
    runner_env,
)
from glimmer.plan import spec as specs
from glimmer.plan.env import DURATION
from runners.catalog import RUNNERS


@dataclass(frozen=True)
class Launch:
    """How one attempt starts: the command, its environment, and for a container what
    stops the container itself when the attempt is cut short."""

    command: list[str]
    env: dict[str, str]
    runtime: str
    stopper: ContainerStop | None = None


def execution_image(test: PlannedTest) -> str | ImageError:
    """The execution's image as the plan resolves it. A bare host knows no node vendor,
    so ``imagesByVendor`` is not consulted: ``runner.image`` or the kind's default."""
    return resolve_image(kind=test.kind, runner=specs.runner(test.spec), node_vendor=None)


def runner_command(test: PlannedTest, options: LocalOptions) -> list[str] | str:
    """The process that stands in for the test's image, or why there is none."""
    runner = specs.runner(test.spec)
    args = [str(a) for a in runner.get("args") or []]
    override = options.image_commands.get(test.kind)
    if override:
        return [*override, *args]
    command = [str(c) for c in runner.get("command") or []]
    if command:
        return [*command, *args]
    catalog = RUNNERS.get(test.kind)
    if catalog is not None and not specs.runner_image(test.spec):
        return [sys.executable, "-m", catalog.module, *args]
    image = specs.runner_image(test.spec) or f"the default {test.kind} image"
    return (
        f"no container runtime and no local command for {image}: install podman, docker "
        "or nerdctl (--runtime auto picks the first that works), set runner.command in "
        f"the test, or pass --image-command {test.kind}=CMD"
    )


def launch(
    test: PlannedTest,
    *,
    attempt: int,
    options: LocalOptions,
    rendezvous: PairRendezvous | GroupRendezvous | None = None,
) -> Launch | str:
    """How attempt ``attempt`` runs, or why it cannot (refused before anything runs).

    ``--image-command`` always means a local process; otherwise a runtime runs the
    image, and without one the local process of :func:`runner_command` stands in.
    ``rendezvous`` stands in for the link's when there is no link yet (``glimmer plan``).
    """
    runtime = options.runtime
    if runtime is None or options.image_commands.get(test.kind):
        command = runner_command(test, options)
        if isinstance(command, str):
            return command
        env = {
            **_host_env(),
            **runner_variables(test, attempt=attempt, options=options, rendezvous=rendezvous),
        }
        return Launch(command=command, env=env, runtime="process")
    image = execution_image(test)
    if isinstance(image, ImageError):
        return f"no image to run with {runtime.name}: {image.message}"
    name = container_name(run_id=options.run_id, test=test.name, attempt=attempt)
    client_env = _host_env()
    command = container_command(
        test,
        runtime=runtime,
        image=image,
        env=runner_variables(test, attempt=attempt, options=options, rendezvous=rendezvous),
        name=name,
        host_network=test.scope in ("Pair", "Group"),
    )
    return Launch(
        command=command,
        env=client_env,
        runtime=runtime.name,
        stopper=ContainerStop(runtime=runtime, name=name, env=client_env),
    )


def _host_env() -> dict[str, str]:
    """This host's environment without anything a runner must get only from the plan."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BURNIN_")}
    env.pop(SIM_GPU_ENV, None)
    return env


def _env(test: PlannedTest, *, attempt: int, options: LocalOptions) -> dict[str, str]:
    """A local runner's environment: the host's, then the runner's own variables."""
    return {**_host_env(), **runner_variables(test, attempt=attempt, options=options)}


def runner_variables(
    test: PlannedTest,
    *,
    attempt: int,
    options: LocalOptions,
    rendezvous: PairRendezvous | GroupRendezvous | None = None,
) -> dict[str, str]:
    """The variables the plan gives the runner (api §10 as N2 adjusts it), in order:
    the same for a local process and a container."""
    if rendezvous is None and options.link is not None:
        rendezvous = options.link.rendezvous
    env: dict[str, str] = {}
    for entry in runner_env(
        spec=test.spec,
        attempt=attempt,
        axes=test.axes,
        rendezvous=rendezvous,
        include_resource_limits=False,
        ignore_reserved_runner_env=True,
    ):
        value = _env_value(entry, options)
        if value is not None:
            env[str(entry["name"])] = value
    if specs.soak(test.spec) is not None:
        # N2: on a bare host a soak is one process for its whole duration.
        env[DURATION] = str(specs.duration_seconds(test.spec))
    if options.sim:
        env[SIM_GPU_ENV] = options.sim
    return env


#: ``fieldRef`` paths a bare host can answer (N2); any other source is left unset.
_LOCAL_FIELD_PATHS = ("spec.nodeName", "status.hostIP")


def _field_path(entry: Mapping[str, Any]) -> Any:
    source = entry.get("valueFrom")
    field_ref = source.get("fieldRef") if isinstance(source, Mapping) else None
    return field_ref.get("fieldPath") if isinstance(field_ref, Mapping) else None


def _env_value(entry: Mapping[str, Any], options: LocalOptions) -> str | None:
    if entry.get("valueFrom") is None:
        return str(entry.get("value") or "")
    field_path = _field_path(entry)
    if field_path == "spec.nodeName":
        return options.node
    if field_path == "status.hostIP":
        return options.host_ip
    return None  # left unset, never empty (N2)


def needs_host_ip(plan: PinnedPlan) -> list[str]:
    """Tests whose ``runner.env`` reads ``status.hostIP`` (the host's address is needed)."""
    return [
        test.name
        for test in plan.tests
        if any(_field_path(e) == "status.hostIP" for e in specs.runner_env(test.spec))
    ]


def planned_env(
    test: PlannedTest,
    *,
    options: LocalOptions,
    rendezvous: PairRendezvous | GroupRendezvous | None,
) -> list[tuple[str, str | None]]:
    """``glimmer plan``: the BURNIN_* and ``runner.env`` names a runner would get, in
    order, with their values (None: left unset on this host, N2)."""
    return [
        (str(entry["name"]), _env_value(entry, options))
        for entry in runner_env(
            spec=test.spec,
            attempt=1,
            axes=test.axes,
            rendezvous=rendezvous,
            include_resource_limits=False,
            ignore_reserved_runner_env=True,
        )
    ]


def unresolved_env(plan: PinnedPlan) -> list[str]:
    """N2's warning: ``runner.env`` entries a bare host leaves unset, one line each."""
    lines = []
    for test in plan.tests:
        for entry in specs.runner_env(test.spec):
            if entry.get("valueFrom") is not None and _field_path(entry) not in _LOCAL_FIELD_PATHS:
                lines.append(
                    f"test {test.name!r}: runner.env {entry['name']} is left unset on a bare "
                    "host (only fieldRef spec.nodeName and status.hostIP resolve here)"
                )
    return lines


def unlaunchable(plan: PinnedPlan, *, options: LocalOptions) -> list[str]:
    """Tests nothing on this host can run (no image for the runtime, no runtime and no
    local command), one line each naming the fix: ``glimmer run`` refuses them before
    anything runs rather than finding them as an Error per attempt; ``glimmer plan``
    shows them."""
    found = []
    for test in plan.tests:
        how = launch(test, attempt=1, options=options)
        if isinstance(how, str):
            found.append(f"test {test.name!r}: {how}")
    return found

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

The image is resolved as the operator resolves it for a node (E14), with this host's
probe standing in for the node's fingerprint (N8, :func:`glimmer.local.host.this_host`):
on an AMD host a kind with a ROCm build gets its ``-rocm`` image, an ``imagesByVendor``
entry for the host's vendor wins, and an image that turns on the vendor with nothing for
this one is that execution's Error (:func:`vendor_image_problem`), as in a cluster,
not a refusal of the run.

Without a container runtime, an image of a known runner family (ours or the Go
implementation's, :func:`glimmer.plan.images.runner_image_of`) runs as this repository's
runner of the same kind, with what the image declares to its runner (a ROCm build's
``BURNIN_GPU_VENDOR=amd``) (N7). The stand-in is by kind: an image of one kind pinned
on a test of another is refused, never run as a runner it is not.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from glimmer.contract import SIM_GPU_ENV
from glimmer.contract.kinds import HARDWARE_INDEPENDENT_KINDS
from glimmer.local.host import HostProbe, this_host
from glimmer.local.model import LocalOptions
from glimmer.local.runtimes import ContainerStop, container_command, container_name
from glimmer.plan import (
    GroupRendezvous,
    ImageError,
    PairRendezvous,
    PinnedPlan,
    PlannedTest,
    depends_on_vendor,
    resolve_image,
)
from glimmer.plan import spec as specs
from glimmer.plan.env import DURATION, bare_host_runner_env, bare_host_window_seconds
from glimmer.plan.images import RunnerImage, runner_image_of
from runners.catalog import RUNNERS


@dataclass(frozen=True)
class Launch:
    """How one attempt starts: the command, its environment, and for a container what
    stops the container itself when the attempt is cut short."""

    command: list[str]
    env: dict[str, str]
    runtime: str
    stopper: ContainerStop | None = None


def execution_image(test: PlannedTest, *, host: HostProbe) -> str | ImageError:
    """The execution's image as the operator resolves it on a node (E14), this host's
    probe (N8) standing in for the node's fingerprint: ``runner.image``, else the
    ``imagesByVendor`` entry for the host's vendor, else the kind's default for it."""
    return resolve_image(kind=test.kind, runner=specs.runner(test.spec), node_vendor=host.vendor)


def _image_matters(test: PlannedTest, options: LocalOptions) -> bool:
    """Whether the image decides what runs: not with ``--image-command``, nor for a local
    process given ``runner.command`` (it *is* the program)."""
    if options.image_commands.get(test.kind):
        return False
    return options.runtime is not None or not specs.runner(test.spec).get("command")


def vendor_image_problem(
    test: PlannedTest, *, options: LocalOptions, host: HostProbe
) -> str | None:
    """E14's per-execution Error: the image turns on the host's GPU vendor and nothing
    suits this one (the default built for another vendor, no ``imagesByVendor`` entry).
    In a cluster that attempt is an Error on the node, retried, never a refusal of the
    run; so it is here (the message is the operator's)."""
    if host.vendor is None or not _image_matters(test, options):
        return None
    if not depends_on_vendor(kind=test.kind, runner=specs.runner(test.spec)):
        return None
    image = execution_image(test, host=host)
    if not isinstance(image, ImageError):
        return None
    return f"no runner image for node {options.node}: {image.message}"


def stand_in(test: PlannedTest, *, host: HostProbe) -> RunnerImage | str:
    """The runner image a local process stands in for (N7), or why none may.

    The execution's image must be of a known runner family, of the test's own kind, with
    a runner in this repository; an unknown image needs a container runtime.
    """
    image = execution_image(test, host=host)
    if isinstance(image, ImageError):
        return (
            f"no image for a local runner to stand in for ({image.message}): set "
            f"runner.command in the test, or pass --image-command {test.kind}=CMD"
        )
    known = runner_image_of(image)
    if known is None or known.kind not in RUNNERS:
        return (
            f"no container runtime and no local command for {image}: install podman, docker "
            "or nerdctl (--runtime auto picks the first that works), set runner.command in "
            f"the test, or pass --image-command {test.kind}=CMD"
        )
    if known.kind != test.kind:
        return (
            f"the test is kind {test.kind!r} but its image {image} is the {known.kind} "
            f"runner's; without a container runtime an image runs only as the local runner "
            f"of its own kind: set kind: {known.kind}, run it under podman, docker or "
            f"nerdctl, or pass --image-command {test.kind}=CMD"
        )
    return known


def standing_in(test: PlannedTest, *, options: LocalOptions, host: HostProbe) -> RunnerImage | None:
    """The runner image this execution's local process stands in for; None when it runs
    under a runtime, as ``--image-command`` or ``runner.command``, or cannot run."""
    if options.runtime is not None or not _image_matters(test, options):
        return None
    known = stand_in(test, host=host)
    return known if isinstance(known, RunnerImage) else None


def runner_command(
    test: PlannedTest, options: LocalOptions, *, host: HostProbe | None = None
) -> list[str] | str:
    """The process that stands in for the test's image, or why there is none."""
    runner = specs.runner(test.spec)
    args = [str(a) for a in runner.get("args") or []]
    override = options.image_commands.get(test.kind)
    if override:
        return [*override, *args]
    command = [str(c) for c in runner.get("command") or []]
    if command:
        return [*command, *args]
    known = stand_in(test, host=host or this_host(options.sim))
    if isinstance(known, str):
        return known
    return [sys.executable, "-m", RUNNERS[known.kind].module, *args]


def launch(
    test: PlannedTest,
    *,
    attempt: int,
    options: LocalOptions,
    rendezvous: PairRendezvous | GroupRendezvous | None = None,
    host: HostProbe | None = None,
) -> Launch | str:
    """How attempt ``attempt`` runs, or why it cannot (refused before anything runs,
    except :func:`vendor_image_problem`: that attempt is an Error).

    ``--image-command`` always means a local process; otherwise a runtime runs the
    image, and without one the local process of :func:`runner_command` stands in.
    ``rendezvous`` stands in for the link's when there is no link yet (``glimmer plan``);
    ``host`` for this host's probe (:func:`glimmer.local.host.this_host`).
    """
    host = host or this_host(options.sim)
    problem = vendor_image_problem(test, options=options, host=host)
    if problem is not None:
        return problem
    runtime = options.runtime
    if runtime is None or options.image_commands.get(test.kind):
        command = runner_command(test, options, host=host)
        if isinstance(command, str):
            return command
        known = standing_in(test, options=options, host=host)
        declared = known.declarations() if known is not None else {}
        env = {
            **_host_env(),
            **declared,
            **runner_variables(test, attempt=attempt, options=options, rendezvous=rendezvous),
        }
        return Launch(command=command, env=env, runtime="process")
    image = execution_image(test, host=host)
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
    for entry in bare_host_runner_env(
        spec=test.spec, attempt=attempt, axes=test.axes, rendezvous=rendezvous
    ):
        value = _env_value(entry, options)
        if value is not None:
            env[str(entry["name"])] = value
    bound = host_window(test, options=options)
    if bound is not None:
        env[DURATION] = str(bound.given)
        knob = RUNNERS[test.kind].window_env
        if knob is not None and knob in env:
            env[knob] = _capped(env[knob], bound.given)
    if options.sim:
        env[SIM_GPU_ENV] = options.sim
    return env


#: N9: ``--host-window``'s default under ``--sim``, in seconds.
DEFAULT_SIM_HOST_WINDOW_S: Final = 60


@dataclass(frozen=True)
class HostWindow:
    """N9: a host-real runner's window as ``--host-window`` bounds it under ``--sim``."""

    #: The window the runner is given.
    given: int
    #: The window the profile asked for.
    asked: int

    def describe(self) -> str:
        return (
            f"real host window bounded to {self.given} s of {self.asked} s under --sim "
            "(--host-window; 'full' runs it whole)"
        )


def host_window(test: PlannedTest, *, options: LocalOptions) -> HostWindow | None:
    """N9: the bounded window of a runner that loads the real host (memory-stress,
    disk-io: the simulator's clock cannot shorten them) under ``--sim``; None when the
    test runs the window its profile gives it.

    Only under ``--sim``, which certifies nothing: a shortened window is not the test the
    profile asked for, so a real run never gets one (the CLI refuses the flag)."""
    if options.sim is None or options.host_window is None:
        return None
    if test.kind not in HARDWARE_INDEPENDENT_KINDS:
        return None
    asked = bare_host_window_seconds(test.spec)
    if asked <= options.host_window:
        return None
    return HostWindow(given=options.host_window, asked=asked)


def _capped(value: str, bound: int) -> str:
    """A runner's own seconds knob, no longer than the bounded window (unreadable: the
    bound, so the runner never loads the host past it)."""
    try:
        return value if float(value) <= bound else str(bound)
    except ValueError:
        return str(bound)


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
        for entry in bare_host_runner_env(
            spec=test.spec, attempt=1, axes=test.axes, rendezvous=rendezvous
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
    host = this_host(options.sim)
    for test in plan.tests:
        if vendor_image_problem(test, options=options, host=host) is not None:
            continue  # E14: an Error of that execution, as in a cluster, not a refusal
        how = launch(test, attempt=1, options=options, host=host)
        if isinstance(how, str):
            found.append(f"test {test.name!r}: {how}")
    return found

"""Running a runner's *image* on a bare host with podman, docker or nerdctl (N2).

The container is the test's pod without a cluster: the plan's image, the test's
command and args, the same runner environment the process path assembles (N2:
reserved ``BURNIN_*`` names in ``runner.env`` ignored, ``valueFrom`` as resolved
here), every accelerator for accelerator work (``--gpus all``, or CDI
``--device nvidia.com/gpu=all`` on podman; no ``BURNIN_RESOURCE_LIMITS``), host-path
devices granted as devices, other host paths bind-mounted with ``readOnly``
honoured, memlock lifted when ``/dev/infiniband`` is mounted, and host networking
for Pair and Group. The runtime's client process is what
:func:`glimmer.local.process.run_runner` supervises, so its stdout, stderr and exit
code go through the same reader as a local runner's (one brain).

The container has a name fixed before it starts, so a deadline or an interrupt stops
the *container* (``stop -t <grace>``, then ``kill`` and ``rm -f``), not just the
client: killing only the client would leave a burn-in running on the GPU after
``glimmer run`` said it had stopped.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from glimmer.local.host import ACCELERATOR_KINDS
from glimmer.plan import PlannedTest
from glimmer.plan import spec as specs

#: ``auto`` tries these in this order (N1 names the three).
RUNTIME_NAMES: Final = ("podman", "docker", "nerdctl")
PROCESS: Final = "process"
AUTO: Final = "auto"
RUNTIME_CHOICES: Final = (AUTO, PROCESS, *RUNTIME_NAMES)
#: Runtimes that take accelerators through CDI rather than ``--gpus``.
_CDI_RUNTIMES: Final = frozenset({"podman"})
#: How long ``<runtime> version`` may take to answer before the runtime counts as absent.
PROBE_SECONDS: Final = 15.0
#: Bound on each ``stop``/``kill``/``rm`` beyond the stop's own grace.
CONTROL_SECONDS: Final = 10.0
#: Host paths whose mount means RDMA: the runner must be able to pin memory.
MEMLOCK_TRIGGER: Final = "/dev/infiniband"
#: A ``/dev`` path that is a filesystem, not a device: bind-mounted like any directory.
_NOT_DEVICES: Final = frozenset({"/dev/shm"})
_DEVICE_TYPES: Final = frozenset({"CharDevice", "BlockDevice"})
_GPU_RESOURCES: Final = frozenset({"nvidia.com/gpu"})


class RuntimeChoiceError(Exception):
    """``--runtime`` cannot be honoured on this host; the message names the fix."""


@dataclass(frozen=True, slots=True)
class ContainerRuntime:
    """One container runtime's client: its name (podman, docker, nerdctl) and path."""

    name: str
    binary: str

    def accelerator_flags(self) -> list[str]:
        """Every accelerator on the host (N2: all devices, no partial allocation)."""
        if self.name in _CDI_RUNTIMES:
            return ["--device", "nvidia.com/gpu=all"]
        return ["--gpus", "all"]


def _answers(binary: str) -> bool:
    """Whether the runtime works here: a docker client whose daemon is down is no runtime."""
    try:
        done = subprocess.run(
            [binary, "version"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=PROBE_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def choose_runtime(
    choice: str,
    *,
    sim: bool,
    which: Callable[[str], str | None] = shutil.which,
    answers: Callable[[str], bool] = _answers,
) -> ContainerRuntime | None:
    """The runtime ``--runtime choice`` means here; None means local processes.

    ``auto``: local processes under ``--sim`` (the simulated GPU lives in this
    repository's runners, a container would see the real host), else the first of
    podman, docker, nerdctl that is on PATH *and* answers ``version``, else local
    processes. A named runtime that is absent or does not answer is refused with the
    fix, never quietly replaced by another.
    """
    if choice == PROCESS:
        return None
    if choice == AUTO:
        if sim:
            return None
        for name in RUNTIME_NAMES:
            path = which(name)
            if path is not None and answers(path):
                return ContainerRuntime(name=name, binary=path)
        return None
    if choice not in RUNTIME_NAMES:
        raise RuntimeChoiceError(f"--runtime {choice!r}: use one of {', '.join(RUNTIME_CHOICES)}")
    if sim:
        raise RuntimeChoiceError(
            f"--runtime {choice} with --sim: the simulated GPU exists only in this "
            "repository's runners run as local processes; drop --runtime (auto) or use "
            "--runtime process"
        )
    path = which(choice)
    if path is None:
        raise RuntimeChoiceError(
            f"--runtime {choice}: {choice} is not on PATH; install it, or use --runtime auto "
            f"(the first of {', '.join(RUNTIME_NAMES)} that works) or --runtime process"
        )
    if not answers(path):
        raise RuntimeChoiceError(
            f"--runtime {choice}: `{choice} version` failed ({path}); start its service "
            f"(for docker: the daemon) or check its configuration, then retry"
        )
    return ContainerRuntime(name=choice, binary=path)


def container_name(*, run_id: str, test: str, attempt: int) -> str:
    """A name fixed before the container starts, unique per run, test and attempt.

    Test names are author text: the readable part keeps only the characters runtimes
    accept, and a hash of the whole name keeps two tests that read alike apart.
    """
    readable = re.sub(r"[^A-Za-z0-9_.-]+", "-", test).strip("-._")[:40] or "test"
    digest = hashlib.sha256(test.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"glimmer-{readable}-{digest}-a{attempt}-{run_id}"


def needs_accelerator(test: PlannedTest) -> bool:
    """Accelerator work: a kind that measures the GPU, or a test asking for one."""
    if test.kind in ACCELERATOR_KINDS:
        return True
    resources = test.spec.get("resources")
    requests = resources.get("requests") if isinstance(resources, Mapping) else None
    asked = set(specs.resource_limits(test.spec))
    if isinstance(requests, Mapping):
        asked |= set(requests)
    return bool(asked & _GPU_RESOURCES)


def is_device(mount: Mapping[str, Any]) -> bool:
    """A host path granted as a device: under ``/dev`` (but not ``/dev/shm``), or typed
    ``CharDevice``/``BlockDevice``. A bind mount alone would show the node but leave it
    unopenable, the runtime's device cgroup denying it."""
    path = str(mount.get("path") or "")
    if mount.get("type") in _DEVICE_TYPES:
        return True
    under_dev = path == "/dev" or path.startswith("/dev/")
    shm = any(path == p or path.startswith(p + "/") for p in _NOT_DEVICES)
    return under_dev and not shm and mount.get("type") not in ("File", "Socket")


def _lifts_memlock(mounts: Sequence[Mapping[str, Any]]) -> bool:
    return any(
        str(m.get("path") or "") == MEMLOCK_TRIGGER
        or str(m.get("path") or "").startswith(MEMLOCK_TRIGGER + "/")
        for m in mounts
    )


def container_command(
    test: PlannedTest,
    *,
    runtime: ContainerRuntime,
    image: str,
    env: Mapping[str, str],
    name: str,
    host_network: bool,
) -> list[str]:
    """The ``<runtime> run`` command line, in a fixed order (tests and users read it)."""
    runner = specs.runner(test.spec)
    mounts = specs.host_paths(test.spec)
    argv = [runtime.binary, "run", "--rm", "--name", name]
    if host_network or test.spec.get("hostNetwork") is True:
        argv += ["--network", "host"]
    if runner.get("privileged") is True:
        argv.append("--privileged")
    user = runner.get("runAsUser")
    if isinstance(user, int) and not isinstance(user, bool):
        argv += ["--user", str(user)]
    if _lifts_memlock(mounts):
        argv += ["--ulimit", "memlock=-1:-1"]
    if needs_accelerator(test):
        argv += runtime.accelerator_flags()
    for mount in mounts:
        source, target = str(mount["path"]), str(mount["mountPath"])
        if is_device(mount):
            argv += ["--device", f"{source}:{target}"]
        else:
            read_only = mount.get("readOnly") is not False  # api: nil means true
            argv += ["-v", f"{source}:{target}" + (":ro" if read_only else "")]
    for key, value in env.items():
        argv += ["-e", f"{key}={value}"]
    command = [str(c) for c in runner.get("command") or []]
    if command:
        argv += ["--entrypoint", command[0]]
    argv.append(image)
    argv += command[1:]
    argv += [str(a) for a in runner.get("args") or []]
    return argv


class ContainerStop:
    """Stops one named container: ``stop -t <grace>`` when the attempt is cut, then
    ``kill`` and ``rm -f`` so nothing of it outlives the attempt.

    ``begin`` does not wait (output is still read while the container winds down);
    ``finish`` is bounded and never raises: it runs on the way out of an interrupt.
    """

    def __init__(self, *, runtime: ContainerRuntime, name: str, env: Mapping[str, str]) -> None:
        self.runtime = runtime
        self.name = name
        self._env = dict(env)
        self._stopping: subprocess.Popen[bytes] | None = None
        self._grace = 0.0

    def _spawn(self, *verb: str) -> subprocess.Popen[bytes] | None:
        try:
            # A session of its own: a second Ctrl-C must not cut the cleanup.
            return subprocess.Popen(
                [self.runtime.binary, *verb, self.name],
                env=self._env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError:
            return None

    def begin(self, *, grace_seconds: float) -> None:
        """Ask the runtime to stop the container: SIGTERM, SIGKILL after the grace."""
        if self._stopping is None:
            self._grace = grace_seconds
            self._stopping = self._spawn("stop", "-t", str(math.ceil(grace_seconds)))

    def finish(self) -> None:
        """Wait (bounded) for the stop, then make sure the container is killed and gone."""
        if self._stopping is not None:
            _wait(self._stopping, timeout=self._grace + CONTROL_SECONDS)
        for verb in (("kill",), ("rm", "-f")):
            proc = self._spawn(*verb)
            if proc is not None:
                _wait(proc, timeout=CONTROL_SECONDS)


def _wait(proc: subprocess.Popen[bytes], *, timeout: float) -> None:
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=1.0)

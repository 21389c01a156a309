"""One pod on a simulated node: its containers as local processes, its status as a kubelet
reports it.

Status is always published whole (phase, conditions, every container status) from this
worker's own state with a JSON merge patch, so a status is never a mix of two moments.
The pod reaches a terminal phase only from a real exit code, or from the kubelet's own
decision to stop it (deadline, eviction, node shutdown: phase Failed with the kubelet's
reason, whatever the container's exit code, as a real kubelet reports it); anything the
simulator cannot do (unknown image, missing ConfigMap key) leaves the container Waiting
with the kubelet's reason, never Succeeded. Conditions other components own (the
eviction API's and the scheduler's ``DisruptionTarget``) are kept, never overwritten.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Any

import attrs

from glimmer.sim import _processes
from glimmer.sim._kube import ApiError, Kube
from glimmer.sim.config import EVICT_ANNOTATION
from glimmer.sim.environment import ContainerConfigError, build_env, expand
from glimmer.sim.images import ImageMap, ImagePullError
from glimmer.sim.log_server import LogSource
from glimmer.sim.names import pod_hostname, resolver_env
from glimmer.sim.nodes import now_rfc3339
from glimmer.sim.probes import probe_once
from glimmer.sim.volumes import materialize, mounts_env

JSON = dict[str, Any]
_log = logging.getLogger(__name__)

_RESTART_BACKOFF_SECONDS = 1.0
_CONFIG_RETRY_SECONDS = 2.0
#: How long a shutting-down worker may take to report its stopped containers.
_FINAL_SYNC_SECONDS = 2.0
#: Pod conditions this kubelet writes; any other type on the pod belongs to someone else.
_KUBELET_CONDITIONS = frozenset(
    {"PodReadyToStartContainers", "Initialized", "ContainersReady", "Ready", "PodScheduled"}
)


@attrs.define
class ContainerRun:
    """What the worker knows of one container; rendered into a ``ContainerStatus``."""

    spec: JSON
    log_dir: Path
    state: JSON = attrs.field(factory=lambda: {"waiting": {"reason": "ContainerCreating"}})
    last_state: JSON = attrs.field(factory=dict)
    ready: bool = False
    restart_count: int = 0
    process: asyncio.subprocess.Process | None = None

    @property
    def name(self) -> str:
        return str(self.spec["name"])

    def log_path(self, *, previous: bool = False) -> Path:
        index = self.restart_count - 1 if previous else self.restart_count
        return self.log_dir / f"{self.name}.{index}.log"

    def running(self) -> bool:
        return self.process is not None and self.process.returncode is None

    def exit_code(self) -> int | None:
        terminated = self.state.get("terminated")
        return None if terminated is None else int(terminated["exitCode"])

    def status(self, *, uid: str) -> JSON:
        return {
            "name": self.name,
            "image": self.spec.get("image", ""),
            "imageID": f"sim://{self.spec.get('image', '')}",
            "containerID": f"sim://{uid}/{self.name}/{self.restart_count}",
            "ready": self.ready,
            "started": self.running(),
            "restartCount": self.restart_count,
            "state": self.state,
            "lastState": self.last_state,
        }


class PodWorker:
    """Runs one pod to completion (or deletion) and reports it."""

    def __init__(
        self,
        *,
        kube: Kube,
        pod: JSON,
        pod_ip: str,
        images: ImageMap,
        sandbox: Path,
        node_env: dict[str, str] | None = None,
        nss_wrapper: Path | None = None,
        start_refusal: str | None = None,
    ) -> None:
        """``node_env``: environment every container on this node starts from (the
        node's simulated GPU, ``GLIMMER_SIM_GPU``); the pod's env overrides it.
        ``nss_wrapper``: the library that makes the pod's processes resolve names from
        ``hosts_file`` (see ``glimmer.sim.names``). ``start_refusal``: why the kubelet
        cannot start this pod at all (its containers stay Waiting with
        ``CreateContainerError`` and this message, nothing runs)."""
        self.kube = kube
        self.pod = pod
        self.pod_ip = pod_ip
        self.images = images
        self.sandbox = sandbox
        self.node_env = dict(node_env or {})
        self.nss_wrapper = nss_wrapper
        self.start_refusal = start_refusal
        sandbox.mkdir(parents=True, exist_ok=True)
        spec = pod["spec"]
        self.init = [ContainerRun(spec=c, log_dir=sandbox) for c in spec.get("initContainers", [])]
        self.main = [ContainerRun(spec=c, log_dir=sandbox) for c in spec["containers"]]
        if self.init:
            for run in self.main:
                run.state = {"waiting": {"reason": "PodInitializing"}}
        self.phase = "Pending"
        self.reason: str | None = None
        self.message: str | None = None
        self.start_time = now_rfc3339()
        self.initialized = not self.init
        self._conditions: dict[str, tuple[str, str]] = {}
        self._publish_lock = asyncio.Lock()
        self._stopping = False
        self._task: asyncio.Task[None] | None = None
        self._deleting = False
        #: The DisruptionTarget condition this kubelet set when it chose to stop the pod.
        self._disruption: JSON | None = None
        self._eviction: asyncio.Task[None] | None = None

    # -- identity -------------------------------------------------------------------

    @property
    def namespace(self) -> str:
        return str(self.pod["metadata"]["namespace"])

    @property
    def name(self) -> str:
        return str(self.pod["metadata"]["name"])

    @property
    def uid(self) -> str:
        return str(self.pod["metadata"]["uid"])

    @property
    def path(self) -> str:
        return f"/api/v1/namespaces/{self.namespace}/pods/{self.name}"

    def log_source(self, container: str, *, previous: bool) -> LogSource | None:
        for run in self.init + self.main:
            if run.name == container:
                if previous and run.restart_count == 0:
                    return None
                return LogSource(path=run.log_path(previous=previous), running=run.running)
        return None

    @property
    def hosts_file(self) -> Path:
        """The file this pod's name lookups read (kept current by the kubelet)."""
        return self.sandbox / "hosts"

    @property
    def terminal(self) -> bool:
        return self.phase in ("Succeeded", "Failed")

    # -- status ---------------------------------------------------------------------

    def _condition(self, kind: str, ok: bool, reason: str | None = None) -> JSON:
        status = "True" if ok else "False"
        previous = self._conditions.get(kind)
        if previous is None or previous[0] != status:
            self._conditions[kind] = (status, now_rfc3339())
        condition: JSON = {
            "type": kind,
            "status": status,
            "lastProbeTime": None,
            "lastTransitionTime": self._conditions[kind][1],
        }
        if reason and not ok:
            condition["reason"] = reason
        return condition

    def status(self) -> JSON:
        containers_ready = all(run.ready for run in self.main)
        running = self.phase == "Running"
        not_ready = "PodCompleted" if self.terminal else "ContainersNotReady"
        status: JSON = {
            "phase": self.phase,
            "reason": self.reason,
            "message": self.message,
            "hostIP": "127.0.0.1",
            "hostIPs": [{"ip": "127.0.0.1"}],
            "podIP": self.pod_ip,
            "podIPs": [{"ip": self.pod_ip}],
            "startTime": self.start_time,
            "conditions": [
                self._condition("PodReadyToStartContainers", not self.terminal),
                self._condition("Initialized", self.initialized, "ContainersNotInitialized"),
                self._condition("ContainersReady", running and containers_ready, not_ready),
                self._condition("Ready", running and containers_ready, not_ready),
                self._condition("PodScheduled", True),
                *self._other_conditions(),
            ],
            "containerStatuses": [run.status(uid=self.uid) for run in self.main],
        }
        if self.init:
            status["initContainerStatuses"] = [run.status(uid=self.uid) for run in self.init]
        return status

    def _other_conditions(self) -> list[JSON]:
        """Conditions that are not this kubelet's, as last seen, plus its own disruption
        mark: a merge patch replaces the whole list, so they are written back."""
        seen = [
            dict(c)
            for c in (self.pod.get("status") or {}).get("conditions") or []
            if c.get("type") not in _KUBELET_CONDITIONS
        ]
        if self._disruption is None:
            return seen
        return [*(c for c in seen if c.get("type") != "DisruptionTarget"), self._disruption]

    def _mark_disruption(self, message: str) -> None:
        self._disruption = {
            "type": "DisruptionTarget",
            "status": "True",
            "reason": "TerminationByKubelet",
            "message": message,
            "lastProbeTime": None,
            "lastTransitionTime": now_rfc3339(),
        }

    def _stopped_by_kubelet(self, *, reason: str, message: str) -> None:
        """The kubelet ends the pod: Failed with its reason, whatever the exit code (set
        before the kill, so a runner that exits 0 on SIGTERM cannot read Succeeded)."""
        self.phase, self.reason, self.message = "Failed", reason, message
        if reason != "DeadlineExceeded" and self._disruption is None:
            self._mark_disruption(message)

    async def publish(self) -> None:
        async with self._publish_lock:
            try:
                await self.kube.merge_patch(f"{self.path}/status", {"status": self.status()})
            except ApiError as error:
                if error.status != 404:
                    _log.warning("status of %s/%s: %s", self.namespace, self.name, error)

    # -- lifecycle ------------------------------------------------------------------

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"pod {self.namespace}/{self.name}")

    async def _run(self) -> None:
        deadline = self.pod["spec"].get("activeDeadlineSeconds")
        watchdog = (
            asyncio.create_task(self._deadline(float(deadline))) if deadline is not None else None
        )
        try:
            await self._lifecycle()
        finally:
            if watchdog is not None:
                watchdog.cancel()

    async def _lifecycle(self) -> None:
        await self.publish()
        if self.start_refusal is not None:
            # Nothing of the pod runs: resolving its names wrongly is worse than not at all.
            for run in self.init + self.main:
                run.state = {
                    "waiting": {"reason": "CreateContainerError", "message": self.start_refusal}
                }
            await self.publish()
            return
        argvs: dict[str, list[str]] = {}
        pull_errors: dict[str, str] = {}
        for run in self.init + self.main:
            try:
                argvs[run.name] = self.images.argv(run.spec)
            except ImagePullError as error:
                pull_errors[run.name] = str(error)
        if pull_errors:
            # Nothing of the pod runs, as when a real node cannot pull one of its images.
            for run in self.init + self.main:
                if run.name in pull_errors:
                    message = pull_errors[run.name]
                    run.state = {"waiting": {"reason": "ErrImagePull", "message": message}}
            await self.publish()
            return
        envs = await self._environments()
        if envs is None:
            return
        for name, argv in argvs.items():
            # The kubelet expands $(VAR) in command and args from the container's env.
            argvs[name] = [expand(arg, envs[name]) for arg in argv]
        policy = self.pod["spec"].get("restartPolicy", "Always")
        for run in self.init:
            # Init containers restart on failure unless the policy is Never.
            await self._run_container(
                run,
                argvs[run.name],
                envs[run.name],
                policy="OnFailure" if policy != "Never" else "Never",
            )
            if self._stopping or run.exit_code() != 0:
                await self._finish()
                return
        self.initialized = True
        self.phase = "Running"
        await asyncio.gather(
            *(
                self._run_container(run, argvs[run.name], envs[run.name], policy=policy)
                for run in self.main
            )
        )
        await self._finish()

    async def _environments(self) -> dict[str, dict[str, str]] | None:
        base = {
            "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
            "HOME": str(self.sandbox),
            "HOSTNAME": pod_hostname(self.pod),
            "LANG": os.environ.get("LANG", "C.UTF-8"),
            # The address a server in this pod binds, as its network namespace would be.
            "GLIMMER_SIM_POD_IP": self.pod_ip,
            **self.node_env,
        }
        # The watch may not have delivered our own status yet: the addresses are ours.
        status = {**self.pod.get("status", {}), "podIP": self.pod_ip, "hostIP": "127.0.0.1"}
        pod = {**self.pod, "status": status}
        while not self._stopping:
            try:
                envs = {
                    run.name: await build_env(pod, run.spec, fetch=self._fetch, base=base)
                    for run in self.init + self.main
                }
                volumes = await materialize(
                    pod,
                    self.sandbox / "volumes",
                    fetch=self._fetch,
                    request_token=self._request_token,
                )
                for run in self.init + self.main:
                    envs[run.name].update(mounts_env(run.spec, volumes))
                if self.nss_wrapper is not None:
                    for env in envs.values():
                        env.update(
                            resolver_env(
                                library=self.nss_wrapper,
                                hosts_file=self.hosts_file,
                                inherited=env.get("LD_PRELOAD"),
                            )
                        )
                return envs
            except ContainerConfigError as error:
                for run in self.init + self.main:
                    run.state = {
                        "waiting": {"reason": "CreateContainerConfigError", "message": str(error)}
                    }
                await self.publish()
                await asyncio.sleep(_CONFIG_RETRY_SECONDS)
        return None

    async def _fetch(self, kind: str, name: str) -> JSON | None:
        try:
            return await self.kube.request(
                "GET", f"/api/v1/namespaces/{self.namespace}/{kind}/{name}"
            )
        except ApiError as error:
            if error.status == 404:
                return None
            raise

    async def _request_token(self, account: str, audiences: list[str], seconds: int) -> str:
        """A TokenRequest for ``account`` bound to this pod, as the kubelet makes for a
        projected ``serviceAccountToken``: it is invalid once the pod is gone."""
        body = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {
                "audiences": audiences,
                "expirationSeconds": seconds,
                "boundObjectRef": {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": self.name,
                    "uid": self.uid,
                },
            },
        }
        path = f"/api/v1/namespaces/{self.namespace}/serviceaccounts/{account}/token"
        try:
            answer = await self.kube.request("POST", path, body=body)
        except ApiError as error:
            if error.status == 404:
                raise ContainerConfigError(f'serviceaccount "{account}" not found') from error
            raise
        return str(answer["status"]["token"])

    def _workdir(self, run: ContainerRun) -> Path:
        wanted = run.spec.get("workingDir")
        return Path(wanted) if wanted and Path(wanted).is_dir() else self.sandbox

    async def _run_container(
        self, run: ContainerRun, argv: list[str], env: dict[str, str], *, policy: str
    ) -> None:
        while not self._stopping:
            started = now_rfc3339()
            try:
                run.process = await _processes.start(
                    argv, env=env, cwd=self._workdir(run), log_path=run.log_path()
                )
            except OSError as error:
                run.state = {
                    "terminated": {
                        "exitCode": 128,
                        "reason": "StartError",
                        "message": f"{argv[0]}: {error.strerror}",
                        "startedAt": started,
                        "finishedAt": now_rfc3339(),
                    }
                }
                code = 128
            else:
                if self._stopping:
                    # Stopped while this process was being started: _kill_all missed it.
                    await _processes.terminate(run.process, grace=0)
                run.state = {"running": {"startedAt": started}}
                probe_task = asyncio.create_task(self._readiness(run, env))
                await self.publish()
                returncode = await run.process.wait()
                # A container ends with its main process: whatever it left running goes
                # too (a runtime kills the container's whole PID namespace).
                _processes.signal_group(run.process, signal.SIGKILL)
                probe_task.cancel()
                run.ready = False
                code = _processes.exit_code(returncode)
                run.state = {
                    "terminated": {
                        "exitCode": code,
                        "reason": "Completed" if code == 0 else "Error",
                        "startedAt": started,
                        "finishedAt": now_rfc3339(),
                        "containerID": f"sim://{self.uid}/{run.name}/{run.restart_count}",
                    }
                }
            restart = policy == "Always" or (policy == "OnFailure" and code != 0)
            if self._stopping or not restart:
                await self.publish()
                return
            run.last_state = run.state
            run.restart_count += 1
            run.state = {"waiting": {"reason": "CrashLoopBackOff" if code else "Completed"}}
            await self.publish()
            await asyncio.sleep(_RESTART_BACKOFF_SECONDS)

    async def _readiness(self, run: ContainerRun, env: dict[str, str]) -> None:
        probe = run.spec.get("readinessProbe")
        if probe is None:
            run.ready = True
            await self.publish()
            return
        await asyncio.sleep(float(probe.get("initialDelaySeconds", 0)))
        successes = failures = 0
        while run.running():
            ok = await probe_once(probe, pod_ip=self.pod_ip, container=run.spec, env=env)
            successes, failures = (successes + 1, 0) if ok else (0, failures + 1)
            ready = run.ready
            if successes >= int(probe.get("successThreshold", 1)):
                ready = True
            elif failures >= int(probe.get("failureThreshold", 3)):
                ready = False
            if ready != run.ready and run.running():
                run.ready = ready
                await self.publish()
            await asyncio.sleep(float(probe.get("periodSeconds", 10)))

    async def _finish(self) -> None:
        if not self.terminal:
            runs = self.init + self.main if not self.initialized else self.main
            codes = [run.exit_code() for run in runs]
            ok = all(code == 0 for code in codes) and self.initialized
            self.phase = "Succeeded" if ok else "Failed"
        await self.publish()

    async def _kill_all(self, *, grace: float) -> None:
        self._stopping = True
        await asyncio.gather(
            *(
                _processes.terminate(run.process, grace=grace)
                for run in self.init + self.main
                if run.process is not None
            )
        )

    async def _deadline(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
        if self.terminal:
            return
        self._stopped_by_kubelet(
            reason="DeadlineExceeded",
            message="Pod was active on the node longer than the specified deadline",
        )
        await self._kill_all(grace=self._grace())
        await self.publish()

    def _grace(self, override: object = None) -> float:
        if override is not None:
            return float(str(override))
        return float(self.pod["spec"].get("terminationGracePeriodSeconds", 30))

    def update(self, pod: JSON) -> None:
        """A newer version of the pod from the watch."""
        self.pod = pod
        message = (pod["metadata"].get("annotations") or {}).get(EVICT_ANNOTATION)
        if message is not None and self._eviction is None and not self.terminal:
            self._eviction = asyncio.create_task(
                self.evict(message or "The node was low on resource: memory."),
                name=f"evict {self.namespace}/{self.name}",
            )

    async def evict(self, message: str) -> None:
        """Node-pressure eviction: DisruptionTarget, phase Failed, reason Evicted, then
        the containers are stopped within the pod's grace period."""
        if self.terminal:
            return
        # As the kubelet: the DisruptionTarget condition first (the pod still running),
        # the terminal phase only once its containers are being stopped.
        self._mark_disruption(message)
        await self.publish()
        self._stopped_by_kubelet(reason="Evicted", message=message)
        await self._kill_all(grace=self._grace())
        await self.publish()

    async def delete(self) -> None:
        """The pod has a deletionTimestamp: stop containers in its grace period, remove it."""
        if self._deleting:
            return
        self._deleting = True
        grace = self._grace(self.pod["metadata"].get("deletionGracePeriodSeconds"))
        await self._kill_all(grace=grace)
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        with contextlib.suppress(ApiError):
            await self.kube.request(
                "DELETE",
                self.path,
                body={
                    "apiVersion": "v1",
                    "kind": "DeleteOptions",
                    "gracePeriodSeconds": 0,
                    "preconditions": {"uid": self.uid},
                },
            )

    async def kill(self) -> None:
        """The pod is gone from the apiserver (or we shut down): stop its processes now."""
        await self._kill_all(grace=0)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def shut_down(self, *, grace: float) -> None:
        """The node shuts down: stop containers and fail the pod, as graceful node
        shutdown does (there is no controller to evict pods from a vanished node)."""
        # Decided before the kill: a runner that exits 0 on SIGTERM did not finish by itself.
        stopping = not self.terminal
        if stopping:
            self._stopped_by_kubelet(
                reason="Terminated",
                message="Pod was terminated in response to imminent node shutdown.",
            )
        await self._kill_all(grace=min(self._grace(), grace))
        if self._task is not None:
            # A moment for the worker to report its containers' exits, as a kubelet's
            # last status sync does; then it is stopped.
            await asyncio.wait({self._task}, timeout=_FINAL_SYNC_SECONDS)
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if stopping:
            await self.publish()

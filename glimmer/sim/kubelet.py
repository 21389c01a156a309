"""The simulated kubelet: many nodes in one asyncio process.

It registers nodes, renews their leases, binds pending pods that fit them (there is no
kube-scheduler in the test control plane; see ``placement``), runs the pods bound to
them as local processes (``pods``) and serves their logs to the apiserver
(``log_server``). Everything observed comes from one list+watch of pods and one of
nodes, relisted after a 410 or a dropped connection, as an informer would.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import logging
import os
import shutil
import tempfile
import urllib.parse
import uuid
from collections import defaultdict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, cast

import aiohttp
from aiohttp import web
from kubernetes_asyncio.config import new_client_from_config

from glimmer.sim import _tls, names, nodes, placement
from glimmer.sim._kube import ApiError, Kube
from glimmer.sim.config import INSTANCE_LABEL, SimConfig
from glimmer.sim.log_server import LogSource, make_app
from glimmer.sim.pods import PodWorker

JSON = dict[str, Any]
_log = logging.getLogger(__name__)
_SHUTDOWN_GRACE_SECONDS = 5.0
_RESCHEDULE_SECONDS = 2.0


class PodIPs:
    """Hands out 127.<block>.x.y addresses, one per pod, never reused in a process."""

    def __init__(self, block: int) -> None:
        self._base = int(ipaddress.IPv4Address(f"127.{block}.0.0"))
        self._next = 1

    def allocate(self) -> str:
        if self._next % 256 in (0, 255):
            self._next += 2 if self._next % 256 == 255 else 1
        address = str(ipaddress.IPv4Address(self._base + self._next))
        self._next += 1
        return address


def service_env(server: str) -> dict[str, str]:
    """The ``kubernetes`` Service's variables every container gets from its kubelet.

    A simulated pod cannot reach the Service's cluster IP, so they name the apiserver's
    own address (in the serving certificate, as the cluster IP is), which is what an
    in-cluster client (``glimmer manager`` in a pod) dials.
    """
    url = urllib.parse.urlsplit(server)
    host = url.hostname or "127.0.0.1"
    port = str(url.port or 443)
    return {
        "KUBERNETES_SERVICE_HOST": host,
        "KUBERNETES_SERVICE_PORT": port,
        "KUBERNETES_SERVICE_PORT_HTTPS": port,
        "KUBERNETES_PORT": f"tcp://{host}:{port}",
        f"KUBERNETES_PORT_{port}_TCP": f"tcp://{host}:{port}",
        f"KUBERNETES_PORT_{port}_TCP_PROTO": "tcp",
        f"KUBERNETES_PORT_{port}_TCP_PORT": port,
        f"KUBERNETES_PORT_{port}_TCP_ADDR": host,
    }


async def list_watch(
    kube: Kube,
    path: str,
    *,
    query: Mapping[str, str],
    on_list: Callable[[list[JSON]], None],
    on_event: Callable[[str, JSON], None],
    synced: asyncio.Event,
) -> None:
    """List, then watch from the list's resourceVersion; relist on 410 or any failure."""
    while True:
        try:
            listing = await kube.request("GET", path, query=query)
            on_list(listing.get("items") or [])
            synced.set()
            version = listing["metadata"]["resourceVersion"]
            while True:
                watch_query = {
                    **query,
                    "resourceVersion": version,
                    "timeoutSeconds": "300",
                    "allowWatchBookmarks": "true",
                }
                async for event in kube.watch(path, query=watch_query):
                    document = event["object"]
                    version = document["metadata"]["resourceVersion"]
                    if event["type"] != "BOOKMARK":
                        on_event(event["type"], document)
        except ApiError as error:
            if error.status != 410:
                _log.warning("watch %s: %s", path, error)
                await asyncio.sleep(1)
        except (OSError, aiohttp.ClientError, TimeoutError, ValueError) as error:
            _log.warning("watch %s: %r", path, error)
            await asyncio.sleep(1)


def _key(document: JSON) -> tuple[str, str]:
    meta = document["metadata"]
    return str(meta.get("namespace", "")), str(meta["name"])


class SimKubelet:
    def __init__(self, config: SimConfig) -> None:
        self.config = config
        self.instance = uuid.uuid4().hex[:8]
        self.node_names = [f"{config.name_prefix}{i}" for i in range(config.nodes)]
        block = config.pod_ip_block or 20 + os.getpid() % 200
        self.pod_ips = PodIPs(block)
        self.workers: dict[str, PodWorker] = {}
        self.pods: dict[str, JSON] = {}
        self._service_env: dict[str, str] = {}
        self.schedulable: dict[str, JSON] = {}
        #: Services by (namespace, name), for the pods' cluster names (``names``).
        self.services: dict[tuple[str, str], JSON] = {}
        self._records: dict[str, str] = {}
        self._hosts_written: dict[str, str] = {}
        self._changed = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self.port = 0

    # -- event handling ---------------------------------------------------------------

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            _log.error("task %s failed", task.get_name(), exc_info=task.exception())

    def _on_pods_listed(self, items: list[JSON]) -> None:
        seen = {pod["metadata"]["uid"] for pod in items}
        for uid in list(self.pods):
            if uid not in seen:
                self._handle_pod("DELETED", self.pods[uid])
        for pod in items:
            self._handle_pod("MODIFIED", pod)
        self._refresh_names()

    def _on_pod(self, kind: str, pod: JSON) -> None:
        self._handle_pod(kind, pod)
        self._refresh_names()

    def _handle_pod(self, kind: str, pod: JSON) -> None:
        uid = pod["metadata"]["uid"]
        self._changed.set()
        if kind == "DELETED":
            self.pods.pop(uid, None)
            self._hosts_written.pop(uid, None)
            worker = self.workers.pop(uid, None)
            if worker is not None:
                self._spawn(worker.kill())
            return
        self.pods[uid] = pod
        if pod.get("spec", {}).get("nodeName") not in self.node_names:
            return
        deleting = pod["metadata"].get("deletionTimestamp") is not None
        worker = self.workers.get(uid)
        if worker is None:
            if deleting or placement.is_terminal(pod):
                # Finished (or never started here) and being deleted: just let it go.
                if deleting:
                    self._spawn(self._force_delete(pod))
                return
            if pod.get("status", {}).get("startTime"):
                # Started by an earlier simulator whose processes are gone: fail closed.
                self._spawn(self._fail_orphan(pod))
                return
            library = self.config.nss_wrapper
            refusal = (
                names.missing_wrapper_message(pod)
                if library is None and names.needs_cluster_names(pod)
                else None
            )
            worker = PodWorker(
                kube=self.kube,
                pod=pod,
                pod_ip="127.0.0.1" if pod["spec"].get("hostNetwork") else self.pod_ips.allocate(),
                images=self.config.images,
                sandbox=self.state_dir / "pods" / uid,
                node_env={**self._service_env, **self.config.node_env(pod["spec"]["nodeName"])},
                nss_wrapper=library,
                start_refusal=refusal,
            )
            self.workers[uid] = worker
            # Its names are on disk before its first process can look one up.
            self._refresh_names(force=True)
            worker.start()
        else:
            worker.update(pod)
        if deleting:
            self._spawn(worker.delete())

    async def _force_delete(self, pod: JSON) -> None:
        meta = pod["metadata"]
        with contextlib.suppress(ApiError):
            await self.kube.request(
                "DELETE",
                f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}",
                body={"gracePeriodSeconds": 0, "preconditions": {"uid": meta["uid"]}},
            )

    async def _fail_orphan(self, pod: JSON) -> None:
        meta = pod["metadata"]
        status = {
            "phase": "Failed",
            "reason": "NodeRestarted",
            "message": "the simulated kubelet restarted; this pod's processes are gone",
        }
        with contextlib.suppress(ApiError):
            await self.kube.merge_patch(
                f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/status",
                {"status": status},
            )

    def _on_services_listed(self, items: list[JSON]) -> None:
        self.services = {_key(s): s for s in items}
        self._refresh_names()

    def _on_service(self, kind: str, service: JSON) -> None:
        if kind == "DELETED":
            self.services.pop(_key(service), None)
        else:
            self.services[_key(service)] = service
        self._refresh_names()

    def _pod_address(self, uid: str, pod: JSON) -> str | None:
        """Our own allocation for our pods (known before the watch echoes it), else the
        address the pod's kubelet published."""
        worker = self.workers.get(uid)
        if worker is not None:
            return worker.pod_ip
        address = (pod.get("status") or {}).get("podIP")
        return str(address) if address else None

    def _refresh_names(self, *, force: bool = False) -> None:
        """Recompute the Service records; rewrite the hosts file of each local pod whose
        content changed (every one, with ``force``, e.g. for a pod just created)."""
        if self.config.nss_wrapper is None:
            return
        records = names.service_records(
            ((pod, self._pod_address(uid, pod)) for uid, pod in self.pods.items()),
            services=self.services,
            cluster_domain=self.config.cluster_domain,
        )
        if records == self._records and not force:
            return
        self._records = records
        for uid, worker in self.workers.items():
            text = names.hosts_file_text(
                pod=worker.pod,
                address=worker.pod_ip,
                records=records,
                cluster_domain=self.config.cluster_domain,
            )
            if self._hosts_written.get(uid) == text:
                continue
            try:
                names.write_atomically(worker.hosts_file, text)
            except OSError as error:
                _log.warning("hosts file of %s/%s: %r", worker.namespace, worker.name, error)
                continue
            self._hosts_written[uid] = text

    def _on_nodes_listed(self, items: list[JSON]) -> None:
        self.schedulable = {node["metadata"]["name"]: node for node in items}
        self._changed.set()

    def _on_node(self, kind: str, node: JSON) -> None:
        name = node["metadata"]["name"]
        if kind == "DELETED":
            self.schedulable.pop(name, None)
        else:
            self.schedulable[name] = node
        self._changed.set()

    # -- scheduling -------------------------------------------------------------------

    async def _schedule_forever(self) -> None:
        while True:
            # Event-driven, with a periodic pass so a failed bind is retried.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(_RESCHEDULE_SECONDS):
                    await self._changed.wait()
            self._changed.clear()
            for pod, node in self._schedule_pass():
                if await self._bind(pod, node):
                    # Count it against the node before the watch event arrives.
                    pod.setdefault("spec", {})["nodeName"] = node
            # Coalesce bursts of events into one pass.
            await asyncio.sleep(0.05)

    def _schedule_pass(self) -> list[tuple[JSON, str]]:
        """Choose a node for every pending pod, charging each choice before the next."""
        bound: dict[str, list[JSON]] = defaultdict(list)
        for pod in self.pods.values():
            if name := pod.get("spec", {}).get("nodeName"):
                bound[name].append(pod)
        placements: list[tuple[JSON, str]] = []
        for pod in list(self.pods.values()):
            spec, meta = pod.get("spec", {}), pod["metadata"]
            if (
                spec.get("nodeName")
                or meta.get("deletionTimestamp")
                or spec.get("schedulerName", "default-scheduler") != "default-scheduler"
            ):
                continue
            candidates = [
                name
                for name, node in self.schedulable.items()
                if placement.feasible(pod, node, bound[name])
            ]
            if not candidates:
                continue
            target = min(candidates, key=lambda name: len(bound[name]))
            bound[target].append(pod)
            placements.append((pod, target))
        return placements

    async def _bind(self, pod: JSON, node: str) -> bool:
        meta = pod["metadata"]
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": meta["name"], "namespace": meta["namespace"], "uid": meta["uid"]},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        }
        try:
            await self.kube.request(
                "POST",
                f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/binding",
                body=binding,
            )
        except ApiError as error:
            # 409: bound by someone else meanwhile; 404: deleted meanwhile.
            if error.status not in (404, 409):
                _log.warning("bind %s/%s: %s", meta["namespace"], meta["name"], error)
            return False
        except (OSError, aiohttp.ClientError, TimeoutError) as error:
            _log.warning("bind %s/%s: %r", meta["namespace"], meta["name"], error)
            return False
        return True

    # -- logs -------------------------------------------------------------------------

    def _log_source(
        self, namespace: str, pod: str, container: str, previous: bool
    ) -> LogSource | None:
        for worker in self.workers.values():
            if worker.namespace == namespace and worker.name == pod:
                return worker.log_source(container, previous=previous)
        return None

    # -- main ---------------------------------------------------------------------------

    async def run(self) -> None:
        """Run until cancelled; on cancellation stop every pod and (by default) the nodes."""
        temporary = self.config.state_dir is None
        self.state_dir = (
            Path(tempfile.mkdtemp(prefix="glimmer-sim-"))
            if temporary
            else (self.config.state_dir or Path())
        )
        # Pods' logs and sandboxes live here: only this user may read them.
        self.state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        ssl_context = _tls.serving_context(
            self.state_dir,
            kubeconfig=self.config.kubeconfig,
            cert_file=self.config.tls_cert_file,
            key_file=self.config.tls_private_key_file,
            client_ca_file=self.config.client_ca_file,
        )
        api = await new_client_from_config(config_file=str(self.config.kubeconfig))
        self.kube = Kube(api)
        self._service_env = service_env(str(api.configuration.host))
        runner = web.AppRunner(make_app(self._log_source), access_log=None)
        await runner.setup()
        try:
            site = web.TCPSite(
                runner,
                "127.0.0.1",
                self.config.port,
                ssl_context=ssl_context,
            )
            await site.start()
            server = site._server
            assert server is not None
            # aiohttp types the server as AbstractServer; for a TCP site it is asyncio's Server.
            self.port = int(cast(asyncio.Server, server).sockets[0].getsockname()[1])
            for name in self.node_names:
                await nodes.register(
                    self.kube, self.config, name=name, instance=self.instance, port=self.port
                )
                await nodes.renew_lease(self.kube, name=name, config=self.config)
            await self._serve()
        finally:
            with contextlib.suppress(Exception):
                await asyncio.shield(self._shut_down())
            await runner.cleanup()
            await api.close()
            if temporary:
                shutil.rmtree(self.state_dir, ignore_errors=True)

    async def _serve(self) -> None:
        pods_synced, nodes_synced = asyncio.Event(), asyncio.Event()
        services_synced = asyncio.Event()
        selector = self.config.schedule_selector or f"{INSTANCE_LABEL}={self.instance}"
        # Services before pods: a pod's names are written before it starts (readiness
        # gating means a peer's Service exists before the pod that looks it up).
        self._spawn(
            list_watch(
                self.kube,
                "/api/v1/services",
                query={},
                on_list=self._on_services_listed,
                on_event=self._on_service,
                synced=services_synced,
            )
        )
        await services_synced.wait()
        self._spawn(
            list_watch(
                self.kube,
                "/api/v1/pods",
                query={},
                on_list=self._on_pods_listed,
                on_event=self._on_pod,
                synced=pods_synced,
            )
        )
        if self.config.schedule:
            self._spawn(
                list_watch(
                    self.kube,
                    "/api/v1/nodes",
                    query={"labelSelector": selector},
                    on_list=self._on_nodes_listed,
                    on_event=self._on_node,
                    synced=nodes_synced,
                )
            )
            self._spawn(self._schedule_forever())
        else:
            nodes_synced.set()
        self._spawn(nodes.heartbeat(self.kube, names=self.node_names, config=self.config))
        await pods_synced.wait()
        await nodes_synced.wait()
        if self.config.ready_file is not None:
            # Written aside then renamed: a waiter that sees the file sees all of it.
            staging = self.config.ready_file.with_name(self.config.ready_file.name + ".tmp")
            staging.write_text(
                json.dumps({"nodes": self.node_names, "port": self.port, "pid": os.getpid()})
            )
            staging.replace(self.config.ready_file)
        await asyncio.Event().wait()

    async def _shut_down(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        workers = list(self.workers.values())
        self.workers.clear()
        await asyncio.gather(
            *(w.shut_down(grace=_SHUTDOWN_GRACE_SECONDS) for w in workers), return_exceptions=True
        )
        if self.config.delete_nodes_on_exit:
            for name in self.node_names:
                with contextlib.suppress(ApiError, OSError):
                    await nodes.delete(self.kube, name=name)

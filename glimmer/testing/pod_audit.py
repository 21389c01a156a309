"""A pod watch that proves no pod was created twice, across every manager restart.

The reconciler names pods deterministically (run, test, node, attempt); a manager that
forgot, after a crash, that it had already launched an attempt would create the name again
after the first pod was deleted, or run the attempt twice. Each creation gets a fresh UID,
so a name seen with two UIDs is a duplicate, whether the watch saw both ADDED events or
had to relist in between (a relist repeats ADDED for live pods with their old UID).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import defaultdict
from typing import Any

from glimmer.engine import PODS, ApiError, ApiServerClient, is_gone


class PodAudit:
    """Watches pods in one namespace with its own client, from before the first manager."""

    def __init__(self, *, kubeconfig: str, namespace: str) -> None:
        self.kubeconfig = kubeconfig
        self.namespace = namespace
        self.uids_by_name: dict[str, set[str]] = defaultdict(set)
        self.added_events = 0
        self.relists = 0
        self._task: asyncio.Task[None] | None = None
        self._client: ApiServerClient | None = None
        self._listed = asyncio.Event()

    async def start(self) -> None:
        self._client = await ApiServerClient.connect(self.kubeconfig)
        self._task = asyncio.create_task(self._run(self._client))
        await asyncio.wait_for(self._listed.wait(), timeout=30)

    async def stop(self) -> None:
        if self._task is not None:
            if self._task.done():
                self._task.result()  # a crashed audit must fail the test, not read as clean
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._client is not None:
            await self._client.close()

    def check_alive(self) -> None:
        """Raise if the watch died: an audit that stopped watching proves nothing."""
        assert self._task is not None and not self._task.done(), "pod audit stopped"

    @property
    def pods_created(self) -> int:
        return sum(len(uids) for uids in self.uids_by_name.values())

    @property
    def duplicate_names(self) -> dict[str, int]:
        return {n: len(u) for n, u in self.uids_by_name.items() if len(u) > 1}

    def names_with_prefix(self, prefix: str) -> list[str]:
        return sorted(n for n in self.uids_by_name if n.startswith(prefix))

    def _record(self, pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        self.uids_by_name[meta["name"]].add(meta["uid"])

    async def _relist(self, client: ApiServerClient) -> str:
        listed = await client.list(PODS, namespace=self.namespace)
        for pod in listed["items"]:
            self._record(pod)
        self.relists += 1
        return str(listed["metadata"]["resourceVersion"])

    async def _run(self, client: ApiServerClient) -> None:
        version = await self._relist(client)
        self._listed.set()
        while True:
            # An ERROR event (410 Gone: the version was compacted) means events may be
            # lost; a relist catches up, and the UID rule keeps it from faking duplicates.
            lost = False
            try:
                async with contextlib.aclosing(
                    client.watch(
                        PODS, namespace=self.namespace, resource_version=version, timeout_seconds=60
                    )
                ) as stream:
                    async for event in stream:
                        if event.type == "ERROR":
                            lost = True
                            break
                        version = event.object["metadata"]["resourceVersion"]
                        if event.type == "ADDED":
                            self.added_events += 1
                            self._record(event.object)
            except ApiError as error:
                if not is_gone(error):
                    raise
                lost = True
            if lost:
                version = await self._relist(client)

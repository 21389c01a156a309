"""The orphan-stamp reaper (E21): a cordon whose run has vanished is undone.

A stamp naming a run that no longer exists (or exists with another UID) would keep
the node out of every future run forever, and out of the scheduler too. Every node
event, and every 5 minutes for nodes still stamped by a live run, the stamp is parsed
and its run looked up.

Reads: the cache answers the common cases (a node with no stamp, a stamp whose run is
there with its UID), so a fleet's node heartbeats cost no requests. Those cached reads
copy only metadata (:meth:`ConfirmingReader.get_metadata`): the stamp is an annotation and the
run is judged by its UID, and copying a run with a megabyte of status per node event
was a third of the manager's CPU at 1,000 nodes. Only a stamp that
looks orphaned is acted on, and then both reads are live: the run (E22: a stale cache
must never make a live run look gone) and the node the release patch is computed
from (E12).
"""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime
from typing import Final

import aiohttp

from glimmer.api import format_time
from glimmer.controllers.kit.cordon import kept_message, owner_of, reap_decision
from glimmer.controllers.kit.names import RUNS
from glimmer.controllers.kit.reads import ConfirmingReader, uncached
from glimmer.controllers.kit.ref import RunRef
from glimmer.controllers.kit.view import JSON, ObjectView
from glimmer.engine import EVENTS, NODES, ApiError, KubeClient, Readers, Result

RECHECK_SECONDS: Final = 300.0


class StampReaper:
    """Reconciles one Node (key = node name)."""

    def __init__(
        self,
        *,
        client: KubeClient,
        recheck_seconds: float = RECHECK_SECONDS,
        readers: Readers | None = None,
    ) -> None:
        self.client = client
        self.recheck_seconds = recheck_seconds
        self.reads = ConfirmingReader(readers if readers is not None else uncached(client))

    async def reconcile(self, key: str) -> Result:
        meta = await self.reads.get_metadata(NODES, key)  # cached; a miss confirmed live
        seen = owner_of({"metadata": meta}) if meta is not None else None
        if seen is None:
            return Result()  # no stamp, or one that is not ours to parse: left alone
        # Cached; a miss is confirmed live (E22), so None here means gone.
        run_meta = await self.reads.get_metadata(RUNS, seen.name, namespace=seen.namespace)
        if run_meta is not None and str(run_meta.get("uid", "")) == seen.uid:
            return Result(requeue_after=self.recheck_seconds)
        # It looks orphaned: decide on live reads only. E12: the release patch is
        # computed from the node as it is now.
        node = await self.reads.live_get(NODES, key)
        stamp = owner_of(node) if node is not None else None
        if node is None or stamp is None:
            return Result()
        run = None  # run_meta None: confirmed gone by a live read (get_metadata's miss)
        if stamp != seen or run_meta is not None:
            # E22: another stamp by now, or a UID mismatch a stale cache may have shown.
            run = await self.reads.live_get(RUNS, stamp.name, namespace=stamp.namespace)
        alive = run is not None and ObjectView(run).uid == stamp.uid
        decision = reap_decision(node, owner_alive=alive)
        if decision is not None:
            await self.client.patch(NODES, key, decision.patch)
            if decision.kept is not None:
                await self._kept_event(node, stamp, decision.kept)
            return Result()
        return Result(requeue_after=self.recheck_seconds)

    async def _kept_event(self, node: JSON, stamp: RunRef, kept: str) -> None:
        """An Event on the Node (its run is gone): why the reaped cordon stays."""
        view = ObjectView(node)
        name = view.name
        now = format_time(datetime.now(UTC))
        body = {
            "metadata": {"generateName": f"{name}.", "namespace": "default"},
            "involvedObject": {"apiVersion": "v1", "kind": "Node", "name": name,
                               "uid": view.uid or None},
            "reason": "CordonKept",
            "message": kept_message(name, kept)[:900]
            + f" (the stamp of run {stamp.key}, which no longer exists, was removed)",
            "type": "Normal",
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
            "source": {"component": "glimmer-cordon-reaper"},
        }  # fmt: skip
        with contextlib.suppress(ApiError, OSError, TimeoutError, aiohttp.ClientError):
            await self.client.create(EVENTS, body, namespace="default")

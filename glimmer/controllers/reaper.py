"""The orphan-stamp reaper (E21): a cordon whose run has vanished is undone.

A stamp naming a run that no longer exists (or exists with another UID) would keep
the node out of every future run forever, and out of the scheduler too. Every node
event, and every 5 minutes for nodes still stamped by a live run, the stamp is parsed
and its run read *uncached* (E22): a stale cache must never make a live run look gone.
"""

from __future__ import annotations

from typing import Final

from glimmer.controllers.run.cordon import owner_of, reap_patch
from glimmer.controllers.run.kube import RUNS
from glimmer.engine import NODES, ApiError, KubeClient, Result, is_not_found

RECHECK_SECONDS: Final = 300.0


class StampReaper:
    """Reconciles one Node (key = node name)."""

    def __init__(self, *, client: KubeClient, recheck_seconds: float = RECHECK_SECONDS) -> None:
        self.client = client
        self.recheck_seconds = recheck_seconds

    async def reconcile(self, key: str) -> Result:
        try:
            node = await self.client.get(NODES, key)
        except ApiError as err:
            if is_not_found(err):
                return Result()
            raise
        stamp = owner_of(node)
        if stamp is None:
            return Result()  # no stamp, or one that is not ours to parse: left alone
        try:
            run = await self.client.get(RUNS, stamp.name, namespace=stamp.namespace)
            alive = (run.get("metadata") or {}).get("uid") == stamp.uid
        except ApiError as err:
            if not is_not_found(err):
                raise  # any other read error: retry, never guess "gone"
            alive = False
        patch = reap_patch(node, owner_alive=alive)
        if patch is not None:
            await self.client.patch(NODES, key, patch)
            return Result()
        return Result(requeue_after=self.recheck_seconds)

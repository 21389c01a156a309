"""How the run controller reads the cluster: the kit's confirming reader
(:class:`~glimmer.controllers.kit.reads.ConfirmingReader`, one meaning per method) plus
the memory that is the run controller's own.

A cached run may lag our own last write. Every write of a run carries its
resourceVersion, so a stale view is a 409 there; the one side effect that precedes
the pass's status write, a cordon (E10), is placed only after :meth:`confirm` has
checked the view against a live read (a stale view after the run ended could otherwise
cordon a node for a finished run, which nothing would ever release). A run whose cache
still shows a version our own writes replaced waits for it (:meth:`RunReads.behind_our_write`),
and a pod cache is trusted for a release only once it shows every pod this process
created (:meth:`RunReads.pods_for_release`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from glimmer.controllers.kit.indexes import PODS_BY_RUN
from glimmer.controllers.kit.reads import ConfirmingReader, Objects
from glimmer.controllers.kit.view import ObjectView
from glimmer.controllers.run import kube
from glimmer.controllers.run.podstate import owned_by
from glimmer.engine import PODS, ApiError, NotCachedError, Readers, is_not_found


class RunReads(ConfirmingReader):
    """The kit's confirming reader, with the run reconciler's own memory.

    It remembers, per run UID, which runner pods this process created that the pod cache
    has not shown yet (:meth:`created`), so :meth:`pods_for_release` can tell a cache
    that is complete for a run from one that lags its newest pod.
    """

    def __init__(self, readers: Readers) -> None:
        super().__init__(readers)
        #: run UID -> names of pods created by this process, not yet seen in the cache.
        self._unseen: dict[str, set[str]] = {}
        #: run UID -> (every resourceVersion our latest chain of status writes moved the
        #: run on from, the version the last one answered, how many passes have been
        #: deferred since because the cache still showed one of the former). A pass
        #: writes up to twice (what settled, then the next wave's cordons), so a cache
        #: showing either replaced version is behind.
        self._wrote: dict[str, tuple[frozenset[str], str, int]] = {}

    async def pods_of(self, run: Mapping[str, Any]) -> tuple[Objects, bool]:
        """The run's runner pods (controlled by its UID) and whether they came from the
        cache (by the run-label index); live when no cache covers them.

        Cached pods are the informer store's own objects, not copies (I9: a run
        keeps every earlier wave's terminated pods for their logs, and copying all of
        them each pass cost more than the pass read). So a pass only reads its pods;
        whatever would edit one copies it first (the guard test is
        ``test_I9_a_pass_never_mutates_a_cached_pod``). The live answer is fresh."""
        view = ObjectView(run)
        value, selector = kube.run_pod_selector(run)
        try:
            pods = self.cached.by_index(
                PODS,
                PODS_BY_RUN,
                value,
                namespace=view.namespace,
                label_selector=selector,
                shared=True,
            )
            cached = True
        except NotCachedError:
            pods, cached = await self.live_pods_of(run), False
        return [p for p in pods if owned_by(p, view.uid)], cached

    def wrote(self, before: Mapping[str, Any], after: Mapping[str, Any]) -> None:
        """This process wrote the run: ``before`` as it was read, ``after`` the answer."""
        answer = ObjectView(after)
        old, new = ObjectView(before).resource_version, answer.resource_version
        if old and new and old != new:
            uid = answer.uid
            previous = self._wrote.get(uid)
            chained = previous is not None and previous[1] == old
            replaced = previous[0] | {old} if previous is not None and chained else {old}
            self._wrote[uid] = (frozenset(replaced), new, 0)

    def behind_our_write(self, run: Mapping[str, Any], *, patience: int = 3) -> bool:
        """Whether the cached ``run`` is a version our latest writes replaced, so a pass
        over it would redo what those writes recorded and then lose a 409. True asks
        the caller to wait for the cache (the write's own watch event requeues the run),
        at most ``patience`` times in a row; then False (a cache that does not catch up
        costs 409s, as before, never a wrong decision)."""
        view = ObjectView(run)
        uid = view.uid
        seen = self._wrote.get(uid)
        if seen is None or view.resource_version not in seen[0]:
            self._wrote.pop(uid, None)  # caught up (or someone else wrote since)
            return False
        if seen[2] >= patience:
            self._wrote.pop(uid, None)
            return False
        self._wrote[uid] = (seen[0], seen[1], seen[2] + 1)
        return True

    def shows_created(self, run: Mapping[str, Any], pods: Mapping[str, Any]) -> bool:
        """Whether ``pods`` (the cached pods of ``run``, by name) hold every pod this
        process created for it (those seen are forgotten: the cache keeps them now)."""
        unseen = self._unseen.get(ObjectView(run).uid)
        if not unseen:
            return True
        unseen.difference_update(pods)
        return not unseen

    def pods_for_release_settled(self, run: Mapping[str, Any]) -> None:
        """A live list of ``run``'s pods was just read: nothing created before it is
        unseen any more."""
        self._unseen[ObjectView(run).uid] = set()

    def created(self, run: Mapping[str, Any], name: str) -> None:
        """This process created runner pod ``name`` for ``run`` (the apiserver said so)."""
        self._unseen.setdefault(ObjectView(run).uid, set()).add(name)

    async def pods_for_release(self, run: Mapping[str, Any]) -> Objects | None:
        """E12/H: None when the cached pods of ``run`` can decide a release, else the
        live list to decide it on.

        The only way a cache gets a release wrong is by lacking a pod (a pod it still
        shows after it ended only holds a node longer). Every runner pod is created by
        this manager, so the cache is complete for a run once it shows every pod this
        process created for it; pods a previous process created are covered by the one
        live list each run gets first in a process (the cache synced after they
        existed). Anything else (a pod not shown yet, no cache) is a live list, after
        which nothing is unseen."""
        view = ObjectView(run)
        unseen = self._unseen.get(view.uid)
        if unseen is not None:
            _, selector = kube.run_pod_selector(run)
            try:
                for name in sorted(unseen):
                    await self.cached.get_metadata(
                        PODS, name, namespace=view.namespace, label_selector=selector
                    )
                    unseen.discard(name)
                return None
            except NotCachedError:
                pass
            except ApiError as err:
                if not is_not_found(err):
                    raise
        pods = await self.live_pods_of(run)
        self.pods_for_release_settled(run)
        return pods

    async def live_pods_of(self, run: Mapping[str, Any]) -> Objects:
        return await kube.owned_pods(self.readers.live.client, run)

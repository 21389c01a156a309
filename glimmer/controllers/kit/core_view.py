"""How the controllers see the core objects they read: Pods, Nodes and Services.

The same decision as :mod:`glimmer.controllers.kit.view` (whose :class:`ObjectView`
these extend): the object stays the apiserver's JSON, each view wraps the dict itself
(never a copy: the run controller reads cached pods in place, by the thousand, every
pass), and every read of ``metadata``, ``spec`` or ``status`` is one of its properties.
A view reads; it does not interpret. What a runner pod's phase or termination *means*
is :mod:`glimmer.controllers.run.podstate`'s, in the kubelet's words.

Reads never crash on a malformed value: an unreadable map reads as empty, an unreadable
list as empty, an unreadable entry is skipped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from glimmer.controllers.kit import names
from glimmer.controllers.kit.view import ObjectView, _entries, _is_map, _map, _maps


class PodView(ObjectView):
    """Typed reads of one Pod (``obj`` is the dict itself, not a copy). The runner's
    container state is looked up once per view: a view is one read of the pod."""

    __slots__ = ("_state",)

    def __init__(self, obj: Mapping[str, Any]) -> None:
        self.obj = obj
        self._state: Mapping[str, Any] | None = None

    # --- spec -------------------------------------------------------------------------

    @property
    def node_name(self) -> str:
        """``spec.nodeName``: the node the scheduler bound the pod to ("" before)."""
        return str(self.spec.get("nodeName") or "")

    @property
    def pinned_node(self) -> str:
        """The node the builder pinned the pod to (its hostname selector), "" if none."""
        return str(_map(self.spec.get("nodeSelector")).get(names.HOSTNAME_LABEL) or "")

    @property
    def node(self) -> str:
        """The node the pod was bound to, else the one it was pinned to."""
        return self.node_name or self.pinned_node

    @property
    def containers(self) -> list[Mapping[str, Any]]:
        """The readable entries of ``spec.containers``, in order."""
        return _maps(self.spec.get("containers"))

    # --- status -----------------------------------------------------------------------

    @property
    def phase(self) -> str:
        """``status.phase`` as the kubelet wrote it ("" when unset)."""
        return str(self.stored_status.get("phase") or "")

    @property
    def reason(self) -> str:
        """``status.reason``: the pod-level account (Evicted, DeadlineExceeded...)."""
        return str(self.stored_status.get("reason") or "")

    @property
    def message(self) -> str:
        return str(self.stored_status.get("message") or "")

    @property
    def start_time(self) -> str:
        """``status.startTime``: when the kubelet accepted the pod ("" before)."""
        return str(self.stored_status.get("startTime") or "")

    @property
    def container_statuses(self) -> list[Mapping[str, Any]]:
        """The readable entries of ``status.containerStatuses``."""
        return _maps(self.stored_status.get("containerStatuses"))

    @property
    def runner_status(self) -> Mapping[str, Any]:
        """The runner container's status entry (empty when the kubelet shows none)."""
        for entry in _entries(self.stored_status.get("containerStatuses")):
            if _is_map(entry) and entry.get("name") == names.RUNNER_CONTAINER:
                return entry
        return {}

    @property
    def runner_state(self) -> Mapping[str, Any]:
        state = self._state
        if state is None:
            state = self._state = _map(self.runner_status.get("state"))
        return state

    @property
    def runner_running(self) -> Mapping[str, Any]:
        """The runner's Running state (empty when it is not running)."""
        return _map(self.runner_state.get("running"))

    @property
    def runner_waiting(self) -> Mapping[str, Any]:
        """The runner's Waiting state (empty when it is not waiting)."""
        return _map(self.runner_state.get("waiting"))

    @property
    def runner_terminated(self) -> Mapping[str, Any] | None:
        """The runner's Terminated state; None when it has none (an unreadable one reads
        as terminated with nothing said, so its exit code is unknown, never 0)."""
        done = self.runner_state.get("terminated")
        return None if done is None else _map(done)


class NodeView(ObjectView):
    """Typed reads of one Node (``obj`` is the dict itself, not a copy)."""

    __slots__ = ()

    @property
    def unschedulable(self) -> bool:
        """``spec.unschedulable``: cordoned."""
        return bool(self.spec.get("unschedulable"))

    @property
    def managed_fields(self) -> list[Mapping[str, Any]] | None:
        """The readable entries of ``metadata.managedFields``; None when the node carries
        no list of them (a cache that dropped them), so nothing can be said of writers.
        Only the cordon's owners are kept in the node cache (``compact_cordon_node``)."""
        entries = self.meta.get("managedFields")
        return _maps(entries) if isinstance(entries, list) else None

    @property
    def node_info(self) -> Mapping[str, Any]:
        """``status.nodeInfo`` (kernel, OS image, architecture...)."""
        return _map(self.stored_status.get("nodeInfo"))

    @property
    def allocatable(self) -> Mapping[str, Any]:
        """``status.allocatable``: the extended resources device plugins publish."""
        return _map(self.stored_status.get("allocatable"))


class ServiceView(ObjectView):
    """Typed reads of one Service (``obj`` is the dict itself, not a copy)."""

    __slots__ = ()

    @property
    def selector(self) -> dict[str, Any]:
        return dict(_map(self.spec.get("selector")))

    @property
    def cluster_ip(self) -> Any:
        """``spec.clusterIP`` as stored ("None" for a headless Service)."""
        return self.spec.get("clusterIP")

    @property
    def publishes_not_ready(self) -> bool:
        """``spec.publishNotReadyAddresses`` is exactly true."""
        return self.spec.get("publishNotReadyAddresses") is True

    @property
    def has_ports(self) -> bool:
        return bool(self.spec.get("ports"))

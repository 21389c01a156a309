"""What every part of the run reconciler shares: its options, clients and clock.

The reconciler is split by rule group (start, sweep, finish); each part gets the same
:class:`RunContext`, so none of them keeps state of its own between passes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

from glimmer.controllers.kit import checkpoint, names
from glimmer.controllers.kit.view import RunView
from glimmer.controllers.run.delivery import Deliverer, NoDelivery
from glimmer.controllers.run.reads import RunReads
from glimmer.engine import KubeClient

JSON = dict[str, Any]


@dataclass(frozen=True)
class RunOptions:
    """How the run controller behaves; every default is the upstream behaviour."""

    #: Where NodeFingerprints live (E14 reads a node's GPU vendor from them).
    operator_namespace: str
    #: E2: a run may be applied before its profile/tests; wait this long (120 s) after
    #: creation before refusing it.
    resolve_grace_seconds: float = 120.0
    #: E2: how often a run inside that grace looks again (15 s).
    resolve_retry_seconds: float = 15.0
    #: A pod still pulling its image this long (120 s) after creation is settled as
    #: Error (InvalidImageName/ErrImageNeverPull settle at once). Without it an
    #: unpullable image would only be noticed at the overdue point (window + 420 s).
    image_pull_grace_seconds: float = 120.0
    #: Requeue backstop while a pod has not started (30 s); pod events usually come first.
    requeue_unstarted_seconds: float = 30.0
    #: Requeue backstop while a Pair server or Group rank 0 is not Ready yet (5 s, E22):
    #: its Ready transition is a pod event and usually comes first.
    requeue_rendezvous_seconds: float = 5.0
    #: Requeue backstop otherwise (5 min), shortened to checkpoints and deadlines.
    requeue_idle_seconds: float = 300.0
    #: E19: how often a terminal envelope a sink refused is re-sent (5 min).
    terminal_delivery_retry_seconds: float = 300.0
    #: Work one pass may do before it stops, commits what it did and requeues at once
    #: (20 s). A pass only records progress in its final status write, so a pass cut off
    #: by the reconcile timeout (60 s) would lose everything it did; at fleet scale (a
    #: thousand nodes, a hundred at a time) one unbounded pass can outlast that timeout.
    pass_budget_seconds: float = 20.0
    #: Targets above this count are read with one uncached node list at mark-running
    #: instead of one uncached get each (E6, E22).
    node_list_threshold: int = 16
    #: The namespaces whose runs this manager honours (I29); None serves every
    #: namespace (the library default; ``glimmer manager`` defaults to its own
    #: namespace, widened with ``--serve-namespaces``). A run elsewhere ends Error with
    #: ``Admitted=False/NamespaceNotServed`` before anything is read, cordoned or
    #: created. Deletion and terminal clean-up of runs already there still proceed,
    #: so nothing this manager cordoned earlier is ever stranded.
    served_namespaces: frozenset[str] | None = None
    #: Serve by label instead (``--serve-namespace-selector``): the namespaces carrying
    #: every one of these labels (equality terms, validated), never the operator's own.
    #: Needs ``served_namespaces`` None. Whether a namespace carries them is read from
    #: the run controller's Namespace cache (a miss confirmed live), so a namespace that
    #: loses a label unloads its runs exactly as a name removed from the list does.
    served_namespace_selector: Mapping[str, str] | None = None
    #: The most the run object may weigh as JSON when its status is written (1 MiB; see
    #: ``kube``): past it the oldest attempts are compacted, and a status that still
    #: does not fit ends the run Error (I21). etcd's own limit is 1.5 MiB.
    status_budget_bytes: int = checkpoint.STATUS_BUDGET_BYTES
    #: The ServiceAccount runner pods run as (``glimmer-runner``, created with no
    #: binding by manifests/ and the chart in each served namespace); None or "" leaves
    #: it to the apiserver (the namespace's ``default``). No token is mounted either way.
    runner_service_account: str | None = "glimmer-runner"

    def __post_init__(self) -> None:
        terms = self.served_namespace_selector
        if terms is None:
            return
        if self.served_namespaces is not None:
            raise ValueError(
                "served_namespaces and served_namespace_selector are exclusive: serve a "
                "list of names or the namespaces carrying labels, not both"
            )
        if not terms:
            raise ValueError("served_namespace_selector: give at least one label=value term")
        # Validated (a key or value Kubernetes refuses raises, naming it) and frozen: the
        # selector the Namespace watch uses must be the one every decision reads.
        names.equality_selector(terms, field="served_namespace_selector")
        object.__setattr__(
            self, "served_namespace_selector", MappingProxyType(dict(sorted(terms.items())))
        )

    @property
    def namespace_selector(self) -> str | None:
        """The served-namespace label selector as the apiserver reads it (``k=v,k2=v2``,
        keys sorted), or None when namespaces are served by name."""
        terms = self.served_namespace_selector
        if terms is None:
            return None
        return names.equality_selector(terms, field="served_namespace_selector")

    def serves(self, namespace: str, *, namespace_labels: Mapping[str, Any] | None = None) -> bool:
        """Whether runs in ``namespace`` are honoured: the one place that decides it.

        By name: ``namespace`` is listed (or every namespace is served). By selector:
        ``namespace_labels`` are the namespace's labels as read from the cluster, None when it was
        not found; it is served only when it carries every term, and never when it is
        the operator's own namespace (where the manager's Lease and fingerprints live)."""
        terms = self.served_namespace_selector
        if terms is None:
            return self.served_namespaces is None or namespace in self.served_namespaces
        if namespace == self.operator_namespace or namespace_labels is None:
            return False
        return all(namespace_labels.get(key) == value for key, value in terms.items())


def now_utc() -> datetime:
    return datetime.now(UTC)


def run_key(run: JSON) -> str:
    return RunView(run).key


@dataclass
class RunContext:
    client: KubeClient
    options: RunOptions
    #: Every read the parts make, cached or live (see :mod:`~glimmer.controllers.run.reads`).
    reads: RunReads
    deliverer: Deliverer = field(default_factory=NoDelivery)
    now: Callable[[], datetime] = now_utc
    #: Called with the run after each status write (metrics).
    observe: Callable[[Mapping[str, Any]], None] | None = None
    #: Called with (namespace, name) when a run is gone (forget its metrics).
    forget: Callable[[str, str], None] | None = None


class Part:
    """A rule group of the reconciler, bound to the shared context."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self.client = ctx.client
        self.options = ctx.options
        self.reads = ctx.reads
        self.deliverer = ctx.deliverer
        self.now = ctx.now
        self._observe = ctx.observe
        self._forget = ctx.forget

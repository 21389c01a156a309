"""Watch wiring as a sentence: what a controller is *for*, what it *owns*, what else it
*watches*, and how each event becomes its reconcile keys.

Every kind is cached through one shared informer per manager, so every controller that
watches a kind must hand it the same ingest transform (the informer factory refuses a
second one). The transform is therefore declared once per kind, in :data:`TRANSFORMS`,
and the builder takes it from there: no registration names a transform itself.

    watches = (
        Wiring.for_(RUNS, namespace=ns, index={RUNS_BY_NAMESPACE: runs_by_namespace})
        .owns(PODS, namespace=ns, label_selector=RUN_LABEL, via=owner_run_keys,
              index={PODS_BY_RUN: pods_by_run})
        .watches(FINGERPRINTS, namespace=ops, to_keys=no_keys)
        .build()
    )
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from glimmer.controllers.kit.cordon import compact_cordon_node
from glimmer.controllers.kit.names import FINGERPRINTS, PROFILES, RUNS, SCHEDULES, TESTS
from glimmer.engine import (
    NAMESPACES,
    NODES,
    PODS,
    InformerEvent,
    Resource,
    Watch,
    compact,
    compact_pod,
    strip_managed_fields,
)
from glimmer.engine.cache import IndexFunc
from glimmer.engine.informer import Transform
from glimmer.engine.manager import KeyMapper, own_key

#: The ingest transform of every kind a controller caches, declared once:
#: runs, schedules, profiles and tests lose only ``managedFields``; runner pods and
#: fingerprints keep the fields reconcilers read (equal strings shared); nodes keep
#: those fields plus who owns ``spec.unschedulable`` (E12 reads it on the cached node);
#: namespaces keep their labels (the served-namespace selector).
TRANSFORMS: Final[Mapping[Resource, Transform]] = {
    RUNS: strip_managed_fields,
    SCHEDULES: strip_managed_fields,
    PROFILES: strip_managed_fields,
    TESTS: strip_managed_fields,
    PODS: compact_pod,
    NODES: compact_cordon_node,
    FINGERPRINTS: compact,
    NAMESPACES: compact,
}


def no_keys(event: InformerEvent) -> list[str]:
    """A watch that only fills the cache: its events enqueue nothing."""
    return []


def transform_of(resource: Resource) -> Transform:
    """The one ingest transform of ``resource`` (:data:`TRANSFORMS`)."""
    try:
        return TRANSFORMS[resource]
    except KeyError:
        raise KeyError(
            f"no ingest transform is declared for {resource}: add it to "
            "glimmer.controllers.kit.watches.TRANSFORMS"
        ) from None


class Wiring:
    """The watches of one controller, built in the order they are declared."""

    def __init__(self) -> None:
        self._watches: list[Watch] = []

    @classmethod
    def for_(
        cls,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        index: Mapping[str, IndexFunc] | None = None,
        to_keys: KeyMapper = own_key,
    ) -> Wiring:
        """The kind this controller reconciles: each event enqueues the object itself
        (or, with ``to_keys``, only the events that concern its reconcile)."""
        return cls()._add(resource, namespace, label_selector, index, to_keys)

    def owns(
        self,
        resource: Resource,
        *,
        via: KeyMapper,
        namespace: str | None = None,
        label_selector: str | None = None,
        index: Mapping[str, IndexFunc] | None = None,
    ) -> Wiring:
        """Objects the reconciled kind owns: ``via`` maps each to its owner's key."""
        return self._add(resource, namespace, label_selector, index, via)

    def watches(
        self,
        resource: Resource,
        *,
        to_keys: KeyMapper,
        namespace: str | None = None,
        label_selector: str | None = None,
        index: Mapping[str, IndexFunc] | None = None,
    ) -> Wiring:
        """Any other kind: ``to_keys`` says which keys an event concerns
        (:func:`no_keys` for a kind that is only read from the cache)."""
        return self._add(resource, namespace, label_selector, index, to_keys)

    def build(self) -> tuple[Watch, ...]:
        return tuple(self._watches)

    def _add(
        self,
        resource: Resource,
        namespace: str | None,
        label_selector: str | None,
        index: Mapping[str, IndexFunc] | None,
        to_keys: KeyMapper,
    ) -> Wiring:
        self._watches.append(
            Watch(
                resource,
                namespace=namespace,
                label_selector=label_selector,
                transform=transform_of(resource),
                indexers=dict(index or {}),
                to_keys=to_keys,
            )
        )
        return self

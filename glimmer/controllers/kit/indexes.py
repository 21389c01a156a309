"""The cache indexes the run controller and the reaper register, and read through.

Built here once from the engine's generic :func:`~glimmer.engine.label_index` and
:func:`~glimmer.engine.annotation_index`: a store refuses a second indexer under the same
name with another function, so every registration must hand over these very objects.
"""

from __future__ import annotations

from typing import Final

from glimmer.controllers.kit import names
from glimmer.controllers.kit.watches import Wiring
from glimmer.engine import NODES, Watch, annotation_index, label_index
from glimmer.engine.manager import KeyMapper, own_key

#: Runner pods by the run label's value (``label_value(run name)``).
PODS_BY_RUN: Final = "run"
pods_by_run: Final = label_index(names.RUN_LABEL)

#: Nodes by their cordon-owner stamp (``<namespace>/<name>/<uid>``).
NODES_BY_CORDON_OWNER: Final = "cordon-owner"
nodes_by_cordon_owner: Final = annotation_index(names.CORDON_OWNER)


def node_watch(*, to_keys: KeyMapper = own_key) -> Watch:
    """The one Node informer: compact nodes (what reconcilers read, with who owns each
    cordon: a release decided on the cached node must see it, E12) indexed by cordon
    owner for the orphan-stamp reaper (E21, run inside the fingerprint controller);
    every controller that watches Nodes uses it, so the shared informer agrees."""
    [watch] = Wiring.for_(
        NODES, index={NODES_BY_CORDON_OWNER: nodes_by_cordon_owner}, to_keys=to_keys
    ).build()
    return watch

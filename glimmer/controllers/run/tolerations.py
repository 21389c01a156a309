"""Which of a node's taints keep a pod with these tolerations off it, as the scheduler
decides (E28).

The matching is Kubernetes' own, rule for rule (``Toleration.ToleratesTaint`` in
k8s.io/api/core/v1, and the TaintToleration and NodeUnschedulable filter plugins), so
admission refuses exactly the nodes the scheduler would never bind a runner pod to:

- a toleration with an ``effect`` matches only taints of that effect; an empty one
  matches every effect;
- a toleration with a ``key`` matches only taints of that key; an empty key matches
  every key (the API allows that only with ``Exists``: tolerate everything);
- operator ``Exists`` matches any value; ``Equal`` (and an empty operator, its default)
  matches only the same value, a missing value reading as "";
- any other operator matches nothing (the alpha ``Gt``/``Lt`` behind a feature gate
  are not followed: such a toleration tolerates nothing here, so a run relying on one
  is refused rather than admitted onto a node it may never reach);
- only ``NoSchedule`` and ``NoExecute`` taints keep a pod off a node; a
  ``PreferNoSchedule`` taint never does;
- ``spec.unschedulable`` (a cordon) counts as the taint
  ``node.kubernetes.io/unschedulable:NoSchedule`` whether or not the node lifecycle
  controller has written it yet, as the NodeUnschedulable plugin treats it.

``tolerationSeconds`` is not a filter: a ``NoExecute`` taint tolerated for a time admits
the pod, which is evicted when the time is up (the scheduler binds it all the same).
The tolerations judged here are the runner pods' own, from
:func:`glimmer.controllers.run.pods.runner_tolerations`, so admission and the pods
cannot disagree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from glimmer.controllers.kit import names
from glimmer.controllers.kit.core_view import NodeView
from glimmer.verdict.taints import Taint

__all__ = ["BLOCKING_EFFECTS", "CORDON_TAINT", "Taint", "node_taints", "tolerates", "untolerated"]

#: The taint effects the scheduler will not place an untolerating pod under.
BLOCKING_EFFECTS: Final = frozenset({"NoSchedule", "NoExecute"})


CORDON_TAINT: Final = Taint(key=names.UNSCHEDULABLE_TAINT, value="", effect="NoSchedule")


def tolerates(toleration: Mapping[str, Any], taint: Taint) -> bool:
    """Whether one toleration tolerates one taint (``Toleration.ToleratesTaint``)."""
    effect = str(toleration.get("effect") or "")
    if effect and effect != taint.effect:
        return False
    key = str(toleration.get("key") or "")
    if key and key != taint.key:
        return False
    operator = str(toleration.get("operator") or "")
    if operator in ("", "Equal"):
        return str(toleration.get("value") or "") == taint.value
    return operator == "Exists"


def node_taints(node: Mapping[str, Any]) -> list[Taint]:
    """The node's taints, its cordon included as the scheduler counts it."""
    view = NodeView(node)
    entries = view.spec.get("taints")
    taints = [
        Taint.of(entry)
        for entry in (entries if isinstance(entries, list) else ())
        if isinstance(entry, Mapping)
    ]
    if view.unschedulable and CORDON_TAINT not in taints:
        taints.append(CORDON_TAINT)
    return taints


def untolerated(node: Mapping[str, Any], tolerations: Sequence[Mapping[str, Any]]) -> list[Taint]:
    """The node's NoSchedule/NoExecute taints that none of ``tolerations`` tolerates, in
    the node's order: empty when a pod with them can be scheduled there."""
    return [
        taint
        for taint in node_taints(node)
        if taint.effect in BLOCKING_EFFECTS and not any(tolerates(t, taint) for t in tolerations)
    ]

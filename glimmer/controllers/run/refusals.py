"""Why a run cannot be admitted yet, decided purely from what the start read (E23, E24,
E28).

A run naming a profile or test that does not exist, or targets that are not there or
cannot run a pod (NotReady, or tainted against the runner pods), would otherwise wait
in silence (or, for nodes, sit Running with an unschedulable pod). Each finding here
becomes an ``Admitted=False`` condition and a Warning Event at once, whose reason names
the field and whose message says the fix; the run is re-checked every
``resolve_retry_seconds`` and ends Error after E2's grace. A missing sink is said the
same way, in ``SinksFound``, but refuses nothing (E26). The caller reads; this module
only decides.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from glimmer.controllers.kit.view import ObjectView
from glimmer.controllers.run.pods import runner_tolerations
from glimmer.controllers.run.tolerations import Taint, untolerated

JSON = dict[str, Any]

#: The reason for each kind a reference can name.
NOT_FOUND_REASONS: Final = {
    "BurnInProfile": "ProfileNotFound",
    "BurnInTest": "TestNotFound",
    "BurnInSink": "SinkNotFound",
}
#: At most this many names are listed in a message ("and N more" after them).
LISTED: Final = 5


@dataclass(frozen=True, slots=True)
class Refusal:
    """``Admitted=False`` with this reason and message (also the Event's)."""

    reason: str
    message: str


def missing_reference(*, field: str, kind: str, name: str, namespace: str) -> Refusal:
    """A reference to an object that does not exist (E23)."""
    return Refusal(
        reason=NOT_FOUND_REASONS[kind],
        message=(
            f'{field} "{name}": no {kind} named {name} in namespace {namespace}; '
            "create it or fix the name"
        ),
    )


#: E26: the condition that says a sink the profile names does not exist (set only then).
SINKS_CONDITION: Final = "SinksFound"


def missing_sinks(missing: Sequence[str], *, profile: str, namespace: str) -> Refusal:
    """E26: what ``SinksFound=False`` says (a warning, not a refusal: L5)."""
    return Refusal(
        reason="SinkNotFound",
        message=(
            f"BurnInProfile {profile} spec.sinks: no BurnInSink named {_listed(list(missing))} "
            f"in namespace {namespace}; the run goes ahead and those deliveries fail "
            "(status.sinkStatus): create the sink or fix the name"
        ),
    )


def _listed(nodes: Sequence[str]) -> str:
    shown = ", ".join(nodes[:LISTED])
    more = len(nodes) - LISTED
    return f"{shown} and {more} more" if more > 0 else shown


def _not_ready(node: Mapping[str, Any]) -> str | None:
    """The Ready condition's status when a kubelet reported it and it is not True."""
    value = ObjectView(node).condition("Ready")
    return None if value is None or value == "True" else value or "Unknown"


def no_matching_nodes(selector: str) -> Refusal:
    """A nodeSelector that matches no node (E24)."""
    return Refusal(
        reason="NoMatchingNodes",
        message=(
            f"spec.target.nodeSelector {selector}: matches no node; label the nodes "
            f"to burn in (kubectl label node NODE {selector}) or fix the selector"
        ),
    )


def target_refusal(
    targets: Sequence[str],
    nodes: Mapping[str, JSON | None],
    *,
    run_tolerations: Sequence[Mapping[str, Any]] = (),
) -> Refusal | None:
    """Missing or NotReady target nodes (E24), or nodes with a taint the runner pods do
    not tolerate (E28); None when every target can run a pod.

    ``nodes`` maps each target to its Node object (None: it does not exist). A node is
    NotReady only when its kubelet reported a Ready condition that is not True; a node
    cordoned by someone else is admitted, since runner pods tolerate the cordon and the
    release restores it (E10, E12). ``run_tolerations`` is the run's
    ``spec.target.tolerations``: the taints are judged against the runner pods' whole
    list (:func:`~glimmer.controllers.run.pods.runner_tolerations`, the one the pod
    builder uses). NotReady is said first: the node lifecycle controller taints such a
    node ``not-ready``/``unreachable``, and the fix is the kubelet, not a toleration.
    """
    missing = [node for node in targets if nodes.get(node) is None]
    if missing:
        return Refusal(
            reason="NodeNotFound",
            message=(
                f"spec.target.nodeNames: no Node named {_listed(missing)}; fix the names "
                "(kubectl get nodes) or wait for the node to join"
            ),
        )
    not_ready = [
        (node, state)
        for node in targets
        if (found := nodes.get(node)) is not None and (state := _not_ready(found)) is not None
    ]
    if not_ready:
        names = _listed([f"{node} (Ready={state})" for node, state in not_ready])
        return Refusal(
            reason="NodeNotReady",
            message=(
                f"spec.target: node {names} is not Ready, so no runner pod can start "
                "there; fix the node's kubelet or remove it from the target"
            ),
        )
    return _taint_refusal(targets, nodes, runner_tolerations(run_tolerations))


def _taint_refusal(
    targets: Sequence[str],
    nodes: Mapping[str, JSON | None],
    tolerations: Sequence[Mapping[str, Any]],
) -> Refusal | None:
    """E28: the targets whose NoSchedule/NoExecute taints the runner pods do not tolerate."""
    tainted: list[tuple[str, list[Taint]]] = [
        (node, blocking)
        for node in targets
        if (found := nodes.get(node)) is not None and (blocking := untolerated(found, tolerations))
    ]
    if not tainted:
        return None
    listed = _listed([f"{node} ({', '.join(map(str, taints))})" for node, taints in tainted])
    if len(tainted) == 1:
        node, taints = tainted[0]
        keys = " ".join(f"{key}-" for key in dict.fromkeys(t.key for t in taints))
        remove = f"kubectl taint node {node} {keys}"
    else:
        remove = "kubectl taint node NODE KEY-"
    return Refusal(
        reason="NodeTaintNotTolerated",
        message=(
            f"spec.target: node {listed} has a taint the runner pods do not tolerate, so "
            "no runner pod can be scheduled there; add a matching toleration to "
            f"spec.target.tolerations, or remove the taint ({remove})"
        ),
    )

"""Which node a pending pod may be bound to: the few scheduler rules tests rely on.

The test control plane runs no kube-scheduler, so the simulated kubelet (or, for KWOK
nodes, ``python -m glimmer.sim --nodes 0 --schedule-selector type=kwok``) binds pods
itself. It applies the filters an operator's pod placement depends on - nodeSelector,
required node affinity, taints/tolerations (a cordoned node counts as tainted
``node.kubernetes.io/unschedulable:NoSchedule``), Ready, and extended-resource capacity
(``nvidia.com/gpu``) - and nothing else (no CPU/memory fit, no spreading, no preemption).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

JSON = dict[str, Any]

UNSCHEDULABLE_TAINT: JSON = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
COUNTED_PREFIXES = ("nvidia.com/", "amd.com/", "habana.ai/", "tenstorrent.com/")


def node_taints(node: JSON) -> list[JSON]:
    taints = list(node.get("spec", {}).get("taints") or [])
    if node.get("spec", {}).get("unschedulable"):
        taints.append(UNSCHEDULABLE_TAINT)
    return taints


def tolerates(toleration: JSON, taint: JSON) -> bool:
    effect = toleration.get("effect")
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key")
    if toleration.get("operator", "Equal") == "Exists":
        return not key or key == taint.get("key")
    return bool(key == taint.get("key") and toleration.get("value", "") == taint.get("value", ""))


def tolerates_all(pod: JSON, node: JSON) -> bool:
    tolerations = pod.get("spec", {}).get("tolerations") or []
    return all(
        any(tolerates(t, taint) for t in tolerations)
        for taint in node_taints(node)
        if taint.get("effect") in ("NoSchedule", "NoExecute")
    )


def _expression_matches(expression: JSON, value: str | None) -> bool:
    operator = expression.get("operator")
    values = expression.get("values") or []
    if operator == "In":
        return value in values
    if operator == "NotIn":
        return value not in values
    if operator == "Exists":
        return value is not None
    if operator == "DoesNotExist":
        return value is None
    if operator in ("Gt", "Lt") and value is not None and values:
        try:
            left, right = int(value), int(values[0])
        except ValueError:
            return False
        return left > right if operator == "Gt" else left < right
    return False


def matches_affinity(pod: JSON, node: JSON) -> bool:
    labels = node.get("metadata", {}).get("labels") or {}
    selector = pod.get("spec", {}).get("nodeSelector") or {}
    if any(labels.get(k) != v for k, v in selector.items()):
        return False
    required = (
        pod.get("spec", {})
        .get("affinity", {})
        .get("nodeAffinity", {})
        .get("requiredDuringSchedulingIgnoredDuringExecution")
    )
    if not required:
        return True
    fields = {"metadata.name": node.get("metadata", {}).get("name")}
    for term in required.get("nodeSelectorTerms") or []:
        label_ok = all(
            _expression_matches(e, labels.get(e["key"])) for e in term.get("matchExpressions") or []
        )
        field_ok = all(
            _expression_matches(e, fields.get(e["key"])) for e in term.get("matchFields") or []
        )
        if label_ok and field_ok:
            return True
    return False


def is_ready(node: JSON) -> bool:
    conditions = node.get("status", {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _quantity(value: object) -> int:
    # Extended resources are whole numbers; anything else reads as "does not fit".
    try:
        return int(str(value))
    except ValueError:
        return 1 << 30


def pod_requests(pod: JSON) -> dict[str, int]:
    """Counted extended resources a pod holds (limits stand in for absent requests)."""
    totals: dict[str, int] = {}
    for container in pod.get("spec", {}).get("containers") or []:
        resources = container.get("resources") or {}
        merged = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
        for name, value in merged.items():
            if name.startswith(COUNTED_PREFIXES):
                totals[name] = totals.get(name, 0) + _quantity(value)
    return totals


def is_terminal(pod: JSON) -> bool:
    return pod.get("status", {}).get("phase") in ("Succeeded", "Failed")


def fits(pod: JSON, node: JSON, bound: Iterable[JSON]) -> bool:
    """Extended-resource requests fit next to the non-terminal pods already ``bound``."""
    wanted = pod_requests(pod)
    if not wanted:
        return True
    allocatable = node.get("status", {}).get("allocatable") or {}
    used: dict[str, int] = {}
    for other in bound:
        if is_terminal(other):
            continue
        for name, count in pod_requests(other).items():
            used[name] = used.get(name, 0) + count
    return all(
        used.get(name, 0) + count <= _quantity(allocatable.get(name, 0))
        for name, count in wanted.items()
    )


def feasible(pod: JSON, node: JSON, bound: Iterable[JSON]) -> bool:
    return (
        is_ready(node)
        and matches_affinity(pod, node)
        and tolerates_all(pod, node)
        and fits(pod, node, bound)
    )

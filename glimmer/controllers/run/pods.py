"""The one runner-pod builder (E13) for every scope.

Pod names are deterministic per (run UID, test index, node, attempt[, role]) so a
restarted manager finds the pods it already created and a repeat never re-harvests
an earlier attempt. Host access (host paths, privileges, host network) is granted
exactly as the pinned test names it, nothing more.

A runner pod carries no Kubernetes credentials: ``automountServiceAccountToken`` is
false on every pod, and the pod runs as a ServiceAccount of its own
(:data:`RUNNER_SERVICE_ACCOUNT` unless the manager names another) that the install
binds to nothing. A runner is a hardware test; nothing it does needs the API, and a
token in a privileged pod on a node being certified is one more thing to steal.

A pod found under one of these names is adopted only if it is provably the one this
builder made: :func:`~glimmer.controllers.run.adoption.foreign_reason` (re-exported
here) compares the two in the form the apiserver stores.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from glimmer.controllers.kit import names
from glimmer.controllers.kit.ref import RunRef
from glimmer.controllers.run.adoption import foreign_reason
from glimmer.plan import (
    PlannedTest,
    active_deadline_seconds,
    candidate_images,
    host_path_volume_name,
    label_value,
    pod_name,
    runner_env,
)
from glimmer.plan import spec as specs
from glimmer.plan.env import GroupRendezvous, PairRendezvous

__all__ = [
    "RUNNER_SERVICE_ACCOUNT",
    "PodRequest",
    "RunRef",  # re-exported: pods name their run by it
    "allowed_images",
    "build_pod",
    "foreign_reason",
    "pod_labels",
    "runner_tolerations",
]

JSON = dict[str, Any]

#: The ServiceAccount runner pods run as when the manager names none (``glimmer
#: manager --runner-service-account``): created with no binding in each served
#: namespace by manifests/ and the Helm chart.
RUNNER_SERVICE_ACCOUNT: Final = "glimmer-runner"


@dataclass(frozen=True, slots=True)
class PodRequest:
    """One pod of one attempt of one unit."""

    test_index: int
    test: PlannedTest
    node: str
    attempt: int
    image: str
    #: ``server``/``client`` for a Pair, ``rank-<i>`` for a Group rank, else None.
    role: str | None = None
    rank: int | None = None
    service: str | None = None
    rendezvous: PairRendezvous | GroupRendezvous | None = None
    #: Set only on a link-blame re-pair's pods, so their names differ from the unit's.
    tag: str = ""


def pod_labels(run: RunRef, request: PodRequest) -> dict[str, str]:
    values = {
        names.RUN_LABEL: label_value(run.name),
        names.TEST_LABEL: label_value(request.test.name),
        names.NODE_LABEL: label_value(request.node),
        names.ATTEMPT_LABEL: str(request.attempt),
    }
    if isinstance(request.rendezvous, PairRendezvous):
        values[names.PAIR_ROLE_LABEL] = request.rendezvous.role
    if request.rank is not None:
        values[names.RANK_LABEL] = str(request.rank)
    return values


def runner_tolerations(tolerations: Sequence[Mapping[str, Any]] = ()) -> list[JSON]:
    """The tolerations every runner pod carries: the run's ``spec.target.tolerations``
    (copied) and the operator's own for the cordon (E10 cordons before load, and a node
    cordoned by an admin is burned in as it is). Admission judges a target's taints by
    exactly this list (E28), so it and the pods cannot disagree."""
    return [
        *(copy.deepcopy(dict(t)) for t in tolerations),
        {"key": names.UNSCHEDULABLE_TAINT, "operator": "Exists", "effect": "NoSchedule"},
    ]


def _security_context(runner: Mapping[str, Any]) -> JSON | None:
    context: JSON = {}
    if runner.get("privileged"):
        context["privileged"] = True
    run_as = runner.get("runAsUser")
    if isinstance(run_as, int) and not isinstance(run_as, bool):
        context["runAsUser"] = run_as
        context["runAsNonRoot"] = run_as != 0
    return context or None


def _volumes(host_paths: Sequence[Mapping[str, Any]]) -> tuple[list[JSON], list[JSON]]:
    volumes: list[JSON] = []
    mounts: list[JSON] = []
    for index, entry in enumerate(host_paths):
        name = host_path_volume_name(index=index, mount_path=str(entry["mountPath"]))
        source: JSON = {"path": entry["path"]}
        if entry.get("type"):
            source["type"] = entry["type"]
        volumes.append({"name": name, "hostPath": source})
        read_only = entry.get("readOnly")
        mounts.append(
            {
                "name": name,
                "mountPath": entry["mountPath"],
                "readOnly": True if read_only is None else bool(read_only),
            }
        )
    return volumes, mounts


def build_pod(
    *,
    run: RunRef,
    request: PodRequest,
    tolerations: Sequence[Mapping[str, Any]] = (),
    service_account: str | None = RUNNER_SERVICE_ACCOUNT,
) -> JSON:
    """The runner pod manifest (api §9.3, §10) for one attempt of one unit.

    ``service_account``: the ServiceAccount it runs as; None or "" leaves it to the
    apiserver (the namespace's ``default``). Either way no token is mounted."""
    spec = request.test.spec
    runner = specs.runner(spec)
    volumes, mounts = _volumes(specs.host_paths(spec))
    container: JSON = {
        "name": names.RUNNER_CONTAINER,
        "image": request.image,
        "env": runner_env(
            spec=spec,
            attempt=request.attempt,
            axes=request.test.axes,
            rendezvous=request.rendezvous,
        ),
    }
    for key in ("command", "args"):
        if runner.get(key):
            container[key] = list(runner[key])
    if spec.get("resources"):
        container["resources"] = copy.deepcopy(dict(spec["resources"]))
    if runner.get("readinessProbe"):
        container["readinessProbe"] = copy.deepcopy(dict(runner["readinessProbe"]))
    security = _security_context(runner)
    if security:
        container["securityContext"] = security
    if mounts:
        container["volumeMounts"] = mounts
    pod_spec: JSON = {
        "containers": [container],
        "restartPolicy": "Never",
        "nodeSelector": {names.HOSTNAME_LABEL: request.node},
        "tolerations": runner_tolerations(tolerations),
        "activeDeadlineSeconds": active_deadline_seconds(spec, request.test.scope),
        "automountServiceAccountToken": False,
    }
    if service_account:
        pod_spec["serviceAccountName"] = service_account
    if volumes:
        pod_spec["volumes"] = volumes
    if spec.get("hostNetwork"):
        pod_spec["hostNetwork"] = True
    if runner.get("priorityClassName"):
        pod_spec["priorityClassName"] = runner["priorityClassName"]
    if request.service and request.role:
        pod_spec["hostname"] = request.role
        pod_spec["subdomain"] = request.service
        if spec.get("hostNetwork"):
            pod_spec["dnsPolicy"] = "ClusterFirstWithHostNet"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": pod_name(
                run_name=run.name,
                run_uid=run.uid,
                test_index=request.test_index,
                node=request.node,
                attempt=request.attempt,
                role=request.role,
                tag=request.tag,
            ),
            "namespace": run.namespace,
            "labels": pod_labels(run, request),
            "annotations": {names.SAFE_TO_EVICT: "false"},
            "ownerReferences": [run.owner_reference()],
        },
        "spec": pod_spec,
    }


def allowed_images(kind: str, runner: Mapping[str, Any]) -> frozenset[str]:
    """Every image :func:`glimmer.plan.resolve_image` can choose for this test on some
    node (the node's vendor is not re-read to check adoption)."""
    return candidate_images(kind=kind, runner=runner)

"""The one runner-pod builder (E13) for every scope.

Pod names are deterministic per (run UID, test index, node, attempt[, role]) so a
restarted manager finds the pods it already created and a repeat never re-harvests
an earlier attempt. Host access (host paths, privileges, host network) is granted
exactly as the pinned test names it, nothing more.

Because the names are predictable, a pod found under one is adopted only if it is
provably the one this builder made (issue 19.8): anyone allowed to create pods in the
run's namespace could otherwise pre-create the runner pod on another node, print a
passing log, and have the run certify a node that was never loaded.
:func:`foreign_reason` compares a found pod with what :func:`build_pod` produces for
that attempt: every field the builder sets must be there with the same value (node
included), and every field the builder does not set must be one the apiserver itself
fills in (defaults, the service-account token volume), with a value that cannot change
what runs or where. Anything else (another node, another command, an init container,
an extra volume, a pod-level security context) makes the pod foreign. Tolerations are
not compared: they only widen where a pod may schedule, and the hostname selector pins
the node. The sweep also pins the pod's UID in the attempt entry once it has started,
and from then on the UID decides.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Final

from glimmer.controllers.run import labels
from glimmer.controllers.run.ref import RunRef
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
    "PodRequest",
    "RunRef",  # re-exported: pods name their run by it
    "allowed_images",
    "build_pod",
    "foreign_reason",
    "pod_labels",
]

JSON = dict[str, Any]


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


def pod_labels(run: RunRef, request: PodRequest) -> dict[str, str]:
    values = {
        labels.RUN_LABEL: label_value(run.name),
        labels.TEST_LABEL: label_value(request.test.name),
        labels.NODE_LABEL: label_value(request.node),
        labels.ATTEMPT_LABEL: str(request.attempt),
    }
    if isinstance(request.rendezvous, PairRendezvous):
        values[labels.PAIR_ROLE_LABEL] = request.rendezvous.role
    if request.rank is not None:
        values[labels.RANK_LABEL] = str(request.rank)
    return values


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
) -> JSON:
    """The runner pod manifest (api §9.3, §10) for one attempt of one unit."""
    spec = request.test.spec
    runner = specs.runner(spec)
    volumes, mounts = _volumes(specs.host_paths(spec))
    container: JSON = {
        "name": labels.RUNNER_CONTAINER,
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
        "nodeSelector": {labels.HOSTNAME_LABEL: request.node},
        "tolerations": [
            *(copy.deepcopy(dict(t)) for t in tolerations),
            {"key": labels.UNSCHEDULABLE_TAINT, "operator": "Exists", "effect": "NoSchedule"},
        ],
        "activeDeadlineSeconds": active_deadline_seconds(spec, request.test.scope),
    }
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
            ),
            "namespace": run.namespace,
            "labels": pod_labels(run, request),
            "annotations": {labels.SAFE_TO_EVICT: "false"},
            "ownerReferences": [run.owner_reference()],
        },
        "spec": pod_spec,
    }


# --- adoption: is a pod found under our name the one build_pod made? (issue 19.8) ---

#: Pod spec fields the apiserver or its default admission plugins fill in; none of
#: them changes what the runner executes or on which node.
_DEFAULTED_POD_FIELDS: Final = frozenset(
    {
        "dnsPolicy",
        "schedulerName",
        "terminationGracePeriodSeconds",
        "enableServiceLinks",
        "serviceAccountName",
        "serviceAccount",
        "priority",
        "preemptionPolicy",
    }
)
#: Container fields the apiserver fills in.
_DEFAULTED_CONTAINER_FIELDS: Final = frozenset(
    {"terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy"}
)
_TOKEN_MOUNT: Final = "/var/run/secrets/kubernetes.io/serviceaccount"
_TOKEN_VOLUME_PREFIX: Final = "kube-api-access-"
_QUANTITY: Final = re.compile(r"([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)")
_SUFFIX: Final = {
    "": Decimal(1),
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "k": Decimal("1e3"),
    "M": Decimal("1e6"),
    "G": Decimal("1e9"),
    "T": Decimal("1e12"),
    "P": Decimal("1e15"),
    "E": Decimal("1e18"),
    **{s: Decimal(1024) ** (i + 1) for i, s in enumerate(("Ki", "Mi", "Gi", "Ti", "Pi", "Ei"))},
}


def allowed_images(kind: str, runner: Mapping[str, Any]) -> frozenset[str]:
    """Every image :func:`glimmer.plan.resolve_image` can choose for this test on some
    node (the node's vendor is not re-read to check adoption)."""
    return candidate_images(kind=kind, runner=runner)


def _quantity(value: Any) -> Decimal | None:
    match = _QUANTITY.fullmatch(str(value).strip())
    if match is None or match.group(2) not in _SUFFIX:
        return None
    try:
        return Decimal(match.group(1)) * _SUFFIX[match.group(2)]
    except InvalidOperation:
        return None


def _covers(ours: Any, theirs: Any, *, path: str) -> str | None:
    """Where ``theirs`` differs from what we set (dict keys we did not set are checked by
    the caller), or None."""
    if isinstance(ours, Mapping):
        if not isinstance(theirs, Mapping):
            return path
        for key, value in ours.items():
            if key not in theirs:
                return f"{path}.{key}"
            problem = _covers(value, theirs[key], path=f"{path}.{key}")
            if problem is not None:
                return problem
        return None
    if isinstance(ours, list):
        if not isinstance(theirs, list) or len(ours) != len(theirs):
            return path
        for index, (mine, other) in enumerate(zip(ours, theirs, strict=True)):
            problem = _covers(mine, other, path=f"{path}[{index}]")
            if problem is not None:
                return problem
        return None
    if ours == theirs:
        return None
    if ".resources." in f"{path}." and _quantity(ours) is not None:
        return None if _quantity(ours) == _quantity(theirs) else path
    return path


def _extra_keys(
    ours: Mapping[str, Any], theirs: Mapping[str, Any], *, allowed: frozenset[str], path: str
) -> str | None:
    for key in theirs:
        if key not in ours and key not in allowed:
            return f"{path}.{key}"
    return None


def _split_extra(
    ours: Sequence[Any], theirs: Sequence[Any], *, extra: Any, path: str
) -> tuple[list[Any], str | None]:
    """``theirs`` without the entries ``extra`` accepts (appended by the apiserver); a
    problem when an entry is neither ours nor accepted."""
    kept: list[Any] = []
    for entry in theirs:
        if len(kept) < len(ours) and _covers(ours[len(kept)], entry, path=path) is None:
            kept.append(entry)
        elif not extra(entry):
            return kept, path
    return kept, None


def _is_token_volume(volume: Any) -> bool:
    return (
        isinstance(volume, Mapping)
        and str(volume.get("name", "")).startswith(_TOKEN_VOLUME_PREFIX)
        and set(volume) <= {"name", "projected"}
    )


def _is_token_mount(mount: Any) -> bool:
    return (
        isinstance(mount, Mapping)
        and str(mount.get("name", "")).startswith(_TOKEN_VOLUME_PREFIX)
        and mount.get("mountPath") == _TOKEN_MOUNT
        and mount.get("readOnly") is True
    )


def _container_problem(ours: Mapping[str, Any], theirs: Mapping[str, Any]) -> str | None:
    path = "spec.containers[0]"
    allowed = _DEFAULTED_CONTAINER_FIELDS | {"volumeMounts"}
    if not ours.get("resources"):
        allowed |= {"resources"} if not theirs.get("resources") else frozenset()
    problem = _extra_keys(ours, theirs, allowed=allowed, path=path)
    if problem is not None:
        return problem
    mounts, problem = _split_extra(
        ours.get("volumeMounts") or [],
        theirs.get("volumeMounts") or [],
        extra=_is_token_mount,
        path=f"{path}.volumeMounts",
    )
    if problem is not None:
        return problem
    for key, value in ours.items():
        if key == "volumeMounts":
            problem = _covers(value, mounts, path=f"{path}.volumeMounts")
        elif key == "resources":
            problem = _resources_problem(value, theirs.get("resources"), path=f"{path}.resources")
        else:
            problem = _covers(value, theirs.get(key), path=f"{path}.{key}")
        if problem is not None:
            return problem
    return None


def _resources_problem(ours: Mapping[str, Any], theirs: Any, *, path: str) -> str | None:
    """Limits as set; requests as set, or defaulted from the limits by the apiserver."""
    if not isinstance(theirs, Mapping) or set(theirs) - {"limits", "requests", "claims"}:
        return path
    expected = dict(ours)
    if "limits" in ours and "requests" not in ours:
        expected["requests"] = ours["limits"]
    for key in ("limits", "requests"):
        mine, other = dict(expected.get(key) or {}), dict(theirs.get(key) or {})
        if mine.keys() != other.keys():
            return f"{path}.{key}"
        for name, value in mine.items():
            if _quantity(value) is None or _quantity(value) != _quantity(other[name]):
                return f"{path}.{key}.{name}"
    return None


def foreign_reason(pod: Mapping[str, Any], *, expected: Mapping[str, Any]) -> str | None:
    """Why ``pod`` is not the pod :func:`build_pod` made (``expected``), or None when it is.

    The answer names the first field that differs (e.g. ``spec.nodeSelector``)."""
    meta = pod.get("metadata") or {}
    want = expected["metadata"]
    if meta.get("name") != want["name"]:
        return "metadata.name"
    refs = [r for r in meta.get("ownerReferences") or [] if r.get("controller")]
    if [r.get("uid") for r in refs] != [want["ownerReferences"][0]["uid"]]:
        return "metadata.ownerReferences"
    for key in ("labels", "annotations"):
        problem = _covers(want[key], meta.get(key) or {}, path=f"metadata.{key}")
        if problem is not None:
            return problem
    ours, theirs = expected["spec"], pod.get("spec") or {}
    node = ours["nodeSelector"][labels.HOSTNAME_LABEL]
    if theirs.get("nodeName") not in (None, "", node):
        return "spec.nodeName"
    if theirs.get("securityContext") not in (None, {}):
        return "spec.securityContext"
    allowed = _DEFAULTED_POD_FIELDS | {"nodeName", "securityContext", "volumes", "tolerations"}
    problem = _extra_keys(ours, theirs, allowed=allowed, path="spec")
    if problem is not None:
        return problem
    containers = theirs.get("containers") or []
    if len(containers) != 1:
        return "spec.containers"
    problem = _container_problem(ours["containers"][0], containers[0])
    if problem is not None:
        return problem
    kept, problem = _split_extra(
        ours.get("volumes") or [], theirs.get("volumes") or [], extra=_is_token_volume,
        path="spec.volumes",
    )  # fmt: skip
    if problem is None:
        problem = _covers(ours.get("volumes") or [], kept, path="spec.volumes")
    if problem is not None:
        return problem
    for key, value in ours.items():
        # Tolerations only widen where a pod may schedule; the hostname selector (and
        # nodeName) already pin the node, and a mid-run edit of spec.target.tolerations
        # must not disown the pods created before it.
        if key in ("containers", "volumes", "tolerations"):
            continue
        problem = _covers(value, theirs.get(key), path=f"spec.{key}")
        if problem is not None:
            return problem
    return None

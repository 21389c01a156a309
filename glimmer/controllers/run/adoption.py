"""Is a pod found under one of our names the one the builder made? (adoption)

Pod names are predictable, so anyone allowed to create pods in a run's namespace could
pre-create the runner pod on another node, print a passing log, and have the run
certify a node that was never loaded. :func:`foreign_reason` therefore compares a found
pod with what :func:`~glimmer.controllers.run.pods.build_pod` makes for that attempt.

The comparison is made between *stored forms*. The apiserver does not hand back what
was posted: it omits the false, zero or empty value of a plain (non-pointer) field
(``readOnly: false`` on a mount, ``value: ""`` on an env var, ``initialDelaySeconds: 0``
on a probe), keeps an explicit zero of a pointer field (``automountServiceAccountToken:
false``, ``runAsUser: 0``), fills in defaults (a probe's period and thresholds, an
``httpGet`` path and scheme, a ``fieldRef`` apiVersion, a ``resourceFieldRef`` divisor,
a hostPath ``type``, requests from limits, an empty pod security context) and
canonicalises quantities (``1024Mi`` is ``1Gi``). :func:`stored_form` applies
those rules to a pod spec; both sides are brought to it, so a pod as built and the same
pod as stored compare equal, whichever side each is. Comparing what was posted with
what was stored instead disowned every pod of a test with a writable hostPath (RDMA
tests mount ``/dev/infiniband`` read-write), and such a test never got a verdict.

Below the pod spec's and the container's top level the found pod must then equal ours
exactly: an added capability, mount option, probe action or volume source is as foreign
as a changed value. At those two top levels, a field the builder does not set must be
one the apiserver or its default admission plugins fill in (the scheduler's node
binding included, which must name our node), with a value that cannot change what runs
or where. Tolerations are not compared: they only widen where a pod may schedule, and
the hostname selector pins the node. Labels and annotations must include ours; others
may be added (by admission plugins, by people). The sweep also pins the pod's UID in
the attempt entry once it has started, and from then on the UID decides.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any, Final

from glimmer.controllers.kit import names
from glimmer.controllers.kit.view import ObjectView

__all__ = ["foreign_reason", "stored_form"]

JSON = dict[str, Any]

#: Pod spec fields the apiserver or its default admission plugins fill in; none of
#: them changes what the runner executes or on which node. ``imagePullSecrets`` come
#: from the pod's ServiceAccount (the ServiceAccount admission plugin): credentials to
#: pull the image the container names, never another image.
_DEFAULTED_POD_FIELDS: Final = frozenset(
    {
        "dnsPolicy",
        "schedulerName",
        "terminationGracePeriodSeconds",
        "enableServiceLinks",
        "serviceAccountName",
        "serviceAccount",
        "imagePullSecrets",
        "priority",
        "preemptionPolicy",
        "nodeName",
        "tolerations",
    }
)
_DEFAULT_SERVICE_ACCOUNT: Final = "default"
#: Container fields the apiserver fills in.
_DEFAULTED_CONTAINER_FIELDS: Final = frozenset(
    {"terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy"}
)
#: Fields whose Go type is a pointer (or whose absence means something else than
#: their zero value): an explicit false, 0 or "" is kept by the apiserver and compared.
#: ``automountServiceAccountToken`` is the one that matters most: absent means *true*.
_POINTER_FIELDS: Final = frozenset(
    {
        "automountServiceAccountToken",
        "enableServiceLinks",
        "activeDeadlineSeconds",
        "terminationGracePeriodSeconds",
        "priority",
        "hostUsers",
        "shareProcessNamespace",
        "setHostnameAsFQDN",
        "privileged",
        "runAsUser",
        "runAsGroup",
        "runAsNonRoot",
        "allowPrivilegeEscalation",
        "readOnlyRootFilesystem",
        "optional",
        "type",  # hostPath.type
        "service",  # grpc.service
    }
)
#: A probe's defaulted fields, set when absent or 0 (k8s SetDefaults_Probe).
_PROBE_DEFAULTS: Final = (
    ("timeoutSeconds", 1),
    ("periodSeconds", 10),
    ("successThreshold", 1),
    ("failureThreshold", 3),
)
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


def _quantity(value: Any) -> Decimal | None:
    if isinstance(value, bool):
        return None
    match = _QUANTITY.fullmatch(str(value).strip())
    if match is None or match.group(2) not in _SUFFIX:
        return None
    try:
        return Decimal(match.group(1)) * _SUFFIX[match.group(2)]
    except InvalidOperation:
        return None


def _is_omitted_zero(key: str, value: Any) -> bool:
    """A value the apiserver drops (Go ``omitempty`` on a plain field)."""
    if key in _POINTER_FIELDS:
        return False
    if value is None or value is False or value in ("", []):
        return True
    return isinstance(value, int) and not isinstance(value, bool) and value == 0


def _omit_zeros(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {
            key: _omit_zeros(item)
            for key, item in value.items()
            if not _is_omitted_zero(str(key), item)
        }
    if isinstance(value, list):
        return [_omit_zeros(item) for item in value]
    return value


def _default_probe(probe: JSON) -> None:
    for key, default in _PROBE_DEFAULTS:
        if not probe.get(key):
            probe[key] = default
    http = probe.get("httpGet")
    if isinstance(http, dict):
        http["path"] = http.get("path") or "/"
        http["scheme"] = http.get("scheme") or "HTTP"
    grpc = probe.get("grpc")
    if isinstance(grpc, dict):
        grpc.setdefault("service", "")


def _default_env(env: Any) -> None:
    for entry in env if isinstance(env, list) else ():
        source = entry.get("valueFrom") if isinstance(entry, dict) else None
        if not isinstance(source, dict):
            continue
        field_ref, resource_ref = source.get("fieldRef"), source.get("resourceFieldRef")
        if isinstance(field_ref, dict) and not field_ref.get("apiVersion"):
            field_ref["apiVersion"] = "v1"
        if isinstance(resource_ref, dict) and not resource_ref.get("divisor"):
            resource_ref["divisor"] = "0"  # a Quantity struct: always written, "0" unset


def _default_resources(container: JSON) -> None:
    resources = container.get("resources")
    if not isinstance(resources, dict):
        return
    limits, requests = resources.get("limits"), resources.get("requests")
    if isinstance(limits, Mapping) and (requests is None or isinstance(requests, Mapping)):
        # Per resource: a limit without a request is also the request.
        resources["requests"] = {**limits, **(requests or {})}
    for key in ("limits", "requests"):
        if resources.get(key) == {}:
            del resources[key]
    if not resources:
        del container["resources"]  # the apiserver's empty struct: the same as none


def stored_form(spec: Mapping[str, Any]) -> JSON:
    """A pod spec as the apiserver stores it (omissions and defaults above), for
    comparison only: quantities are compared by value, not rewritten."""
    stored: JSON = _omit_zeros(copy.deepcopy(dict(spec)))
    for container in stored.get("containers") or []:
        if not isinstance(container, dict):
            continue
        if isinstance(container.get("readinessProbe"), dict):
            _default_probe(container["readinessProbe"])
        _default_env(container.get("env"))
        _default_resources(container)
    for volume in stored.get("volumes") or []:
        host_path = volume.get("hostPath") if isinstance(volume, dict) else None
        if isinstance(host_path, dict):
            host_path.setdefault("type", "")
    if stored.get("securityContext") == {}:
        del stored["securityContext"]  # always added, empty, by the apiserver
    return stored


def _differs(ours: Any, theirs: Any, *, path: str, quantities: bool = False) -> str | None:
    """Where ``theirs`` is not exactly ``ours`` (quantities by value under resources and
    a ``divisor``), or None."""
    if isinstance(ours, Mapping):
        if not isinstance(theirs, Mapping):
            return path
        for key, value in ours.items():
            if key not in theirs:
                return f"{path}.{key}"
            problem = _differs(
                value, theirs[key], path=f"{path}.{key}",
                quantities=quantities or key in ("resources", "divisor"),
            )  # fmt: skip
            if problem is not None:
                return problem
        extra = [key for key in theirs if key not in ours]
        return f"{path}.{extra[0]}" if extra else None
    if isinstance(ours, list):
        if not isinstance(theirs, list) or len(ours) != len(theirs):
            return path
        for index, (mine, other) in enumerate(zip(ours, theirs, strict=True)):
            problem = _differs(mine, other, path=f"{path}[{index}]", quantities=quantities)
            if problem is not None:
                return problem
        return None
    if type(ours) is type(theirs) and ours == theirs:
        return None
    if quantities and _quantity(ours) is not None and _quantity(ours) == _quantity(theirs):
        return None
    return path


def _covers(ours: Mapping[str, Any], theirs: Any, *, path: str) -> str | None:
    """Labels and annotations: every one of ours, with our value; others may be added."""
    if not isinstance(theirs, Mapping):
        return path
    for key, value in ours.items():
        if theirs.get(key) != value:
            return f"{path}.{key}"
    return None


def _top_level(
    ours: Mapping[str, Any],
    theirs: Mapping[str, Any],
    *,
    path: str,
    defaulted: frozenset[str],
    skip: frozenset[str] = frozenset(),
) -> str | None:
    """Every field of ours exactly; of theirs' others, only ``defaulted`` ones."""
    for key in theirs:
        if key not in ours and key not in defaulted:
            return f"{path}.{key}"
    for key, value in ours.items():
        if key in skip:
            continue
        if key not in theirs:
            return f"{path}.{key}"
        problem = _differs(value, theirs[key], path=f"{path}.{key}", quantities=key == "resources")
        if problem is not None:
            return problem
    return None


def _pod_spec_problem(ours: Mapping[str, Any], theirs: Mapping[str, Any]) -> str | None:
    node = ours["nodeSelector"][names.HOSTNAME_LABEL]
    if theirs.get("nodeName") not in (None, node):
        return "spec.nodeName"
    # Ours names no ServiceAccount: the apiserver's default is the namespace's "default".
    if "serviceAccountName" not in ours and theirs.get("serviceAccountName") not in (
        None, _DEFAULT_SERVICE_ACCOUNT,
    ):  # fmt: skip
        return "spec.serviceAccountName"
    if "serviceAccount" in theirs and theirs["serviceAccount"] != theirs.get("serviceAccountName"):
        return "spec.serviceAccount"
    containers = theirs.get("containers")
    if not isinstance(containers, list) or len(containers) != 1:
        return "spec.containers"
    if not isinstance(containers[0], Mapping):
        return "spec.containers[0]"
    problem = _top_level(
        ours["containers"][0], containers[0], path="spec.containers[0]",
        defaulted=_DEFAULTED_CONTAINER_FIELDS,
    )  # fmt: skip
    if problem is not None:
        return problem
    # Tolerations only widen where a pod may schedule; the hostname selector (and
    # nodeName) already pin the node, and a mid-run edit of spec.target.tolerations
    # must not disown the pods created before it.
    return _top_level(
        ours, theirs, path="spec", defaulted=_DEFAULTED_POD_FIELDS,
        skip=frozenset({"containers", "tolerations"}),
    )  # fmt: skip


def foreign_reason(pod: Mapping[str, Any], *, expected: Mapping[str, Any]) -> str | None:
    """Why ``pod`` is not the pod the builder made (``expected``), or None when it is.

    The answer names the first field that differs (e.g. ``spec.nodeSelector``)."""
    found, want = ObjectView(pod), ObjectView(expected)
    if found.name != want.name:
        return "metadata.name"
    refs = [r for r in found.owner_references if r.get("controller")]
    if [r.get("uid") for r in refs] != [want.owner_references[0].get("uid")]:
        return "metadata.ownerReferences"
    for key, ours, theirs in (
        ("labels", want.labels, found.labels),
        ("annotations", want.annotations, found.annotations),
    ):
        problem = _covers(ours, theirs, path=f"metadata.{key}")
        if problem is not None:
            return problem
    if not found.spec:
        return "spec"
    return _pod_spec_problem(stored_form(want.spec), stored_form(found.spec))

"""Every name the reconcilers write or look up, in one place: the Resources they read
and write, labels, annotations, finalizers and taints (api §7, §9), and a node's
NodeFingerprint name.

The API group is ``glimmer.api``'s (the table the CRDs are generated from), so a name
below can never drift from the group the CRDs serve; take the API version from there too.
The verdict label is in the ``burnin.glimmer.ai`` domain on purpose: the salient-label
filter (K2) drops that domain, so the operator writing it can never read back as
hardware drift.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Final

from glimmer.api import GROUP, KINDS_BY_NAME, VERSION
from glimmer.engine import Resource
from glimmer.plan import label_value


def api_resource(kind: str) -> Resource:
    """Where ``kind``'s objects live, from ``glimmer.api``'s kind table (every kind of
    the API is namespaced: ``glimmer.api.crd`` writes ``scope: Namespaced``)."""
    info = KINDS_BY_NAME[kind]
    return Resource(GROUP, VERSION, info.plural, True, info.kind)


RUNS: Final = api_resource("BurnInRun")
PROFILES: Final = api_resource("BurnInProfile")
TESTS: Final = api_resource("BurnInTest")
SCHEDULES: Final = api_resource("BurnInSchedule")
FINGERPRINTS: Final = api_resource("NodeFingerprint")
#: The rendezvous Services of Pair and Group attempts (F1, F4; api §9.4).
SERVICES: Final = Resource("", "v1", "services", True, "Service")

# On BurnInRuns
FINALIZER: Final = f"{GROUP}/cordon-cleanup"
PLAN_ANNOTATION: Final = f"{GROUP}/plan"
CANCELLING_ANNOTATION: Final = f"{GROUP}/cancelling"
PENDING_TERMINAL_DELIVERY: Final = f"{GROUP}/pending-terminal-delivery"

# On Nodes
CORDON_OWNER: Final = f"{GROUP}/cordon-owner"
PRIOR_UNSCHEDULABLE: Final = f"{GROUP}/prior-unschedulable"
HEAT_EXPECTED: Final = f"{GROUP}/heat-expected"

# On runner Pods (NODE_LABEL also on each NodeFingerprint: the node it describes)
RUN_LABEL: Final = f"{GROUP}/run"
TEST_LABEL: Final = f"{GROUP}/test"
NODE_LABEL: Final = f"{GROUP}/node"
ATTEMPT_LABEL: Final = f"{GROUP}/attempt"
PAIR_ROLE_LABEL: Final = f"{GROUP}/pair-role"
RANK_LABEL: Final = f"{GROUP}/rank"
SAFE_TO_EVICT: Final = "cluster-autoscaler.kubernetes.io/safe-to-evict"
RUNNER_CONTAINER: Final = "runner"
UNSCHEDULABLE_TAINT: Final = "node.kubernetes.io/unschedulable"
HOSTNAME_LABEL: Final = "kubernetes.io/hostname"

# On Nodes (Glimmer extension): Passed | Failed | Simulated | Expired | Missing
# (docs/fingerprints.md).
VERDICT_LABEL: Final = f"{GROUP}/verdict"


# Label syntax (k8s.io/apimachinery validation): a selector is built from validated
# terms, never by joining raw strings, so a ``,`` or ``!=`` inside a value cannot change
# what it selects.
_LABEL_NAME: Final = re.compile(r"[A-Za-z0-9](?:[-_.A-Za-z0-9]*[A-Za-z0-9])?")
_DNS_LABEL: Final = r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?"
_DNS_SUBDOMAIN: Final = re.compile(rf"{_DNS_LABEL}(?:\.{_DNS_LABEL})*")
_NAME_MAX: Final = 63
_PREFIX_MAX: Final = 253


class InvalidLabelError(ValueError):
    """A label key or value that Kubernetes would refuse; the message names the field."""


def label_key_problem(key: str) -> str | None:
    """Why ``key`` is not a valid label key (``[prefix/]name``), or None."""
    prefix, slash, name = key.rpartition("/")
    if slash and not (
        0 < len(prefix) <= _PREFIX_MAX and _DNS_SUBDOMAIN.fullmatch(prefix) is not None
    ):
        return (
            f"prefix {prefix!r} must be a DNS subdomain (lower-case alphanumerics, '-', '.'; "
            f"at most {_PREFIX_MAX} characters)"
        )
    if not (0 < len(name) <= _NAME_MAX and _LABEL_NAME.fullmatch(name) is not None):
        return (
            f"name {name!r} must be 1-{_NAME_MAX} characters of alphanumerics, '-', '_' or "
            "'.', beginning and ending with an alphanumeric"
        )
    return None


def label_value_problem(value: str) -> str | None:
    """Why ``value`` is not a valid label value (empty is valid), or None."""
    if value == "" or (len(value) <= _NAME_MAX and _LABEL_NAME.fullmatch(value) is not None):
        return None
    return (
        f"invalid label value {value!r}: at most {_NAME_MAX} characters of alphanumerics, "
        "'-', '_' or '.', beginning and ending with an alphanumeric"
    )


def equality_selector(terms: Mapping[str, str], *, field: str) -> str:
    """``k1=v1,k2=v2`` from validated terms; :class:`InvalidLabelError` names the bad one
    as ``<field>["<key>"]``."""
    parts: list[str] = []
    for key, value in sorted(terms.items()):
        if not isinstance(key, str) or not isinstance(value, str):
            raise InvalidLabelError(f'{field}["{key}"]: keys and values must be strings')
        problem = label_key_problem(key)
        if problem is not None:
            raise InvalidLabelError(f'{field}["{key}"]: invalid label key: {problem}')
        problem = label_value_problem(value)
        if problem is not None:
            raise InvalidLabelError(f'{field}["{key}"]: {problem}')
        parts.append(f"{key}={value}")
    return ",".join(parts)


_SANITISED_MAX: Final = 190


def fingerprint_name(node: str) -> str:
    """The node name when it is a valid DNS-1123 subdomain, else a sanitised stem plus
    the first 8 bytes of its sha256 (api §7): distinct nodes never share a fingerprint."""
    if len(node) <= _PREFIX_MAX and _DNS_SUBDOMAIN.fullmatch(node):
        return node
    digest = hashlib.sha256(node.encode("utf-8")).hexdigest()[:16]
    stem = re.sub(r"[^a-z0-9.-]+", "-", node.lower())[:_SANITISED_MAX]
    stem = re.sub(r"^[^a-z0-9]+|[^a-z0-9]+$", "", stem)
    stem = re.sub(r"\.(?=[^a-z0-9])|(?<=[^a-z0-9])\.", "-", stem)
    return f"{stem}-{digest}" if stem else f"node-{digest}"


def node_label_value(node: str) -> str:
    """``burnin.glimmer.ai/node`` value for ``node`` (hashed when too long for a label)."""
    return label_value(node)

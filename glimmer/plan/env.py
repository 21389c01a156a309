"""The environment a runner receives (api §10, rules F1, F4, I1, N2).

One function assembles it for both dispatchers so the operator's pods and the
bare-host CLI's containers see the same variables in the same order: duration,
attempt, resource limits, variant axes (sorted), rendezvous variables, then the
author's ``runner.env``. Later entries win on duplicate names, so in-cluster a
profile *can* override an injected name (upstream behaviour, upstream issue #404); the
bare-host CLI instead drops reserved names from ``runner.env`` (N2), selected with
``ignore_reserved_runner_env``.

What else a bare host does differently (N2) is decided here too, once, by
:func:`bare_host_runner_env`: no ``BURNIN_RESOURCE_LIMITS`` (its accelerator containers
get every GPU), and a segmented soak runs as one runner for its whole
``durationSeconds``, so that is its ``BURNIN_DURATION_SECONDS``, never the segment
length. ``glimmer run`` and ``glimmer plan`` both read it, so the plan shown is the
environment the runner gets.

Group ranks get no ``BURNIN_ROLE``: a rank that found ``client`` there would take
itself for a Pair client (F4).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from glimmer.plan import spec as specs
from glimmer.plan.units import CLIENT, SERVER, execution_window_seconds, rank_hostname

DURATION: Final = "BURNIN_DURATION_SECONDS"
ATTEMPT: Final = "BURNIN_ATTEMPT"
RESOURCE_LIMITS: Final = "BURNIN_RESOURCE_LIMITS"
ROLE: Final = "BURNIN_ROLE"
PEER_HOST: Final = "BURNIN_PEER_HOST"
PEER_NODE: Final = "BURNIN_PEER_NODE"
RANK: Final = "BURNIN_RANK"
NRANKS: Final = "BURNIN_NRANKS"
ROOT_HOST: Final = "BURNIN_ROOT_HOST"
ROOT_NODE: Final = "BURNIN_ROOT_NODE"
VARIANT_PREFIX: Final = "BURNIN_VARIANT_"

#: The ten fixed injected names; the bare-host CLI ignores them in ``runner.env``.
RESERVED_NAMES: Final[frozenset[str]] = frozenset(
    {
        DURATION,
        ATTEMPT,
        RESOURCE_LIMITS,
        ROLE,
        PEER_HOST,
        PEER_NODE,
        RANK,
        NRANKS,
        ROOT_HOST,
        ROOT_NODE,
    }
)


@dataclass(frozen=True)
class PairRendezvous:
    """This side's role and how to reach the other side of a Pair."""

    role: str
    peer_host: str
    peer_node: str


@dataclass(frozen=True)
class GroupRendezvous:
    """This rank's position and how to reach rank 0 of a Group."""

    rank: int
    nranks: int
    root_host: str
    root_node: str


def service_host(*, hostname: str, service: str, namespace: str) -> str:
    """In-cluster DNS name of a rendezvous pod: ``<host>.<service>.<namespace>.svc``."""
    return f"{hostname}.{service}.{namespace}.svc"


def pair_rendezvous(*, role: str, peer_node: str, service: str, namespace: str) -> PairRendezvous:
    """The in-cluster Pair rendezvous for ``role``; the peer is the other role's pod."""
    if role not in (SERVER, CLIENT):
        raise ValueError(f"pair role must be {SERVER!r} or {CLIENT!r}, got {role!r}")
    peer_role = CLIENT if role == SERVER else SERVER
    return PairRendezvous(
        role=role,
        peer_host=service_host(hostname=peer_role, service=service, namespace=namespace),
        peer_node=peer_node,
    )


def group_rendezvous(
    *, rank: int, nranks: int, root_node: str, service: str, namespace: str
) -> GroupRendezvous:
    """The in-cluster Group rendezvous for ``rank``; the root is ``rank-0``."""
    if not 0 <= rank < nranks:
        raise ValueError(f"rank {rank} is outside 0..{nranks - 1}")
    return GroupRendezvous(
        rank=rank,
        nranks=nranks,
        root_host=service_host(hostname=rank_hostname(0), service=service, namespace=namespace),
        root_node=root_node,
    )


def _var(name: str, value: str) -> dict[str, Any]:
    return {"name": name, "value": value}


def resource_limits_value(spec: Mapping[str, Any]) -> str | None:
    """``name=quantity`` pairs of ``resources.limits`` sorted by name, or ``None``.

    Quantities are passed as written (Go re-renders them canonically, e.g. ``2048Mi``
    as ``2Gi``; both denote the same amount and runners parse either).
    """
    limits = specs.resource_limits(spec)
    if not limits:
        return None
    pairs = []
    for name in sorted(limits):
        quantity = limits[name]
        if isinstance(quantity, bool) or not isinstance(quantity, str | int | float):
            raise specs.SpecError(f"spec.resources.limits.{name} is not a quantity: {quantity!r}")
        pairs.append(f"{name}={quantity}")
    return ",".join(pairs)


def runner_env(
    *,
    spec: Mapping[str, Any],
    attempt: int,
    axes: Mapping[str, str] | None = None,
    rendezvous: PairRendezvous | GroupRendezvous | None = None,
    include_resource_limits: bool = True,
    ignore_reserved_runner_env: bool = False,
) -> list[dict[str, Any]]:
    """The runner container's ``env`` list, in assembly order (api §10).

    ``attempt`` is 1-based. ``include_resource_limits=False`` is for the bare-host CLI,
    whose accelerator containers get every device and no limits variable (N2).
    """
    return _assemble(
        spec=spec,
        attempt=attempt,
        window_seconds=execution_window_seconds(spec),
        axes=axes,
        rendezvous=rendezvous,
        include_resource_limits=include_resource_limits,
        ignore_reserved_runner_env=ignore_reserved_runner_env,
    )


def bare_host_window_seconds(spec: Mapping[str, Any]) -> int:
    """``BURNIN_DURATION_SECONDS`` on a bare host (N2): a segmented soak is one window of
    its whole ``durationSeconds``; anything else gets the in-cluster window."""
    if specs.soak(spec) is not None:
        return specs.duration_seconds(spec)
    return execution_window_seconds(spec)


def bare_host_runner_env(
    *,
    spec: Mapping[str, Any],
    attempt: int,
    axes: Mapping[str, str] | None = None,
    rendezvous: PairRendezvous | GroupRendezvous | None = None,
) -> list[dict[str, Any]]:
    """The runner's ``env`` list on a bare host: api §10 as N2 adjusts it.

    No ``BURNIN_RESOURCE_LIMITS``, reserved names in ``runner.env`` ignored, and the
    window of :func:`bare_host_window_seconds`. Unresolved ``valueFrom`` entries are
    returned as written; the caller resolves what a bare host can (N2).
    """
    return _assemble(
        spec=spec,
        attempt=attempt,
        window_seconds=bare_host_window_seconds(spec),
        axes=axes,
        rendezvous=rendezvous,
        include_resource_limits=False,
        ignore_reserved_runner_env=True,
    )


def _assemble(
    *,
    spec: Mapping[str, Any],
    attempt: int,
    window_seconds: int,
    axes: Mapping[str, str] | None,
    rendezvous: PairRendezvous | GroupRendezvous | None,
    include_resource_limits: bool,
    ignore_reserved_runner_env: bool,
) -> list[dict[str, Any]]:
    if attempt < 1:
        raise ValueError(f"attempt numbers are 1-based, got {attempt}")
    env = [
        _var(DURATION, str(window_seconds)),
        _var(ATTEMPT, str(attempt)),
    ]
    limits = resource_limits_value(spec) if include_resource_limits else None
    if limits is not None:
        env.append(_var(RESOURCE_LIMITS, limits))
    for axis in sorted(axes or {}):
        env.append(_var(VARIANT_PREFIX + axis.upper(), (axes or {})[axis]))
    if isinstance(rendezvous, PairRendezvous):
        env += [
            _var(ROLE, rendezvous.role),
            _var(PEER_HOST, rendezvous.peer_host),
            _var(PEER_NODE, rendezvous.peer_node),
        ]
    elif isinstance(rendezvous, GroupRendezvous):
        env += [
            _var(RANK, str(rendezvous.rank)),
            _var(NRANKS, str(rendezvous.nranks)),
            _var(ROOT_HOST, rendezvous.root_host),
            _var(ROOT_NODE, rendezvous.root_node),
        ]
    for entry in specs.runner_env(spec):
        if ignore_reserved_runner_env and entry["name"] in RESERVED_NAMES:
            continue
        env.append(copy.deepcopy(dict(entry)))
    return env

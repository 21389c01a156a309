"""Cluster names for simulated pods: a hosts file per pod, read through ``nss_wrapper``.

Why: Pair and Group runners find their peer by a headless Service's pod name
(``<hostname>.<subdomain>.<namespace>.svc``) with ordinary name resolution. The
simulated kubelet has no DNS and no network namespace, so each pod's processes get
``LD_PRELOAD=libnss_wrapper.so`` and ``NSS_WRAPPER_HOSTS=<sandbox>/hosts``; glibc's
``getaddrinfo`` then reads that file, which the kubelet rewrites (aside, then renamed)
whenever the records change. nss_wrapper re-reads a hosts file that changed.

The records follow the cluster DNS rule for a headless Service: a pod whose
``spec.hostname``/``spec.subdomain`` are set gets ``<hostname>.<subdomain>.<ns>.svc``
(and the ``.svc.<cluster domain>`` form) only when a headless Service named
``<subdomain>`` exists in its namespace and selects it, and the pod is Ready or the
Service publishes not-ready addresses. Terminal or deleting pods are not published. A
name two pods would claim is left out (a lookup then fails: never the wrong peer).
Each pod's own file also carries its own names, as the kubelet-managed ``/etc/hosts``
of a real pod does. Pod addresses come from the kubelet's own allocation for its pods
and from ``status.podIP`` for pods of other simulator processes (one pod watch sees all
of them); only loopback addresses are published, since nothing else is reachable from
these processes.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final

JSON = dict[str, Any]

CLUSTER_DOMAIN: Final = "cluster.local"
NSS_WRAPPER_PACKAGE: Final = "libnss-wrapper"
#: Where Debian (and derivatives) install the library, per architecture.
NSS_WRAPPER_CANDIDATES: Final[tuple[Path, ...]] = (
    Path("/usr/lib/x86_64-linux-gnu/libnss_wrapper.so"),
    Path("/usr/lib/aarch64-linux-gnu/libnss_wrapper.so"),
    Path("/usr/lib64/libnss_wrapper.so"),
    Path("/usr/lib/libnss_wrapper.so"),
)
HOSTS_FILE_NAME: Final = "hosts"


def find_nss_wrapper(candidates: Iterable[Path] = NSS_WRAPPER_CANDIDATES) -> Path | None:
    """The installed ``libnss_wrapper.so``, or None."""
    return next((path for path in candidates if path.is_file()), None)


def missing_wrapper_message(pod: JSON) -> str:
    """Why a pod that needs cluster names cannot start on this simulated node."""
    host = service_fqdn(pod) or "its Service names"
    return (
        f"the simulated kubelet cannot resolve {host} for this pod: {NSS_WRAPPER_PACKAGE} "
        f"is not installed (looked for {', '.join(str(p) for p in NSS_WRAPPER_CANDIDATES)}); "
        f"run hack/setup, or apt-get install {NSS_WRAPPER_PACKAGE}"
    )


def needs_cluster_names(pod: JSON) -> bool:
    """A pod that set ``spec.subdomain`` expects Service names (Pair/Group rendezvous)."""
    return bool((pod.get("spec") or {}).get("subdomain"))


def service_fqdn(pod: JSON) -> str | None:
    """``<hostname>.<subdomain>.<ns>.svc``, or None when the pod sets no subdomain."""
    spec, meta = pod.get("spec") or {}, pod.get("metadata") or {}
    hostname, subdomain = spec.get("hostname"), spec.get("subdomain")
    if not hostname or not subdomain or not meta.get("namespace"):
        return None
    return f"{hostname}.{subdomain}.{meta['namespace']}.svc"


def pod_hostname(pod: JSON) -> str:
    """The pod's hostname as its containers see it: ``spec.hostname``, else its name."""
    spec, meta = pod.get("spec") or {}, pod.get("metadata") or {}
    return str(spec.get("hostname") or meta.get("name") or "")[:63]


def _is_ready(pod: JSON) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _selects(service: JSON, pod: JSON) -> bool:
    selector = (service.get("spec") or {}).get("selector") or {}
    labels = (pod.get("metadata") or {}).get("labels") or {}
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def _headless(service: JSON) -> bool:
    return (service.get("spec") or {}).get("clusterIP") == "None"


def _loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def published_address(
    pod: JSON, *, services: Mapping[tuple[str, str], JSON], address: str | None
) -> str | None:
    """The address cluster DNS would give the pod's Service name now, or None."""
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    if service_fqdn(pod) is None or address is None or not _loopback(address):
        return None
    if meta.get("deletionTimestamp") or (pod.get("status") or {}).get("phase") in (
        "Succeeded",
        "Failed",
    ):
        return None
    service = services.get((str(meta.get("namespace")), str(spec.get("subdomain"))))
    if service is None or not _headless(service) or not _selects(service, pod):
        return None
    publish_not_ready = bool((service.get("spec") or {}).get("publishNotReadyAddresses"))
    return address if publish_not_ready or _is_ready(pod) else None


def service_records(
    pods: Iterable[tuple[JSON, str | None]],
    *,
    services: Mapping[tuple[str, str], JSON],
    cluster_domain: str = CLUSTER_DOMAIN,
) -> dict[str, str]:
    """Name -> address for every published pod; a name claimed twice is left out."""
    claims: dict[str, set[str]] = {}
    for pod, address in pods:
        published = published_address(pod, services=services, address=address)
        fqdn = service_fqdn(pod)
        if published is None or fqdn is None:
            continue
        for name in (fqdn, f"{fqdn}.{cluster_domain}"):
            claims.setdefault(name, set()).add(published)
    return {name: next(iter(addrs)) for name, addrs in sorted(claims.items()) if len(addrs) == 1}


def hosts_file_text(
    *,
    pod: JSON,
    address: str,
    records: Mapping[str, str],
    cluster_domain: str = CLUSTER_DOMAIN,
) -> str:
    """One pod's hosts file: localhost, the pod's own names, then the Service records."""
    own = [pod_hostname(pod)]
    fqdn = service_fqdn(pod)
    if fqdn is not None:
        own = [f"{fqdn}.{cluster_domain}", fqdn, *own]
    # No comment line: nss_wrapper's parser rejects one.
    lines = [
        "127.0.0.1\tlocalhost",
        f"{address}\t{' '.join(own)}",
    ]
    by_address: dict[str, list[str]] = {}
    for name, target in sorted(records.items()):
        if name not in own:
            by_address.setdefault(target, []).append(name)
    lines += [f"{target}\t{' '.join(names)}" for target, names in sorted(by_address.items())]
    return "\n".join(lines) + "\n"


def write_atomically(path: Path, text: str) -> bool:
    """Replace ``path`` with ``text`` (aside, then renamed); False when it was unchanged.

    A reader sees the old file or the new one, never a half-written one.
    """
    with contextlib.suppress(OSError):
        if path.read_text() == text:
            return False
    descriptor, staging = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(descriptor, "w") as handle:
            handle.write(text)
        os.replace(staging, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(staging)
        raise
    return True


def resolver_env(*, library: Path, hosts_file: Path, inherited: str | None) -> dict[str, str]:
    """The variables that route a process's name lookups through ``hosts_file``."""
    preload = str(library) if not inherited else f"{library}:{inherited}"
    return {"LD_PRELOAD": preload, "NSS_WRAPPER_HOSTS": str(hosts_file)}

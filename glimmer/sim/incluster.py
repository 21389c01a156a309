"""The manager image's entrypoint on a simulated node: ``glimmer`` in a pod's clothes.

``python -m glimmer.sim.incluster manager --leader-elect ...`` runs exactly the ``glimmer``
command line the chart or kustomize gives the container, with the two things a pod has
and a local process does not stood in for:

- the ServiceAccount mount: the in-cluster client reads its token and CA, and the manager
  its namespace, from ``/var/run/secrets/kubernetes.io/serviceaccount``; here they are
  read from where the simulated kubelet wrote that volume (``GLIMMER_SIM_MOUNTS``). So the
  manager authenticates as its pod's ServiceAccount, with a token bound to the pod, and
  RBAC the install lacks fails it as it would in production;
- the network namespace: ``--*-bind-address=:PORT`` (every address of the pod) binds the
  pod's own address (``GLIMMER_SIM_POD_IP``), so probes reach it and two pods on one host
  do not collide.

Nothing else changes: no kubeconfig is given (the kubelet passes none), so the client
configuration is the in-cluster one, from ``KUBERNETES_SERVICE_HOST``/``PORT``.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from kubernetes_asyncio.config import incluster_config

from glimmer.cli import main as glimmer
from glimmer.cli import manager as manager_command
from glimmer.sim.volumes import MOUNTS_ENV, SERVICE_ACCOUNT_MOUNT

_ALL_ADDRESSES = re.compile(r"(?:0\.0\.0\.0)?:(?P<port>\d+)")


def point_at_mounts(mounts: dict[str, str]) -> None:
    """Read the ServiceAccount files from where the kubelet wrote them."""
    directory = mounts.get(SERVICE_ACCOUNT_MOUNT)
    if directory is None:
        return
    root = Path(directory)
    incluster_config.SERVICE_TOKEN_FILENAME = str(root / "token")
    incluster_config.SERVICE_CERT_FILENAME = str(root / "ca.crt")
    manager_command._SERVICE_ACCOUNT_NAMESPACE = root / "namespace"


def bind_to_pod(argv: Sequence[str], pod_ip: str) -> list[str]:
    """``--x-bind-address=:8081`` (or ``0.0.0.0:8081``) -> ``--x-bind-address=<pod IP>:8081``."""
    out: list[str] = []
    follows_flag = False
    for given in argv:
        flag, equals, value = given.partition("=")
        if equals and flag.startswith("--") and flag.endswith("-bind-address"):
            out.append(f"{flag}={_rebind(value, pod_ip)}")
        else:
            out.append(_rebind(given, pod_ip) if follows_flag else given)
        follows_flag = not equals and given.startswith("--") and given.endswith("-bind-address")
    return out


def _rebind(value: str, pod_ip: str) -> str:
    match = _ALL_ADDRESSES.fullmatch(value)
    return f"{pod_ip}:{match['port']}" if match else value


def main() -> None:
    point_at_mounts(json.loads(os.environ.get(MOUNTS_ENV) or "{}"))
    argv = sys.argv[1:]
    pod_ip = os.environ.get("GLIMMER_SIM_POD_IP")
    if pod_ip:
        argv = bind_to_pod(argv, pod_ip)
    glimmer(args=argv, prog_name="glimmer")


if __name__ == "__main__":
    main()

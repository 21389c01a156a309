"""The namespace a cluster command works in when ``-n`` is not given (N11).

As kubectl: the current context's ``namespace``, ``default`` when the context names
none. The kubeconfig is found as :func:`glimmer.engine.apiserver.load_configuration`
finds it (``--kubeconfig``, else ``$KUBECONFIG``, a list merged as kubectl merges it,
else in-cluster, else ``~/.kube/config``), so the namespace is the one of the cluster
the command then talks to. In-cluster, it is the pod's own namespace, as kubectl reads it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Final

#: kubectl's namespace when the context names none.
DEFAULT_NAMESPACE: Final = "default"
#: Where a pod's service account namespace is mounted (kubectl's in-cluster fallback).
SERVICE_ACCOUNT_NAMESPACE: Final = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


class KubeContextError(Exception):
    """The kubeconfig named cannot be read, or names no usable current context."""


def context_namespace(kubeconfig: str | None) -> str:
    """The namespace of the kubeconfig's current context (``default`` when none)."""
    path = kubeconfig or os.environ.get("KUBECONFIG")
    if not path and os.environ.get("KUBERNETES_SERVICE_HOST"):
        try:
            return SERVICE_ACCOUNT_NAMESPACE.read_text().strip() or DEFAULT_NAMESPACE
        except OSError:
            return DEFAULT_NAMESPACE
    if not path:
        path = str(Path.home() / ".kube" / "config")
        if not Path(path).exists():
            return DEFAULT_NAMESPACE  # no kubeconfig at all: the connect says so
    if kubeconfig is not None and not Path(kubeconfig).exists():
        raise KubeContextError(f"--kubeconfig {kubeconfig}: no such file")
    return _current_namespace(path)


def _current_namespace(path: str) -> str:
    from kubernetes_asyncio.config import ConfigException
    from kubernetes_asyncio.config.kube_config import list_kube_config_contexts

    try:
        _, current = list_kube_config_contexts(path)
    except (ConfigException, OSError, ValueError) as err:
        raise KubeContextError(f"kubeconfig {path}: {err}") from None
    context: Any = (current or {}).get("context") or {}
    namespace = context.get("namespace") if isinstance(context, dict) else None
    return namespace if isinstance(namespace, str) and namespace else DEFAULT_NAMESPACE


def namespace_for(namespace: str | None, *, kubeconfig: str | None) -> str:
    """``-n`` when given, else the current context's; a kubeconfig that cannot be read
    fails as the connect with it would (exit 3, the cluster could not be read), never
    a silent ``default``."""
    if namespace:
        return namespace
    from glimmer.cli._common import fail
    from glimmer.cli.exits import ERROR

    try:
        return context_namespace(kubeconfig)
    except KubeContextError as err:
        fail(str(err), code=ERROR)


#: ``-n``'s help, one wording for every cluster command.
NAMESPACE_HELP: Final = (
    "Namespace (default: the kubeconfig's current context's namespace, or 'default' "
    "when it names none, as kubectl)."
)

"""Kubeconfig files for the test control plane's identities.

Certificates are embedded (``*-data``) rather than referenced by path so a kubeconfig can
be copied (``glimmer dev up --kubeconfig``) and still work after the work dir is gone.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import yaml


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def write_kubeconfig(
    path: Path,
    *,
    server: str,
    ca_cert: Path,
    user: str,
    client_cert: Path | None = None,
    client_key: Path | None = None,
    token: str | None = None,
    namespace: str | None = None,
) -> Path:
    """Write a single-context kubeconfig named ``glimmer-test`` for ``user``."""
    credentials: dict[str, Any] = {}
    if client_cert is not None and client_key is not None:
        credentials["client-certificate-data"] = _b64(client_cert)
        credentials["client-key-data"] = _b64(client_key)
    if token is not None:
        credentials["token"] = token
    if not credentials:
        raise ValueError("a kubeconfig needs a client certificate or a token")
    context: dict[str, Any] = {"cluster": "glimmer-test", "user": user}
    if namespace is not None:
        context["namespace"] = namespace
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "glimmer-test",
                "cluster": {"server": server, "certificate-authority-data": _b64(ca_cert)},
            }
        ],
        "users": [{"name": user, "user": credentials}],
        "contexts": [{"name": "glimmer-test", "context": context}],
        "current-context": "glimmer-test",
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    path.chmod(0o600)
    return path

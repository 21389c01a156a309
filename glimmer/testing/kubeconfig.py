"""Kubeconfig files for the test control plane's identities.

Certificates are embedded (``*-data``) rather than referenced by path so a kubeconfig can
be copied (``glimmer dev up --kubeconfig``) and still work after the work dir is gone.
Since they embed a client key, they are written private from their first byte
(:func:`write_private`).
"""

from __future__ import annotations

import base64
import contextlib
import os
import tempfile
from pathlib import Path
from typing import Any

import yaml


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that only its owner can ever read it (I30).

    A kubeconfig holds a client key, and the harness's key files are keys. Each goes to
    a new file in the target directory made 0600 before its first byte (whatever the
    umask), flushed to disk, which then replaces ``path`` in one rename: there is no
    moment when the key sits in a file anyone else may read, and a reader that held an
    older ``path`` open still sees the old inode. A directory made for it is 0700.
    """
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, scratch = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as stream:
            # mkstemp asks for 0600, which a umask may narrow but never widen: make it exact.
            os.fchmod(stream.fileno(), 0o600)
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(scratch, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(scratch)
        raise


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
    """Write a single-context kubeconfig named ``glimmer-test`` for ``user``, privately."""
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
    write_private(path, yaml.safe_dump(document, sort_keys=False).encode())
    return path

"""I30 for ``glimmer.testing``: every kubeconfig it writes is private from its first byte.

The control plane's admin and service-account kubeconfigs embed a client key or a token.
A write-then-chmod ends at 0600 too, so the rule is checked while it happens: an audit
hook looks at the target directory at every audited operation (each open, chmod and
rename raises one) and records any file there that holds the secret while group or
others may read it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from glimmer.testing.kubeconfig import write_kubeconfig, write_private
from tests.unit.private_files import exposed, watching

KEY = b"-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWtleQ==\n-----END PRIVATE KEY-----\n"
OLD = b"an older file, readable by all\n"


@pytest.fixture
def pki(tmp_path: Path) -> dict[str, Path]:
    files = {"ca": b"CA CERT\n", "cert": b"CLIENT CERT\n", "key": KEY}
    paths = {}
    for name, data in files.items():
        paths[name] = tmp_path / f"{name}.pem"
        paths[name].write_bytes(data)
    return paths


@pytest.fixture
def watched(tmp_path: Path) -> Iterator[Path]:
    """A directory under watch, with umask 0 (the widest a caller can leave it)."""
    with watching(tmp_path / "out") as directory:
        yield directory


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _admin(path: Path, pki: dict[str, Path]) -> Path:
    return write_kubeconfig(
        path,
        server="https://127.0.0.1:6443",
        ca_cert=pki["ca"],
        user="glimmer-admin",
        client_cert=pki["cert"],
        client_key=pki["key"],
    )


def test_I30_admin_kubeconfig_is_0600_from_its_first_byte_even_with_umask_0(
    watched: Path, pki: dict[str, Path]
) -> None:
    target = _admin(watched / "new" / "admin.kubeconfig", pki)
    config = yaml.safe_load(target.read_text())
    assert config["users"][0]["user"]["client-key-data"]
    assert _mode(target) == 0o600
    assert exposed() == []
    assert [p.name for p in target.parent.iterdir()] == ["admin.kubeconfig"]


def test_I30_token_kubeconfig_is_0600_from_its_first_byte(
    watched: Path, pki: dict[str, Path]
) -> None:
    target = write_kubeconfig(
        watched / "serviceaccounts" / "ns.sa.kubeconfig",
        server="https://127.0.0.1:6443",
        ca_cert=pki["ca"],
        user="system:serviceaccount:ns:sa",
        token="the-token",
        namespace="ns",
    )
    assert yaml.safe_load(target.read_text())["users"][0]["user"]["token"] == "the-token"
    assert _mode(target) == 0o600
    assert exposed() == []


def test_I30_an_existing_0644_kubeconfig_is_replaced_and_an_open_reader_keeps_the_old_one(
    watched: Path, pki: dict[str, Path]
) -> None:
    target = watched / "admin.kubeconfig"
    target.write_bytes(OLD)
    target.chmod(0o644)
    with target.open("rb") as reader:
        _admin(target, pki)
        assert reader.read() == OLD
    assert b"client-key-data" in target.read_bytes()
    assert _mode(target) == 0o600
    assert exposed() == []


def test_I30_mode_is_exactly_0600_under_a_narrowing_umask(watched: Path) -> None:
    """A umask can take bits from mkstemp's 0600 (0400 here); the file still ends 0600."""
    os.umask(0o277)
    target = watched / "admin.kubeconfig"
    write_private(target, b"client-key-data: x\n")
    assert _mode(target) == 0o600


def test_I30_a_failed_write_leaves_no_scratch_file(
    watched: Path, pki: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="disk full"):
        _admin(watched / "admin.kubeconfig", pki)
    assert list(watched.iterdir()) == []


def test_I30_the_bytes_reach_the_disk_before_the_rename(
    watched: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """fsync comes before the rename, so a crash never leaves an empty kubeconfig in place."""
    order: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        order.append("fsync")
        real_fsync(fd)

    def replace(src: str, dst: str) -> None:
        order.append("replace")
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    write_private(watched / "admin.kubeconfig", b"client-key-data: x\n")
    assert order == ["fsync", "replace"]

"""API tests against the real kube-apiserver: the generated CRDs installed once per session.

The fixtures ``control_plane`` and ``namespace`` come from ``glimmer.testing.pytest_plugin``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from glimmer.api.kinds import KINDS
from tests.integration.api.kube_helpers import kustomize

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def installed_crds(control_plane: Any) -> None:
    """The six CRDs applied from manifests/crd and Established."""
    control_plane.kubectl(
        "apply",
        "--server-side",
        "--force-conflicts",
        "--field-manager=glimmer-api-tests",
        "-f",
        "-",
        input=kustomize(control_plane, "crd"),
    )
    control_plane.wait_established(*(f"crd/{info.crd_name}" for info in KINDS))


@pytest.fixture(scope="module")
def dry_run_namespace(control_plane: Any) -> Iterator[str]:
    """One namespace for a module of server-side dry runs (which create nothing in it)."""
    name = f"api-dry-run-{uuid.uuid4().hex[:5]}"
    control_plane.kubectl("create", "namespace", name)
    yield name
    control_plane.kubectl("delete", "namespace", name, "--wait=false", check=False)

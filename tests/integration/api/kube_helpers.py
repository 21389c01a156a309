"""Small kubectl helpers shared by the API control-plane tests."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[3]


def kustomize(control_plane: Any, directory: str) -> str:
    """``kubectl kustomize`` output for a directory under manifests/."""
    result: subprocess.CompletedProcess[str] = control_plane.kubectl(
        "kustomize", str(REPO / "manifests" / directory)
    )
    return result.stdout


def install_default(control_plane: Any) -> list[dict[str, Any]]:
    """Apply manifests/default but its CRDs (the session fixture installs those
    server-side); return every rendered document."""
    documents = list(yaml.safe_load_all(kustomize(control_plane, "default")))
    others = [d for d in documents if d["kind"] != "CustomResourceDefinition"]
    control_plane.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(others))
    return documents


def as_list(items: list[dict[str, Any]]) -> str:
    """Objects as one kubectl-readable ``List`` document."""
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": items})

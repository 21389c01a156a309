"""Polling helpers shared by the control-plane tests."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, TypeVar

from glimmer.testing import ControlPlane

T = TypeVar("T")


def eventually(
    probe: Callable[[], T | None], *, timeout: float = 30.0, what: str = "condition"
) -> T:
    """Poll ``probe`` until it returns something truthy; fail with ``what`` otherwise."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.2)


def get_json(control_plane: ControlPlane, *args: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(control_plane.kubectl("get", *args, "-o", "json").stdout)
    return document


def pod_phase_in(
    control_plane: ControlPlane, *, namespace: str, name: str, phases: tuple[str, ...]
) -> dict[str, Any] | None:
    pod = get_json(control_plane, "pod", name, f"--namespace={namespace}")
    return pod if pod.get("status", {}).get("phase") in phases else None


def wait_for_phase(
    control_plane: ControlPlane,
    *,
    namespace: str,
    name: str,
    phases: tuple[str, ...] = ("Succeeded", "Failed"),
    timeout: float = 30.0,
) -> dict[str, Any]:
    return eventually(
        lambda: pod_phase_in(control_plane, namespace=namespace, name=name, phases=phases),
        timeout=timeout,
        what=f"pod {namespace}/{name} to reach {phases}",
    )

"""``glimmer fingerprint NODE`` against a real apiserver, after the operator captured it."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from click.testing import CliRunner

from glimmer.cli.fingerprint import fingerprint
from glimmer.controllers.kit.names import FINGERPRINTS
from glimmer.engine import (
    NAMESPACES,
    NODES,
    ApiError,
    ApiServerClient,
    is_already_exists,
    is_not_found,
)
from glimmer.testing import EmbeddedOperator

pytestmark = pytest.mark.controlplane


async def test_the_cli_shows_the_stored_digest_equal_to_the_one_computed_now(
    control_plane: Any, kube: ApiServerClient
) -> None:
    try:
        await kube.create(NAMESPACES, {"metadata": {"name": "glimmer-system"}})
    except ApiError as err:
        if not is_already_exists(err):
            raise
    name = "fp-cli-node"
    await kube.create(NODES, {"metadata": {"name": name, "labels": {"amd.com/gpu.count": "4"}}})
    try:
        async with EmbeddedOperator(kubeconfig=control_plane.kubeconfig_path):
            for _ in range(300):
                try:  # the controller has not created it yet: wait, as for the digest
                    fp = await kube.get(FINGERPRINTS, name, namespace="glimmer-system")
                except ApiError as err:
                    if not is_not_found(err):
                        raise
                    fp = {}
                if (fp.get("status") or {}).get("digest"):
                    break
                await asyncio.sleep(0.2)
        args = [
            name,
            "-n",
            "glimmer-system",
            "--kubeconfig",
            str(control_plane.kubeconfig_path),
            "-o",
            "json",
        ]
        result = await asyncio.to_thread(CliRunner().invoke, fingerprint, args)
        assert result.exit_code == 0, result.output
        report = json.loads(result.output)
        assert report["stored"]["digest"] == report["observed"]["digest"]
        assert report["nextPass"] == "DigestStable"
        assert [g["vendor"] for g in report["observed"]["gpus"]] == ["amd"] * 4
    finally:
        await kube.delete(NODES, name)
        await kube.delete(FINGERPRINTS, name, namespace="glimmer-system")

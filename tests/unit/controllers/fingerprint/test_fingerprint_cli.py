"""``glimmer fingerprint NODE``: the digest inputs shown are the digest's (K4)."""

from __future__ import annotations

import hashlib

import pytest
from click.testing import CliRunner

from glimmer.cli.fingerprint import fingerprint, gather, render_text
from glimmer.controllers.fingerprint import VERDICT_LABEL
from glimmer.engine import NODES, FakeClient

LABELS = {"nvidia.com/gpu.product": "H100", "nvidia.com/gpu.count": "2", VERDICT_LABEL: "Passed",
          "topology.kubernetes.io/zone": "a"}  # fmt: skip


async def test_K4_the_cli_shows_the_exact_digest_inputs_and_the_excluded_labels() -> None:
    fake = FakeClient()
    await fake.create(NODES, {"metadata": {"name": "n1", "labels": LABELS},
                              "status": {"nodeInfo": {"kernelVersion": "6.5"}}})  # fmt: skip
    report = await gather(fake, node="n1", namespace="glimmer-system")
    hasher = hashlib.sha256()
    for key, value in report["digestInputs"]:
        hasher.update(key.encode() + b"\0" + value.encode() + b"\0")
    assert report["observed"]["digest"] == f"glimmer-v1:{hasher.hexdigest()}"
    assert report["excludedLabels"] == {VERDICT_LABEL: "operator",
                                        "topology.kubernetes.io/zone": "not hardware"}  # fmt: skip
    assert report["fingerprint"] is None and report["nextPass"] == "BaselineCaptured"
    text = render_text(report)
    assert "gpu 1:" in text and "(none yet)" in text and f"{VERDICT_LABEL} (operator)" in text


async def test_the_cli_refuses_a_missing_node() -> None:
    with pytest.raises(LookupError, match="not found"):
        await gather(FakeClient(), node="ghost", namespace="glimmer-system")


def test_the_cli_command_exits_3_with_one_line_when_the_cluster_is_unreachable() -> None:
    result = CliRunner().invoke(fingerprint, ["n1", "--kubeconfig", "/nonexistent/kubeconfig"])
    assert result.exit_code == 3
    assert result.output.count("\n") == 1 and "glimmer: error:" in result.output

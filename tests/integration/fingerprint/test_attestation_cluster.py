"""Signed verdicts on the dev cluster (K8, L11, I47): the operator as it ships (embedded)
with an attestation key Secret, the real apiserver, and ``glimmer verify``.

Three runs. The first run's status is written as the run controller would leave it
after a silicon Pass (on a node object with no kubelet, so the drift that withdraws the
attestation can be staged), and the fingerprint controller signs what it reads. The
second is a real run on a simulated-kubelet node: the operator records ``sim`` whatever
a runner declares there (I14), so its verdict is signed as Simulated and certifies
nothing, and its terminal envelope (a ConfigMap sink) carries the signed run verdict.
The third is a real run on a simulated-kubelet node stripped of the simulator's labels
(as a real host has none): a silicon Pass, signed certified, end to end.
"""

from __future__ import annotations

import asyncio
import base64
import json
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from click.testing import CliRunner
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from glimmer.api import format_time, parse_time
from glimmer.cli import main
from glimmer.controllers.fingerprint import VERDICT_LABEL
from glimmer.controllers.fingerprint.attestation import (
    ATTESTATION_ANNOTATION,
    ATTESTATION_SHA_ANNOTATION,
)
from glimmer.controllers.fingerprint.verdict import PLAN_ANNOTATION
from glimmer.controllers.kit.names import FINGERPRINTS, RUNS
from glimmer.engine import CONFIGMAPS, NAMESPACES, NODES, ApiError, ApiServerClient, is_conflict
from glimmer.plan import PinnedPlan, PlannedTest
from glimmer.sinks.attestation import SECRETS
from glimmer.sinks.fanout import SINKS
from glimmer.testing import EmbeddedOperator
from tests.integration.fingerprint.conftest import OPS
from tests.integration.fingerprint.test_fingerprint_cluster import captured, eventually
from tests.integration.run.conftest import FAST_RUN_OPTIONS, apply_profile, create_run, custom

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(300)]

KEY_SECRET = (OPS, "glimmer-attestation-key")


class Shown:
    def __init__(self, code: int, output: str) -> None:
        self.returncode, self.stdout, self.stderr = code, output, output


def glimmer_verify(*args: str) -> Shown:
    """``glimmer verify ARGS`` (the click command, in process): exit status and output."""
    result = CliRunner().invoke(main, ["verify", *args])
    return Shown(result.exit_code, result.output)


@pytest_asyncio.fixture(loop_scope="function")
async def public_key(kube: ApiServerClient, tmp_path: Path) -> AsyncIterator[Path]:
    """A fresh ed25519 key: the private half in the key Secret, the public half a file."""
    private = Ed25519PrivateKey.generate()
    pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    body = {
        "metadata": {"name": KEY_SECRET[1]},
        "data": {"ed25519.pem": base64.b64encode(pem).decode()},
    }
    try:
        await kube.create(NAMESPACES, {"metadata": {"name": OPS}})
    except ApiError as err:
        if not is_conflict(err):
            raise
    try:
        await kube.create(SECRETS, body, namespace=OPS)
    except ApiError as err:
        if not is_conflict(err):
            raise
        await kube.delete(SECRETS, KEY_SECRET[1], namespace=OPS)
        await kube.create(SECRETS, body, namespace=OPS)
    path = tmp_path / "attestation.pub"
    path.write_bytes(
        private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    try:
        yield path
    finally:
        await kube.delete(SECRETS, KEY_SECRET[1], namespace=OPS)


async def attestation_of(kube: ApiServerClient, node: str, tmp_path: Path) -> Path | None:
    """The node's attestation ConfigMap as ``kubectl get -o json`` writes it, or None."""
    annotations = (await kube.get(NODES, node))["metadata"].get("annotations") or {}
    ref = annotations.get(ATTESTATION_ANNOTATION)
    if not ref:
        return None
    namespace, name = ref.split("/")
    cm = await kube.get(CONFIGMAPS, name, namespace=namespace)
    import hashlib

    text = cm["data"]["envelope.json"]
    assert annotations[ATTESTATION_SHA_ANNOTATION] == hashlib.sha256(text.encode()).hexdigest()
    path = tmp_path / f"{node}-attestation.json"
    path.write_text(json.dumps(cm))
    return path


async def silicon_declaring_profile(kube: ApiServerClient, namespace: str) -> None:
    """A ConfigMap sink ``store`` and profile ``p``: one custom test declaring silicon."""
    sink = {
        "apiVersion": "burnin.glimmer.ai/v1alpha1",
        "kind": "BurnInSink",
        "metadata": {"name": "store"},
        "spec": {"type": "ConfigMap", "configMap": {"name": "verdicts"}},
    }
    await kube.create(SINKS, sink, namespace=namespace)
    gate = [{"metric": "bw", "comparison": "GreaterThanOrEqual", "value": "10"}]
    await apply_profile(
        kube,
        namespace,
        {"t": custom("echo provenance=silicon; echo bw=12", thresholds=gate)},
        sinks=["store"],
    )


async def signed_envelope(kube: ApiServerClient, namespace: str, out: Path) -> Path | None:
    """The ``store`` sink's signed terminal envelope, written to ``out``; None until sent."""
    cm = await kube.get(CONFIGMAPS, "verdicts", namespace=namespace)
    for text in (cm.get("data") or {}).values():
        doc = json.loads(text)
        if doc.get("reason") == "RunPhaseChanged" and doc.get("attestation"):
            out.write_text(text)
            return out
    return None


async def finish_as_silicon_pass(
    kube: ApiServerClient, namespace: str, node: str, after: str
) -> None:
    plan = PinnedPlan(
        targets=(node,),
        tests=(PlannedTest(name="burn", required=True, spec={"kind": "gpu-burn"}),),
    ).to_annotation()
    run = await kube.create(
        RUNS,
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInRun",
            "metadata": {"name": "acceptance", "annotations": {PLAN_ANNOTATION: plan}},
            "spec": {"profileRef": "p", "target": {"nodeNames": [node]}},
        },
        namespace=namespace,
    )
    started = parse_time(after) + timedelta(seconds=1)
    finished = {
        "phase": "Passed",
        "provenance": "silicon",
        "certifiesSilicon": True,
        "startedAt": format_time(started),
        "finishedAt": format_time(started + timedelta(seconds=1)),
        "results": [
            {
                "name": "burn",
                "kind": "gpu-burn",
                "phase": "Passed",
                "nodes": [node],
                "startedAt": format_time(started),
                "provenance": "silicon",
            }
        ],
    }
    while True:  # the running operator reconciles the new run too: retry on conflict
        run["status"] = finished
        try:
            await kube.replace(RUNS, run, namespace=namespace, subresource="status")
            return
        except ApiError as err:
            if not is_conflict(err):
                raise
            run = await kube.get(RUNS, "acceptance", namespace=namespace)


async def test_K8_a_certified_node_verdict_is_signed_beside_its_label_and_glimmer_verify_checks_it(
    control_plane: Any,
    kube: ApiServerClient,
    namespace: str,
    nodes: Any,
    public_key: Path,
    tmp_path: Path,
) -> None:
    (name,) = await nodes(1)
    async with EmbeddedOperator(
        kubeconfig=control_plane.kubeconfig_path, attestation_key_secret=KEY_SECRET
    ):
        fp = await eventually(lambda: captured(kube, name))
        await finish_as_silicon_pass(kube, namespace, name, fp["status"]["capturedAt"])
        path = await eventually(lambda: attestation_of(kube, name, tmp_path))
        node = await kube.get(NODES, name)
        assert node["metadata"]["labels"][VERDICT_LABEL] == "Passed"
        verified = glimmer_verify(
            str(path),
            "--key",
            str(public_key),
            "--subject",
            f"node/{name}",
            "--max-age",
            "1h",
            "--require-certified",
        )
        assert verified.returncode == 0, verified.stderr
        print(verified.stdout)
        assert verified.stdout.startswith(f"verified: node/{name}: Passed, certified")
        wrong = glimmer_verify(str(path), "--key", str(public_key), "--subject", "node/other")
        assert wrong.returncode == 1 and "wrong subject" in wrong.stderr

        # The hardware changes: the label reads Expired and the attestation is withdrawn.
        await kube.patch(NODES, name, {"metadata": {"labels": {"nvidia.com/gpu.count": "7"}}})

        async def withdrawn() -> bool:
            got = await kube.get(NODES, name)
            return got["metadata"]["labels"].get(
                VERDICT_LABEL
            ) == "Expired" and ATTESTATION_ANNOTATION not in (
                got["metadata"].get("annotations") or {}
            )

        await eventually(withdrawn)


async def test_certification_a_simulated_run_is_signed_simulated_and_certifies_nothing(
    control_plane: Any,
    kube: ApiServerClient,
    namespace: str,
    sim_nodes: Any,
    public_key: Path,
    tmp_path: Path,
) -> None:
    sim = sim_nodes(count=1)
    (name,) = sim.names
    await silicon_declaring_profile(kube, namespace)
    async with EmbeddedOperator(
        kubeconfig=control_plane.kubeconfig_path,
        served_namespaces=None,
        run_options=FAST_RUN_OPTIONS,
        attestation_key_secret=KEY_SECRET,
    ) as operator:
        # A verdict is bound only to a capture strictly before the measurement began.
        await eventually(lambda: captured(kube, name))
        await asyncio.sleep(1.5)
        await create_run(kube, namespace, "simulated", [name])
        run = await operator.wait_for_verdict(namespace=namespace, name="simulated")
        assert run["status"]["phase"] == "Passed" and run["status"]["provenance"] == "sim"
        try:
            path = await eventually(lambda: attestation_of(kube, name, tmp_path))
        except TimeoutError:
            fp = await kube.get(FINGERPRINTS, name, namespace=OPS)
            raise AssertionError(json.dumps(fp.get("status"), indent=1)) from None
        node = await kube.get(NODES, name)
        assert node["metadata"]["labels"][VERDICT_LABEL] == "Simulated"
        shown = glimmer_verify(
            str(path), "--key", str(public_key), "--subject", f"node/{name}", "-o", "json"
        )
        assert shown.returncode == 0, shown.stderr
        predicate = json.loads(shown.stdout[shown.stdout.index("{") :])["statement"]["predicate"]
        print(json.dumps(predicate, indent=2))
        assert predicate["certified"] is False
        assert predicate["nodeVerdict"]["state"] == "Simulated"
        assert [r["provenance"] for r in predicate["results"]] == ["sim"]
        refused = glimmer_verify(str(path), "--key", str(public_key), "--require-certified")
        assert refused.returncode == 1 and "not certified" in refused.stderr, refused.stderr

        envelope = await eventually(
            lambda: signed_envelope(kube, namespace, tmp_path / "envelope.json")
        )
        run_verified = glimmer_verify(
            str(envelope),
            "--key",
            str(public_key),
            "--kind",
            "run",
            "--subject",
            f"burninrun/{namespace}/simulated",
        )
        assert run_verified.returncode == 0, run_verified.stderr
        print(run_verified.stdout)
        assert "NOT certified" in run_verified.stdout
        refused = glimmer_verify(str(envelope), "--key", str(public_key), "--require-certified")
        assert refused.returncode == 1 and "does not certify silicon" in refused.stderr


async def test_certification_a_real_silicon_pass_is_signed_certified_end_to_end(
    control_plane: Any,
    kube: ApiServerClient,
    namespace: str,
    sim_nodes: Any,
    public_key: Path,
    tmp_path: Path,
) -> None:
    """The whole chain with nothing written by hand: a node that looks like a real host
    (the simulator's labels removed, as in the qualify-on-join cluster test), a runner
    declaring silicon, the run controller's verdict, the fingerprint controller's label
    and signature, and ``glimmer verify --require-certified`` on the node's attestation
    and on the terminal envelope."""
    pool = uuid.uuid4().hex[:10]
    sim = sim_nodes(  # the simulator finds the node's pods by the pool label, not its own
        count=1,
        extra_args=[
            f"--label=glimmer.test/pool={pool}",
            f"--schedule-selector=glimmer.test/pool={pool}",
        ],
    )
    (name,) = sim.names
    labels = dict.fromkeys(("sim.glimmer.dev/simulated-gpu", "sim.glimmer.dev/instance"))
    await kube.patch(NODES, name, {"metadata": {"labels": labels}})
    await silicon_declaring_profile(kube, namespace)
    async with EmbeddedOperator(
        kubeconfig=control_plane.kubeconfig_path,
        served_namespaces=None,
        run_options=FAST_RUN_OPTIONS,
        attestation_key_secret=KEY_SECRET,
    ) as operator:
        await eventually(lambda: captured(kube, name))
        await asyncio.sleep(1.5)  # a verdict binds only to a capture before the run began
        await create_run(kube, namespace, "silicon", [name])
        run = await operator.wait_for_verdict(namespace=namespace, name="silicon")
        status = run["status"]
        assert (status["phase"], status["provenance"]) == ("Passed", "silicon"), status
        assert status["certifiesSilicon"] is True
        path = await eventually(lambda: attestation_of(kube, name, tmp_path))
        node = await kube.get(NODES, name)
        assert node["metadata"]["labels"][VERDICT_LABEL] == "Passed"
        verified = glimmer_verify(
            str(path), "--key", str(public_key), "--subject", f"node/{name}",
            "--max-age", "1h", "--require-certified",
        )  # fmt: skip
        assert verified.returncode == 0, verified.stderr
        assert verified.stdout.startswith(f"verified: node/{name}: Passed, certified")

        envelope = await eventually(
            lambda: signed_envelope(kube, namespace, tmp_path / "silicon-envelope.json")
        )
        run_verified = glimmer_verify(
            str(envelope), "--key", str(public_key), "--kind", "run",
            "--subject", f"burninrun/{namespace}/silicon", "--require-certified",
        )  # fmt: skip
        assert run_verified.returncode == 0, run_verified.stderr

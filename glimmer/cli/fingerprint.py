"""``glimmer fingerprint NODE``: what the operator captures of a node, and why.

Shows the observation computed from the Node as it is now (salient labels, GPUs, NICs,
OS, kernel), the exact digest inputs in order, the digest, and beside it what the
NodeFingerprint has stored (digest, ``capturedAt``, ``Drifted``, the bound verdict and
``VerdictCurrent``), so "why is this node Drifted / Expired?" has an answer without
reading controller logs. Labels the salient filter dropped are listed as well, the
operator's own marked as such: they never count as hardware.

``-n`` defaults to the kubeconfig's current context's namespace, as kubectl's does.
Read-only. Exit status (:mod:`glimmer.cli.exits`): 0 shown; 2 the node does not exist
or the input was refused; 3 the cluster could not be read.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

import click

from glimmer.cli._common import OUTPUT_FORMAT, fail, no_traceback
from glimmer.cli.exits import ERROR
from glimmer.cli.kubecontext import NAMESPACE_HELP, namespace_for
from glimmer.controllers.fingerprint import digest, digest_inputs, fingerprint_name, observe
from glimmer.controllers.fingerprint.digests import classify
from glimmer.controllers.fingerprint.observe import is_operator_label, is_salient
from glimmer.controllers.kit.names import FINGERPRINTS
from glimmer.engine import NODES, ApiError, KubeClient, is_not_found

JSON = dict[str, Any]
INTERNAL_ERROR = ERROR


def describe(node: Mapping[str, Any], fingerprint: Mapping[str, Any] | None) -> JSON:
    """The report: the observation now, the digest inputs, and what is stored."""
    observation = observe(node)
    now_digest = digest(observation)
    labels = (node.get("metadata") or {}).get("labels") or {}
    stored = dict((fingerprint or {}).get("status") or {})
    conditions = {
        str(c.get("type")): {k: c.get(k) for k in ("status", "reason", "message")}
        for c in stored.get("conditions") or ()
        if isinstance(c, Mapping)
    }
    return {
        "node": (node.get("metadata") or {}).get("name"),
        "fingerprint": None
        if fingerprint is None
        else f"{(fingerprint.get('metadata') or {}).get('namespace')}/"
        f"{(fingerprint.get('metadata') or {}).get('name')}",
        "observed": {**observation.status_fields(), "digest": now_digest},
        "digestInputs": [[k, v] for k, v in digest_inputs(observation)],
        "excludedLabels": {
            key: ("operator" if is_operator_label(key) else "not hardware")
            for key in sorted(labels)
            if not is_salient(key)
        },
        "stored": {
            "digest": stored.get("digest"),
            "capturedAt": stored.get("capturedAt"),
            "verdict": stored.get("verdict"),
            "conditions": conditions,
        },
        "nextPass": classify(stored.get("digest"), now_digest).value,
    }


async def gather(client: KubeClient, *, node: str, namespace: str) -> JSON:
    """Read the node and its fingerprint (live) and describe them; LookupError if no node."""
    try:
        found = await client.get(NODES, node)
    except ApiError as err:
        if is_not_found(err):
            raise LookupError(f"node {node!r} not found") from err
        raise
    try:
        fingerprint: JSON | None = await client.get(
            FINGERPRINTS, fingerprint_name(node), namespace=namespace
        )
    except ApiError as err:
        if not is_not_found(err):
            raise
        fingerprint = None
    return describe(found, fingerprint)


def _none_yet(report: Mapping[str, Any]) -> str:
    """No NodeFingerprint: say where it was looked for, since -n follows the context."""
    namespace = report.get("namespace")
    if not namespace:
        return "(none yet)"
    return (
        f"(none in namespace {namespace!r}: none captured yet, or the operator runs in "
        "another namespace; give it with -n)"
    )


def render_text(report: Mapping[str, Any]) -> str:
    observed = report["observed"]
    stored = report["stored"]
    lines = [
        f"node:        {report['node']}",
        f"fingerprint: {report['fingerprint'] or _none_yet(report)}",
        f"digest now:  {observed['digest']}",
        f"stored:      {stored['digest'] or '(not captured)'}",
        f"captured at: {stored['capturedAt'] or '-'}",
        f"next pass:   {report['nextPass']}",
        f"os/kernel:   {observed.get('osImage', '-')} / {observed.get('kernel', '-')}",
    ]
    for gpu in observed.get("gpus") or ():
        lines.append(
            f"gpu {gpu['index']}:       {gpu.get('vendor', '-')} {gpu.get('model', '-')} "
            f"arch={gpu.get('arch', '-')} memory={gpu.get('memoryBytes', '-')} "
            f"driver={gpu.get('driverVersion', '-')}"
        )
    for nic in observed.get("nics") or ():
        fields = " ".join(f"{k}={v}" for k, v in nic.items() if k != "name")
        lines.append(f"nic {nic['name']}: {fields}")
    for type_, condition in sorted(stored["conditions"].items()):
        lines.append(
            f"{type_}: {condition['status']} ({condition['reason']}) {condition['message'] or ''}"
        )
    verdict = stored.get("verdict")
    if verdict:
        lines.append(
            f"verdict:     {verdict.get('phase')} by {verdict.get('runNamespace')}/"
            f"{verdict.get('runName')} at {verdict.get('finishedAt')}, bound to "
            f"{verdict.get('digest') or '(no digest)'}"
        )
    lines.append("digest inputs (in order):")
    lines.extend(f"  {k} = {v}" for k, v in report["digestInputs"])
    if report["excludedLabels"]:
        lines.append("labels left out of the digest:")
        lines.extend(f"  {k} ({why})" for k, why in report["excludedLabels"].items())
    return "\n".join(lines)


async def _run(*, node: str, namespace: str, kubeconfig: str | None) -> JSON:
    from glimmer.engine import ApiServerClient

    client = await ApiServerClient.connect(kubeconfig)
    try:
        return await gather(client, node=node, namespace=namespace)
    finally:
        await client.close()


@click.command()
@click.argument("node")
@click.option(
    "-n",
    "--namespace",
    default=None,
    help="The operator's namespace, where NodeFingerprints live. " + NAMESPACE_HELP,
)
@click.option("--kubeconfig", default=None, help="Kubeconfig (default: $KUBECONFIG, in-cluster).")
@click.option("-o", "--output", "output", type=OUTPUT_FORMAT, default="text", show_default=True)
@no_traceback(code=INTERNAL_ERROR)
def fingerprint(*, node: str, namespace: str | None, kubeconfig: str | None, output: str) -> None:
    """Show what the operator captures of NODE and the inputs of its digest."""
    namespace = namespace_for(namespace, kubeconfig=kubeconfig)
    try:
        report = asyncio.run(_run(node=node, namespace=namespace, kubeconfig=kubeconfig))
    except LookupError as err:
        fail(str(err))
    report["namespace"] = namespace
    if output == "json":
        click.echo(json.dumps(report, indent=2, sort_keys=True))
    else:
        click.echo(render_text(report))

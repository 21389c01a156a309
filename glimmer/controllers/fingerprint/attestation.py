"""Signed node verdicts (K8, K9): the NodeFingerprint controller's attestations.

With ``glimmer manager --attestation-key-secret NS/NAME`` the controller signs each
node's current verdict as an in-toto statement in a DSSE envelope
(:mod:`glimmer.attest`), keeps the envelope in a ConfigMap in the operator's namespace
(``envelope.json``, owned by the node's NodeFingerprint) and points the node at it beside
its ``burnin.glimmer.ai/verdict`` label:

* ``burnin.glimmer.ai/attestation: <namespace>/<configmap>``
* ``burnin.glimmer.ai/attestation-sha256: <hex sha256 of envelope.json>``

What is signed is only what :mod:`glimmer.verdict` decided: a label of Passed, Failed or
Simulated (:func:`glimmer.verdict.attestation.signable`), the run that decided it (its
node verdict must agree with the label) and certification
(:func:`glimmer.verdict.attestation.node_certified`). A label of Expired or Missing, a
run that is gone, a key that cannot be read: the annotations are removed, so nothing
claims a signature, and the ``Attested`` condition on the NodeFingerprint says why (an
unreadable key names the Secret and the command that makes one, and the pass carries on:
no crash loop). Without the flag nothing is signed and no annotation is written (one
left by an earlier configuration is removed).

The ConfigMap's name carries a hash of what it attests (node, run uid, digest, state), so a
pass whose verdict did not change reads nothing and writes nothing; a new verdict gets a
new ConfigMap and the previous one is deleted.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

import aiohttp
import structlog

from glimmer.api import API_VERSION, GROUP
from glimmer.attest import (
    CONFIGMAP_KEY,
    envelope_bytes,
    node_statement,
    run_facts,
    sign_statement,
)
from glimmer.controllers.fingerprint.verdict import run_node_results, run_node_verdict
from glimmer.controllers.kit.names import fingerprint_name, node_label_value
from glimmer.controllers.kit.view import ObjectView, RunView
from glimmer.engine import (
    CONFIGMAPS,
    ApiError,
    KubeClient,
    is_already_exists,
    is_not_found,
)
from glimmer.sinks.attestation import KeySource
from glimmer.verdict.attestation import label_agrees, signable
from glimmer.verdict.expiry import VerdictStatus

if TYPE_CHECKING:
    from securesystemslib.signer import CryptoSigner

log = structlog.get_logger("glimmer.controllers.fingerprint.attestation")

JSON = dict[str, Any]

ATTESTATION_ANNOTATION: Final = f"{GROUP}/attestation"
ATTESTATION_SHA_ANNOTATION: Final = f"{GROUP}/attestation-sha256"
ATTESTED: Final = "Attested"
REASON_SIGNED: Final = "Signed"
REASON_NOTHING: Final = "NothingToAttest"
REASON_KEY: Final = "KeyUnreadable"
REASON_RUN_GONE: Final = "RunUnreadable"
REASON_DISAGREES: Final = "VerdictDisagrees"
REASON_WRITE_FAILED: Final = "WriteFailed"
_WRITE_ERRORS: Final = (ApiError, OSError, TimeoutError, aiohttp.ClientError)
#: Labels of the ConfigMaps this controller writes.
ATTESTATION_FOR_LABEL: Final = f"{GROUP}/attestation-for"
_NAME_MAX: Final = 253


def parse_secret_ref(text: str, *, default_namespace: str) -> tuple[str, str]:
    """``NAME`` (in ``default_namespace``) or ``NAMESPACE/NAME``; ValueError otherwise."""
    namespace, slash, name = text.strip().rpartition("/")
    if not slash:
        namespace = default_namespace
    if not name or not namespace or "/" in namespace:
        raise ValueError(f"{text!r} is not NAME or NAMESPACE/NAME of a Secret")
    return namespace, name


def configmap_name(node: str, identity: str) -> str:
    """``attestation-<fingerprint name>-<12 hex of the identity>``, within 253."""
    suffix = hashlib.sha256(identity.encode("utf-8")).hexdigest()[:12]
    stem = fingerprint_name(node)[: _NAME_MAX - len("attestation--") - len(suffix)].rstrip(".-")
    return f"attestation-{stem}-{suffix}"


@dataclass(frozen=True, slots=True)
class Attestation:
    """What a pass writes: the ``Attested`` condition and the node's annotations."""

    status: str
    reason: str
    message: str
    #: The annotations to set (None removes one).
    annotations: Mapping[str, str | None] = field(default_factory=dict)


def withdrawn(reason: str, message: str) -> Attestation:
    return Attestation(
        status="False",
        reason=reason,
        message=message,
        annotations={ATTESTATION_ANNOTATION: None, ATTESTATION_SHA_ANNOTATION: None},
    )


def unconfigured_annotations(node: Mapping[str, Any]) -> dict[str, str | None]:
    """Without a key: remove any attestation annotation an earlier configuration left."""
    annotations = ObjectView(node).annotations
    return {
        k: None for k in (ATTESTATION_ANNOTATION, ATTESTATION_SHA_ANNOTATION) if k in annotations
    }


class NodeAttestor:
    """Signs the current verdict of a node (see the module docstring)."""

    def __init__(
        self,
        *,
        client: KubeClient,
        get_run: Callable[[str, str], Any],
        secret: tuple[str, str],
        operator_namespace: str,
        now: Callable[[], datetime],
    ) -> None:
        self.client = client
        self.get_run = get_run
        self.keys = KeySource(client=client, secret=secret)
        self.namespace = operator_namespace
        self.now = now

    async def signer(self) -> CryptoSigner | str:
        """The signer from the key Secret, or why not (:class:`KeySource`)."""
        return await self.keys.signer()

    async def attest(
        self,
        *,
        node: Mapping[str, Any],
        fingerprint: Mapping[str, Any],
        digest: str,
        verdict: Mapping[str, Any] | None,
        current: VerdictStatus,
    ) -> Attestation:
        view = ObjectView(node)
        name = view.name
        state = current.state
        if not signable(state) or not verdict:
            return withdrawn(
                REASON_NOTHING,
                f"the verdict label reads {state}: no verdict a run decided is current, so "
                "nothing is signed",
            )
        run_ns, run_name = str(verdict.get("runNamespace") or ""), str(verdict.get("runName") or "")
        run_uid = str(verdict.get("runUID") or "")
        identity = f"{name}|{run_uid}|{run_ns}/{run_name}|{digest}|{state}"
        cm_name = configmap_name(name, identity)
        ref = f"{self.namespace}/{cm_name}"
        signed = Attestation(
            status="True",
            reason=REASON_SIGNED,
            message=f"the {state} verdict of run {run_ns}/{run_name} on {digest} is signed "
            f"in ConfigMap {ref}",
        )
        existing = view.annotations
        if existing.get(ATTESTATION_ANNOTATION) == ref and existing.get(ATTESTATION_SHA_ANNOTATION):
            return signed
        signer = await self.signer()
        if isinstance(signer, str):
            log.error("attestation key unusable; nothing is signed", node=name, problem=signer)
            return withdrawn(REASON_KEY, signer)
        try:
            run = await self.get_run(run_ns, run_name)
        except _WRITE_ERRORS as err:
            log.warning("run unreadable; nothing is signed", node=name, error=str(err))
            run = None
        if run is None or (run_uid and RunView(run).uid != run_uid):
            return withdrawn(
                REASON_RUN_GONE,
                f"run {run_ns}/{run_name} that decided the {state} verdict is gone: its "
                "results cannot be signed",
            )
        node_verdict = run_node_verdict(run, name)
        if node_verdict is None or not label_agrees(node_verdict, state):
            return withdrawn(
                REASON_DISAGREES,
                f"run {run_ns}/{run_name} gives {name} "
                f"{node_verdict.state if node_verdict else 'no verdict'}, the label reads "
                f"{state}: nothing is signed",
            )
        now = self.now()
        statement = node_statement(
            node=name,
            fingerprint_digest=digest,
            run=run_facts(run, plan_text=RunView(run).plan_text),
            verdict=node_verdict,
            label=state,
            results=run_node_results(run, name),
            issued_at=now,
            expires_at=current.expires_at,
        )
        body = envelope_bytes(sign_statement(statement, signer))
        sha = hashlib.sha256(body).hexdigest()
        try:
            await self._write(cm_name, body.decode("utf-8"), node=name, fingerprint=fingerprint)
        except _WRITE_ERRORS as err:
            # Signing never holds the verdict label back: the pass goes on, unsigned.
            log.error("attestation not written; nothing is signed", node=name, error=str(err))
            return withdrawn(
                REASON_WRITE_FAILED,
                f"the signed verdict could not be written to ConfigMap {ref} ({err}); the "
                "manager needs get, create, update and delete on ConfigMaps in "
                f"{self.namespace} (the chart's attestation.keySecret grants them)",
            )
        previous = existing.get(ATTESTATION_ANNOTATION) or ""
        if previous.startswith(f"{self.namespace}/") and previous != ref:
            await self._delete(previous.split("/", 1)[1])
        log.info("node verdict signed", node=name, state=str(state), configmap=ref)
        return Attestation(
            status=signed.status,
            reason=signed.reason,
            message=signed.message,
            annotations={ATTESTATION_ANNOTATION: ref, ATTESTATION_SHA_ANNOTATION: sha},
        )

    async def _write(
        self, name: str, text: str, *, node: str, fingerprint: Mapping[str, Any]
    ) -> None:
        owner = ObjectView(fingerprint)
        meta: JSON = {
            "name": name,
            "namespace": self.namespace,
            "labels": {ATTESTATION_FOR_LABEL: node_label_value(node)},
        }
        if owner.uid:
            meta["ownerReferences"] = [
                {"apiVersion": API_VERSION, "kind": "NodeFingerprint", "name": owner.name,
                 "uid": owner.uid}
            ]  # fmt: skip
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta,
                "data": {CONFIGMAP_KEY: text}}  # fmt: skip
        try:
            await self.client.create(CONFIGMAPS, body, namespace=self.namespace)
        except ApiError as err:
            if not is_already_exists(err):
                raise
            found = await self.client.get(CONFIGMAPS, name, namespace=self.namespace)
            meta["resourceVersion"] = ObjectView(found).resource_version
            await self.client.replace(CONFIGMAPS, body, namespace=self.namespace)

    async def _delete(self, name: str) -> None:
        try:
            await self.client.delete(CONFIGMAPS, name, namespace=self.namespace)
        except ApiError as err:
            if not is_not_found(err):
                log.warning("previous attestation not deleted", configmap=name, error=str(err))

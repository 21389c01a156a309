"""The NodeFingerprint reconciler (K1-K7, E21): one pass per node.

A pass, in order:

1. the orphan-stamp reaper (E21) for the node, first, so a stamp naming a vanished run
   is undone even if everything below fails;
2. ensure the node's fingerprint exists in the operator's namespace (create it; never
   touch one whose ``spec.nodeName`` names another node);
3. observe the node, digest, classify against the stored digest (K5) and write what
   :func:`glimmer.verdict.drift.decide_drift` says: ``Drifted`` sticky, and a node no run
   has measured yet moving its baseline instead of drifting (K7); move ``capturedAt``
   only when the observation changed;
4. bind the node's latest verdict (from finished runs, read-only) and say whether it
   is still current (``VerdictCurrent``), write status only if it changed (with the
   fingerprint's resourceVersion: a conflict is a retry, never a blind overwrite);
5. a ``HardwareDrift`` Warning Event for each drift (a digest change on a measured
   node); the node's verdict label
   and the verdict metric follow the condition.

Drift never launches anything: the pass writes the fingerprint, one label and an Event.

Reads are cached (node, fingerprint, runs by node), a cached miss of the fingerprint
confirmed live before it is created; a fleet of unchanged nodes costs no requests.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

import aiohttp
import structlog

from glimmer.api import API_VERSION, clamp_message, format_time
from glimmer.api.vocabulary import ConditionStatus
from glimmer.controllers.fingerprint import digests as fp_digest
from glimmer.controllers.fingerprint.attestation import (
    ATTESTED,
    Attestation,
    NodeAttestor,
    unconfigured_annotations,
)
from glimmer.controllers.fingerprint.metrics import VerdictMetrics
from glimmer.controllers.fingerprint.observe import observation_from_status, observe
from glimmer.controllers.fingerprint.verdict import (
    VERDICT_CURRENT,
    Probe,
    RunVerdict,
    evaluate,
    newest_unjudged,
    newest_verdict,
    next_verdict,
    note_unjudged,
    parse_optional_time,
    run_probe,
    run_verdict,
)
from glimmer.controllers.kit.conditions import set_json_condition
from glimmer.controllers.kit.names import (
    FINGERPRINTS,
    NODE_LABEL,
    RUNS,
    VERDICT_LABEL,
    fingerprint_name,
    node_label_value,
)
from glimmer.controllers.kit.reads import ConfirmingReader
from glimmer.controllers.kit.view import FingerprintView, ObjectView, RunView
from glimmer.engine import (
    EVENTS,
    NODES,
    ApiError,
    KubeClient,
    NotCachedError,
    Readers,
    Reconciler,
    Result,
    is_already_exists,
    is_not_found,
)
from glimmer.verdict.drift import DriftDecision, decide_drift
from glimmer.verdict.expiry import newest_probe, probe_from_json

log = structlog.get_logger("glimmer.controllers.fingerprint")

JSON = dict[str, Any]

DRIFTED: Final = "Drifted"
HARDWARE_DRIFT: Final = "HardwareDrift"
#: Runs indexed by each node their results name (only terminal runs are indexed).
RUNS_BY_NODE: Final = "fingerprint-node"
#: A pass repeats at least this often (a missed event, a node deleted, a metric to drop).
RESYNC_SECONDS: Final = 600.0


def runs_by_node(run: Mapping[str, Any]) -> list[str]:
    """Index function: the nodes a terminal run's results name."""
    view = RunView(run)
    if not view.terminal:
        return []
    nodes: set[str] = set()
    for result in view.results:
        if isinstance(result, Mapping):
            nodes.update(str(n) for n in result.get("nodes") or () if n)
    return sorted(nodes)


def now_utc() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class FingerprintOptions:
    """The fingerprint controller's settings."""

    operator_namespace: str
    """Where NodeFingerprints live (api §7)."""
    max_verdict_age_seconds: int | None = None
    """Default verdict age limit for fingerprints without ``spec.maxVerdictAgeSeconds``."""
    runs_namespace: str | None = None
    """Namespace whose runs give verdicts (None: all, the manager's scope)."""
    resync_seconds: float = RESYNC_SECONDS
    """Longest gap between two passes of one node."""
    attestation_key_secret: tuple[str, str] | None = None
    """(namespace, name) of the Secret holding the ed25519 key that signs node verdicts
    (K8); None: nothing is signed and no attestation annotation is written."""


class FingerprintReconciler:
    """Reconciles one Node (key = node name)."""

    def __init__(
        self,
        *,
        client: KubeClient,
        readers: Readers,
        options: FingerprintOptions,
        reaper: Reconciler | None = None,
        metrics: VerdictMetrics | None = None,
        now: Callable[[], datetime] = now_utc,
    ) -> None:
        self.client = client
        self.reads = ConfirmingReader(readers)
        self.options = options
        self.reaper = reaper
        self.metrics = metrics
        self.now = now
        self.attestor = (
            NodeAttestor(
                client=client,
                get_run=self._get_run,
                secret=options.attestation_key_secret,
                operator_namespace=options.operator_namespace,
                now=now,
            )
            if options.attestation_key_secret is not None
            else None
        )

    async def _get_run(self, namespace: str, name: str) -> JSON | None:
        return await self.reads.get(RUNS, name, namespace=namespace)

    async def reconcile(self, key: str) -> Result:
        waits: list[float] = [self.options.resync_seconds]
        if self.reaper is not None:
            reaped = await self.reaper.reconcile(key)
            if reaped.requeue_after is not None:
                waits.append(reaped.requeue_after)
        node = await self.reads.get(NODES, key)
        if node is None:
            if self.metrics is not None:
                self.metrics.forget(key)
            return Result()  # the fingerprint stays (api §7): a returning node is compared
        fingerprint = await self._ensure(key)
        if fingerprint is None:
            return Result(requeue_after=min(waits))
        until = await self._refresh(key, node, fingerprint)
        if until is not None:
            waits.append(max(1.0, until))
        return Result(requeue_after=min(waits))

    # --- K1: one fingerprint per node ----------------------------------------------

    async def _ensure(self, node: str) -> JSON | None:
        name = fingerprint_name(node)
        namespace = self.options.operator_namespace
        # At fleet scale (K1): a cache miss goes straight to the create (a lagging cache gets
        # AlreadyExists, then the live read), not a live GET that 404s for every new node.
        found = await self.reads.get_before_create(FINGERPRINTS, name, namespace=namespace)
        if found is None:
            body = {
                "apiVersion": API_VERSION,
                "kind": "NodeFingerprint",
                "metadata": {
                    "name": name,
                    "namespace": namespace,
                    "labels": {NODE_LABEL: node_label_value(node)},
                },
                "spec": {"nodeName": node},
            }
            try:
                found = await self.client.create(FINGERPRINTS, body, namespace=namespace)
            except ApiError as err:
                if is_not_found(err):
                    log.warning(
                        "operator namespace missing; no fingerprint yet", namespace=namespace
                    )
                    return None
                if not is_already_exists(err):
                    raise
                found = await self.reads.live_get(FINGERPRINTS, name, namespace=namespace)
                if found is None:
                    raise
        named = FingerprintView(found).node_name
        if named != node:
            log.warning("fingerprint names another node; left alone", fingerprint=name,
                        names=named or None)  # fmt: skip
            return None
        return found

    # --- K2-K5 and verdict expiry ----------------------------------------------------

    async def _refresh(self, key: str, node: JSON, fingerprint: JSON) -> float | None:
        """Write what changed; return seconds until the verdict expires by age, if it does."""
        now = self.now()
        view = FingerprintView(fingerprint)
        stored: JSON = dict(view.stored_status)
        observation = observe(node)
        new_digest = fp_digest.digest(observation)
        classification = fp_digest.classify(view.digest, new_digest)
        before = observation_from_status(stored)
        observation_changed = before != observation or not view.captured_at
        changes = fp_digest.describe_changes(before, observation)
        status: JSON = {
            k: v
            for k, v in stored.items()
            if k not in ("osImage", "kernel", "labels", "gpus", "nics", "digest")
        }
        status.update(observation.status_fields())
        status["digest"] = new_digest
        if observation_changed:
            status["capturedAt"] = format_time(now)
        generation = view.generation
        if generation is not None:
            status["observedGeneration"] = generation
        conditions = [dict(c) for c in view.conditions]
        drift_message = "; ".join(changes) if changes else "the digest changed"
        seen = await self._verdicts_of(key)
        verdicts = [v for v, _ in seen]
        decision = decide_drift(
            classification,
            changes=drift_message,
            drifted=view.condition(DRIFTED) == ConditionStatus.TRUE,
            measured=bool(view.verdict) or bool(seen),
        )
        conditions = _set_drifted(conditions, decision, now, generation)

        verdict = view.verdict
        rebaseline = classification is fp_digest.Classification.DIGEST_SCHEME_CHANGED
        if rebaseline and verdict and verdict.get("digest") == view.digest:
            # Incomparable schemes re-baseline silently (K5); so does the verdict's binding,
            # or a scheme upgrade would expire every verdict of the fleet at once.
            verdict = {**verdict, "digest": new_digest}
        stored_probe = probe_from_json(view.hardware_identity)
        probes = [stored_probe, *(p for _, p in seen)]
        probe = newest_probe(probes)
        if probe is not None:
            status["hardwareIdentity"] = probe.to_json()
        verdict = next_verdict(
            stored=verdict,
            candidate=newest_verdict(verdicts),
            captured_at=parse_optional_time(status.get("capturedAt")),
            digest=new_digest,
            probes=probes,
        )
        if verdict is None:
            status.pop("verdict", None)
        else:
            status["verdict"] = verdict
        max_age = view.max_verdict_age_seconds or self.options.max_verdict_age_seconds
        drifted_now = decision.warn
        current = evaluate(
            verdict=verdict,
            digest=new_digest,
            now=now,
            max_age_seconds=max_age,
            changes=drift_message if drifted_now else "",
            probe=probe,
        )
        current = note_unjudged(current, unjudged=newest_unjudged(verdicts))
        conditions = set_json_condition(
            conditions,
            type_=VERDICT_CURRENT,
            status=current.condition_status,
            reason=current.reason.value,
            message=current.message,
            now=now,
            generation=generation,
            keep_message=not drifted_now,
        )
        attestation: Attestation | None = None
        if self.attestor is not None:
            attestation = await self.attestor.attest(
                node=node, fingerprint=fingerprint, digest=new_digest, verdict=verdict,
                current=current,
            )  # fmt: skip
            conditions = set_json_condition(
                conditions,
                type_=ATTESTED,
                status=attestation.status,
                reason=attestation.reason,
                message=attestation.message,
                now=now,
                generation=generation,
            )
        else:
            conditions = [c for c in conditions if c.get("type") != ATTESTED]
        status["conditions"] = conditions

        if status != stored:
            body = {**fingerprint, "status": status}
            # The read resourceVersion rides along: a conflict raises and the pass is
            # retried (rate-limited) on a fresh read, never a blind overwrite.
            await self.client.replace(
                FINGERPRINTS, body, namespace=self.options.operator_namespace, subresource="status"
            )
        if drifted_now:
            await self._drift_event(fingerprint, key, drift_message)
        if (
            stored_probe is not None
            and probe is not None
            and probe.identity != stored_probe.identity
        ):
            await self._drift_event(
                fingerprint,
                key,
                f"probed hardware identity {stored_probe.identity} -> {probe.identity} "
                f"(fingerprint-probe in run {probe.run_namespace}/{probe.run_name})",
            )
        await self._label(
            node,
            current.state.value,
            annotations=attestation.annotations
            if attestation is not None
            else unconfigured_annotations(node),
        )
        if self.metrics is not None:
            self.metrics.observe(key, current.state.value)
        if current.expires_at is None:
            return None
        return max(0.0, (current.expires_at - now).total_seconds())

    async def _verdicts_of(self, node: str) -> Sequence[tuple[RunVerdict | None, Probe | None]]:
        """What each run naming ``node`` says about it, and the identity its probe saw.
        From the run cache, read in place: a node event during a run would otherwise copy
        the whole run (its status can be a megabyte) for every node it touches."""
        namespace = self.options.runs_namespace

        def view(run: Mapping[str, Any]) -> tuple[RunVerdict | None, Probe | None]:
            return run_verdict(run, node), run_probe(run, node)

        try:
            return self.reads.readers.cached.by_index_view(
                RUNS, RUNS_BY_NODE, node, namespace=namespace, view=view
            )
        except NotCachedError:
            # No covering run cache (a registration used without the manager's informers):
            # every run, live. Correct, just not cheap.
            runs = await self.reads.readers.live.list(RUNS, namespace=namespace)
            return [view(r) for r in runs if node in runs_by_node(r)]

    async def _label(
        self, node: JSON, value: str, *, annotations: Mapping[str, str | None] | None = None
    ) -> None:
        """The verdict label and, beside it in the same patch, the attestation
        annotations (K8): a node is never labelled with one verdict and pointed at the
        signature of another."""
        view = ObjectView(node)
        changed = {k: v for k, v in (annotations or {}).items() if view.annotations.get(k) != v}
        if view.labels.get(VERDICT_LABEL) == value and not changed:
            return
        meta: JSON = {"labels": {VERDICT_LABEL: value}}
        if changed:
            meta["annotations"] = changed
        await self.client.patch(NODES, view.name, {"metadata": meta})

    async def _drift_event(self, fingerprint: JSON, node: str, message: str) -> None:
        """A Warning on the fingerprint; best effort, an Event never blocks the record."""
        view = ObjectView(fingerprint)
        stamp = format_time(self.now())
        body = {
            "metadata": {"generateName": f"{view.name}.", "namespace": view.namespace},
            "involvedObject": {
                "apiVersion": API_VERSION,
                "kind": "NodeFingerprint",
                "name": view.name,
                "namespace": view.namespace,
                "uid": view.uid or None,
            },
            "reason": HARDWARE_DRIFT,
            "message": clamp_message(f"node {node}: {message}"),
            "type": "Warning",
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
            "source": {"component": "glimmer-fingerprint-controller"},
        }
        with contextlib.suppress(ApiError, OSError, TimeoutError, aiohttp.ClientError):
            await self.client.create(EVENTS, body, namespace=view.namespace)


def _set_drifted(
    conditions: list[JSON], decision: DriftDecision, now: datetime, generation: int | None
) -> list[JSON]:
    """Write what glimmer.verdict decided (K5, K7); None keeps a True condition (sticky)."""
    if decision.drifted is None:
        return conditions
    return set_json_condition(
        conditions,
        type_=DRIFTED,
        status=ConditionStatus.TRUE if decision.drifted else ConditionStatus.FALSE,
        reason=decision.reason,
        message=decision.message,
        now=now,
        generation=generation,
    )


__all__ = [
    "DRIFTED",
    "HARDWARE_DRIFT",
    "RUNS_BY_NODE",
    "FingerprintOptions",
    "FingerprintReconciler",
    "runs_by_node",
]

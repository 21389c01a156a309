"""In-toto Statement v1 documents for Glimmer's verdicts (K8, L11).

A statement says *what* is attested; :mod:`glimmer.attest.dsse` signs it. Two kinds:

* a **node verdict** (``https://glimmer.ai/attestation/node-verdict/v1``): subject
  ``node/<name>`` whose digest is the node's fingerprint digest (K4); the predicate
  names the run, the pinned plan's digest, each of the run's results naming the node
  (test, kind, phase, provenance, suspect), the run's node verdict, the node's label
  state and whether the statement certifies the node;
* a **run verdict** (``https://glimmer.ai/attestation/run-verdict/v1``): subject
  ``burninrun/<namespace>/<name>`` whose digest is the pinned plan's; the predicate
  names the run, its phase, provenance and ``certifiesSilicon``, each result and each
  node's verdict as the terminal envelope carries them.

Nothing here decides a verdict: the node verdict is :func:`glimmer.verdict.nodes.node_verdict`'s,
the label's state :func:`glimmer.verdict.expiry.evaluate`'s, certification
:func:`glimmer.verdict.attestation.node_certified`'s and the run's ``certifiesSilicon``
:func:`glimmer.verdict.rollup.run_provenance`'s (as the run controller wrote it). The
builders copy those answers into the predicate.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from glimmer.verdict.attestation import node_certified
from glimmer.verdict.expiry import VerdictState
from glimmer.verdict.nodes import NodeVerdict

JSON = dict[str, Any]

STATEMENT_TYPE: Final = "https://in-toto.io/Statement/v1"
NODE_PREDICATE: Final = "https://glimmer.ai/attestation/node-verdict/v1"
RUN_PREDICATE: Final = "https://glimmer.ai/attestation/run-verdict/v1"
PREDICATE_TYPES: Final = frozenset({NODE_PREDICATE, RUN_PREDICATE})
#: The fields of a result a predicate carries.
RESULT_FIELDS: Final = ("name", "kind", "phase", "provenance", "suspect", "nodes", "variantAxes")


def format_time(moment: datetime) -> str:
    """RFC 3339 UTC with seconds (``2026-01-02T03:04:05Z``)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str) -> datetime:
    """An RFC 3339 time as :func:`format_time` writes it (``Z`` or an offset)."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        raise ValueError(f"{text!r} has no time zone")
    return moment.astimezone(UTC)


def plan_digest(plan_text: str | None) -> str:
    """The pinned plan's digest: hex sha256 of the plan annotation's exact text ("" when
    the run has no pinned plan)."""
    if not plan_text:
        return ""
    return hashlib.sha256(plan_text.encode("utf-8")).hexdigest()


def fingerprint_hex(fingerprint_digest: str) -> str:
    """The sha256 hex of a fingerprint digest (``glimmer-v1:<hex>``, K4)."""
    _, _, hexdigest = fingerprint_digest.rpartition(":")
    return hexdigest


def result_entry(result: Mapping[str, Any]) -> JSON:
    """One result as a predicate carries it: its identity, phase and provenance."""
    out: JSON = {
        "test": str(result.get("name") or ""),
        "kind": str(result.get("kind") or ""),
        "phase": str(result.get("phase") or ""),
        "provenance": str(result.get("provenance") or ""),
        "suspect": result.get("suspect") is True,
    }
    nodes = result.get("nodes")
    if isinstance(nodes, list | tuple):
        out["nodes"] = [str(n) for n in nodes]
    axes = result.get("variantAxes")
    if isinstance(axes, Mapping) and axes:
        out["variantAxes"] = {str(k): str(v) for k, v in sorted(axes.items())}
    return out


@dataclass(frozen=True, slots=True)
class RunFacts:
    """The run a statement is about, as recorded."""

    namespace: str
    name: str
    uid: str
    phase: str
    plan_digest: str
    provenance: str = ""
    certifies_silicon: bool = False
    finished_at: str = ""

    def to_json(self) -> JSON:
        out: JSON = {
            "namespace": self.namespace,
            "name": self.name,
            "uid": self.uid,
            "phase": self.phase,
            "provenance": self.provenance,
            "certifiesSilicon": self.certifies_silicon,
        }
        if self.finished_at:
            out["finishedAt"] = self.finished_at
        return out


def run_facts(run: Mapping[str, Any], *, plan_text: str | None) -> RunFacts:
    """The :class:`RunFacts` of a BurnInRun object (``plan_text``: its pinned plan)."""
    meta = run.get("metadata") if isinstance(run.get("metadata"), Mapping) else {}
    status = run.get("status") if isinstance(run.get("status"), Mapping) else {}
    assert isinstance(meta, Mapping) and isinstance(status, Mapping)
    return RunFacts(
        namespace=str(meta.get("namespace") or ""),
        name=str(meta.get("name") or ""),
        uid=str(meta.get("uid") or ""),
        phase=str(status.get("phase") or ""),
        plan_digest=plan_digest(plan_text),
        provenance=str(status.get("provenance") or ""),
        certifies_silicon=status.get("certifiesSilicon") is True,
        finished_at=str(status.get("finishedAt") or ""),
    )


def node_statement(
    *,
    node: str,
    fingerprint_digest: str,
    run: RunFacts,
    verdict: NodeVerdict,
    label: VerdictState,
    results: Iterable[Mapping[str, Any]],
    issued_at: datetime,
    expires_at: datetime | None = None,
) -> JSON:
    """The node-verdict statement (see the module docstring). ``results`` are the run's
    results naming ``node``; ``expires_at`` the label's own expiry (the verdict age
    limit), a freshness hint a verifier enforces."""
    predicate: JSON = {
        "node": node,
        "fingerprintDigest": fingerprint_digest,
        "run": run.to_json(),
        "plan": {"digest": {"sha256": run.plan_digest}},
        "results": [result_entry(r) for r in results],
        "nodeVerdict": {"state": str(verdict.state), "message": verdict.message},
        "label": str(label),
        "certified": node_certified(verdict, label),
        "issuedAt": format_time(issued_at),
    }
    if expires_at is not None:
        predicate["expiresAt"] = format_time(expires_at)
    return {
        "_type": STATEMENT_TYPE,
        "subject": [
            {"name": f"node/{node}", "digest": {"sha256": fingerprint_hex(fingerprint_digest)}}
        ],
        "predicateType": NODE_PREDICATE,
        "predicate": predicate,
    }


def run_statement(
    *,
    run: RunFacts,
    subject_digest: str,
    results: Sequence[Mapping[str, Any]],
    node_verdicts: Sequence[Mapping[str, str]],
    fingerprint: Mapping[str, str],
    issued_at: datetime,
) -> JSON:
    """The run-verdict statement of a terminal delivery envelope (L11). Its subject digest
    is the sha256 of the envelope it travels in, encoded without it
    (:func:`glimmer.attest.dsse.delivery_digest`); the run certifies exactly what its
    ``certifiesSilicon`` says (decided by :func:`glimmer.verdict.rollup.run_provenance`),
    and each node's verdict travels as the envelope's ``nodeVerdicts`` carry it."""
    return {
        "_type": STATEMENT_TYPE,
        "subject": [
            {"name": f"burninrun/{run.namespace}/{run.name}", "digest": {"sha256": subject_digest}}
        ],
        "predicateType": RUN_PREDICATE,
        "predicate": {
            "run": run.to_json(),
            "plan": {"digest": {"sha256": run.plan_digest}},
            "fingerprint": dict(sorted(fingerprint.items())),
            "results": [result_entry(r) for r in results],
            "nodeVerdicts": [dict(v) for v in node_verdicts],
            "certified": run.certifies_silicon,
            "issuedAt": format_time(issued_at),
        },
    }


def canonical(statement: Mapping[str, Any]) -> bytes:
    """The statement's bytes as signed: sorted keys, no whitespace, UTF-8."""
    return json.dumps(statement, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8"
    )

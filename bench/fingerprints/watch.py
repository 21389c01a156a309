"""When each node's NodeFingerprint first showed a digest, Drifted=True and an expired
verdict, from a watch on the fingerprints (never from the operator's own metrics)."""

from __future__ import annotations

import contextlib
import time
from typing import Any

from glimmer.controllers.fingerprint import DRIFTED, VERDICT_CURRENT
from glimmer.controllers.kit.names import FINGERPRINTS
from glimmer.engine import ApiServerClient


def _condition(fingerprint: dict[str, Any], type_: str) -> dict[str, Any]:
    for condition in (fingerprint.get("status") or {}).get("conditions") or ():
        if condition.get("type") == type_:
            return dict(condition)
    return {}


class FingerprintWatch:
    """First-seen instants per node: captured (a digest), current (VerdictCurrent=True),
    drifted (Drifted=True) and expired (VerdictCurrent=False/FingerprintChanged)."""

    def __init__(self) -> None:
        self.captured: dict[str, float] = {}
        self.current: dict[str, float] = {}
        self.drifted: dict[str, float] = {}
        self.expired: dict[str, float] = {}
        self.events = 0
        self.relists = 0
        self.last_event = time.time()

    def ingest(self, fingerprint: dict[str, Any]) -> None:
        now = time.time()
        self.events += 1
        self.last_event = now
        node = str((fingerprint.get("spec") or {}).get("nodeName") or "")
        if not node:
            return
        if (fingerprint.get("status") or {}).get("digest"):
            self.captured.setdefault(node, now)
        verdict = _condition(fingerprint, VERDICT_CURRENT)
        if verdict.get("status") == "True":
            self.current.setdefault(node, now)
        if verdict.get("status") == "False" and verdict.get("reason") == "FingerprintChanged":
            self.expired.setdefault(node, now)
        if _condition(fingerprint, DRIFTED).get("status") == "True":
            self.drifted.setdefault(node, now)

    async def follow(self, client: ApiServerClient, *, namespace: str, version: str) -> None:
        while True:
            async with contextlib.aclosing(
                client.watch(
                    FINGERPRINTS,
                    namespace=namespace,
                    resource_version=version,
                    timeout_seconds=600,
                )
            ) as stream:
                async for event in stream:
                    if event.type == "ERROR":
                        # 410: our version was compacted away; an instant seen during the
                        # gap is stamped late, which only overstates the times.
                        self.relists += 1
                        listed = await client.list(FINGERPRINTS, namespace=namespace)
                        for item in listed["items"]:
                            self.ingest(item)
                        version = str(listed["metadata"]["resourceVersion"])
                        break
                    version = event.object["metadata"]["resourceVersion"]
                    if event.type in ("ADDED", "MODIFIED"):
                        self.ingest(event.object)

"""Fan-out (L5): one envelope to every sink the run pinned, inside one time budget.

Each name in the pinned list is a BurnInSink in the run's namespace. A missing sink,
a sink without its block, an unknown type or a missing/empty Secret is a permanent
failure; a retryable one gets a second attempt about a second later. The sinks are
served concurrently and the whole fan-out shares one 15 s budget, so a receiver that
hangs cannot hold up the reconcile (and with it every other run) for longer.

The outcome is recorded on each BurnInSink (``status.lastDelivery`` on success, which
clears ``lastError``; ``status.lastError`` on failure), best effort: a sink whose status
cannot be written still delivered. Nothing here ever touches the run: what the run
does about a failure (re-send a terminal envelope later, E19) is the caller's call.

Secrets (bearer token, signing key, CA bundle) are read for every attempt and never
kept, so a rotated token is honoured by the next delivery.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

import aiohttp
import structlog

from glimmer.api import GROUP, VERSION, format_time
from glimmer.contract.envelope import Envelope, EnvelopeInvalidError, encode, validate
from glimmer.engine import ApiError, KubeClient, Resource, is_not_found
from glimmer.engine.client import is_transient
from glimmer.sinks import configmap
from glimmer.sinks.attestation import EnvelopeSigner
from glimmer.sinks.destinations import DestinationGuard
from glimmer.sinks.errors import DeliveryError, permanent, retryable
from glimmer.sinks.prometheus import RunExporter
from glimmer.sinks.webhook import WebhookTarget, post

log = structlog.get_logger("glimmer.sinks")

SINKS: Final = Resource(GROUP, VERSION, "burninsinks", True, "BurnInSink")
SECRETS: Final = Resource("", "v1", "secrets", True, "Secret")
#: lastError is clamped to this many bytes (it quotes no answer, so this is a backstop).
LAST_ERROR_BYTES: Final = 4096

JSON = dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class FanoutOptions:
    """Delivery timings (every default is the reference's) and where webhooks may go."""

    #: One budget for the whole fan-out, every sink and attempt included (15 s).
    budget_seconds: float = 15.0
    #: Attempts per sink for a retryable failure (2).
    attempts: int = 2
    #: Pause between a sink's attempts (1 s).
    retry_delay_seconds: float = 1.0
    #: Bound on each best-effort BurnInSink status write (5 s, outside the budget).
    status_timeout_seconds: float = 5.0
    #: Which webhook destinations are refused (docs/sinks.md#where-webhooks-may-go).
    #: The default refuses loopback, link-local (metadata service), multicast,
    #: unspecified and reserved addresses; ``glimmer manager`` adds ``--cluster-cidr``,
    #: the apiserver's addresses and the ``--sink-allow`` allowlist.
    destinations: DestinationGuard = field(default_factory=DestinationGuard)


@dataclass(frozen=True)
class SinkOutcome:
    sink: str
    delivered: bool
    error: str = ""


@dataclass(frozen=True)
class FanoutReport:
    """Per sink, in pinned order; ``ok`` when every sink accepted (or none is pinned)."""

    outcomes: tuple[SinkOutcome, ...] = ()

    @property
    def ok(self) -> bool:
        return all(o.delivered for o in self.outcomes)


def _clamp(text: str, limit: int = LAST_ERROR_BYTES) -> str:
    raw = text.encode()
    return text if len(raw) <= limit else raw[:limit].decode("utf-8", "ignore") + "…"


def _now_utc() -> datetime:
    return datetime.now(UTC)


@dataclass
class _Attempt:
    """What one sink's delivery has found so far (shared with the budget handler)."""

    sink: JSON | None = None
    last_error: str = ""


@dataclass
class SinkFanout:
    """Delivers envelopes to BurnInSinks through ``client`` (live reads only)."""

    client: KubeClient
    #: Where Prometheus sinks observe envelopes (None: Prometheus sinks still accept).
    exporter: RunExporter | None = None
    options: FanoutOptions = field(default_factory=FanoutOptions)
    #: Unix seconds for the signature timestamp.
    wall: Callable[[], float] = time.time
    #: For the sinks' lastDelivery.
    now: Callable[[], datetime] = _now_utc
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    #: Signs terminal envelopes (L11; ``glimmer manager --attestation-key-secret``).
    signer: EnvelopeSigner | None = None

    async def deliver(
        self, envelope: Envelope, *, namespace: str, sinks: Sequence[str]
    ) -> FanoutReport:
        names = list(dict.fromkeys(sinks))
        if not names:
            return FanoutReport()
        if self.signer is not None:
            envelope = await self.signer.attach(envelope)
        try:
            validate(envelope)  # L2: never ship a malformed document
        except EnvelopeInvalidError as err:
            log.error("envelope not sent", run=envelope.run.name, error=str(err))
            return FanoutReport(tuple(SinkOutcome(n, False, f"not sent: {err}") for n in names))
        body = encode(envelope)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.options.budget_seconds
        found = {name: _Attempt() for name in names}
        outcomes = await asyncio.gather(
            *(
                self._one(envelope, body=body, namespace=namespace, name=n,
                          deadline=deadline, found=found[n])
                for n in names
            )
        )  # fmt: skip
        await asyncio.gather(
            *(
                self._record(namespace, found[o.sink].sink, o)
                for o in outcomes
                if found[o.sink].sink is not None
            )
        )
        for o in outcomes:
            if not o.delivered:
                log.warning("delivery failed", run=envelope.run.name, sink=o.sink,
                            reason=envelope.reason, deliveryId=envelope.delivery_id,
                            error=o.error)  # fmt: skip
        return FanoutReport(tuple(outcomes))

    async def _one(
        self,
        envelope: Envelope,
        *,
        body: bytes,
        namespace: str,
        name: str,
        deadline: float,
        found: _Attempt,
    ) -> SinkOutcome:
        try:
            async with asyncio.timeout_at(deadline):
                await self._attempts(envelope, body=body, namespace=namespace, name=name,
                                     deadline=deadline, found=found)  # fmt: skip
        except DeliveryError as err:
            return SinkOutcome(name, False, _clamp(str(err)))
        except TimeoutError:
            why = f"the {self.options.budget_seconds:g} s delivery budget ran out"
            last = f" (last error: {found.last_error})" if found.last_error else ""
            return SinkOutcome(name, False, _clamp(why + last))
        return SinkOutcome(name, True)

    async def _attempts(
        self,
        envelope: Envelope,
        *,
        body: bytes,
        namespace: str,
        name: str,
        deadline: float,
        found: _Attempt,
    ) -> None:
        loop = asyncio.get_running_loop()
        attempts = max(1, self.options.attempts)
        for attempt in range(1, attempts + 1):
            try:
                if found.sink is None:
                    found.sink = await self._sink(namespace, name)
                await self._send(found.sink, envelope, body=body,
                                 timeout=deadline - loop.time())  # fmt: skip
                return
            except DeliveryError as err:
                found.last_error = str(err)
                delay = self.options.retry_delay_seconds
                if err.permanent or attempt == attempts or loop.time() + delay >= deadline:
                    raise
            await self.sleep(delay)

    async def _sink(self, namespace: str, name: str) -> JSON:
        try:
            return await self.client.get(SINKS, name, namespace=namespace)
        except ApiError as err:
            if is_not_found(err):
                raise permanent(f"BurnInSink {namespace}/{name} not found") from None
            raise _api(err, what=f"reading BurnInSink {namespace}/{name}") from None

    async def _send(self, sink: JSON, envelope: Envelope, *, body: bytes, timeout: float) -> None:
        spec = sink.get("spec") or {}
        meta = sink.get("metadata") or {}
        namespace, name = str(meta.get("namespace")), str(meta.get("name"))
        kind = spec.get("type")
        if kind == "Prometheus":
            if self.exporter is not None:
                self.exporter.observe(envelope)
            return
        if kind == "ConfigMap":
            block = spec.get("configMap")
            target = block.get("name") if isinstance(block, Mapping) else None
            if not target or not isinstance(target, str):
                raise permanent(
                    f"BurnInSink {namespace}/{name}: type ConfigMap needs configMap.name"
                )
            owner = configmap.SinkOwner(name=name, uid=str(meta.get("uid") or ""))
            await configmap.store(self.client, namespace=namespace, name=target, owner=owner,
                                  key=envelope.delivery_id, value=body.decode())  # fmt: skip
            return
        if kind == "Webhook":
            block = spec.get("webhook")
            if not isinstance(block, Mapping) or not block.get("url"):
                raise permanent(f"BurnInSink {namespace}/{name}: type Webhook needs webhook.url")
            target_ = await self._webhook_target(namespace, name, block)
            await post(target_, body=body, delivery_id=envelope.delivery_id,
                       timestamp=int(self.wall()), timeout=timeout,
                       guard=self.options.destinations)  # fmt: skip
            return
        raise permanent(f"BurnInSink {namespace}/{name}: unknown type {kind!r}")

    async def _webhook_target(
        self, namespace: str, name: str, block: Mapping[str, Any]
    ) -> WebhookTarget:
        where = f"BurnInSink {namespace}/{name}"
        insecure = block.get("insecureSkipVerify") is True
        token = await self._secret(namespace, block.get("tokenSecretRef"), what=f"{where} token")
        key = await self._secret(
            namespace, block.get("signingSecretRef"), what=f"{where} signing key"
        )
        ca = None
        if not insecure:
            ca = await self._secret(namespace, block.get("caSecretRef"), what=f"{where} CA")
        return WebhookTarget(
            url=str(block["url"]),
            token=token,
            ca_pem=ca,
            insecure_skip_verify=insecure,
            signing_key=key.encode() if key is not None else None,
        )

    async def _secret(self, namespace: str, ref: Any, *, what: str) -> str | None:
        """A SecretKeySelector's value (surrounding whitespace removed), read now.

        None when no selector is set, or when an ``optional`` one finds nothing."""
        if ref is None:
            return None
        if not isinstance(ref, Mapping) or not ref.get("name") or not ref.get("key"):
            raise permanent(f"{what}: the secret reference needs name and key")
        secret_name, key = str(ref["name"]), str(ref["key"])
        optional = ref.get("optional") is True
        try:
            secret = await self.client.get(SECRETS, secret_name, namespace=namespace)
        except ApiError as err:
            if is_not_found(err):
                if optional:
                    return None
                raise permanent(f"{what}: Secret {namespace}/{secret_name} not found") from None
            raise _api(err, what=f"{what}: reading Secret {namespace}/{secret_name}") from None
        raw = (secret.get("data") or {}).get(key)
        if raw is None:
            if optional:
                return None
            raise permanent(f"{what}: Secret {namespace}/{secret_name} has no key {key!r}")
        try:
            value = base64.b64decode(str(raw), validate=True).decode("utf-8").strip()
        except (binascii.Error, UnicodeDecodeError):
            raise permanent(f"{what}: Secret {namespace}/{secret_name} key {key!r} "
                            "is not UTF-8 text") from None  # fmt: skip
        if not value:
            raise permanent(f"{what}: Secret {namespace}/{secret_name} key {key!r} is empty")
        return value

    async def _record(self, namespace: str, sink: JSON | None, outcome: SinkOutcome) -> None:
        """Best effort: the sink's lastDelivery / lastError (never raises)."""
        if sink is None:
            return
        status = sink.get("status") or {}
        if outcome.delivered:
            # To the second: a burst of deliveries within one second is one status write.
            stamp = format_time(self.now().replace(microsecond=0))
            if status.get("lastDelivery") == stamp and not status.get("lastError"):
                return
            change: JSON = {"lastDelivery": stamp, "lastError": None}
        else:
            if status.get("lastError") == outcome.error:
                return
            change = {"lastError": outcome.error}
        with contextlib.suppress(ApiError, OSError, TimeoutError, aiohttp.ClientError):
            async with asyncio.timeout(self.options.status_timeout_seconds):
                await self.client.patch(SINKS, outcome.sink, {"status": change},
                                        namespace=namespace, subresource="status")  # fmt: skip


def _api(err: ApiError, *, what: str) -> DeliveryError:
    return retryable(f"{what}: {err}") if is_transient(err) else permanent(f"{what}: {err}")

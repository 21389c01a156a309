"""Webhook delivery (L6): one POST of the envelope bytes, classified by its answer.

2xx is accepted. 408, 429, 5xx and transport failures (refused, reset, TLS, timeout)
are retryable: the receiver may be back in a second. Any other answer is permanent.
The error records the status code with its standard phrase and a fixed reason, never
the answer's body or headers: ``lastError`` is readable by everyone who may read the
sink, and what a receiver (or whatever sits at an address the URL names) said is not
theirs to read through the manager.
Redirects are not followed: a 3xx would carry the bearer token and the verdict to an
address nobody configured (and past the destination guard), so it is a permanent error.

Before any byte leaves, the destination guard (:mod:`glimmer.sinks.destinations`)
checks the host and every address the connection resolves to and dials. Requests say
who sends them: ``User-Agent: glimmer/<version>``, so receivers can allowlist and audit.

TLS is verified against the system trust store, or only against the sink's own CA
bundle when one is configured (``caSecretRef``); ``insecureSkipVerify`` turns every
check off, as the reference does.
"""

from __future__ import annotations

import asyncio
import http
import ssl
from dataclasses import dataclass
from typing import Final

import aiohttp
from yarl import URL

from glimmer import __version__
from glimmer.sinks.destinations import DestinationGuard, numeric_host, parse_address
from glimmer.sinks.errors import DeliveryError, permanent, retryable
from glimmer.sinks.signature import SIGNATURE_HEADER, sign

#: Sent on every webhook request.
USER_AGENT: Final = f"glimmer/{__version__}"
_RETRYABLE_STATUS: Final = frozenset({408, 429})


@dataclass(frozen=True, kw_only=True)
class WebhookTarget:
    """Everything one POST needs, read fresh for each delivery (tokens are never kept)."""

    url: str
    #: Bearer token, or None for no Authorization header.
    token: str | None = None
    #: PEM CA bundle that replaces the system store, or None.
    ca_pem: str | None = None
    insecure_skip_verify: bool = False
    #: HMAC key for X-Glimmer-Signature, or None for unsigned deliveries.
    signing_key: bytes | None = None


def check_url(url: str, *, guard: DestinationGuard) -> URL:
    """``url`` parsed as aiohttp will parse it, when it is an absolute http(s) URL whose
    host the guard does not refuse by itself; else a permanent error.

    A legacy numeric IPv4 host (``2130706433``, ``0x7f.1``) is judged as the address it
    spells, and refused even when that address is allowed: aiohttp would not dial it,
    and the canonical form says the same thing plainly."""
    try:
        parsed = URL(url)
    except (ValueError, TypeError):
        parsed = None
    host = parsed.raw_host if parsed is not None and parsed.absolute else None
    if parsed is None or parsed.scheme not in ("http", "https") or not host:
        raise permanent(f"webhook url {url!r} is not an absolute http(s) URL")
    spelled = numeric_host(host)
    if spelled is not None:
        why = guard.refusal(spelled, host=host)
        if why is not None:
            raise refused(url, host, why)
        raise permanent(f"webhook url {url!r}: write the host as {spelled} "
                        "(a numeric IPv4 host must be in dotted-quad form)")  # fmt: skip
    if parse_address(host) is None:
        why = guard.host_refusal(host)
        if why is not None:
            raise refused(url, host, why)
    return parsed


def refused(url: str, host: str, why: str) -> DeliveryError:
    """The guard's refusal: the kind of destination, never an address or a range."""
    return permanent(
        f"POST {url}: destination refused, nothing sent: {host} is or resolves to {why}; "
        "the manager does not send webhooks there unless the operator allows it "
        "(glimmer manager --sink-allow, docs/sinks.md#where-webhooks-may-go)"
    )


def ssl_context(target: WebhookTarget) -> ssl.SSLContext | bool:
    """What aiohttp verifies the receiver with (False: nothing, insecureSkipVerify)."""
    if target.insecure_skip_verify:
        return False
    if target.ca_pem is None:
        return ssl.create_default_context()
    try:
        return ssl.create_default_context(cadata=target.ca_pem)
    except (ssl.SSLError, ValueError) as err:
        raise permanent(f"the sink's CA bundle is not usable PEM: {err}") from None


def headers_for(
    target: WebhookTarget, *, body: bytes, delivery_id: str, timestamp: int
) -> dict[str, str]:
    headers = {
        "Content-Type": "application/json",
        "Idempotency-Key": delivery_id,
        "User-Agent": USER_AGENT,
    }
    if target.token is not None:
        headers["Authorization"] = f"Bearer {target.token}"
    if target.signing_key is not None:
        headers[SIGNATURE_HEADER] = sign(body, key=target.signing_key, timestamp=timestamp)
    return headers


def answered(url: str, status: int) -> DeliveryError:
    """A non-2xx answer: its code and standard phrase, never what the receiver sent."""
    try:
        code = f"HTTP {status} {http.HTTPStatus(status).phrase}"
    except ValueError:
        code = f"HTTP {status}"
    if 300 <= status < 400:
        return permanent(f"POST {url}: {code} from the receiver: redirects are not "
                         "followed; point the sink at the final URL")  # fmt: skip
    what = f"POST {url}: {code} from the receiver"
    if status in _RETRYABLE_STATUS or status >= 500:
        return retryable(what)
    return permanent(what)


def _transport(err: BaseException) -> str:
    """A transport failure in fixed words (the exception's class, no peer text)."""
    if isinstance(err, aiohttp.ClientConnectorCertificateError):
        what = "the receiver's TLS certificate is not trusted"
    elif isinstance(err, aiohttp.ClientSSLError | ssl.SSLError):
        what = "the TLS handshake failed"
    elif isinstance(err, aiohttp.ClientConnectorDNSError):
        what = "the host name did not resolve"
    elif isinstance(err, aiohttp.ClientConnectorError):
        what = "could not connect"
    elif isinstance(err, TimeoutError | asyncio.TimeoutError):
        what = "timed out"
    else:
        what = "the connection failed"
    return f"{what} ({type(err).__name__})"


async def post(
    target: WebhookTarget,
    *,
    body: bytes,
    delivery_id: str,
    timestamp: int,
    timeout: float,
    guard: DestinationGuard,
) -> None:
    """POST ``body``; returns when accepted, else raises :class:`DeliveryError`.

    ``timestamp`` (unix seconds) is what the signature covers; ``timeout`` bounds the
    whole exchange (connect, send, answer). ``guard`` decides which addresses may be
    dialled; every connection resolves afresh through it (no DNS cache)."""
    url = check_url(target.url, guard=guard)
    context = ssl_context(target)
    headers = headers_for(target, body=body, delivery_id=delivery_id, timestamp=timestamp)
    dial = guard.dial(url.raw_host or "")
    resolver = dial.resolver()
    connector = aiohttp.TCPConnector(
        resolver=resolver, use_dns_cache=False, socket_factory=dial.open_socket
    )
    try:
        async with (
            aiohttp.ClientSession(
                connector=connector,
                timeout=aiohttp.ClientTimeout(total=max(timeout, 0.001)),
                trust_env=False,  # no proxy: the guard judges the address dialled
            ) as s,
            s.post(url, data=body, headers=headers, ssl=context, allow_redirects=False) as answer,
        ):
            status = answer.status
    except DeliveryError:
        raise
    except (aiohttp.ClientError, OSError, TimeoutError, ssl.SSLError) as err:
        if dial.refused:
            raise refused(target.url, url.raw_host or "", dial.refused) from None
        raise retryable(f"POST {target.url}: {_transport(err)}") from None
    finally:
        await connector.close()
        await resolver.close()
    if 200 <= status < 300:
        return
    raise answered(target.url, status)

"""Webhook delivery (L6): one POST of the envelope bytes, classified by its answer.

2xx is accepted. 408, 429, 5xx and transport failures (refused, reset, TLS, timeout)
are retryable: the receiver may be back in a second. Any other answer is permanent,
with up to 2048 bytes of the body quoted so the sink's ``lastError`` says why.
Redirects are not followed: a 3xx would carry the bearer token and the verdict to an
address nobody configured, so it is a permanent error naming the location.

TLS is verified against the system trust store, or only against the sink's own CA
bundle when one is configured (``caSecretRef``); ``insecureSkipVerify`` turns every
check off, as the reference does.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

import aiohttp

from glimmer.sinks.errors import DeliveryError, permanent, retryable
from glimmer.sinks.signature import SIGNATURE_HEADER, sign

#: The most of a refusing receiver's body quoted in the error (L6).
BODY_QUOTE_BYTES: Final = 2048
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


def check_url(url: str) -> str:
    """``url`` when it is an absolute http(s) URL; else a permanent error."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise permanent(f"webhook url {url!r} is not an absolute http(s) URL")
    return url


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
    headers = {"Content-Type": "application/json", "Idempotency-Key": delivery_id}
    if target.token is not None:
        headers["Authorization"] = f"Bearer {target.token}"
    if target.signing_key is not None:
        headers[SIGNATURE_HEADER] = sign(body, key=target.signing_key, timestamp=timestamp)
    return headers


def _quote(body: bytes) -> str:
    text = body[:BODY_QUOTE_BYTES].decode("utf-8", errors="replace").strip()
    return f": {text}" if text else ""


async def post(
    target: WebhookTarget, *, body: bytes, delivery_id: str, timestamp: int, timeout: float
) -> None:
    """POST ``body``; returns when accepted, else raises :class:`DeliveryError`.

    ``timestamp`` (unix seconds) is what the signature covers; ``timeout`` bounds the
    whole exchange (connect, send, answer)."""
    url = check_url(target.url)
    context = ssl_context(target)
    headers = headers_for(target, body=body, delivery_id=delivery_id, timestamp=timestamp)
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=max(timeout, 0.001))) as s,
            s.post(url, data=body, headers=headers, ssl=context, allow_redirects=False) as answer,
        ):
            status = answer.status
            if 200 <= status < 300:
                return
            quoted = _quote(await answer.content.read(BODY_QUOTE_BYTES))
            location = answer.headers.get("Location", "")
    except DeliveryError:
        raise
    except (aiohttp.ClientError, OSError, TimeoutError, ssl.SSLError) as err:
        raise retryable(f"POST {url}: {type(err).__name__}: {err}".rstrip(": ")) from None
    if 300 <= status < 400:
        raise permanent(f"POST {url}: HTTP {status} redirect to {location!r} not followed")
    what = f"POST {url}: HTTP {status}{quoted}"
    if status in _RETRYABLE_STATUS or status >= 500:
        raise retryable(what)
    raise permanent(what)

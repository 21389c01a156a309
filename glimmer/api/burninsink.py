"""BurnInSink: where run verdicts are delivered (api §6).

A Webhook or ConfigMap sink without its block is a permanent delivery error at run
time, not a schema error, so that manifests written for the Go implementation keep
applying.
"""

# field() returns attrs.field() with schema metadata; ruff cannot see that.
# ruff: noqa: RUF009

from __future__ import annotations

from datetime import datetime

import attrs

from glimmer.api.burnintest import API_VERSION
from glimmer.api.core import ObjectMeta, SecretKeySelector
from glimmer.api.fields import field
from glimmer.api.vocabulary import SinkType


@attrs.define(kw_only=True)
class WebhookSink:
    """HTTP POST delivery of the JSON envelope."""

    url: str = field(json="url", required=True, description="POST target.")
    token_secret_ref: SecretKeySelector | None = field(
        json="tokenSecretRef",
        description="Bearer token, from a Secret in the sink's namespace.",
    )
    insecure_skip_verify: bool | None = field(
        json="insecureSkipVerify", description="Disable TLS certificate verification."
    )
    ca_secret_ref: SecretKeySelector | None = field(
        json="caSecretRef",
        description="Glimmer extension: PEM CA bundle that verifies the receiver's TLS "
        "certificate, from a Secret in the sink's namespace (e.g. a cert-manager ca.crt), "
        "instead of the system trust store. Ignored when insecureSkipVerify is true.",
    )
    signing_secret_ref: SecretKeySelector | None = field(
        json="signingSecretRef",
        description="Glimmer extension: HMAC-SHA256 key, from a Secret in the sink's "
        "namespace. Each POST then carries X-Glimmer-Signature: t=<unix seconds>,"
        "v1=<hex HMAC of '<t>.<body>'> so the receiver can reject forged or replayed "
        "verdicts (docs/sinks.md).",
    )


@attrs.define(kw_only=True)
class ConfigMapSink:
    """Delivery into a ConfigMap in the sink's namespace."""

    name: str = field(json="name", required=True, description="ConfigMap name.")


@attrs.define(kw_only=True)
class BurnInSinkSpec:
    """Delivery channel and its settings."""

    type: str = field(json="type", required=True, enum=SinkType, description="Delivery channel.")
    webhook: WebhookSink | None = field(json="webhook", description="Settings for Webhook.")
    config_map: ConfigMapSink | None = field(
        json="configMap", description="Settings for ConfigMap."
    )


@attrs.define(kw_only=True)
class BurnInSinkStatus:
    """Observed state of a sink."""

    last_delivery: datetime | None = field(
        json="lastDelivery", fmt="date-time", description="Last successful delivery."
    )
    last_error: str | None = field(
        json="lastError", description="Last delivery failure (cleared on success)."
    )


@attrs.define(kw_only=True)
class BurnInSink:
    """BurnInSink is a destination for run verdicts (webhook, ConfigMap or Prometheus)."""

    api_version: str = field(json="apiVersion", default=API_VERSION, description="API version.")
    kind: str = field(json="kind", default="BurnInSink", description="Kind.")
    metadata: ObjectMeta = field(json="metadata", factory=ObjectMeta, description="Metadata.")
    spec: BurnInSinkSpec = field(json="spec", required=True, description="The sink.")
    status: BurnInSinkStatus | None = field(json="status", description="Observed state.")

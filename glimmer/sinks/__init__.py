"""Sinks: where verdicts leave the cluster (L5-L8), and the bare-host sender (N3).

The envelope itself is :mod:`glimmer.contract.envelope` (standard library only, for
consumers); this package builds it from a run, fans it out to BurnInSinks (webhook,
ConfigMap, Prometheus) and records each sink's outcome. It knows Kubernetes only
through the engine's client, and nothing of the run reconciler.
"""

from glimmer.sinks.bare import BareDelivery, deliver_run_document, send_envelope, write_envelope
from glimmer.sinks.build import build_envelope, envelope_from_run_document
from glimmer.sinks.errors import DeliveryError
from glimmer.sinks.fanout import FanoutOptions, FanoutReport, SinkFanout, SinkOutcome
from glimmer.sinks.prometheus import RunExporter
from glimmer.sinks.signature import SIGNATURE_HEADER, SignatureError, sign, verify

__all__ = [
    "SIGNATURE_HEADER",
    "BareDelivery",
    "DeliveryError",
    "FanoutOptions",
    "FanoutReport",
    "RunExporter",
    "SignatureError",
    "SinkFanout",
    "SinkOutcome",
    "build_envelope",
    "deliver_run_document",
    "envelope_from_run_document",
    "send_envelope",
    "sign",
    "verify",
    "write_envelope",
]

"""The delivery envelope: the one document a sink receives (L1-L3).

A consumer of verdicts decodes an envelope, never a Kubernetes object, so this module
is standard library only and wire compatible with the Go implementation: the same
field names in the same order, the same ``omitempty`` rules (an empty optional value
is absent, never ``""``/``0``/``[]``), every result so far (cumulative), a summary that
always carries all four counters, ``sentAt`` in RFC3339Nano UTC and a derived
``deliveryId`` so a retry carries the key the receiver already deduplicated.

Times stay strings: a Go sender's nanoseconds would not survive a ``datetime`` (which
holds microseconds), and ``decode(encode(e)) == e`` must hold for any envelope.

Additive fields (never a changed meaning): ``provenance``, ``certifiesSilicon`` and
``nodeVerdicts`` on the envelope, ``provenance`` and ``suspect`` on each result, so a
simulated GPU is never mistaken for silicon downstream and a node untested by a run is
never read as passed by it. Each is omitted when empty; absent ``certifiesSilicon``
means "certifies nothing", which is the fail-closed reading a consumer that predates
the field already makes.

Strict decoding refuses any unknown field, naming it (``results[0].attempts: unknown
field``): a document that carries something we do not understand is not guessed at.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from glimmer.contract.names import name_problem
from glimmer.contract.registry import REGISTRY

#: The envelope schema. A consumer rejects a version it does not know.
VERSION: Final = "burnin.glimmer.ai/v1alpha1"
REASON_RUN_PHASE_CHANGED: Final = "RunPhaseChanged"
REASON_TEST_COMPLETED: Final = "TestCompleted"
REASON_CHECKPOINT: Final = "Checkpoint"
#: Every delivery reason the contract defines (L4).
REASONS: Final = (REASON_RUN_PHASE_CHANGED, REASON_TEST_COMPLETED, REASON_CHECKPOINT)

_INT32: Final = (-(2**31), 2**31 - 1)
_INT64: Final = (-(2**63), 2**63 - 1)
_ZERO_TIME: Final = datetime(1, 1, 1, tzinfo=UTC)
# RFC3339 as Go's time.Time unmarshals it: a fraction of 1-9 digits, Z or an offset.
_RFC3339: Final = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?"
    r"(?:([Zz])|([+-])(\d{2}):(\d{2}))",
    re.ASCII,
)


class EnvelopeDecodeError(ValueError):
    """The bytes are not an envelope; ``field`` is the JSON path of the offence."""

    def __init__(self, field_: str, reason: str) -> None:
        super().__init__(f"not a delivery envelope: {field_ or '(document)'}: {reason}")
        self.field = field_
        self.reason = reason


class EnvelopeInvalidError(ValueError):
    """An envelope that must not be sent (L2); ``field`` names what is wrong."""

    def __init__(self, field_: str, reason: str) -> None:
        super().__init__(f"invalid envelope: {field_}: {reason}")
        self.field = field_
        self.reason = reason


# --- the document ------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class RunRef:
    namespace: str = ""
    name: str = ""
    #: The stable identity; a name can be reused after deletion.
    uid: str = ""
    #: ``spec.profileRef``.
    profile: str = ""


@dataclass(frozen=True, kw_only=True)
class ClusterRef:
    #: Only from ``glimmer manager --cluster-name``: a guessed identity is worse than none.
    name: str = ""
    #: The ``kube-system`` namespace UID.
    uid: str = ""


@dataclass(frozen=True, kw_only=True)
class Violation:
    index: int = 0
    metric: str = ""
    #: Who acts: Measurement, Evidence or Authoring (deliberately an open string).
    cause: str = ""
    kind: str = ""
    reason: str = ""


@dataclass(frozen=True, kw_only=True)
class NotEvaluated:
    metric: str = ""
    reason: str = ""


@dataclass(frozen=True, kw_only=True)
class ArtifactRef:
    name: str = ""
    media_type: str = ""
    size_bytes: int = 0
    digest: str = ""
    config_map: str = ""
    key: str = ""
    dropped: str = ""


@dataclass(frozen=True, kw_only=True)
class SegmentSummary:
    """Present only for a segmented soak: ``completed < required`` means it was cut short."""

    completed: int = 0
    required: int = 0
    segment_seconds: int = 0
    truncated_attempts: int = 0


@dataclass(frozen=True, kw_only=True)
class TestResult:
    """One result of the run's status, without its attempts."""

    __test__ = False  # not a pytest test class

    name: str = ""
    #: Always present; ``""`` marks a synthetic result (resolve / admission).
    kind: str = ""
    scope: str = ""
    phase: str = ""
    nodes: tuple[str, ...] = ()
    started_at: str = ""
    finished_at: str = ""
    metrics: Mapping[str, str] = field(default_factory=dict)
    message: str = ""
    violations: tuple[Violation, ...] = ()
    not_evaluated: tuple[NotEvaluated, ...] = ()
    unmeasurable: tuple[str, ...] = ()
    artifacts: tuple[ArtifactRef, ...] = ()
    variant_axes: Mapping[str, str] = field(default_factory=dict)
    segments: SegmentSummary | None = None
    #: Additive: ``silicon``, ``sim`` or ``unknown`` (the weakest over the attempts).
    provenance: str = ""
    #: Additive: a simulated Pass of a hardware-dependent kind proves plumbing only.
    suspect: bool = False


@dataclass(frozen=True, kw_only=True)
class Summary:
    """All four counters, always (one per result; a checkpoint's open ones count in none)."""

    passed: int = 0
    failed: int = 0
    errored: int = 0
    skipped: int = 0


@dataclass(frozen=True, kw_only=True)
class NodeVerdictRef:
    """Additive: what the run established about one node (``glimmer.verdict.nodes``).

    ``verdict`` is Passed, Failed, Simulated or NotJudged; only Passed may gate a node
    into service, and ``reason`` says what keeps any other value from it."""

    node: str = ""
    verdict: str = ""
    reason: str = ""


@dataclass(frozen=True, kw_only=True)
class DsseSignature:
    """One DSSE signature: the key's id and the base64 signature over the PAE."""

    keyid: str = ""
    sig: str = ""


@dataclass(frozen=True, kw_only=True)
class Attestation:
    """Additive (L11): on a terminal envelope from a manager configured to sign, the
    run-verdict in-toto statement in a DSSE envelope (docs/attestations.md). Its subject
    digest is the sha256 of this envelope encoded without this field."""

    payload: str = ""
    payload_type: str = ""
    signatures: tuple[DsseSignature, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Envelope:
    version: str = VERSION
    #: The run measured, it did not certify (a baseline carries no gates).
    baseline: bool = False
    delivery_id: str = ""
    reason: str = ""
    #: RFC3339Nano UTC (see :func:`format_sent_at`).
    sent_at: str = ""
    run: RunRef = field(default_factory=RunRef)
    cluster: ClusterRef | None = None
    phase: str = ""
    #: Only on a Cancelled run (``spec.cancelReason``; empty is omitted, as in Go).
    cancel_reason: str = ""
    #: Only on a Checkpoint.
    checkpoint_sequence: int = 0
    fingerprint: Mapping[str, str] = field(default_factory=dict)
    results: tuple[TestResult, ...] = ()
    summary: Summary = field(default_factory=Summary)
    #: Additive: the run's provenance (weakest over its results).
    provenance: str = ""
    #: Additive: true only when the run certifies silicon; absent means it does not.
    certifies_silicon: bool = False
    #: Additive: on a terminal envelope, each target node's verdict from this run.
    node_verdicts: tuple[NodeVerdictRef, ...] = ()
    #: Additive (L11): the signed run verdict, when the manager signs.
    attestation: Attestation | None = None


# --- one table per type: JSON name, attribute, codec, omitempty ----------------------


@dataclass(frozen=True)
class _Field:
    json: str
    attr: str
    codec: _Codec
    omitempty: bool


@dataclass(frozen=True)
class _Codec:
    #: value -> JSON-ready value
    dump: Callable[[Any], Any]
    #: (JSON value, path) -> value
    load: Callable[[Any, str], Any]
    #: the Go "empty value" test for omitempty
    empty: Callable[[Any], bool]


def _fail(path: str, reason: str) -> EnvelopeDecodeError:
    return EnvelopeDecodeError(path, reason)


def _load_str(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise _fail(path, f"expected a string, got {type(value).__name__}")
    return value


def _load_time(value: Any, path: str) -> str:
    text = _load_str(value, path)
    try:
        parse_time(text)
    except ValueError as err:
        raise _fail(path, str(err)) from None
    return text


def _load_bool(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise _fail(path, f"expected true or false, got {type(value).__name__}")
    return value


def _int_loader(bounds: tuple[int, int]) -> Callable[[Any, str], int]:
    def load(value: Any, path: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _fail(path, f"expected an integer, got {json.dumps(value)[:40]}")
        if not bounds[0] <= value <= bounds[1]:
            raise _fail(path, f"integer {value} out of range")
        return value

    return load


def _load_str_map(value: Any, path: str) -> dict[str, str]:
    if not isinstance(value, dict):
        raise _fail(path, f"expected an object, got {type(value).__name__}")
    return {k: _load_str(v, f"{path}.{k}") for k, v in value.items()}


def _load_str_list(value: Any, path: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise _fail(path, f"expected a list, got {type(value).__name__}")
    return tuple(_load_str(v, f"{path}[{i}]") for i, v in enumerate(value))


def _is_falsy(value: Any) -> bool:
    return not value


_STR = _Codec(dump=str, load=_load_str, empty=_is_falsy)
_TIME = _Codec(dump=str, load=_load_time, empty=_is_falsy)
_BOOL = _Codec(dump=bool, load=_load_bool, empty=_is_falsy)
_I32 = _Codec(dump=int, load=_int_loader(_INT32), empty=_is_falsy)
_I64 = _Codec(dump=int, load=_int_loader(_INT64), empty=_is_falsy)
_STR_MAP = _Codec(dump=lambda m: {k: m[k] for k in sorted(m)}, load=_load_str_map, empty=_is_falsy)
_STR_LIST = _Codec(dump=list, load=_load_str_list, empty=_is_falsy)

_TABLES: dict[type, tuple[_Field, ...]] = {}


def _dump(value: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in _TABLES[type(value)]:
        item = getattr(value, f.attr)
        if f.omitempty and f.codec.empty(item):
            continue
        out[f.json] = f.codec.dump(item)
    return out


def _load(cls: type, value: Any, path: str) -> Any:
    if not isinstance(value, dict):
        raise _fail(path, f"expected an object, got {type(value).__name__}")
    table = _TABLES[cls]
    known = {f.json for f in table}
    for key in value:
        if key not in known:
            raise _fail(f"{path}.{key}" if path else key, "unknown field")
    kwargs: dict[str, Any] = {}
    for f in table:
        item = value.get(f.json)
        if item is None:  # absent, or JSON null (Go leaves the zero value)
            continue
        kwargs[f.attr] = f.codec.load(item, f"{path}.{f.json}" if path else f.json)
    return cls(**kwargs)


def _object(cls: type) -> _Codec:
    return _Codec(
        dump=_dump,
        load=lambda v, path: _load(cls, v, path),
        empty=lambda v: v is None,
    )


def _objects(cls: type) -> _Codec:
    def load(value: Any, path: str) -> tuple[Any, ...]:
        if not isinstance(value, list):
            raise _fail(path, f"expected a list, got {type(value).__name__}")
        return tuple(_load(cls, v, f"{path}[{i}]") for i, v in enumerate(value))

    return _Codec(dump=lambda vs: [_dump(v) for v in vs], load=load, empty=_is_falsy)


def _table(cls: type, *rows: tuple[str, _Codec, bool]) -> None:
    attrs = [f.name for f in dataclasses.fields(cls)]
    if len(attrs) != len(rows):  # every attribute is on the wire, nothing else is
        raise AssertionError(f"{cls.__name__}: table does not cover its fields")
    _TABLES[cls] = tuple(
        _Field(json=j, attr=a, codec=c, omitempty=o)
        for a, (j, c, o) in zip(attrs, rows, strict=True)
    )


_table(RunRef, ("namespace", _STR, False), ("name", _STR, False), ("uid", _STR, False),
       ("profile", _STR, True))  # fmt: skip
_table(ClusterRef, ("name", _STR, True), ("uid", _STR, True))
_table(Violation, ("index", _I32, False), ("metric", _STR, False), ("cause", _STR, False),
       ("kind", _STR, False), ("reason", _STR, True))  # fmt: skip
_table(NotEvaluated, ("metric", _STR, False), ("reason", _STR, False))
_table(ArtifactRef, ("name", _STR, False), ("mediaType", _STR, True), ("sizeBytes", _I64, True),
       ("digest", _STR, True), ("configMap", _STR, True), ("key", _STR, True),
       ("dropped", _STR, True))  # fmt: skip
_table(SegmentSummary, ("completed", _I32, False), ("required", _I32, False),
       ("segmentSeconds", _I32, True), ("truncatedAttempts", _I32, True))  # fmt: skip
_table(
    TestResult,
    ("name", _STR, False), ("kind", _STR, False), ("scope", _STR, True),
    ("phase", _STR, False), ("nodes", _STR_LIST, True), ("startedAt", _TIME, True),
    ("finishedAt", _TIME, True), ("metrics", _STR_MAP, True), ("message", _STR, True),
    ("violations", _objects(Violation), True), ("notEvaluated", _objects(NotEvaluated), True),
    ("unmeasurable", _STR_LIST, True), ("artifacts", _objects(ArtifactRef), True),
    ("variantAxes", _STR_MAP, True), ("segments", _object(SegmentSummary), True),
    ("provenance", _STR, True), ("suspect", _BOOL, True),
)  # fmt: skip
_table(NodeVerdictRef, ("node", _STR, False), ("verdict", _STR, False), ("reason", _STR, True))
_table(DsseSignature, ("keyid", _STR, False), ("sig", _STR, False))
_table(Attestation, ("payload", _STR, False), ("payloadType", _STR, False),
       ("signatures", _objects(DsseSignature), False))  # fmt: skip
_table(Summary, ("passed", _I32, False), ("failed", _I32, False), ("errored", _I32, False),
       ("skipped", _I32, False))  # fmt: skip
_table(
    Envelope,
    ("version", _STR, False), ("baseline", _BOOL, True), ("deliveryId", _STR, False),
    ("reason", _STR, False), ("sentAt", _TIME, False), ("run", _object(RunRef), False),
    ("cluster", _object(ClusterRef), True), ("phase", _STR, False),
    ("cancelReason", _STR, True), ("checkpointSequence", _I64, True),
    ("fingerprint", _STR_MAP, True), ("results", _objects(TestResult), True),
    ("summary", _object(Summary), False), ("provenance", _STR, True),
    ("certifiesSilicon", _BOOL, True), ("nodeVerdicts", _objects(NodeVerdictRef), True),
    ("attestation", _object(Attestation), True),
)  # fmt: skip


# --- public API ----------------------------------------------------------------------


def to_json(envelope: Envelope) -> dict[str, Any]:
    """The envelope as the JSON object it is sent as (Go field order, omitempty)."""
    return _dump(envelope)


def encode(envelope: Envelope) -> bytes:
    """Compact UTF-8 JSON, the bytes a sink receives (and a signature covers)."""
    return json.dumps(to_json(envelope), ensure_ascii=False, separators=(",", ":")).encode()


def from_json(obj: Any, *, strict: bool = True) -> Envelope:
    """An envelope from a decoded JSON object; ``strict`` refuses unknown fields."""
    envelope = _load(Envelope, obj if strict else _known_only(Envelope, obj), "")
    assert isinstance(envelope, Envelope)
    return envelope


def decode(data: bytes | str, *, strict: bool = True) -> Envelope:
    """Parse an envelope; raises :class:`EnvelopeDecodeError` naming the bad field.

    ``strict`` (the default) refuses any field this version does not define; lenient
    decoding drops them (a newer sender's additions) but still refuses wrong types.
    """
    try:
        obj = json.loads(data)
    except (ValueError, UnicodeDecodeError) as err:
        raise EnvelopeDecodeError("", f"not JSON ({err})") from None
    return from_json(obj, strict=strict)


def _known_only(cls: type, value: Any) -> Any:
    """``value`` with fields ``cls`` does not define removed, recursively."""
    if not isinstance(value, dict):
        return value
    nested: dict[str, type] = {
        "run": RunRef, "cluster": ClusterRef, "summary": Summary, "segments": SegmentSummary,
    }  # fmt: skip
    lists: dict[str, type] = {
        "results": TestResult, "violations": Violation, "notEvaluated": NotEvaluated,
        "artifacts": ArtifactRef, "nodeVerdicts": NodeVerdictRef,
    }  # fmt: skip
    known = {f.json for f in _TABLES[cls]}
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key not in known:
            continue
        if key in nested:
            out[key] = _known_only(nested[key], item)
        elif key in lists and isinstance(item, list):
            out[key] = [_known_only(lists[key], v) for v in item]
        else:
            out[key] = item
    return out


def validate(envelope: Envelope) -> None:
    """L2: refuse to send what a consumer could not trust; raises
    :class:`EnvelopeInvalidError` naming the first offending field."""
    if not envelope.version:
        raise EnvelopeInvalidError("version", "must be set")
    if envelope.version != VERSION:
        raise EnvelopeInvalidError("version", f"unknown envelope version {envelope.version}")
    if not envelope.delivery_id:
        raise EnvelopeInvalidError("deliveryId", "must be set; retries depend on a stable key")
    if not envelope.reason:
        raise EnvelopeInvalidError("reason", "must be set")
    if not envelope.run.uid:
        raise EnvelopeInvalidError("run.uid", "must be set; a name alone is not stable identity")
    try:
        sent = parse_time(envelope.sent_at) if envelope.sent_at else _ZERO_TIME
    except ValueError as err:
        raise EnvelopeInvalidError("sentAt", str(err)) from None
    if sent == _ZERO_TIME:
        raise EnvelopeInvalidError("sentAt", "must be set")
    for i, result in enumerate(envelope.results):
        for name in result.metrics:
            spec = REGISTRY.get(name)
            problem = name_problem(name, spec.unit if spec else None)
            if problem is not None:
                raise EnvelopeInvalidError(f"results[{i}].metrics", problem)


def delivery_id(run_uid: str, reason: str, event_key: str) -> str:
    """L3: lowercase hex of the first 16 bytes of sha256(uid NUL reason NUL key).

    A pure function of what the delivery describes, never of the clock, so a retry
    carries the key the receiver has already seen."""
    digest = hashlib.sha256(f"{run_uid}\x00{reason}\x00{event_key}".encode()).digest()
    return digest[:16].hex()


def event_key_for_result(name: str, nodes: Sequence[str]) -> str:
    """L3 TestCompleted key: ``<test>/<node1>+<node2>...``, the bare name with no nodes."""
    return f"{name}/{'+'.join(nodes)}" if nodes else name


def format_sent_at(moment: datetime) -> str:
    """RFC3339Nano in UTC as Go writes it: trailing fraction zeros dropped, ``Z``."""
    if moment.tzinfo is None:
        raise ValueError("a naive datetime has no instant; give it a timezone")
    utc = moment.astimezone(UTC)
    text = utc.strftime("%Y-%m-%dT%H:%M:%S")
    if utc.microsecond:
        text += "." + f"{utc.microsecond:06d}".rstrip("0")
    return text + "Z"


def parse_time(text: str) -> datetime:
    """An RFC3339 time (Go's accepted forms) as an aware datetime (fraction truncated
    to microseconds). Raises ValueError for anything else."""
    m = _RFC3339.fullmatch(text)
    if m is None:
        raise ValueError(f"{text!r} is not an RFC3339 time")
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    micro = int((m.group(7) or "0").ljust(6, "0")[:6])
    try:
        moment = datetime(year, month, day, hour, minute, second, micro, tzinfo=UTC)
    except ValueError:
        raise ValueError(f"{text!r} is not a valid time") from None
    if m.group(9):
        sign = 1 if m.group(9) == "+" else -1
        offset = sign * (int(m.group(10)) * 60 + int(m.group(11)))
        if int(m.group(10)) > 23 or int(m.group(11)) > 59:
            raise ValueError(f"{text!r} has an impossible UTC offset")
        moment = moment - timedelta(minutes=offset)
    return moment

"""Artifact fences (A11): evidence documents a runner embeds in its stdout.

A fenced block is lifted out *before* metric scanning, so an evidence document (a
JSON blob, a DCGM report) can never rewrite a measurement. A fence that is not
well formed still consumes its payload and is recorded as dropped: a refusal is
never silent. An END with no open fence means the stream began inside a payload
(a rotated or cut log) or a runner closed a fence twice: the lines since the last
boundary (the stream's start or the previous END) cannot be told apart from payload,
so the reader discards them and records the orphan as dropped. What came before that
boundary stands: an END that closes a fence is itself a boundary.
"""

from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass
from typing import Final

from glimmer.contract.text import go_fields

BEGIN_PREFIX: Final = b"-----BEGIN BURNIN ARTIFACT"
MARKER_SUFFIX: Final = b"-----"
END_LINE: Final = b"-----END BURNIN ARTIFACT-----"
MAX_PAYLOAD_BYTES: Final = 262_144
_NAME_CHARS: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")


class DropReason(enum.StrEnum):
    """Why a fence was dropped; when several apply, the first listed wins."""

    BAD_HEADER = "malformed header: need exactly a name and a media type"
    NESTED = "a BEGIN marker appeared inside the payload"
    UNTERMINATED = "no END marker before the output ended"
    OVERSIZED = f"payload larger than {MAX_PAYLOAD_BYTES} bytes"
    BAD_NAME = "artifact name must use only [A-Za-z0-9._-] and not be '.' or '..'"
    BUDGET = "the artifact budget is exhausted"
    STORE_FAILED = "the artifact could not be stored"
    ORPHAN_END = (
        "an END marker with no open fence: the lines since the previous END (or the "
        "start of the output) may be a payload's tail, so they were discarded"
    )


@dataclass(frozen=True, slots=True)
class Artifact:
    name: str
    media_type: str
    payload: bytes
    digest: str

    @property
    def size(self) -> int:
        return len(self.payload)


@dataclass(frozen=True, slots=True)
class DroppedArtifact:
    name: str
    media_type: str
    size: int
    reason: DropReason


def is_begin_marker(line: bytes) -> bool:
    """Column-0 BEGIN marker: only an empty header or one led by a space/tab counts."""
    if not (line.startswith(BEGIN_PREFIX) and line.endswith(MARKER_SUFFIX)):
        return False
    if len(line) < len(BEGIN_PREFIX) + len(MARKER_SUFFIX):
        return False
    middle = line[len(BEGIN_PREFIX) : -len(MARKER_SUFFIX)]
    return not middle or middle[:1] in (b" ", b"\t")


def is_end_marker(line: bytes) -> bool:
    return line == END_LINE


def artifact_name_ok(name: str) -> bool:
    """A12: names are used verbatim in ConfigMap keys, so they are never sanitised."""
    return name not in ("", ".", "..") and all(ch in _NAME_CHARS for ch in name)


def digest_of(payload: bytes) -> str:
    return "sha256:" + hashlib.sha256(payload).hexdigest()


class _OpenFence:
    __slots__ = ("bad_header", "chunks", "media_type", "name", "oversized", "size")

    def __init__(self, marker: bytes) -> None:
        header = marker[len(BEGIN_PREFIX) : -len(MARKER_SUFFIX)].decode("utf-8", "replace")
        fields = go_fields(header)
        self.bad_header = len(fields) != 2
        self.name, self.media_type = (fields[0], fields[1]) if not self.bad_header else ("", "")
        self.chunks: list[bytes] = []
        self.size = 0
        self.oversized = False

    def add(self, line: bytes, *, true_size: int | None = None) -> None:
        self.size += (len(line) if true_size is None else true_size) + 1
        if self.oversized:
            return
        if self.size > MAX_PAYLOAD_BYTES:
            self.oversized = True
            self.chunks.clear()
            return
        self.chunks.append(line)
        self.chunks.append(b"\n")

    def dropped(self, reason: DropReason) -> DroppedArtifact:
        if self.bad_header:
            return DroppedArtifact(name="", media_type="", size=0, reason=DropReason.BAD_HEADER)
        return DroppedArtifact(
            name=self.name, media_type=self.media_type, size=self.size, reason=reason
        )

    def close(self) -> Artifact | DroppedArtifact:
        if self.bad_header or self.oversized:
            return self.dropped(DropReason.OVERSIZED)
        payload = b"".join(self.chunks)
        return Artifact(
            name=self.name, media_type=self.media_type, payload=payload, digest=digest_of(payload)
        )


class LineRole(enum.Enum):
    """What one line was to the fence scanner."""

    OUTPUT = "output"
    #: A BEGIN or a payload line.
    FENCE = "fence"
    #: An END that closed a fence: a boundary, what came before it stands.
    CLOSE = "close"
    #: An END with no open fence: the lines since the last boundary were a payload's
    #: tail (A11).
    ORPHAN_END = "orphan end"


class FenceScanner:
    """Line-at-a-time fence state machine; lines are already CR-stripped.

    ``found`` lists every fence in document order (where its BEGIN stood; an orphan
    END where it stood), accepted and dropped interleaved as printed.
    """

    def __init__(self) -> None:
        self._open: _OpenFence | None = None
        self.found: list[Artifact | DroppedArtifact] = []

    @property
    def inside(self) -> bool:
        return self._open is not None

    def feed(self, line: bytes, *, discarded: int = 0, cut_from: int | None = None) -> LineRole:
        """Classify ``line``; ``discarded`` is the size of the output an orphan END
        would discard (the output since the last boundary, recorded as the dropped
        entry's size). ``cut_from`` is the true length of a line cut at the line limit:
        it is never a marker."""
        fence = self._open
        if cut_from is not None:
            if fence is None:
                return LineRole.OUTPUT
            fence.add(line, true_size=cut_from)
            return LineRole.FENCE
        if fence is None:
            if is_begin_marker(line):
                self._open = _OpenFence(line)
                return LineRole.FENCE
            if is_end_marker(line):
                self.found.append(
                    DroppedArtifact(
                        name="", media_type="", size=discarded, reason=DropReason.ORPHAN_END
                    )
                )
                return LineRole.ORPHAN_END
            return LineRole.OUTPUT
        if is_end_marker(line):
            self.found.append(fence.close())
            self._open = None
            return LineRole.CLOSE
        if is_begin_marker(line):
            # The outer fence is dropped and scanning restarts at this marker.
            self.found.append(fence.dropped(DropReason.NESTED))
            self._open = _OpenFence(line)
        else:
            fence.add(line)
        return LineRole.FENCE

    def finish(self) -> None:
        if self._open is not None:
            self.found.append(self._open.dropped(DropReason.UNTERMINATED))
            self._open = None

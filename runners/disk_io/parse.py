"""Reading ``fio --output-format=json`` (fio's documented JSON report, 3.x).

Why strict: every figure the runner prints must come from a field that is present, a
finite non-negative number, and in the job the runner asked for. fio prints ``fio: ...``
lines ahead of its JSON on some errors, so lines before the document are kept as *noise*
for the runner to judge (never silently accepted); anything after it, a second document,
``NaN``/``Infinity``, a missing job or a missing percentile makes the report unreadable
(exit 3), never a pass.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: fio's JSON document opens with ``{`` alone at column 0.
_DOCUMENT_START = re.compile(r"^\{[ \t]*$", re.MULTILINE)
P99_KEY = "99.000000"


class UnreadableFioOutputError(ValueError):
    """fio's output lacks, or garbles, a field the verdict depends on."""


@dataclass(frozen=True)
class Direction:
    """One direction (read or write) of one fio job."""

    io_bytes: int
    total_ios: int
    bw_bytes: float
    #: Completion latency in ns (None when the direction did no I/O).
    clat_mean_ns: float | None
    clat_p99_ns: float | None


@dataclass(frozen=True)
class Job:
    name: str
    #: fio's ``error``: the errno that stopped the job, 0 when none did.
    error: int
    #: ``total_err``/``first_error``: present when ``continue_on_error`` is set.
    total_err: int
    first_error: int
    runtime_ms: int
    read: Direction
    write: Direction

    @property
    def errors(self) -> int:
        """I/O errors this job met: those counted under ``continue_on_error``, and the
        error that stopped it if none was counted."""
        return self.total_err if self.total_err else int(self.error != 0)

    @property
    def errnos(self) -> frozenset[int]:
        return frozenset(code for code in (self.error, self.first_error) if code)


@dataclass(frozen=True)
class FioReport:
    version: str
    jobs: Mapping[str, Job]
    #: Lines fio printed before its JSON document (``fio: ...`` on some errors).
    noise: tuple[str, ...]


def _reject_constant(name: str) -> float:
    raise UnreadableFioOutputError(f"non-finite number {name} in fio's JSON")


def _number(obj: Mapping[str, Any], key: str, where: str) -> float:
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise UnreadableFioOutputError(f"{where}.{key} is missing or not a number: {value!r}")
    if not math.isfinite(value) or value < 0:
        raise UnreadableFioOutputError(f"{where}.{key} is not a finite non-negative number")
    return float(value)


def _integer(obj: Mapping[str, Any], key: str, where: str) -> int:
    value = _number(obj, key, where)
    if value != int(value):
        raise UnreadableFioOutputError(f"{where}.{key} is not an integer: {value!r}")
    return int(value)


def _mapping(obj: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(obj, dict):
        raise UnreadableFioOutputError(f"{where} is missing or not an object")
    return obj


def _direction(job: Mapping[str, Any], key: str, where: str) -> Direction:
    where = f"{where}.{key}"
    section = _mapping(job.get(key), where)
    total_ios = _integer(section, "total_ios", where)
    io_bytes = _integer(section, "io_bytes", where)
    bw_bytes = _number(section, "bw_bytes", where)
    if total_ios == 0:
        return Direction(io_bytes, 0, bw_bytes, None, None)
    clat = _mapping(section.get("clat_ns"), f"{where}.clat_ns")
    percentiles = _mapping(clat.get("percentile"), f"{where}.clat_ns.percentile")
    return Direction(
        io_bytes=io_bytes,
        total_ios=total_ios,
        bw_bytes=bw_bytes,
        clat_mean_ns=_number(clat, "mean", f"{where}.clat_ns"),
        clat_p99_ns=_number(percentiles, P99_KEY, f"{where}.clat_ns.percentile"),
    )


def _job(raw: Any, index: int) -> Job:
    job = _mapping(raw, f"jobs[{index}]")
    name = job.get("jobname")
    if not isinstance(name, str) or not name:
        raise UnreadableFioOutputError(f"jobs[{index}].jobname is missing")
    where = f"job {name!r}"
    has_total = "total_err" in job
    return Job(
        name=name,
        error=_integer(job, "error", where),
        total_err=_integer(job, "total_err", where) if has_total else 0,
        first_error=_integer(job, "first_error", where) if "first_error" in job else 0,
        runtime_ms=_integer(job, "job_runtime", where),
        read=_direction(job, "read", where),
        write=_direction(job, "write", where),
    )


def split_document(text: str) -> tuple[tuple[str, ...], str]:
    """The lines before fio's JSON document, and the document with what follows it."""
    start = _DOCUMENT_START.search(text)
    if start is None:
        raise UnreadableFioOutputError("no JSON document in fio's output")
    noise = tuple(line.strip() for line in text[: start.start()].splitlines() if line.strip())
    return noise, text[start.start() :]


def parse_fio_json(text: str) -> FioReport:
    """Parse fio's JSON report; raises :class:`UnreadableFioOutputError`."""
    noise, document = split_document(text)
    decoder = json.JSONDecoder(parse_constant=_reject_constant)
    try:
        data, end = decoder.raw_decode(document)
    except json.JSONDecodeError as error:
        raise UnreadableFioOutputError(f"fio's JSON is cut or malformed: {error}") from None
    if document[end:].strip():
        raise UnreadableFioOutputError("fio printed more after its JSON document")
    top = _mapping(data, "the document")
    version = top.get("fio version")
    if not isinstance(version, str) or not re.fullmatch(r"fio-[0-9][0-9A-Za-z.+~-]*", version):
        raise UnreadableFioOutputError(f"'fio version' is missing or malformed: {version!r}")
    raw_jobs = top.get("jobs")
    if not isinstance(raw_jobs, list) or not raw_jobs:
        raise UnreadableFioOutputError("'jobs' is missing or empty")
    jobs: dict[str, Job] = {}
    for index, raw in enumerate(raw_jobs):
        job = _job(raw, index)
        if job.name in jobs:
            raise UnreadableFioOutputError(f"job {job.name!r} appears twice")
        jobs[job.name] = job
    return FioReport(version=version, jobs=jobs, noise=noise)

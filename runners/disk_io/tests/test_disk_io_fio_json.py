"""fio's JSON report: recorded fio 3.33 output parsed to the right figures, and every
garbled report refused (fixtures/README.md says which are recorded, which constructed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runners.disk_io.parse import UnreadableFioOutputError, parse_fio_json

FIXTURES = Path(__file__).parent / "fixtures"
WRITE = (FIXTURES / "write-3.33-tmpfs.json").read_text()
READ = (FIXTURES / "read-3.33-tmpfs.json").read_text()


def test_recorded_write_report_parses_to_fios_own_figures() -> None:
    report = parse_fio_json(WRITE)
    raw = json.loads(WRITE)["jobs"][0]
    job = report.jobs["glimmer-write"]
    assert report.version == "fio-3.33"
    assert report.noise == ()
    assert job.write.bw_bytes == raw["write"]["bw_bytes"] > 0
    assert job.write.io_bytes == raw["write"]["io_bytes"]
    assert job.write.clat_p99_ns == raw["write"]["clat_ns"]["percentile"]["99.000000"]
    assert job.read.total_ios == 0 and job.read.clat_mean_ns is None
    assert (job.error, job.total_err, job.errors) == (0, 0, 0)
    assert job.runtime_ms == raw["job_runtime"]


def test_recorded_read_report_has_both_jobs_in_order() -> None:
    report = parse_fio_json(READ)
    raw = {job["jobname"]: job for job in json.loads(READ)["jobs"]}
    assert list(report.jobs) == ["glimmer-read", "glimmer-latency"]
    latency = report.jobs["glimmer-latency"].read
    assert latency.clat_mean_ns == raw["glimmer-latency"]["read"]["clat_ns"]["mean"]
    assert (
        latency.clat_p99_ns == raw["glimmer-latency"]["read"]["clat_ns"]["percentile"]["99.000000"]
    )


def test_counted_io_errors_and_a_stopping_error_both_count() -> None:
    counted = parse_fio_json((FIXTURES / "write-eio-constructed.json").read_text())
    assert counted.jobs["glimmer-write"].errors == 3
    assert counted.jobs["glimmer-write"].errnos == {5}
    stopped = parse_fio_json((FIXTURES / "read-eio-stopped-constructed.json").read_text())
    assert stopped.jobs["glimmer-latency"].errors == 1


def test_noise_lines_before_the_document_are_kept_for_the_runner_to_judge() -> None:
    report = parse_fio_json("fio: io_u error on file x: Input/output error\n" + WRITE)
    assert report.noise == ("fio: io_u error on file x: Input/output error",)


def _edit(text: str, change: str) -> str:
    data = json.loads(text)
    job = data["jobs"][0]
    if change == "nan":
        return text.replace('"bw_bytes" : ', '"bw_bytes" : NaN, "was" : ', 1)
    if change == "infinity":
        return text.replace('"mean" : ', '"mean" : Infinity, "was" : ', 1)
    if change == "overflow":  # not a JSON constant: Python reads it as inf
        return text.replace('"bw_bytes" : ', '"bw_bytes" : 1e999, "was" : ', 1)
    if change == "no-p99":
        del job["write"]["clat_ns"]["percentile"]["99.000000"]
    elif change == "negative":
        job["write"]["bw_bytes"] = -1
    elif change == "bool":
        job["error"] = False
    elif change == "string":
        job["write"]["io_bytes"] = "12"
    elif change == "no-version":
        del data["fio version"]
    elif change == "no-jobs":
        data["jobs"] = []
    elif change == "duplicate":
        data["jobs"].append(job)
    elif change == "no-name":
        del job["jobname"]
    return json.dumps(data, indent=2)


@pytest.mark.parametrize(
    "change",
    [
        "nan",
        "infinity",
        "overflow",
        "no-p99",
        "negative",
        "bool",
        "string",
        "no-version",
        "no-jobs",
        "duplicate",
        "no-name",
    ],
)
def test_fail_closed_garbled_report_is_unreadable(change: str) -> None:
    with pytest.raises(UnreadableFioOutputError):
        parse_fio_json(_edit(WRITE, change))


@pytest.mark.parametrize(
    "text",
    [
        "",
        "fio: pid=0, err=30/file:filesetup.c:150, func=unlink, error=Read-only file system\n",
        WRITE[: len(WRITE) // 2],
        WRITE + WRITE,
        WRITE + "trailing words\n",
        "  " + WRITE.lstrip(),
        "[]\n",
    ],
    ids=["empty", "only-noise", "truncated", "two-documents", "trailing", "indented", "array"],
)
def test_fail_closed_output_that_is_not_one_report_is_unreadable(text: str) -> None:
    with pytest.raises(UnreadableFioOutputError):
        parse_fio_json(text)

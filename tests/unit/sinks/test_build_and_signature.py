"""The envelope built from a run as written (L1) and the webhook signature."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from glimmer.contract.envelope import ClusterRef, decode, delivery_id, encode
from glimmer.sinks import SignatureError, build_envelope, envelope_from_run_document, sign, verify

NOW = datetime(2026, 12, 1, 12, 0, 0, 250000, tzinfo=UTC)


def run(**status: Any) -> dict[str, Any]:
    return {
        "metadata": {"namespace": "ns", "name": "r", "uid": "uid-1"},
        "spec": {"profileRef": "prof", "cancelReason": "operator stop"},
        "status": {
            "phase": "Running",
            "fingerprint": {"n1": "kernel=6"},
            "results": [
                {
                    "name": "burn", "kind": "gpu-burn", "scope": "Node", "phase": "Passed",
                    "nodes": ["n1"], "startedAt": "2026-12-01T11:00:00Z",
                    "finishedAt": "2026-12-01T11:10:00Z", "metrics": {"gpuTempC": "71"},
                    "attempts": [{"attempt": 1, "trigger": "Initial", "phase": "Passed"}],
                    "repeatsRequired": 1, "provenance": "sim", "suspect": True,
                },
                {"name": "admission", "kind": "", "phase": "Error", "message": "busy"},
                {"name": "skip", "kind": "custom", "phase": "Skipped", "nodes": ["n1"]},
                {"name": "soak", "kind": "thermal-soak", "phase": "Running", "nodes": ["n1"],
                 "segmentsRequired": 4, "segmentsCompleted": 1, "segmentSeconds": 300},
            ],
            "passed": 99,  # a stale counter never leaks into the summary
            "conditions": [{"type": "Admitted", "status": "True"}],
            **status,
        },
    }  # fmt: skip


def test_L1_envelope_carries_every_result_without_attempts_and_counts_from_them() -> None:
    env = build_envelope(run(), reason="Checkpoint", event_key="7", sent_at=NOW, baseline=False)
    assert env.delivery_id == delivery_id("uid-1", "Checkpoint", "7")
    assert env.checkpoint_sequence == 7
    assert env.sent_at == "2026-12-01T12:00:00.25Z"
    assert env.run.profile == "prof" and env.cluster is None
    assert [r.name for r in env.results] == ["burn", "admission", "skip", "soak"]  # cumulative
    doc = json.loads(encode(env))
    assert "attempts" not in doc["results"][0] and "conditions" not in doc
    assert "repeatsRequired" not in doc["results"][0]
    # The summary is the results' own tally (the open one counts in none of the four).
    assert (env.summary.passed, env.summary.errored, env.summary.failed) == (1, 1, 0)
    assert env.summary.skipped == 1
    assert env.results[1].kind == "" and doc["results"][1]["kind"] == ""  # synthetic
    assert env.results[0].segments is None
    seg = env.results[3].segments
    assert seg is not None and (seg.completed, seg.required, seg.segment_seconds) == (1, 4, 300)
    assert env.results[0].provenance == "sim" and env.results[0].suspect
    assert env.cancel_reason == ""  # only on a Cancelled run


def test_L1_cancel_reason_only_when_cancelled_and_cluster_only_when_configured() -> None:
    env = build_envelope(
        run(phase="Cancelled"), reason="RunPhaseChanged", event_key="Cancelled", sent_at=NOW,
        baseline=True, cluster=ClusterRef(name="lab", uid="ks-uid"),
    )  # fmt: skip
    assert env.cancel_reason == "operator stop"
    assert env.baseline and env.cluster == ClusterRef(name="lab", uid="ks-uid")
    assert env.checkpoint_sequence == 0
    assert decode(encode(env)) == env


def test_L1_unparseable_status_time_is_left_out_not_sent_malformed() -> None:
    doc = run()
    doc["status"]["results"][0]["startedAt"] = "last tuesday"
    env = build_envelope(doc, reason="TestCompleted", event_key="burn/n1", sent_at=NOW,
                         baseline=False)  # fmt: skip
    assert env.results[0].started_at == ""
    decode(encode(env))


def test_N2_bare_host_envelope_is_local_with_no_cluster_or_artifacts() -> None:
    document = {
        "run": {"namespace": "local", "name": "host-1", "profile": "acc"},
        "phase": "Passed",
        "provenance": "silicon",
        "certifiesSilicon": True,
        "results": [{"name": "t", "kind": "custom", "phase": "Passed", "nodes": ["host-1"],
                     "artifacts": [{"name": "a", "file": "raw/a"}], "required": True,
                     "rawLogs": ["raw/t.log"], "segmentsRequired": 2}],
    }  # fmt: skip
    env = envelope_from_run_document(document, sent_at=NOW, uid="u-9")
    assert env.run.namespace == "local" and env.run.name == "host-1" and env.run.uid == "u-9"
    assert env.delivery_id == delivery_id("u-9", "RunPhaseChanged", "Passed")
    assert env.cluster is None and env.results[0].artifacts == ()
    assert env.results[0].segments is None and env.certifies_silicon
    assert decode(encode(env)) == env
    assert envelope_from_run_document(document, sent_at=NOW).run.uid != "u-9"  # random


def test_signature_verifies_and_refuses_forgery_replay_and_malformed_headers() -> None:
    body = b'{"phase":"Passed"}'
    header = sign(body, key=b"k", timestamp=1_000_000)
    assert header.startswith("t=1000000,v1=")
    assert verify(body, header, key=b"k", now=1_000_100) == 1_000_000
    with pytest.raises(SignatureError, match="does not match"):
        verify(b'{"phase":"Failed"}', header, key=b"k", now=1_000_000)
    with pytest.raises(SignatureError, match="does not match"):
        verify(body, header, key=b"other", now=1_000_000)
    with pytest.raises(SignatureError, match="outside"):
        verify(body, header, key=b"k", now=1_000_000 + 301)
    for bad in (None, "", "v1=abc", "t=1000000", "t=soon,v1=ab", "garbage"):
        with pytest.raises(SignatureError):
            verify(body, bad, key=b"k", now=1_000_000)


def test_signature_is_hmac_sha256_of_timestamp_dot_body() -> None:
    # Independent vector: printf '1700000000.{}' | openssl dgst -sha256 -hmac secret
    assert sign(b"{}", key=b"secret", timestamp=1_700_000_000) == (
        "t=1700000000,v1=b8569b78799ff9e3cbff0fc2d63a33a2b57f3282abd07c37ae5e8e7d79a5f163"
    )


def test_the_receiver_snippet_in_docs_sinks_md_verifies_our_signature() -> None:
    import re
    import time
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[3] / "docs" / "sinks.md").read_text()
    match = re.search(r"```python\n(.*?)```", doc, re.S)
    assert match is not None
    namespace: dict[str, Any] = {}
    exec(compile(match.group(1), "docs/sinks.md", "exec"), namespace)  # the doc's own code
    check = namespace["verify_glimmer_signature"]
    body = b'{"phase":"Passed"}'
    header = sign(body, key=b"k", timestamp=int(time.time()))
    assert check(body, header, b"k")
    assert not check(b'{"phase":"Failed"}', header, b"k")
    assert not check(body, sign(body, key=b"k", timestamp=int(time.time()) - 3600), b"k")

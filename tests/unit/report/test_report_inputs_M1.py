"""M1: inputs, strict decoding, dedupe, one run, the verdict of record, checkpoints."""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from glimmer.cli.report import report as report_command
from glimmer.contract.envelope import encode, to_json
from glimmer.report import ReportInputError, assemble, from_file, from_results_dir
from glimmer.report.cluster import report_from_cluster
from glimmer.report.reading import MAX_INPUT_BYTES
from tests.unit.report import report_fleet as fleet
from tests.unit.report.report_cluster import cluster_with_run, sink
from tests.unit.report.report_readback import assert_every_format_agrees


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(report_command, list(args))
    return result.exit_code, result.stdout, result.stderr


def write(path: Path, value: object) -> Path:
    path.write_text(json.dumps(value))
    return path


def phases_of(results: list[dict[str, object]]) -> Counter[str]:
    return Counter(str(r["phase"]) for r in results)


@pytest.mark.parametrize(
    "args",
    [[], ["--from-file", "a.json", "--results-dir", "."], ["--run", "ns/x", "--run-json", "."]],
)
def test_M1_exactly_one_input(args: list[str]) -> None:
    code, _, err = invoke(*args)
    assert code == 2
    assert "exactly one input" in err


def test_M1_from_file_takes_one_envelope_or_an_array(tmp_path: Path) -> None:
    envelopes = fleet.envelopes()
    array = write(tmp_path / "all.json", fleet.as_json(envelopes))
    one = write(tmp_path / "one.json", to_json(envelopes[-1]))
    from_array = assemble(from_file(array), source="a")
    from_one = assemble(from_file(one), source="b")
    assert from_array.results == from_one.results
    assert from_array.phase_word == from_one.phase_word == "Failed"
    assert_every_format_agrees(from_array, phases_of(fleet.fleet_results()))


def test_M1_duplicate_deliveries_count_once(tmp_path: Path) -> None:
    envelopes = fleet.envelopes()
    resent = replace(envelopes[-1], sent_at="2026-11-30T10:05:00Z")  # E19: re-sent every 5 min
    once = assemble(envelopes, source="x")
    twice = assemble([*envelopes, *envelopes[3:6], resent], source="x")
    assert twice.results == once.results and twice.summary == once.summary
    assert twice.duplicates == 4 and once.duplicates == 0
    assert len(twice.checkpoints) == len(once.checkpoints)


def test_M1_one_delivery_id_with_two_verdicts_is_refused() -> None:
    envelopes = fleet.envelopes()
    forged = replace(envelopes[-1], phase="Passed")
    with pytest.raises(ReportInputError, match="share deliveryId"):
        assemble([*envelopes, forged], source="x")


def test_M1_mixed_run_uids_are_refused() -> None:
    ours = fleet.envelopes()
    other = fleet.envelopes(uid="0f0f0f0f-1111-4222-8333-444444444444")
    with pytest.raises(ReportInputError, match="mixes envelopes of different runs"):
        assemble([*ours, other[-1]], source="x")


def test_M1_terminal_run_phase_changed_is_the_verdict_of_record() -> None:
    envelopes = fleet.envelopes()
    terminal = envelopes[-1]
    # A cumulative delivery that *arrived* later, carrying older results, must not win.
    late = replace(envelopes[5], sent_at="2026-11-30T23:00:00Z")
    shuffled = [*envelopes[:-1], late]
    random.Random(7).shuffle(shuffled)
    view = assemble([terminal, *shuffled], source="x")
    assert view.phase_word == "Failed" and not view.incomplete
    assert len(view.results) == len(terminal.results)
    assert view.sent_at == terminal.sent_at


def test_M1_two_terminal_phases_are_refused() -> None:
    envelopes = fleet.envelopes()
    passed = fleet.envelopes(terminal="Passed")[-1]
    with pytest.raises(ReportInputError, match="more than one terminal phase"):
        assemble([*envelopes, passed], source="x")


def test_M1_without_a_terminal_envelope_the_latest_cumulative_one_is_shown_incomplete() -> None:
    envelopes = fleet.envelopes(terminal=None)
    view = assemble(envelopes, source="x")
    assert view.incomplete and view.phase_word == "Running"
    assert len(view.results) == len(fleet.fleet_results())
    assert view.finished_at is None
    assert "INCOMPLETE" in view.tags


def test_M1_checkpoints_are_ordered_by_sequence_and_never_a_verdict() -> None:
    envelopes = fleet.envelopes(checkpoints=(9, 2, 5))
    # Arrival order says nothing: the sequence (derived from the run's clock) orders them.
    late = {2: "2026-11-30T12:00:00Z", 5: "2026-11-30T11:00:00Z", 9: "2026-11-30T10:00:00Z"}
    envelopes = [
        replace(e, sent_at=late[e.checkpoint_sequence]) if e.reason == "Checkpoint" else e
        for e in envelopes
    ]
    view = assemble(list(reversed(envelopes)), source="x")
    assert [c.sequence for c in view.checkpoints] == [2, 5, 9]
    assert view.phase_word == "Failed"
    only_checkpoints = [e for e in envelopes if e.reason == "Checkpoint"]
    incomplete = assemble(only_checkpoints, source="x")
    assert incomplete.incomplete


def test_M1_strict_decoding_refuses_unknown_fields(tmp_path: Path) -> None:
    document = to_json(fleet.envelopes()[-1])
    document["results"][0]["attempts"] = []
    path = write(tmp_path / "e.json", document)
    code, _, err = invoke("--from-file", str(path), "-o", "junit", "--out", str(tmp_path))
    assert code == 2
    assert "results[0].attempts: unknown field" in err
    assert not (tmp_path / "junit.xml").exists()


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"version": "burnin.glimmer.ai/v1alpha1", "version": "x"}', "duplicate JSON key"),
        ('{"summary": NaN}', "JSON constant NaN"),
        ('{"version": "burnin.glimmer', "not valid JSON"),
        ("[]", "empty array"),
        ('{"version": "burnin.glimmer.ai/v1alpha1"}', "must be set"),
        ("[" * 100000 + "]" * 100000, "not valid JSON"),
        ('"just a string"', "expected an object"),
    ],
)
def test_M1_malformed_envelopes_are_refused_with_a_clear_error(
    tmp_path: Path, text: str, why: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    code, _, err = invoke("--from-file", str(path), "--out", str(tmp_path))
    assert code == 2, err
    assert why in err and "Traceback" not in err
    assert err.startswith("glimmer: error: ") and len(err.splitlines()) == 1


def test_M1_a_huge_input_is_refused_before_it_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    with path.open("wb") as handle:
        handle.truncate(MAX_INPUT_BYTES + 1)
    code, _, err = invoke("--from-file", str(path), "--out", str(tmp_path))
    assert code == 2 and "input limit" in err


def test_M1_a_huge_metric_value_is_refused_by_size_not_by_crash(tmp_path: Path) -> None:
    document = to_json(fleet.envelopes()[-1])
    document["results"][0]["metrics"]["miscompares"] = "9" * (MAX_INPUT_BYTES + 10)
    path = tmp_path / "big.json"
    path.write_text(json.dumps(document))
    code, _, err = invoke("--from-file", str(path), "--out", str(tmp_path))
    assert code == 2 and "limit" in err


def test_M1_results_dir_skips_non_json_files_and_refuses_json_non_envelopes(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "envelopes"
    folder.mkdir()
    for index, envelope in enumerate(fleet.envelopes()):
        (folder / f"{index:03d}-{envelope.reason}.json").write_bytes(encode(envelope))
    (folder / "README.txt").write_text("not an envelope")
    (folder / ".001.json.partial").write_text("{half")
    (folder / "sub").mkdir()
    view = assemble(from_results_dir(folder), source=str(folder))
    assert view.phase_word == "Failed" and len(view.results) == len(fleet.fleet_results())
    (folder / "notes.json").write_text(json.dumps({"kind": "ConfigMap"}))
    with pytest.raises(ReportInputError, match=r"notes\.json: not a delivery envelope"):
        from_results_dir(folder)


def test_M1_results_dir_with_nothing_to_report_is_refused(tmp_path: Path) -> None:
    (tmp_path / "README").write_text("x")
    with pytest.raises(ReportInputError, match="no envelope"):
        from_results_dir(tmp_path)


def test_M1_out_dash_refuses_multi_file_output(tmp_path: Path) -> None:
    path = write(tmp_path / "e.json", fleet.as_json(fleet.envelopes()))
    code, _, err = invoke("--from-file", str(path), "-o", "nvvs-json", "--out", "-")
    assert code == 2 and "give a directory" in err
    code, out, _ = invoke("--from-file", str(path), "-o", "markdown", "--out", "-")
    assert code == 0 and out.startswith("# Burn-in report: `burnin/fleet-acceptance`")


def test_M1_default_format_is_html_written_to_the_out_directory(tmp_path: Path) -> None:
    path = write(tmp_path / "e.json", fleet.as_json(fleet.envelopes()))
    code, _, err = invoke("--from-file", str(path), "--out", str(tmp_path / "out"))
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["burn-in-report.html"]


async def test_M1_run_reads_its_configmap_sinks_envelopes_and_fingerprints() -> None:
    other = fleet.envelopes(uid="0f0f0f0f-1111-4222-8333-444444444444")
    client, delivered = await cluster_with_run(extra=other)  # another run shares the sink
    view = await report_from_cluster(client, namespace=fleet.NAMESPACE, name=fleet.RUN_NAME)
    assert view.uid == delivered[-1].run.uid and view.phase_word == "Failed"
    assert len(view.results) == len(fleet.fleet_results())
    assert view.gates_from_plan and len(view.gates) == 4
    assert {g.metric: g.value for g in view.gates}["sustainedThroughputTflops"] == "600"
    assert [i.node for i in view.identities] == list(fleet.NODES)
    assert [i.node for i in view.identities if i.drifted] == ["gpu-node-03"]
    assert all(r.required is True for r in view.results)
    assert_every_format_agrees(view, phases_of(fleet.fleet_results()))


async def test_M1_run_without_a_configmap_sink_is_refused() -> None:
    client, _ = await cluster_with_run(sinks=[sink("verdicts", type_="Webhook")])
    with pytest.raises(ReportInputError, match="has no ConfigMap sink"):
        await report_from_cluster(client, namespace=fleet.NAMESPACE, name=fleet.RUN_NAME)


async def test_M1_run_with_an_undecodable_sink_entry_is_refused() -> None:
    client, _ = await cluster_with_run()
    from glimmer.sinks.configmap import store
    from tests.unit.report.report_cluster import verdicts_owner

    await store(
        client,
        namespace=fleet.NAMESPACE,
        name="verdicts-cm",
        owner=await verdicts_owner(client),
        key="zzz",
        value='{"version": "burnin.glimmer.ai/v1alpha1", "surprise": 1}',
    )
    with pytest.raises(ReportInputError, match="key zzz: not a delivery envelope: surprise"):
        await report_from_cluster(client, namespace=fleet.NAMESPACE, name=fleet.RUN_NAME)


async def test_M1_missing_run_is_refused() -> None:
    client, _ = await cluster_with_run()
    with pytest.raises(ReportInputError, match="not found"):
        await report_from_cluster(client, namespace=fleet.NAMESPACE, name="nope")


def test_M1_run_ref_must_be_namespace_slash_name() -> None:
    code, _, err = invoke("--run", "ns/a/b")
    assert code == 2 and "expected <namespace>/<name>" in err

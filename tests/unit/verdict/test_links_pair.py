"""Pair combination (F2, F3, F9): two runners' reports -> one report, judged once."""

from __future__ import annotations

import itertools

import pytest

from glimmer.contract import Outcome, RunnerReport
from glimmer.verdict import Phase, combine_pair, judge_attempt
from glimmer.verdict.dissent import MAX_LINE_CHARS, MAX_SUMMARY_BYTES, SUMMARY_SUFFIX
from tests.unit.verdict.helpers import gte
from tests.unit.verdict.links_builders import artifact, parsed, report, side

LEVELS = ["Error", "Fail", "Skip", "Pass"]


def _pair(
    server_rep: RunnerReport | None, client_rep: RunnerReport | None, *, overdue: bool = False
) -> RunnerReport:
    return combine_pair(
        server=side("server", "node-a", server_rep),
        client=side("client", "node-b", client_rep),
        overdue=overdue,
    )


# F2 -------------------------------------------------------------------------------


def test_F2_server_pass_before_the_client_existed_is_error_no_traffic_crossed() -> None:
    combined = combine_pair(
        server=side("server", "node-a", report("Pass", metrics={"bw": "9"}, message="SRV_OK")),
        client=None,
    )
    assert combined.outcome is Outcome.ERROR
    assert "no traffic crossed" in combined.message
    verdict = judge_attempt(combined, kind="custom", thresholds=[gte("bw", "1")])
    assert verdict.phase is Phase.ERROR


@pytest.mark.parametrize(
    ("outcome", "code", "phase"),
    [("Fail", 1, Phase.FAILED), ("Skip", 2, Phase.SKIPPED), ("Error", 3, Phase.ERROR)],
)
def test_F2_server_fail_skip_error_before_the_client_existed_stands(
    outcome: str, code: int, phase: Phase
) -> None:
    combined = combine_pair(
        server=side("server", "node-a", report(outcome, message="SRV_LINE")), client=None
    )
    assert combined.outcome is Outcome(outcome)
    assert combined.exit_code == code
    assert combined.skip_declared is (outcome == "Skip")
    assert "server node-a" in combined.message and "SRV_LINE" in combined.message
    assert judge_attempt(combined, kind="custom", thresholds=[]).phase is phase


def test_F2_a_declared_server_skip_skips_the_pair_from_real_output() -> None:
    rep = parsed("GPUDIRECT_RDMA_SKIP: GB10 has no GPUDirect\n", exit_code=2)
    combined = combine_pair(server=side("server", "node-a", rep), client=None)
    assert judge_attempt(combined, kind="gpudirect-rdma", thresholds=[]).phase is Phase.SKIPPED


def test_F2_an_undeclared_exit_2_server_stays_error() -> None:
    rep = parsed("panic: runtime error\n", exit_code=2)
    combined = combine_pair(server=side("server", "node-a", rep), client=None)
    verdict = judge_attempt(combined, kind="custom", thresholds=[])
    assert verdict.phase is Phase.ERROR
    assert verdict.undeclared_skip


def test_F2_server_that_ended_without_a_report_before_the_client_is_error() -> None:
    combined = combine_pair(server=side("server", "node-a", None), client=None)
    assert combined.outcome is Outcome.ERROR
    assert combined.exit_code == -1
    assert "did not report" in combined.message


def test_F2_overdue_pair_is_error_and_harvests_nothing() -> None:
    combined = _pair(
        report("Pass", metrics={"bw": "9"}, artifacts=(artifact("s.json"),)),
        None,
        overdue=True,
    )
    assert combined.outcome is Outcome.ERROR
    assert combined.exit_code == 0  # P9: synthetic Errors record exit 0
    assert combined.metrics == {} and combined.artifacts == ()
    assert "deadline" in combined.message
    assert judge_attempt(combined, kind="custom", thresholds=[gte("bw", "1")]).phase is Phase.ERROR


def test_F9_early_server_artifacts_come_from_the_server_alone() -> None:
    combined = combine_pair(
        server=side("server", "node-a", report("Fail", artifacts=(artifact("s.json"),))),
        client=None,
    )
    assert [a.name for a in combined.artifacts] == ["s.json"]


# F3 -------------------------------------------------------------------------------


def _expected(server_level: str, client_level: str) -> str:
    for level in LEVELS:
        if level in (client_level, server_level):
            return level
    raise AssertionError


@pytest.mark.parametrize(("server_level", "client_level"), list(itertools.product(LEVELS, LEVELS)))
def test_F3_precedence_error_fail_skip_pass_exit_code_from_the_deciding_side(
    server_level: str, client_level: str
) -> None:
    server_code = {"Error": 137, "Fail": 1, "Skip": 2, "Pass": 0}[server_level]
    client_code = {"Error": 3, "Fail": 1, "Skip": 2, "Pass": 0}[client_level]
    combined = _pair(
        report(server_level, exit_code=server_code),
        report(client_level, exit_code=client_code),
    )
    expected = _expected(server_level, client_level)
    assert combined.outcome is Outcome(expected)
    decider_code = client_code if client_level == expected else server_code
    assert combined.exit_code == decider_code


def test_F3_client_is_checked_first_at_each_level() -> None:
    combined = _pair(report("Error", exit_code=143), report("Error", exit_code=3))
    assert combined.exit_code == 3
    assert "decided by the client" in combined.message
    skip = _pair(report("Skip", message="S_SKIP: server"), report("Skip", message="C_SKIP: client"))
    assert "decided by the client" in skip.message


def test_F3_client_wins_shared_keys_metrics_are_server_then_client() -> None:
    combined = _pair(
        report(metrics={"bw": "1", "serverOnly": "s"}),
        report(metrics={"bw": "2", "clientOnly": "c"}),
    )
    assert combined.metrics == {"bw": "2", "serverOnly": "s", "clientOnly": "c"}
    assert list(combined.metrics) == ["bw", "serverOnly", "clientOnly"]


def test_F3_unmeasurable_are_names_declared_that_no_side_measured() -> None:
    combined = _pair(
        report(metrics={"x": "1"}, na={"y", "z"}),
        report(metrics={"y": "2"}, na={"x", "w"}),
    )
    assert combined.unmeasurable == {"z", "w"}
    assert combined.metrics == {"x": "1", "y": "2"}
    assert not combined.unmeasurable & combined.metrics.keys()


def test_F3_only_the_client_reported_gives_its_verdict_and_names_the_silent_server() -> None:
    combined = _pair(None, report("Pass", metrics={"bw": "9"}, message="CLIENT_OK"))
    assert combined.outcome is Outcome.PASS
    assert "server node-a did not report" in combined.message
    assert "client node-b Pass (exit 0): CLIENT_OK" in combined.message
    verdict = judge_attempt(combined, kind="custom", thresholds=[gte("bw", "5")])
    assert verdict.phase is Phase.PASSED
    assert "did not report" in verdict.message


def test_F3_a_client_that_did_not_report_is_error_whatever_the_server_said() -> None:
    for server_level in LEVELS:
        combined = _pair(report(server_level), None)
        assert combined.outcome is Outcome.ERROR
        assert combined.exit_code == -1
        assert "client node-b did not report" in combined.message


def test_F3_message_leads_with_the_link_and_names_each_side() -> None:
    combined = _pair(
        report("Pass", message="TCP_BASELINE_PASS"),
        report("Fail", message="TCP_BASELINE_FAIL: 3 Gbps"),
    )
    assert combined.message.startswith("link verdict Fail: about the LINK")
    assert "server node-a Pass (exit 0): TCP_BASELINE_PASS" in combined.message
    assert "client node-b Fail (exit 1): TCP_BASELINE_FAIL: 3 Gbps" in combined.message


def test_F3_each_sides_line_is_cut_and_the_message_is_bounded() -> None:
    huge = "x" * 1_000_000
    combined = combine_pair(
        server=side("server", "n" * 10_000, report("Pass", message=huge)),
        client=side("client", "node-b", report("Pass", message=huge)),
    )
    assert "x" * MAX_LINE_CHARS not in combined.message
    assert len(combined.message.encode()) <= MAX_SUMMARY_BYTES + len(SUMMARY_SUFFIX.encode())


def test_F3_invalid_names_deduped_and_sorted() -> None:
    combined = _pair(report(invalid=("zz_a", "bad_b")), report(invalid=("bad_b", "aa_c")))
    assert combined.invalid_names == ("aa_c", "bad_b", "zz_a")
    assert combined.invalid_name_count == 3


def test_F3_invalid_name_count_never_undercounts_unlisted_names() -> None:
    combined = _pair(report(invalid=("a_b",), invalid_count=5), report(invalid=("a_b",)))
    assert combined.invalid_names == ("a_b",)
    assert combined.invalid_name_count == 5


@pytest.mark.parametrize(
    ("server_p", "client_p", "expected"),
    [
        ("silicon", "silicon", "silicon"),
        ("silicon", "sim", "sim"),
        ("sim", "silicon", "sim"),
        ("silicon", None, "unknown"),
        (None, "silicon", "unknown"),
        ("unknown", "silicon", "unknown"),
        (None, None, "unknown"),
    ],
)
def test_F3_provenance_is_the_weakest_side_and_unknown_when_nobody_declared(
    server_p: str | None, client_p: str | None, expected: str | None
) -> None:
    combined = _pair(report(provenance=server_p), report(provenance=client_p))
    assert combined.declared_provenance == expected


def test_F3_a_silent_server_makes_the_link_unknown_never_silicon() -> None:
    assert _pair(None, report(provenance="silicon")).declared_provenance == "unknown"


def test_F3_unreadable_lines_add_up_so_one_sides_cut_output_makes_a_pass_error() -> None:
    combined = _pair(report(unreadable=1), report(metrics={"bw": "9"}))
    assert combined.unreadable_lines == 1
    verdict = judge_attempt(combined, kind="custom", thresholds=[gte("bw", "1")])
    assert verdict.phase is Phase.ERROR


def test_F3_artifacts_from_both_sides_in_side_order() -> None:
    combined = _pair(
        report(artifacts=(artifact("s1"), artifact("s2"))),
        report(artifacts=(artifact("c1"),)),
    )
    assert [a.name for a in combined.artifacts] == ["s1", "s2", "c1"]
    assert [a.name for a in combined.artifacts_in_order] == ["s1", "s2", "c1"]


def test_F3_nothing_measured_on_either_side_is_an_empty_harvest_error() -> None:
    combined = _pair(report("Pass"), report("Pass"))
    assert combined.harvested_nothing
    verdict = judge_attempt(combined, kind="custom", thresholds=[gte("bw", "1")])
    assert verdict.phase is Phase.ERROR and verdict.empty_harvest


def test_F3_thresholds_gate_the_combined_metrics() -> None:
    low = _pair(report(metrics={"bw": "100"}), report(metrics={"bw": "3"}))
    verdict = judge_attempt(low, kind="custom", thresholds=[gte("bw", "10")])
    assert verdict.phase is Phase.FAILED
    assert verdict.message.startswith("bw: got 3, need GreaterThanOrEqual 10")


def test_F3_a_real_tcp_pair_from_runner_output() -> None:
    srv = parsed("tcp_test_interface=lo\nTCP_BASELINE_SERVER_DONE\n", kind="tcp-baseline")
    cli = parsed(
        "tcp_throughput_gbps=9.4\ntcp_retransmits=0\ntcp_rtt_us=40\nTCP_BASELINE_PASS\n",
        kind="tcp-baseline",
    )
    combined = combine_pair(
        server=side("server", "node-a", srv), client=side("client", "node-b", cli)
    )
    verdict = judge_attempt(
        combined, kind="tcp-baseline", thresholds=[gte("tcpThroughputGbps", "5")]
    )
    assert verdict.phase is Phase.PASSED
    assert verdict.metrics["tcpTestInterface"] == "lo"

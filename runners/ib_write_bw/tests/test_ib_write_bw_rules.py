"""ib-write-bw's rules through the silicon path: a real RLIMIT_MEMLOCK, a sysfs tree, and
stand-in perftest binaries that print recorded (constructed) reports (fixtures/README.md).

Both sides run as real processes on loopback with ``ulimit -l 8192`` (containerd's
8 MiB): the runner must read the limit, shrink to fit, and report the size it used.
"""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest

from runners.catalog import RUNNERS
from runners.conformance import Execution, execute_together, loopback_addresses
from runners.sdk.memlock import MIN_MESSAGE_BYTES, PINNED_HEADROOM_BYTES, fit
from runners.sdk.outcome import RunnerError
from runners.sdk.perftest import PerftestOutputError, parse_bandwidth, parse_latency

FIXTURES = Path(__file__).parent / "fixtures"
MIB = 1 << 20


def _node(tmp_path: Path, *, fixture: str, exit_code: int, want: str) -> dict[str, str]:
    """A sysfs with one ACTIVE 100G port and an ib_write_bw that checks its arguments."""
    port = tmp_path / "sys" / "class" / "infiniband" / "mlx5_0" / "ports" / "1"
    port.mkdir(parents=True)
    (port / "state").write_text("4: ACTIVE\n")
    (port / "link_layer").write_text("InfiniBand\n")
    (port / "rate").write_text("100 Gb/sec (4X EDR)\n")
    tools = tmp_path / "bin"
    tools.mkdir()
    tool = tools / "ib_write_bw"
    tool.write_text(
        "#!/bin/sh\n"
        f'case " $* " in *" {want} "*) ;; *) echo "unexpected arguments: $*" >&2; exit 9;; esac\n'
        f"cat '{FIXTURES / fixture}'\nexit {exit_code}\n"
    )
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    return {"BURNIN_SYSFS_ROOT": str(tmp_path / "sys"), "BURNIN_FABRIC_TOOLS_DIR": str(tools)}


def _pair(tmp_path: Path, *, fixture: str, exit_code: int = 0, want: str) -> list[Execution]:
    spec = RUNNERS["ib-write-bw"]
    server_ip, client_ip = loopback_addresses(2)
    node = _node(tmp_path, fixture=fixture, exit_code=exit_code, want=want)
    common = {
        **spec.test_env,
        **node,
        "BURNIN_LINK_FLOOR_PCT": "90",
        "BURNIN_VARIANT_MEASURAND": "bandwidth",
    }
    envs = [
        {**common, "BURNIN_ROLE": "server", "BURNIN_PEER_HOST": client_ip,
         "BURNIN_PEER_NODE": "node-c", "BURNIN_LISTEN_ADDRESS": server_ip},
        {**common, "BURNIN_ROLE": "client", "BURNIN_PEER_HOST": server_ip,
         "BURNIN_PEER_NODE": "node-s", "BURNIN_LISTEN_ADDRESS": client_ip},
    ]  # fmt: skip
    command = ("sh", "-c", f"ulimit -l 8192 && exec {sys.executable} -m runners.ib_write_bw")
    return execute_together(command, kind="ib-write-bw", envs=envs, timeout_s=60)


def test_memlock_8mib_is_read_and_shrinks_to_a_still_measured_pass(tmp_path: Path) -> None:
    runs = _pair(tmp_path, fixture="ib_write_bw-100g-shrunk.txt", want="-s 524288")
    for run in runs:
        report = run.report
        assert run.exit_code == 0, run.stdout + run.stderr
        assert report.metrics["memlockLimit"] == "8388608"
        assert report.metrics["memlockShrunk"] == "true"
        assert report.metrics["rdmaMessageBytes"] == "524288"
        assert report.metrics["rdmaQueuePairs"] == "4"
        assert report.metrics["bandwidthGbps"] == "99.59"  # the seed's figure, the average
        assert "peakBandwidthGbps" not in report.metrics
        assert "shrunk" in run.stdout


def test_a_registration_failure_is_error_naming_rlimit_memlock_and_the_fix(tmp_path: Path) -> None:
    runs = _pair(tmp_path, fixture="ib_write_bw-memlock.txt", exit_code=1, want="-s 524288")
    for run in runs:
        assert run.exit_code == 3
        for words in ("RLIMIT_MEMLOCK", "8388608 bytes", "LimitMEMLOCK=infinity"):
            assert words in run.report.message
        assert "bandwidthGbps" not in run.report.metrics


def test_fit_shrinks_the_message_first_then_the_queue_pairs() -> None:
    reg = fit(size=MIB, queue_pairs=4, limit=8 * MIB, tool="ib_write_bw")
    assert (reg.size, reg.queue_pairs, reg.shrunk) == (512 * 1024, 4, True)
    tight = PINNED_HEADROOM_BYTES + 256 * 1024
    reg = fit(size=MIB, queue_pairs=4, limit=tight, tool="ib_write_bw")
    assert (reg.size, reg.queue_pairs) == (MIN_MESSAGE_BYTES, 2)
    assert reg.size * reg.queue_pairs * 2 + PINNED_HEADROOM_BYTES <= tight


def test_fit_keeps_the_request_when_the_limit_allows_it() -> None:
    for limit in (None, 64 * MIB):
        reg = fit(size=MIB, queue_pairs=4, limit=limit, tool="ib_write_bw")
        assert (reg.size, reg.queue_pairs, reg.shrunk) == (MIB, 4, False)


def test_a_limit_too_small_for_any_measurement_is_error_naming_it() -> None:
    with pytest.raises(RunnerError, match=r"RLIMIT_MEMLOCK is 65536 bytes .*LimitMEMLOCK=infinity"):
        fit(size=MIB, queue_pairs=4, limit=65536, tool="ib_write_bw")


def test_a_report_in_mb_per_sec_is_refused_not_converted() -> None:
    with pytest.raises(PerftestOutputError, match="MB/sec"):
        parse_bandwidth((FIXTURES / "ib_write_bw-mbsec.txt").read_text())


def test_recorded_reports_parse_to_average_bandwidth_and_latency() -> None:
    bw = parse_bandwidth((FIXTURES / "ib_write_bw-100g-shrunk.txt").read_text())
    assert (bw.size, bw.average_gbps, bw.peak_gbps) == (524288, 99.59, 99.71)
    lat = parse_latency((FIXTURES / "ib_write_lat.txt").read_text())
    assert (lat.average_us, lat.p99_us, lat.min_us, lat.max_us) == (1.03, 1.19, 0.98, 4.21)


@pytest.mark.parametrize(
    "text",
    [
        "",
        " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n",
        " #bytes #iterations BW peak[Gb/sec] BW average[Gb/sec] MsgRate[Mpps]\n"
        " 65536 5000 nan 97 0.1\n",
        " #bytes #iterations BW peak[Gb/sec] BW average[Gb/sec] MsgRate[Mpps]\n 65536 5000 97\n",
    ],
)
def test_truncated_or_non_finite_reports_are_refused(text: str) -> None:
    with pytest.raises(PerftestOutputError):
        parse_bandwidth(text)

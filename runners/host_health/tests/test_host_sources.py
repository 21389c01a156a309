"""host-health against real files standing in for /dev/kmsg and sysfs (no simulator).

Here NVML is absent (no GPU library in CI), which is itself a rule under test: with the
GPU driver unusable and nothing found, host-health is an Error, never a pass.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from glimmer.contract import read_report
from runners.host_health.xid import parse_xid

XID = "3,812,99,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=x, GPU has fallen off the bus.\n"


def nic_tree(root: Path, *, carrier_down: int) -> None:
    nic = root / "class/net/eth0"
    (nic / "device").mkdir(parents=True, exist_ok=True)
    (nic / "device/vendor").write_text("0x15b3\n")
    (nic / "carrier_down_count").write_text(f"{carrier_down}\n")
    (root / "class/net/lo").mkdir(parents=True, exist_ok=True)


def start(env: dict[str, str]) -> subprocess.Popen[bytes]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("BURNIN_", "GLIMMER_"))}
    full.update(env)
    return subprocess.Popen(
        [sys.executable, "-m", "runners.host_health"], env=full, stdout=subprocess.PIPE
    )


def finish(proc: subprocess.Popen[bytes]):
    out, _ = proc.communicate(timeout=30)
    return read_report(out, kind="host-health", exit_code=proc.returncode)


def test_xid_records_are_recognised_and_prose_is_not() -> None:
    event = parse_xid(XID)
    assert event is not None and event.code == 79 and event.bus == "0000:3b:00"
    assert parse_xid("6,1,1,-;nvidia: Xid mentioned in passing") is None


def test_xid_arriving_during_the_window_is_a_fault_and_backlog_is_preexisting(
    tmp_path: Path,
) -> None:
    kmsg = tmp_path / "kmsg"
    kmsg.write_text(XID)  # already in the log before the window: preexisting
    nic_tree(tmp_path / "sys", carrier_down=0)
    proc = start(
        {
            "BURNIN_KMSG_PATH": str(kmsg),
            "BURNIN_SYSFS_ROOT": str(tmp_path / "sys"),
            "BURNIN_HOST_HEALTH_WINDOW_SECONDS": "2.5",
        }
    )
    time.sleep(1.0)
    with kmsg.open("a") as log:
        log.write(XID.replace("79,", "48,"))
    report = finish(proc)
    assert report.exit_code == 1, report.message
    assert report.metrics["xidEvents"] == "1"
    assert report.metrics["xidPreexisting"] == "1"
    assert report.metrics["lastXidCode"] == "48"
    assert report.message.startswith("HOST_HEALTH_FAULT:")


def test_nic_link_down_during_the_window_is_a_fault(tmp_path: Path) -> None:
    root = tmp_path / "sys"
    nic_tree(root, carrier_down=4)
    proc = start(
        {
            "BURNIN_KMSG_PATH": str(tmp_path / "absent"),
            "BURNIN_SYSFS_ROOT": str(root),
            "BURNIN_HOST_HEALTH_WINDOW_SECONDS": "2.5",
        }
    )
    time.sleep(1.0)
    nic_tree(root, carrier_down=5)
    report = finish(proc)
    assert report.exit_code == 1, report.message
    assert report.metrics["nicLinkDownEvents"] == "1"


def test_unreadable_kmsg_omits_xid_events_and_never_prints_a_zero(tmp_path: Path) -> None:
    root = tmp_path / "sys"
    nic_tree(root, carrier_down=0)
    report = finish(
        start(
            {
                "BURNIN_KMSG_PATH": str(tmp_path / "absent"),
                "BURNIN_SYSFS_ROOT": str(root),
                "BURNIN_HOST_HEALTH_WINDOW_SECONDS": "0.2",
            }
        )
    )
    assert report.metrics["xidSource"] == "none"
    assert "xidEvents" not in report.metrics
    # GPU driver unusable and nothing found: Error, not a pass on the NIC counter alone.
    assert report.exit_code == 3
    assert report.message.startswith("HOST_HEALTH_ERROR:")

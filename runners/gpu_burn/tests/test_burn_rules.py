"""gpu-burn's rules: what counts as a miscompare, a silent corruption, a throttle event,
an ECC fault of the window, and what it prints when it cannot look."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from runners.gpu_burn import runner as gpu_burn
from runners.gpu_burn.burn import DeviceBurn
from runners.sdk.clocks import ClockSample as Sample
from runners.sdk.gpus import DeviceSlot
from runners.sdk.outcome import RunnerError
from runners.sdk.protocols import GemmCheck, GpuDevice, Nvml
from runners.tests.fake_tools import run_module
from runners.tests.inprocess_harness import WrappedCompute, run_in_process, simulated

SLOT = DeviceSlot(index=0, pci_bus_id="00000000:18:00.0", name="NVIDIA H200")


def tally() -> DeviceBurn:
    return DeviceBurn(slot=SLOT, rated_sm_mhz=1980, ecc_mode="enabled", ecc_before=0)


def check(*, nonfinite: int = 0, error: float | None = 0.004, ref: float | None = 1.0) -> GemmCheck:
    return GemmCheck(
        precision="bf16",
        shape=(4096, 4096, 4096),
        nonfinite=nonfinite,
        max_abs_error=error,
        max_abs_ref=ref,
    )


def test_finite_but_wrong_result_is_a_miscompare_and_a_silent_corruption() -> None:
    burn = tally()
    burn.record(check(error=0.5))
    assert (burn.miscompares, burn.sdc, burn.nonfinite) == (1, 1, 0)


def test_nonfinite_result_is_a_miscompare_but_not_a_silent_one() -> None:
    burn = tally()
    burn.record(check(nonfinite=7, error=0.5))  # the finite elements are wrong too
    assert (burn.miscompares, burn.sdc, burn.nonfinite) == (1, 0, 7)


def test_result_within_tolerance_is_no_miscompare() -> None:
    burn = tally()
    burn.record(check(error=0.004))
    assert (burn.miscompares, burn.sdc, burn.checks) == (0, 0, 1)


def test_fail_closed_a_check_with_nothing_comparable_is_an_error_not_a_clean_check() -> None:
    with pytest.raises(RunnerError, match="no comparable output"):
        tally().record(check(error=None, ref=None))


def test_a_run_of_throttled_samples_is_one_throttle_event() -> None:
    burn = tally()
    for reasons in (0x0, 0x20, 0x40, 0x0, 0x4, 0x1):
        burn.clocks.add(Sample(sm_mhz=1500, reasons=reasons, temp_c=80.0, power_w=600.0))
    assert burn.clocks.throttle_events == 2  # idle (0x1) is not a throttle
    assert burn.clocks.throttled_samples == 3


def _sdc_on_device_1(device: int, precision: str, real: GemmCheck | None, call: int) -> GemmCheck:
    assert real is not None
    if device == 1 and call % 3 == 0:
        return dataclasses.replace(real, max_abs_error=(real.max_abs_ref or 1.0) * 0.5)
    return real


def test_intermittent_silent_corruption_fails_and_names_the_faulty_gpu() -> None:
    base = simulated("h200x2")
    wrapped = WrappedCompute(base.compute(), check=_sdc_on_device_1)
    platform = dataclasses.replace(base, _compute=lambda: wrapped)
    report, _ = run_in_process(
        kind="gpu-burn",
        prefix="GPU_BURN",
        measure=gpu_burn.measure,
        platform=platform,
        env={"BURNIN_DURATION_SECONDS": "60"},
    )
    assert report.exit_code == 1, report.message
    assert report.metrics["sdcDetections"] == report.metrics["miscompares"] == "4"
    assert report.metrics["worstDeviceIndex"] == "1"
    assert report.message.startswith("GPU_BURN_FAIL: GPU 1")


class _EccRisingDevice:
    """A simulated device whose uncorrected ECC count rises once the load has run."""

    def __init__(self, inner: GpuDevice) -> None:
        self._inner = inner
        self._reads = 0

    def __getattr__(self, name: str) -> object:
        return getattr(self._inner, name)

    def uncorrected_ecc_total(self) -> int:
        self._reads += 1
        return 0 if self._reads == 1 else 3


class _Nvml:
    def __init__(self, inner: Nvml, faulty: int) -> None:
        self._inner = inner
        self._faulty = faulty
        self._devices: dict[int, Any] = {}

    def driver_version(self) -> str:
        return self._inner.driver_version()

    def device_count(self) -> int:
        return self._inner.device_count()

    def device(self, index: int) -> Any:
        if index not in self._devices:
            real = self._inner.device(index)
            self._devices[index] = _EccRisingDevice(real) if index == self._faulty else real
        return self._devices[index]


def test_uncorrectable_ecc_errors_during_the_load_fail_it() -> None:
    base = simulated("h200x2")
    nvml = _Nvml(base.nvml(), faulty=1)
    platform = dataclasses.replace(base, _nvml=lambda: nvml)
    report, _ = run_in_process(
        kind="gpu-burn",
        prefix="GPU_BURN",
        measure=gpu_burn.measure,
        platform=platform,
        env={"BURNIN_DURATION_SECONDS": "20"},
    )
    assert report.exit_code == 1, report.message
    assert "uncorrectable ECC errors during the load" in report.message
    assert report.metrics["worstDeviceIndex"] == "1"
    assert report.metrics["eccErrors"] == "3"


def test_A8_ecc_is_na_on_a_part_that_cannot_report_it() -> None:
    report = run_module(
        "runners.gpu_burn",
        kind="gpu-burn",
        env={"GLIMMER_SIM_GPU": "gb10", "BURNIN_DURATION_SECONDS": "20"},
    )
    assert report.exit_code == 0, report.message
    assert "eccErrors" in report.unmeasurable and "eccErrors" not in report.metrics
    assert report.metrics["eccMode"] == "unsupported"


def test_xid_watch_is_opt_in_and_never_printed_as_zero_when_off() -> None:
    env = {"GLIMMER_SIM_GPU": "h200x2:xid:79", "BURNIN_DURATION_SECONDS": "20"}
    off = run_module("runners.gpu_burn", kind="gpu-burn", env=env)
    assert off.exit_code == 0 and "xidEvents" not in off.metrics
    assert "xidEvents" not in off.unmeasurable
    on = run_module(
        "runners.gpu_burn", kind="gpu-burn", env={**env, "BURNIN_GPU_BURN_WATCH_XID": "true"}
    )
    assert on.exit_code == 1 and on.metrics["xidEvents"] == "1"
    assert on.metrics["worstDeviceIndex"] == "1"


def test_A16_unknown_watch_setting_is_refused() -> None:
    report = run_module(
        "runners.gpu_burn",
        kind="gpu-burn",
        env={"GLIMMER_SIM_GPU": "h200", "BURNIN_GPU_BURN_WATCH_XID": "yes"},
    )
    assert report.exit_code == 3


def test_A9_running_totals_are_reprinted_as_the_load_runs() -> None:
    _, text = run_in_process(
        kind="gpu-burn",
        prefix="GPU_BURN",
        measure=gpu_burn.measure,
        platform=simulated("h200"),
        env={"BURNIN_DURATION_SECONDS": "60"},
    )
    lines = text.splitlines()
    # Every 15 s of the 60 s window, then once more with the final figures.
    assert sum(line.startswith("miscompares=") for line in lines) == 4
    assert sum(line.startswith("elapsedS=") for line in lines) == 4
    assert lines[-1] == "GPU_BURN_PASS"


def test_a_device_tally_holds_no_per_sample_state_however_long_the_window() -> None:
    """A week-long soak samples each GPU 604,800 times: the tally folds each sample and
    keeps none, so a re-print of the running totals never re-walks the window."""
    burn = tally()
    for second in range(5000):
        burn.clocks.add(Sample(sm_mhz=1900 + second % 7, reasons=0x0, temp_c=70.0, power_w=600.0))
    state = dataclasses.asdict(burn)
    assert all(not isinstance(value, list | tuple | dict) for value in state["clocks"].values())
    assert not any(isinstance(value, list) for value in state.values())
    assert burn.clocks.count == 5000


def test_A9_a_simulated_day_reprints_its_totals_and_counts_every_sample() -> None:
    report, text = run_in_process(
        kind="gpu-burn",
        prefix="GPU_BURN",
        measure=gpu_burn.measure,
        platform=simulated("h200"),
        env={"BURNIN_DURATION_SECONDS": "86400"},
    )
    assert float(report.metrics["samplesTaken"]) == 86400
    assert float(report.metrics["elapsedS"]) == 86400
    # Every 15 s before the end (15 ... 86385 s), then once more with the final figures.
    assert sum(line.startswith("elapsedS=") for line in text.splitlines()) == 86400 // 15

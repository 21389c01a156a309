"""NVML errors are translated to the seam's meanings (lost / unsupported / driver broken).

A fake ``pynvml`` module stands in for nvidia-ml-py, so this runs without a GPU or the
package; it checks only the translation, which is the part that decides exit codes.
"""

from __future__ import annotations

import types
from typing import Any

import pytest

from runners.sdk.protocols import (
    ClockKind,
    DriverUnavailableError,
    GpuLostError,
    NotSupportedError,
)


def fake_pynvml(**calls: Any) -> types.ModuleType:
    module = types.ModuleType("pynvml")

    class NVMLError(Exception):
        pass

    for name in ("GpuIsLost", "NotSupported", "FunctionNotFound", "NoPermission"):
        setattr(module, f"NVMLError_{name}", type(f"NVMLError_{name}", (NVMLError,), {}))
    module.NVMLError = NVMLError
    module.NVML_CLOCK_SM = 1
    module.NVML_CLOCK_MEM = 2
    module.nvmlInit = lambda: None
    module.nvmlDeviceGetHandleByIndex = lambda index: ("handle", index)
    for name, fn in calls.items():
        setattr(module, name, fn)
    return module


def raising(module_attr: str):
    def call(*args: Any) -> Any:
        import sys

        raise getattr(sys.modules["pynvml"], module_attr)()

    return call


def device(monkeypatch: pytest.MonkeyPatch, **calls: Any):
    monkeypatch.setitem(__import__("sys").modules, "pynvml", fake_pynvml(**calls))
    from runners.sdk.silicon.nvml import SiliconNvml

    return SiliconNvml().device(0)


def test_gpu_is_lost_becomes_gpu_lost(monkeypatch: pytest.MonkeyPatch) -> None:
    dev = device(monkeypatch, nvmlDeviceGetName=raising("NVMLError_GpuIsLost"))
    with pytest.raises(GpuLostError):
        dev.name()


def test_not_supported_becomes_not_supported(monkeypatch: pytest.MonkeyPatch) -> None:
    dev = device(monkeypatch, nvmlDeviceGetEccMode=raising("NVMLError_NotSupported"))
    with pytest.raises(NotSupportedError):
        dev.ecc_enabled()


def test_other_nvml_errors_mean_the_driver_cannot_be_used(monkeypatch: pytest.MonkeyPatch) -> None:
    dev = device(monkeypatch, nvmlDeviceGetClockInfo=raising("NVMLError_NoPermission"))
    with pytest.raises(DriverUnavailableError):
        dev.clock_mhz(ClockKind.SM)


def test_values_pass_through_with_units_converted(monkeypatch: pytest.MonkeyPatch) -> None:
    dev = device(
        monkeypatch,
        nvmlDeviceGetPowerUsage=lambda handle: 512_000,
        nvmlDeviceGetClockInfo=lambda handle, kind: 1980 if kind == 1 else 3201,
        nvmlDeviceGetName=lambda handle: b"NVIDIA H200",
    )
    assert dev.power_draw_w() == 512.0
    assert (dev.clock_mhz(ClockKind.SM), dev.clock_mhz(ClockKind.MEM)) == (1980, 3201)
    assert dev.name() == "NVIDIA H200"

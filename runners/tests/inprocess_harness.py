"""Running a load runner in-process on the simulated GPU with one source replaced.

Why in-process: a rule such as "a finite but wrong result is a silent corruption" needs a
fault the simulator's fault list does not carry; wrapping one protocol object of the
simulated platform injects it without touching the runner, which still sees only the seam.
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from glimmer.contract import RunnerReport, read_report
from runners.sdk.entry import RunnerContext, guarded_main
from runners.sdk.outcome import Verdict
from runners.sdk.platform import open_platform
from runners.sdk.protocols import Compute, GemmCheck, LoadHandle, Platform
from runners.sdk.report import Markers, Report


class WrappedCompute:
    """Delegates to the simulated compute; ``check`` may rewrite a GEMM check."""

    def __init__(
        self,
        inner: Compute,
        *,
        check: Callable[[int, str, GemmCheck | None, int], GemmCheck] | None = None,
        refuse: Exception | None = None,
    ) -> None:
        self._inner = inner
        self._rewrite = check
        self._refuse = refuse
        self.calls: dict[int, int] = {}

    def device_count(self) -> int:
        return self._inner.device_count()

    def built_arch_list(self) -> list[str]:
        return self._inner.built_arch_list()

    def gemm_check(self, *, device: int, precision: str, size: int) -> GemmCheck:
        if self._refuse is not None:
            raise self._refuse
        self.calls[device] = self.calls.get(device, 0) + 1
        real = self._inner.gemm_check(device=device, precision=precision, size=size)
        if self._rewrite is None:
            return real
        return self._rewrite(device, precision, real, self.calls[device])

    def gemm_throughput_tflops(
        self, *, device: int, precision: str, size: int, seconds: float
    ) -> float:
        if self._refuse is not None:
            raise self._refuse
        return self._inner.gemm_throughput_tflops(
            device=device, precision=precision, size=size, seconds=seconds
        )

    def start_load(self, devices: Sequence[int]) -> LoadHandle:
        return self._inner.start_load(devices)

    def copy_bandwidth_gbs(
        self, *, device: int, direction: str, nbytes: int, repeats: int
    ) -> float:
        return self._inner.copy_bandwidth_gbs(
            device=device, direction=direction, nbytes=nbytes, repeats=repeats
        )

    def peer_bandwidth_gbs(
        self, *, src: int, dst: int, mode: str, nbytes: int, repeats: int
    ) -> float | None:
        return self._inner.peer_bandwidth_gbs(
            src=src, dst=dst, mode=mode, nbytes=nbytes, repeats=repeats
        )


def simulated(spec: str, **replace: Any) -> Platform:
    """The simulated platform for ``spec`` with some of its source factories replaced."""
    return dataclasses.replace(open_platform({"GLIMMER_SIM_GPU": spec}), **replace)


def with_compute(spec: str, wrap: Callable[[Compute], Compute]) -> Platform:
    """The simulated platform for ``spec`` whose compute is ``wrap`` of the simulated one
    (wrapped once: every ``compute()`` call returns the same object)."""
    base = simulated(spec)
    wrapped = wrap(base.compute())
    return dataclasses.replace(base, _compute=lambda: wrapped)


def run_in_process(
    *,
    kind: str,
    prefix: str,
    measure: Callable[[RunnerContext], Verdict],
    platform: Platform,
    env: Mapping[str, str],
) -> tuple[RunnerReport, str]:
    """Run ``measure`` under the SDK's guard on ``platform``; the parsed report and stdout."""
    out = io.StringIO()

    def on_platform(ctx: RunnerContext) -> Verdict:
        ctx._platform = platform
        ctx.report.metric("provenance", platform.provenance)
        return measure(ctx)

    markers = Markers.for_prefix(prefix)
    code = guarded_main(
        markers=markers,
        measure=on_platform,
        environ={"GLIMMER_SIM_GPU": "", **env},
        report=Report(markers=markers, out=out),
    )
    text = out.getvalue()
    return read_report(text.encode(), kind=kind, exit_code=code), text

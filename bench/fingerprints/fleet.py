"""Fingerprints on a KWOK fleet: time to a NodeFingerprint on every node, and to Drifted +
an expired verdict after a GPU label change on 1% of them. Asserts nothing.

    .venv/bin/python bench/fingerprints/fleet.py --nodes 1000 [--out FILE] [--timeout 600]

A fresh control plane per size (bench/run's: real etcd + kube-apiserver, the audit log on
for the operator's own ServiceAccount), KWOK with N GPU-labelled nodes, then this tree's
``glimmer manager`` (bench/run's built-in command line). Measured from sources the
operator does not control:

- capture: manager start -> every node's fingerprint shows a digest (a fingerprint
  watch), and the same from the manager's /readyz;
- drift: a Passed, silicon run judging 1% of the nodes is written (as the run controller
  would leave it) and its verdicts bound; then ``nvidia.com/gpu.count`` 8 -> 7 on those
  nodes, and the time until every one shows ``Drifted=True`` and
  ``VerdictCurrent=False/FingerprintChanged``;
- the manager's CPU seconds and peak RSS (``/proc``), its API requests per phase (the
  audit log), all clients' apiserver requests, and the load average (the machine is
  shared, so read the times next to it).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "run"))  # bench/run's helpers, imported, not copied

from measure import (  # noqa: E402 - needs bench/run on sys.path first (above)
    AUDIT_POLICY,
    AuditFigures,
    cpu_seconds,
    load_average,
    peak_rss_mib,
    read_audit,
)
from run import builtin_operators  # noqa: E402 - as above
from trial import (  # noqa: E402 - as above
    NAMESPACE,
    OPERATOR_NAMESPACE,
    OPERATOR_USER,
    Trial,
    _apiserver_requests,
    _install,
    _operator_kubeconfig,
)
from watch import FingerprintWatch  # noqa: E402 - this directory, as a script

from glimmer.api import format_time  # noqa: E402 - as above
from glimmer.controllers.fingerprint.verdict import PLAN_ANNOTATION  # noqa: E402
from glimmer.controllers.kit.names import FINGERPRINTS, RUNS  # noqa: E402
from glimmer.engine import NODES, ApiServerClient, ClientOptions  # noqa: E402
from glimmer.plan import PinnedPlan, PlannedTest  # noqa: E402
from glimmer.testing import _process  # noqa: E402
from glimmer.testing.control_plane import ControlPlane  # noqa: E402
from glimmer.testing.kwok import Kwok  # noqa: E402

#: Beyond Kwok's own nvidia.com/gpu.product and gpu.count: what GPU feature discovery sets.
GPU_LABELS = {
    "nvidia.com/gpu.memory": "81559",
    "nvidia.com/gpu.family": "hopper",
    "nvidia.com/cuda.driver-version": "550.54.15",
    "node.kubernetes.io/instance-type": "p5.48xlarge",
}


#: Seconds without a fingerprint event that count as settled.
QUIET = 5.0


class Bench:
    def __init__(self, *, nodes: int, timeout: float, work: Path, glimmer_args: str) -> None:
        self.count = nodes
        self.timeout = timeout
        self.work = work
        operator = builtin_operators(
            go_binary=Path("/nonexistent"), go_crds=Path("/nonexistent"),
            glimmer_args=glimmer_args,
        )["glimmer"]  # fmt: skip
        # bench/run's Trial knows how to start an operator as its ServiceAccount.
        self.trial = Trial(
            operator=operator, nodes=nodes, trial=1, cap=1, timeout=timeout, work=work,
            scenario=None,
        )  # fmt: skip
        self.lines: list[str] = []
        self.figures: dict[str, Any] = {"nodes": nodes}

    def say(self, line: str) -> None:
        stamp = f"{time.monotonic() - self.began:7.1f}s"
        print(f"[{stamp}] {line}", flush=True)
        self.lines.append(f"[{stamp}] {line}")

    def run(self) -> None:
        self.began = time.monotonic()
        self.work.mkdir(parents=True, exist_ok=True)
        policy = self.work / "audit-policy.yaml"
        policy.write_text(AUDIT_POLICY.format(user=OPERATOR_USER))
        plane = ControlPlane(
            work_dir=self.work / "plane",
            start_timeout=180,
            extra_apiserver_args=(
                f"--audit-policy-file={policy}",
                f"--audit-log-path={self.trial.audit_log}",
                "--audit-log-format=json",
                "--audit-log-maxsize=0",
            ),
        )
        kwok: Kwok | None = None
        try:
            plane.start()
            _install(plane, self.trial.operator)
            kubeconfig = _operator_kubeconfig(plane)
            kwok = Kwok(plane, start_timeout=900).start()
            self.say(f"control plane up; creating {self.count} KWOK nodes")
            nodes = kwok.create_nodes(self.count, name_prefix="fleet-", labels=GPU_LABELS)
            self.say(f"{len(nodes)} nodes Ready (load {load_average()})")
            asyncio.run(self._measure(plane, kubeconfig=kubeconfig, nodes=nodes))
        finally:
            if kwok is not None:
                kwok.stop()
            plane.stop()

    async def _wait(self, what: str, done: Any, *, progress: Any) -> bool:
        """Poll the watch's state (no API calls) until ``done()``; False at the timeout."""
        deadline = time.monotonic() + self.timeout
        last = time.monotonic()
        while not done():
            if time.monotonic() > deadline:
                self.say(f"TIMEOUT waiting for {what}: {progress()}")
                return False
            if time.monotonic() - last > 30:
                last = time.monotonic()
                self.say(f"waiting for {what}: {progress()} (load {load_average()})")
            await asyncio.sleep(0.2)
        return True

    async def _measure(self, plane: ControlPlane, *, kubeconfig: Path, nodes: list[str]) -> None:
        f = self.figures
        client = await ApiServerClient.connect(
            str(plane.kubeconfig_path),
            options=ClientOptions(qps=1000, burst=1000, watch_inactivity_timeout=1800),
        )
        process: subprocess.Popen[bytes] | None = None
        watch = FingerprintWatch()
        follower: asyncio.Task[None] | None = None
        everyone, sample = set(nodes), sorted(nodes)[:: max(1, 100)][: max(1, len(nodes) // 100)]
        try:
            listed = await client.list(FINGERPRINTS, namespace=OPERATOR_NAMESPACE, limit=1)
            follower = asyncio.create_task(
                watch.follow(
                    client,
                    namespace=OPERATOR_NAMESPACE,
                    version=str(listed["metadata"]["resourceVersion"]),
                )
            )
            f["load_before"] = load_average()
            api_before = _apiserver_requests(plane)
            spawned = time.time()
            process = self.trial._start_operator(kubeconfig)  # blocks until /readyz
            ready = time.time()
            f["ready_s"] = ready - spawned
            self.say(f"manager ready after {f['ready_s']:.1f} s")
            ok = await self._wait(
                "every fingerprint captured",
                lambda: everyone <= set(watch.captured),
                progress=lambda: f"{len(everyone & set(watch.captured))}/{len(everyone)}",
            )
            captured_at = max((watch.captured[n] for n in everyone if n in watch.captured),
                              default=float("nan"))  # fmt: skip
            f["captured"] = len(everyone & set(watch.captured))
            f["capture_s"] = captured_at - spawned if ok else float("nan")
            f["capture_from_ready_s"] = captured_at - ready if ok else float("nan")
            f["capture_cpu_s"] = cpu_seconds(process.pid)
            f["capture_rss_mib"] = peak_rss_mib(process.pid)
            f["capture_audit"] = read_audit(
                self.trial.audit_log, user=OPERATOR_USER, start=spawned - 1, end=time.time() + 1
            )
            self.say(f"captured {f['captured']}/{len(everyone)} in {f['capture_s']:.1f} s "
                     f"(load {load_average()})")  # fmt: skip
            if not ok:
                return
            # Settled: no fingerprint changed for QUIET seconds (the second writes a pass
            # makes after its own node label are part of the cost of a capture).
            await self._wait(
                "the fingerprints to settle",
                lambda: time.time() - watch.last_event > QUIET,
                progress=lambda: f"{watch.events} events so far",
            )
            f["settle_s"] = watch.last_event - spawned
            f["settle_audit"] = read_audit(
                self.trial.audit_log, user=OPERATOR_USER, start=spawned - 1, end=time.time() + 1
            )
            f["settle_rss_mib"] = peak_rss_mib(process.pid)
            self.say(f"settled {f['settle_s']:.1f} s after the start ({watch.events} events)")

            await asyncio.sleep(1.1)  # the verdict's run must start after the capture
            judged = time.time()
            await self._judge(client, sample)
            ok = await self._wait(
                "verdicts bound",
                lambda: set(sample) <= set(watch.current),
                progress=lambda: f"{len(set(sample) & set(watch.current))}/{len(sample)}",
            )
            if not ok:
                return
            self.say(f"{len(sample)} verdicts bound (VerdictCurrent=True)")
            f["judge_rss_mib"] = peak_rss_mib(process.pid)
            f["judge_audit"] = read_audit(
                self.trial.audit_log, user=OPERATOR_USER, start=judged - 1, end=time.time() + 1
            )
            cpu_mid = cpu_seconds(process.pid)
            changed = time.time()
            for node in sample:
                await client.patch(
                    NODES, node, {"metadata": {"labels": {"nvidia.com/gpu.count": "7"}}}
                )
            ok = await self._wait(
                "Drifted + verdict expired",
                lambda: set(sample) <= set(watch.drifted) and set(sample) <= set(watch.expired),
                progress=lambda: (
                    f"drifted {len(set(sample) & set(watch.drifted))}, expired "
                    f"{len(set(sample) & set(watch.expired))} of {len(sample)}"
                ),
            )
            if ok:
                f["drift_s"] = max(watch.drifted[n] for n in sample) - changed
                f["expire_s"] = max(watch.expired[n] for n in sample) - changed
            f["drift_cpu_s"] = cpu_seconds(process.pid) - cpu_mid
            f["drift_audit"] = read_audit(
                self.trial.audit_log, user=OPERATOR_USER, start=changed - 1, end=time.time() + 1
            )
            f["drift_rss_mib"] = peak_rss_mib(process.pid)
            f["sample"] = len(sample)
            f["foreign_drift"] = len(set(watch.drifted) - set(sample))
        finally:
            if process is not None:
                f["cpu_s"] = cpu_seconds(process.pid)
                f["peak_rss_mib"] = peak_rss_mib(process.pid)
                f["apiserver_requests"] = _apiserver_requests(plane) - api_before
                f["load_after"] = load_average()
                _process.stop(process, grace=35)
            if follower is not None:
                follower.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await follower
            await client.close()
            await asyncio.sleep(1.0)  # the apiserver flushes the last audit lines
            f["total_audit"] = read_audit(
                self.trial.audit_log, user=OPERATOR_USER, start=0, end=time.time() + 1
            )
            f["watch_events"], f["watch_relists"] = watch.events, watch.relists

    async def _judge(self, client: ApiServerClient, sample: Iterable[str]) -> None:
        """A finished run that judged ``sample`` on this hardware, as the run controller
        leaves one (the fingerprint controller only reads runs)."""
        names = list(sample)
        burn = PlannedTest(name="burn", required=True, spec={"kind": "gpu-burn"})
        plan = PinnedPlan(targets=tuple(names), tests=(burn,)).to_annotation()
        run = await client.create(RUNS, {
            "apiVersion": "burnin.glimmer.ai/v1alpha1", "kind": "BurnInRun",
            "metadata": {"name": "acceptance", "annotations": {PLAN_ANNOTATION: plan}},
            "spec": {"profileRef": "p", "target": {"nodeNames": names}},
        }, namespace=NAMESPACE)  # fmt: skip
        started = datetime.datetime.now(datetime.UTC)
        finished = started + datetime.timedelta(seconds=1)
        run["status"] = {
            "phase": "Passed", "startedAt": format_time(started),
            "finishedAt": format_time(finished),
            "results": [
                {"name": "burn", "kind": "gpu-burn", "phase": "Passed", "nodes": [node],
                 "startedAt": format_time(started), "provenance": "silicon"}
                for node in names
            ],
        }  # fmt: skip
        await client.replace(RUNS, run, namespace=NAMESPACE, subresource="status")


def _audit(figures: AuditFigures | None) -> str:
    if figures is None:
        return "-"
    top = ", ".join(f"{k}={v}" for k, v in figures.by_verb.most_common(8))
    return f"{figures.requests} requests (peak {figures.peak_per_second}/s; {top})"


def _num(value: Any, spec: str = ".1f") -> str:
    return "-" if value is None else format(value, spec)


def report(figures: dict[str, Any], lines: list[str]) -> str:
    g = figures.get
    return "\n".join(
        [
            f"bench/fingerprints: {g('nodes')} KWOK nodes, started "
            f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
            "",
            f"manager start -> /readyz:                     {_num(g('ready_s'))} s",
            f"manager start -> every node fingerprinted:    {_num(g('capture_s'))} s "
            f"({g('captured', 0)}/{g('nodes')} captured)",
            f"/readyz -> every node fingerprinted:          {_num(g('capture_from_ready_s'))} s",
            f"label change on {g('sample', '-')} nodes (1%) -> all Drifted: "
            f"{_num(g('drift_s'), '.2f')} s",
            f"label change -> all VerdictCurrent=False:     {_num(g('expire_s'), '.2f')} s",
            f"nodes Drifted that were not changed:          {g('foreign_drift', '-')}",
            f"manager CPU: {_num(g('capture_cpu_s'))} s to capture, {_num(g('drift_cpu_s'))} s for "
            f"the drift, {_num(g('cpu_s'))} s in all",
            f"manager peak RSS: {_num(g('capture_rss_mib'), '.0f')} MiB after capture, "
            f"{_num(g('settle_rss_mib'), '.0f')} MiB settled, "
            f"{_num(g('judge_rss_mib'), '.0f')} MiB after the verdict run was handled, "
            f"{_num(g('drift_rss_mib'), '.0f')} MiB after the drift, "
            f"{_num(g('peak_rss_mib'), '.0f')} MiB at the end",
            f"manager start -> fingerprints settled (no change for {QUIET:.0f} s): "
            f"{_num(g('settle_s'))} s",
            f"manager API requests, capture: {_audit(g('capture_audit'))}",
            f"manager API requests, to settled: {_audit(g('settle_audit'))}",
            f"manager API requests, verdict run: {_audit(g('judge_audit'))}",
            f"manager API requests, drift:   {_audit(g('drift_audit'))}",
            f"manager API requests, all:     {_audit(g('total_audit'))}",
            f"apiserver requests (all clients) while the manager ran: "
            f"{_num(g('apiserver_requests'), '.0f')}",
            f"fingerprint watch: {g('watch_events', '-')} events, "
            f"{g('watch_relists', '-')} relists",
            f"load average (1/5/15) before -> after: {g('load_before', '-')} -> "
            f"{g('load_after', '-')} (2 cores, shared)",
            "",
            "log:",
            *lines,
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--timeout", type=float, default=600, help="seconds per phase")
    parser.add_argument("--glimmer-args", default="", help="extra `glimmer manager` flags")
    parser.add_argument("--out", type=Path, default=None, help="also write the report here")
    parser.add_argument("--keep", action="store_true", help="keep the work dir (logs, audit)")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    work = Path(tempfile.mkdtemp(prefix="glimmer-bench-fingerprints-"))
    bench = Bench(nodes=args.nodes, timeout=args.timeout, work=work, glimmer_args=args.glimmer_args)
    try:
        bench.run()
    except Exception as exc:  # report where it stood
        bench.say(f"bench failed: {type(exc).__name__}: {exc}"[:400])
    finally:
        text = report(bench.figures, bench.lines)
        print(text)
        if args.out is not None:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(text + "\n")
        if args.keep:
            print(f"work dir kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

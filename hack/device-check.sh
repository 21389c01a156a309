#!/usr/bin/env bash
# Device check: run the GPU runners on real silicon (no simulation) and keep their output.
#
# Why: the simulator proves the runners' logic; only a real GPU proves their measurements.
# Each runner's stdout and exit code are saved as a fixture under $OUT/fixtures/<kind>.txt
# (provenance silicon), and memory-bw's figures are compared with the H200's limits.
#
# Bounded: every step has a timeout and the whole script stops starting runners after
# 8 minutes, so it finishes inside one 10-minute device call (with the load runners; a
# short lease can name fewer with DEVICE_CHECK_ONLY). It never changes clocks or GPU
# settings.
#
# Usage (repository root, on a machine with an NVIDIA GPU):  OUT=/some/dir hack/device-check.sh
# DEVICE_CHECK_ONLY="nccl memory-bw" runs only the named runners (default: all), e.g. to spend
# a short device lease on the intra-node nccl run alone; the others then record not-run.
# Files written ($OUT is brought back by the device tool: at most 8 files), so the
# fixtures travel as one archive: fixtures.tar.gz (fixtures/<kind>.txt for compute-smoke,
# clockprobe, memory-bw, host-health, nccl, gpu-burn, gemm-sweep-bf16, gemm-sweep-fp8,
# thermal-soak), stderr.txt, summary.txt. Commit them with `tar -xzf fixtures.tar.gz`.
set -u -o pipefail

cd "$(dirname "$0")/.."
REPO="$PWD"
OUT="${OUT:-$REPO/device-check-out}"
PY="${PYTHON:-python3}"
mkdir -p "$OUT/fixtures"
: > "$OUT/stderr.txt"
START=$(date +%s)
DEADLINE=$((START + 480))

log() { echo "[device-check +$(($(date +%s) - START))s] $*" | tee -a "$OUT/summary.txt"; }

# Install only what is missing; the GPU image usually has both already, and may have no
# network, so a failed install is reported, not fatal (the runner then exits 3 and says why).
ensure() {
  local module=$1 package=$2
  if timeout 90 "$PY" -c "import $module" 2>>"$OUT/stderr.txt"; then
    log "python module $module present"
    return 0
  fi
  if [ -n "${DEVICE_CHECK_NO_INSTALL:-}" ]; then
    log "python module $module missing (DEVICE_CHECK_NO_INSTALL set: not installing)"
    return 0
  fi
  log "python module $module missing: installing $package"
  if [ -d "$REPO/hack/wheels" ]; then
    timeout 180 "$PY" -m pip install --quiet --no-index --find-links "$REPO/hack/wheels" "$package" \
      >>"$OUT/stderr.txt" 2>&1 && return 0
  fi
  timeout 180 "$PY" -m pip install --quiet "$package" >>"$OUT/stderr.txt" 2>&1 \
    || log "could not install $package"
}

selected() {
  [ -z "${DEVICE_CHECK_ONLY:-}" ] && return 0
  case " $DEVICE_CHECK_ONLY " in *" $1 "*) return 0 ;; esac
  return 1
}

run_runner() {
  local kind=$1 module=$2 limit=$3
  shift 3
  local fixture="$OUT/fixtures/$kind.txt" left rc began
  if ! selected "$kind"; then
    log "$kind: NOT RUN (not in DEVICE_CHECK_ONLY)"
    echo "# glimmer device fixture: runner=$module exit=none provenance=silicon not-run=not-selected" >"$fixture"
    return
  fi
  left=$((DEADLINE - $(date +%s)))
  if [ "$left" -lt 30 ]; then
    log "$kind: NOT RUN (time budget spent)"
    echo "# glimmer device fixture: runner=$module exit=none provenance=silicon not-run=time-budget" >"$fixture"
    return
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  log "$kind: running $module (limit ${limit}s) $*"
  began=$(date +%s)
  env -u GLIMMER_SIM_GPU PYTHONPATH="$REPO" "$@" \
    timeout --kill-after=10 "$limit" "$PY" -m "$module" >"$fixture.tmp" 2>>"$OUT/stderr.txt"
  rc=$?
  {
    echo "# glimmer device fixture: runner=$module exit=$rc provenance=silicon wall_s=$(($(date +%s) - began)) date=$(date -u +%Y-%m-%dT%H:%M:%SZ) gpu=$(timeout 20 nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 | tr ' ,' '_;')"
    cat "$fixture.tmp"
  } >"$fixture"
  rm -f "$fixture.tmp"
  log "$kind: exit $rc; last line: $(grep -v '=' "$fixture" | tail -1)"
}

log "device check in $REPO, python $("$PY" -c 'import sys; print(sys.version.split()[0])' 2>&1)"
timeout 20 nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,clocks.sm,clocks.max.sm,pstate \
  --format=csv 2>&1 | tee -a "$OUT/summary.txt" || log "nvidia-smi unavailable"
ensure torch torch
ensure pynvml nvidia-ml-py

run_runner compute-smoke runners.compute_smoke 150
run_runner clockprobe runners.clockprobe 120 BURNIN_CLOCKPROBE_WINDOW_SECONDS=20
run_runner memory-bw runners.memory_bw 150
run_runner host-health runners.host_health 60 BURNIN_HOST_HEALTH_WINDOW_SECONDS=10

# The intra-node nccl run (Node scope, all GPUs): nccl-tests' all_reduce_perf on PATH or in
# $NCCL_TESTS_DIR (the machine cannot download it). Its real output becomes the nccl
# fixture with provenance silicon; a machine without it records why it did not run.
NCCL_TOOLS="${NCCL_TESTS_DIR:-}"
if [ -z "$NCCL_TOOLS" ] && command -v all_reduce_perf >/dev/null 2>&1; then
  NCCL_TOOLS=$(dirname "$(command -v all_reduce_perf)")
fi
# Node scope needs >= 2 GPUs; with one the runner declares NCCL_SKIP (the fixture says so).
log "nccl: $(timeout 20 nvidia-smi -L 2>/dev/null | grep -c '^GPU ') GPU(s) visible for the Node-scope run (all of them)"
if [ -n "$NCCL_TOOLS" ] && [ -x "$NCCL_TOOLS/all_reduce_perf" ]; then
  run_runner nccl runners.nccl 120 BURNIN_FABRIC_TOOLS_DIR="$NCCL_TOOLS" BURNIN_NCCL_MAX_BYTES=1G \
    BURNIN_NCCL_ITERATIONS=10 BURNIN_DURATION_SECONDS=110
elif selected nccl; then
  log "nccl: NOT RUN (all_reduce_perf not found; set NCCL_TESTS_DIR to a nccl-tests build)"
  echo "# glimmer device fixture: runner=runners.nccl exit=none provenance=silicon not-run=no-nccl-tests" \
    >"$OUT/fixtures/nccl.txt"
else
  run_runner nccl runners.nccl 0
fi

# Bandwidth against the device's limits: HBM3e 4.8 TB/s; PCIe Gen5 x16 about 64 GB/s.
PYTHONPATH="$REPO" timeout 60 "$PY" - "$OUT/fixtures/memory-bw.txt" <<'PYEOF' 2>>"$OUT/stderr.txt" | tee -a "$OUT/summary.txt"
import sys
from pathlib import Path

from glimmer.contract import read_report

text = Path(sys.argv[1]).read_text()
header, _, body = text.partition("\n")
word = header.split("exit=")[1].split()[0] if "exit=" in header else "none"
if not word.lstrip("-").isdecimal():
    print(f"memory-bw not run ({header.strip()})")
    sys.exit(0)
exit_code = int(word)
report = read_report(body.encode(), kind="memory-bw", exit_code=exit_code if exit_code >= 0 else 3)
limits = {
    "deviceToDeviceBandwidthGBs": ("D2D", 4800.0, "HBM3e 4.8 TB/s"),
    "hostToDeviceBandwidthGBs": ("H2D", 64.0, "PCIe Gen5 x16 ~64 GB/s"),
    "deviceToHostBandwidthGBs": ("D2H", 64.0, "PCIe Gen5 x16 ~64 GB/s"),
}
print(f"memory-bw exit {exit_code}, provenance {report.provenance}")
for name, (label, limit, basis) in limits.items():
    value = report.metrics.get(name)
    if value is None:
        print(f"{label}: not measured")
        continue
    print(f"{label}: {float(value):9.1f} GB/s = {float(value) / limit * 100:5.1f} % of {basis}")
PYEOF

# The load runners and their figures against the dense peaks.
run_runner gpu-burn runners.gpu_burn 90 BURNIN_DURATION_SECONDS=60 BURNIN_GPU_BURN_WATCH_XID=true
run_runner gemm-sweep-bf16 runners.gemm_sweep 45 BURNIN_VARIANT_PRECISION=bf16 BURNIN_GEMM_SWEEP_SECONDS=10
run_runner gemm-sweep-fp8 runners.gemm_sweep 45 BURNIN_VARIANT_PRECISION=fp8 BURNIN_GEMM_SWEEP_SECONDS=10
# A soak window of 30 s: enough for two re-prints (every 15 s), the G1 window rule, and
# the Xid watch on the host's real /dev/kmsg (n/a if unreadable).
run_runner thermal-soak runners.thermal_soak 60 BURNIN_DURATION_SECONDS=30

# Measured against the limit: dense BF16 peak of one H200 (989 TFLOP/s, sparsity off;
# FP8 1979). Goal of the load runners: gpu-burn and gemm-sweep bf16 >= 80 % of dense peak.
PYTHONPATH="$REPO" timeout 60 "$PY" - "$OUT/fixtures" <<'PYEOF' 2>>"$OUT/stderr.txt" | tee -a "$OUT/summary.txt"
import sys
from pathlib import Path

from glimmer.contract import read_report

folder = Path(sys.argv[1])
rows = [
    ("gpu-burn.txt", "gpu-burn", "sustainedThroughputTflops", "bf16 load", 989.0),
    ("gemm-sweep-bf16.txt", "gemm-sweep", "achievedTflops", "bf16 GEMM", 989.0),
    ("gemm-sweep-fp8.txt", "gemm-sweep", "achievedTflops", "fp8 GEMM", 1979.0),
]
print(f"{'runner':<22}{'measured':>12}{'limit':>10}{'of limit':>10}  goal")
for name, kind, metric, label, limit in rows:
    path = folder / name
    if not path.exists():
        print(f"{name:<22}{'not run':>12}")
        continue
    header, _, body = path.read_text().partition("\n")
    code = int(header.split("exit=")[1].split()[0]) if "exit=" in header and "exit=none" not in header else 3
    report = read_report(body.encode(), kind=kind, exit_code=code)
    value = report.metrics.get(metric)
    if value is None:
        print(f"{name:<22}{'not measured':>12}  exit {code}: {report.message}")
        continue
    pct = float(value) / limit * 100
    verdict = "meets >= 80 %" if pct >= 80 else "BELOW 80 %"
    print(f"{name:<22}{float(value):>9.1f} TF{limit:>8.0f} TF{pct:>8.1f} %  {label}: {verdict}"
          f" (provenance {report.provenance}, exit {code})")
PYEOF

tar -C "$OUT" -czf "$OUT/fixtures.tar.gz" fixtures && rm -rf "$OUT/fixtures"
log "done in $(($(date +%s) - START))s"

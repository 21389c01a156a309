# Load-runner block for hack/device-check.sh (h16nv). Paste after the host-health line;
# it uses the script's run_runner/log helpers, $OUT, $PY and $REPO. About 180 s in all,
# each step bounded; fixtures/gpu-burn.txt, gemm-sweep-bf16.txt, thermal-soak.txt,
# compute-smoke already exists (its FP4 path is exercised on sm_100+ parts only).
# Files added: 4 fixtures (the script's 8-file budget then needs the nccl/stderr files
# merged, or OUT's limit raised: the lead decides).

run_runner gpu-burn runners.gpu_burn 90 BURNIN_DURATION_SECONDS=60 BURNIN_GPU_BURN_WATCH_XID=true
run_runner gemm-sweep-bf16 runners.gemm_sweep 45 BURNIN_VARIANT_PRECISION=bf16 BURNIN_GEMM_SWEEP_SECONDS=10
run_runner gemm-sweep-fp8 runners.gemm_sweep 45 BURNIN_VARIANT_PRECISION=fp8 BURNIN_GEMM_SWEEP_SECONDS=10
# A soak window of 30 s: enough for two re-prints (every 15 s), the G1 window rule, and
# the Xid watch on the host's real /dev/kmsg (n/a if unreadable).
run_runner thermal-soak runners.thermal_soak 60 BURNIN_DURATION_SECONDS=30

# Measured against the limit: dense BF16 peak of one H200 (989 TFLOP/s, sparsity off;
# FP8 1979). Goal (issue 16): gpu-burn and gemm-sweep bf16 >= 80 % of dense peak.
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
print(f"{'runner':<18}{'measured':>12}{'limit':>10}{'of limit':>10}  goal")
for name, kind, metric, label, limit in rows:
    path = folder / name
    if not path.exists():
        print(f"{name:<18}{'not run':>12}")
        continue
    header, _, body = path.read_text().partition("\n")
    code = int(header.split("exit=")[1].split()[0]) if "exit=" in header and "exit=none" not in header else 3
    report = read_report(body.encode(), kind=kind, exit_code=code)
    value = report.metrics.get(metric)
    if value is None:
        print(f"{name:<18}{'not measured':>12}  exit {code}: {report.message}")
        continue
    pct = float(value) / limit * 100
    verdict = "meets >= 80 %" if pct >= 80 else "BELOW 80 %"
    print(f"{name:<18}{float(value):>9.1f} TF{limit:>8.0f} TF{pct:>8.1f} %  {label}: {verdict}"
          f" (provenance {report.provenance}, exit {code})")
PYEOF

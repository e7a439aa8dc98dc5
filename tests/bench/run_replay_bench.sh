#!/usr/bin/env bash
# Predicted against measured checkpointing, on this machine's CPU (or GPU with --device cuda):
#  1. replay the baseline (nothing checkpointed) of a GPT and keep its trace;
#  2. for six toggle sets, predict peak and step time from that trace with
#     peaklens-cli plan, then replay with those toggles and measure;
#  3. full-recompute overhead against the ideal F/(F+B) of the same trace;
#  4. harness overhead: peaklens-replay --checkpoint none against a plain LibTorch loop of
#     the same model (bench_replay_plain), alternating, five runs each.
# On a CPU every run is pinned to one core with one BLAS thread (BENCH_CORE, default the
# last core): idle BLAS threads spinning on a shared core make step times drift by 10 %.
# Usage: tests/bench/run_replay_bench.sh [--device cpu|cuda] [extra peaklens-replay options]
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
core=${BENCH_CORE:-$(($(nproc) - 1))}
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
pin="taskset -c $core"
replay="$pin build/bin/peaklens-replay"
cli=build/bin/peaklens-cli
config=(--model gpt --layers 8 --d-model 256 --heads 8 --seq 256 --batch 8 --steps 7 --warmup 2 --progress none "$@")
field() { python3 -c "import json,sys; d=json.load(open('$1')); print(eval('d' + sys.argv[1]))" "$2"; }

$replay "${config[@]}" --checkpoint none --json --out "$dir/base.peaklens" > "$dir/base.json"
base_peak=$(field "$dir/base.json" "['peak_allocated_bytes']")
base_ms=$(field "$dir/base.json" "['step_time_ms']")
budget=$(python3 -c "print(int($base_peak * 0.6))")
echo "model: $(field "$dir/base.json" "['model']")"
echo "device: $(field "$dir/base.json" "['device_name']")"
printf 'baseline: peak %s bytes, step %.1f ms\n\n' "$base_peak" "$base_ms"

printf '%-22s %-34s %12s %12s %7s %10s %10s %7s\n' set checkpoint "pred MiB" "meas MiB" "err" "pred ms" "meas ms" "err"
row() { # label, plan arguments...
  local label=$1; shift
  $cli plan "$dir/base.peaklens" "$@" --json > "$dir/plan.json"
  local layers; layers=$(python3 -c "import json; print(','.join(json.load(open('$dir/plan.json'))['checkpoint']) or 'none')")
  $replay "${config[@]}" --checkpoint "$layers" --json > "$dir/run.json" || [ $? -eq 3 ]
  python3 - "$label" "$layers" "$dir/plan.json" "$dir/run.json" <<'PY'
import json, sys
label, layers, plan, run = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3])), json.load(open(sys.argv[4]))
p, m = plan["predicted"], run
mib = lambda b: b / 2**20
pe = (p["peak_bytes"] - m["peak_allocated_bytes"]) / m["peak_allocated_bytes"] * 100
te = (p["step_time_ms"] - m["step_time_ms"]) / m["step_time_ms"] * 100
short = layers if len(layers) <= 34 else layers[:31] + "..."
print(f"{label:22s} {short:34s} {mib(p['peak_bytes']):12.2f} {mib(m['peak_allocated_bytes']):12.2f} {pe:+6.1f}% "
      f"{p['step_time_ms']:10.1f} {m['step_time_ms']:10.1f} {te:+6.1f}%")
PY
  cp "$dir/run.json" "$dir/run-$label.json"
}
row all --strategy all
row every:2 --strategy every:2
row every:3 --strategy every:3
row sqrt --strategy sqrt
row "hand: 1,5" --checkpoint blocks.1,blocks.5
row "hand: 0,1,2,3" --checkpoint blocks.0,blocks.1,blocks.2,blocks.3
row "planner @60% base" --budget "$budget"

echo
python3 - "$dir/plan.json" "$base_ms" "$dir/run-all.json" <<'PY'
import json, sys
plan, base_ms, full = json.load(open(sys.argv[1])), float(sys.argv[2]), json.load(open(sys.argv[3]))
f = sum(l["forward_ms"] for l in plan["chain"]["layers"])
b = sum(l["backward_ms"] for l in plan["chain"]["layers"])
added = full["step_time_ms"] - base_ms
print(f"full recompute: step {base_ms:.1f} -> {full['step_time_ms']:.1f} ms, +{added:.1f} ms = {added / base_ms * 100:.1f} % of the step;")
print(f"  ideal: chain forward F = {f:.1f} ms, backward B = {b:.1f} ms, F/(F+B) = {f / (f + b) * 100:.1f} %;"
      f" measured added / F = {added / f:.2f}")
PY

echo
spec=$(python3 -c "import json; print(json.dumps(json.load(open('$dir/base.json'))['model']))")
for i in 1 2 3 4 5; do
  $replay "${config[@]}" --checkpoint none --json | python3 -c "import json,sys; print(json.load(sys.stdin)['step_time_ms'])" >> "$dir/ours"
  $pin build/bin/bench_replay_plain "$spec" 7 2 | python3 -c "import json,sys; print(json.load(sys.stdin)['step_time_ms'])" >> "$dir/plain"
done
python3 - "$dir/ours" "$dir/plain" <<'PY'
import statistics, sys
ours = [float(x) for x in open(sys.argv[1])]
plain = [float(x) for x in open(sys.argv[2])]
o, p = statistics.median(ours), statistics.median(plain)
print(f"harness: peaklens-replay none {o:.1f} ms (runs {', '.join(f'{x:.1f}' for x in ours)})"
      f" vs plain LibTorch loop {p:.1f} ms (runs {', '.join(f'{x:.1f}' for x in plain)}):"
      f" median {(o - p) / p * 100:+.1f} %, best {(min(ours) - min(plain)) / min(plain) * 100:+.1f} %")
PY

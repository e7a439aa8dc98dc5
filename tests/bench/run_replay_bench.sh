#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Predicted against measured checkpointing, on this machine's CPU (or a GPU with DEVICE=cuda):
#  1. the grid of tests/bench/replay_grid.py: GPT, MLP and CNN x strategies, the planner
#     at 50/70/85 % and random toggle sets x fp32/bf16 x 1/2/3 micro-batches, each
#     prediction against its rerun, and every planner plan rerun under its budget
#     (GRID_OPTIONS passes options to it, e.g. "--models gpt --micro-batches 1");
#  2. harness overhead: peaklens-replay --checkpoint none against a plain LibTorch loop of
#     a GPT (bench_replay_plain), alternating, five runs each.
# On a CPU every run is pinned to one core with one BLAS thread (BENCH_CORE, default the
# last core): idle BLAS threads spinning on a shared core make step times drift by 10 %.
# Usage: [DEVICE=cuda] [GRID_OPTIONS=...] tests/bench/run_replay_bench.sh [extra peaklens-replay options for 2.]
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
core=${BENCH_CORE:-$(($(nproc) - 1))}
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
pin="taskset -c $core"
replay="$pin build/bin/peaklens-replay"
config=(--model gpt --layers 8 --d-model 256 --heads 8 --seq 256 --batch 8 --steps 7 --warmup 2 --progress none --device "${DEVICE:-cpu}" "$@")

# The grid: every prediction against its rerun (replay_grid.py prints the table of errors).
python3 tests/bench/replay_grid.py --device "${DEVICE:-cpu}" ${GRID_OPTIONS:-}
echo
$replay "${config[@]}" --checkpoint none --json > "$dir/base.json"
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

#!/usr/bin/env bash
# The desktop app on a big trace (default 10M events): time to first paint, and timeline
# repaints after zoom and pan (QBENCHMARK), next to the floor for loading the same file:
# SQLite's own shell reading its event columns.
#   tests/bench/run_gui_bench.sh [EVENTS]
set -euo pipefail
cd "$(dirname "$0")/../.."
events=${1:-10000000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
build/bin/bench_tracefile write "$events" "$dir/big.peaklens" > /dev/null
ls -l "$dir/big.peaklens" | awk '{printf "trace: %d events, %d bytes\n", '"$events"', $5}'
sync
QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen} build/bin/bench_timeline -- "$dir/big.peaklens" 2>&1 \
  | grep -E "first paint|RESULT|msecs|FAIL"
for run in 1 2 3; do
  start=$(date +%s.%N)
  sqlite3 "$dir/big.peaklens" 'select sum(length(t_ns)) + sum(length(delta_bytes)) + sum(length(addr)) + sum(length(lane)) + sum(length(category)) + sum(length(phase)) + sum(length(layer)) + sum(length(stack)) from events' > /dev/null
  end=$(date +%s.%N)
  echo "floor (sqlite3 shell reading the same file's event columns): $(awk "BEGIN {printf \"%.3f\", $end - $start}") s"
done

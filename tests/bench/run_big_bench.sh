#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A long recording: N memory events (default 100M) written by the benchmark into a native
# file (never committed), then its size on disk, `peaklens-cli summary` (wall time and
# peak memory, min / median / max of 3) and the app opening it to its first paint
# (`peaklens --screenshot`, which exits once the window around the peak is painted; min /
# median / max of 3), against the goals:
# summary <= 3 s, first paint <= 5 s, app RSS <= 2 GiB and <= 2x summary's.
#   tests/bench/run_big_bench.sh [EVENTS]
set -euo pipefail
cd "$(dirname "$0")/../.."
events=${1:-100000000}
bin=${PEAKLENS_BIN:-build/bin}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen}

# min / median / max of the numbers on stdin, one per line
spread() { sort -g | awk '{v[NR] = $1} END {printf "%s / %s / %s", v[1], v[int((NR + 1) / 2)], v[NR]}'; }

"$bin/bench_tracefile" write "$events" "$dir/big.peaklens"
size=$(stat -c %s "$dir/big.peaklens")
echo "file: $size bytes, $(awk "BEGIN {printf \"%.2f\", $size / $events}") bytes per event"
sync

for run in 1 2 3; do
  /usr/bin/time -f "%e %M" -o "$dir/time" "$bin/peaklens-cli" summary "$dir/big.peaklens" > "$dir/summary.txt"
  cat "$dir/time" >> "$dir/summary-times"
done
echo "peaklens-cli summary, seconds (min / median / max): $(awk '{print $1}' "$dir/summary-times" | spread) (goal <= 3)"
echo "peaklens-cli summary, max RSS KiB: $(awk '{print $2}' "$dir/summary-times" | spread)"
head -3 "$dir/summary.txt"

# A file this big opens as the window of events around its peak (filesummary.h).
for run in 1 2 3; do
  /usr/bin/time -f "%e %M" -o "$dir/time" "$bin/peaklens" --screenshot "$dir/shot$run.png" --size 1400x900 "$dir/big.peaklens" \
    > /dev/null 2>&1 || echo "the app failed: $(tail -1 "$dir/time")"
  tail -1 "$dir/time" >> "$dir/app-times"
done
echo "app to first paint, seconds (min / median / max): $(awk '{print $1}' "$dir/app-times" | spread) (goal <= 5)"
echo "app max RSS KiB: $(awk '{print $2}' "$dir/app-times" | spread) (goal <= 2 GiB = 2097152)"
app_rss=$(awk '{print $2}' "$dir/app-times" | spread | awk -F' / ' '{print $2}')
cli_rss=$(awk '{print $2}' "$dir/summary-times" | spread | awk -F' / ' '{print $2}')
echo "app max RSS against summary's (medians): $(awk "BEGIN {printf \"%.2f\", $app_rss / $cli_rss}")x (goal <= 2)"

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Many ranks at once: writes RANKS synthetic rank traces of EVENTS memory events each
# (default 64 x 1M; make_rank_traces) into a temporary directory, then measures
# `peaklens-cli summary DIR/*.peaklens` (every rank read, reduced to its row and dropped,
# in parallel), and the app opening them all to its cross-rank overview: wall time and peak
# RSS, next to the files' size on disk.
#   tests/bench/run_ranks_bench.sh [RANKS] [EVENTS]
# PEAKLENS_BIN_DIR picks the build (default build/bin); TMPDIR where the files go.
set -euo pipefail
cd "$(dirname "$0")/../.."
ranks=${1:-64}
events=${2:-1000000}
bin=${PEAKLENS_BIN_DIR:-build/bin}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# measure LABEL COMMAND...: prints the wall time and the peak RSS of COMMAND (stdout kept
# in $dir/out.txt). /usr/bin/time -v when there is one, else VmHWM read from /proc while it runs.
measure() {
  local label=$1
  shift
  local start end rss cpu=""
  start=$(date +%s.%N)
  if [[ -x /usr/bin/time ]]; then
    /usr/bin/time -v "$@" > "$dir/out.txt" 2> "$dir/time.txt"
    rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$dir/time.txt")
    cpu=$(awk -F': ' '/User time|System time/ {sum += $2} END {printf ", %.2f s CPU", sum}' "$dir/time.txt")
  else
    "$@" > "$dir/out.txt" &
    local pid=$! hwm
    rss=0
    while kill -0 "$pid" 2> /dev/null; do
      hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2> /dev/null || true)
      [[ -n $hwm && $hwm -gt $rss ]] && rss=$hwm
      sleep 0.05
    done
    wait "$pid"
  fi
  end=$(date +%s.%N)
  echo "$label: $(awk "BEGIN {printf \"%.2f\", $end - $start}") s wall$cpu, max RSS $(awk "BEGIN {printf \"%.0f\", $rss / 1024}") MiB"
}

start=$(date +%s.%N)
"$bin/make_rank_traces" "$dir" "$ranks" "$events"
end=$(date +%s.%N)
echo "generated in $(awk "BEGIN {printf \"%.1f\", $end - $start}") s on $(nproc) cores"
bytes=$(du -cb "$dir"/*.peaklens | awk 'END {print $1}')
echo "on disk: $(awk "BEGIN {printf \"%.1f\", $bytes / 1048576}") MiB for $ranks files," \
     "$(awk "BEGIN {printf \"%.1f\", $bytes / ($ranks * $events)}") bytes per event"
sync

for run in 1 2 3; do
  measure "peaklens-cli summary, $ranks ranks (run $run)" "$bin/peaklens-cli" summary "$dir"/*.peaklens
done
head -1 "$dir/out.txt"
grep -E "above|below" "$dir/out.txt" | sed 's/  */ /g' || echo "no outlier found"

# The app opening the same ranks: every rank read for its overview row (and dropped), the
# first rank read again in full, the window drawn with the Ranks tab in front, then quit.
if [[ -x $bin/peaklens ]]; then
  for run in 1 2 3; do
    measure "app, $ranks ranks to the overview (run $run)" env QT_QPA_PLATFORM=offscreen "$bin/peaklens" \
      --screenshot "$dir/overview.png" --size 1400x900 --tab ranks "$dir"/*.peaklens
  done
fi

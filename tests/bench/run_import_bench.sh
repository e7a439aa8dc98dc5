#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Import speed against the Python that users would otherwise run, on the same files:
#  - a 1M-entry memory snapshot: peaklens-cli summary (import + peak analysis) vs
#    python3 -c "import pickle; pickle.load(open(F, 'rb'))"; goals: <= 0.15x its time and
#    <= 300 MiB max RSS at 3M entries
#  - a ~500 MB Kineto trace: peaklens-cli summary vs python3 -c "import json; json.load(open(F))";
#    goals: <= 0.05x its time, max RSS <= 1.0x the file's size
# Each side runs RUNS times (default 5): medians, with the range.
# Usage: tests/bench/run_import_bench.sh [SNAPSHOT_ENTRIES] [KINETO_MB]
# PEAKLENS_BUILD_DIR picks the build whose peaklens-cli is measured (default: build).
set -euo pipefail
cd "$(dirname "$0")/../.."
entries=${1:-1000000}
megabytes=${2:-500}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python=/usr/bin/python3
cli=${PEAKLENS_BUILD_DIR:-build}/bin/peaklens-cli

runs=${RUNS:-5}
measure() { # label, command...: wall seconds (min / median / max of $runs) and the median run's max RSS
  local label=$1; shift
  for run in $(seq "$runs"); do
    /usr/bin/time -f "%e %M" -o "$dir/time.txt" "$@" > /dev/null
    cat "$dir/time.txt"
  done | sort -g > "$dir/runs.txt"
  read -r low _ < "$dir/runs.txt"
  read -r median rss < <(sed -n "$(((runs + 1) / 2))p" "$dir/runs.txt")
  read -r high _ < <(tail -1 "$dir/runs.txt")
  printf '%-44s %8.2f s (%.2f-%.2f)  %8.0f MiB max RSS\n' "$label" "$median" "$low" "$high" "$(awk "BEGIN {print $rss / 1024}")"
  echo "$median" > "$dir/last"
  echo "$rss" > "$dir/last_rss"
}

$python tests/bench/make_big_snapshot.py "$entries" "$dir/big.pickle"
echo "snapshot: $entries entries, $(stat -c %s "$dir/big.pickle") bytes"
measure "peaklens-cli summary (snapshot)" $cli summary --json "$dir/big.pickle"; ours=$(cat "$dir/last"); ours_rss=$(cat "$dir/last_rss")
measure "python3 pickle.load" $python -c "import pickle,sys; pickle.load(open(sys.argv[1], 'rb'))" "$dir/big.pickle"; peer=$(cat "$dir/last")
# The goals are stated for 3M entries; the RSS goal scales with the entries asked for.
rss_goal=$(awk "BEGIN {printf \"%.0f\", 300 * ($entries > 3000000 ? $entries / 3000000 : 1)}")
awk -v ours="$ours" -v peer="$peer" -v rss="$ours_rss" -v goal="$rss_goal" 'BEGIN {
  ratio = ours / peer; mib = rss / 1024
  printf "ratio of the medians: %.3f x the time of pickle.load (goal <= 0.15): %s\n", ratio, ratio <= 0.15 ? "met" : "NOT met"
  printf "max RSS: %.0f MiB (goal <= %d MiB): %s\n", mib, goal, mib <= goal ? "met" : "NOT met" }'
rm -f "$dir/big.pickle"

$python tests/bench/make_big_kineto.py "$megabytes" "$dir/big.pt.trace.json"
size=$(stat -c %s "$dir/big.pt.trace.json")
echo "kineto: $size bytes"
measure "peaklens-cli summary (kineto)" $cli summary --json "$dir/big.pt.trace.json"; ours=$(cat "$dir/last")
measure "python3 json.load" $python -c "import json,sys; json.load(open(sys.argv[1]))" "$dir/big.pt.trace.json"; peer=$(cat "$dir/last")
echo "ratio of the medians: $(awk "BEGIN {printf \"%.3f\", $ours / $peer}") x the time of json.load (goal <= 0.05)"
/usr/bin/time -f "%M" -o "$dir/rss.txt" $cli summary --json "$dir/big.pt.trace.json" > /dev/null
echo "peaklens RSS / file size: $(awk "BEGIN {printf \"%.2f\", $(cat "$dir/rss.txt") * 1024 / $size}") (goal <= 1.0)"

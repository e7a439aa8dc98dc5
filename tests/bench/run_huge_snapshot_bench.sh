#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A memory snapshot of 1 GB and more (default 14.5M trace entries, each alloc with a frame
# list of its own as real recordings have: tests/bench/make_big_snapshot.py), never
# committed, opened as the app opens it, against Python's own pickle.load of the file:
#  - python3 pickle.load (what memory_viz's own tooling and scripts do first)
#  - peaklens-cli summary: the whole file imported and summarized
#  - the first open: the file read once, its native copy written to the cache, the window
#    around its peak read from the copy and analysed (bench_tracefile open)
#  - every open after: the window from the copy alone (bench_tracefile open), and the app
#    to its first paint (peaklens --screenshot)
#  - a window half-way through the run, read and analysed (bench_tracefile open-at 0.5):
#    View > Read the Visible Time in Full Detail
# Wall seconds min / median / max of RUNS (default 3) and the median run's max RSS; the
# goals: the first open <= pickle.load's time, later opens and a range <= 5 s, the app's
# RSS <= 2 GiB; every load within LoadBudget (docs/formats.md, "Limits").
#   tests/bench/run_huge_snapshot_bench.sh [ENTRIES]
set -euo pipefail
cd "$(dirname "$0")/../.."
entries=${1:-14500000}
bin=${PEAKLENS_BIN:-build/bin}
runs=${RUNS:-3}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen}
export PEAKLENS_CACHE_DIR="$dir/cache"
python=/usr/bin/python3

measure() { # label, command...: min / median / max wall seconds of $runs runs, the median's max RSS
  local label=$1; shift
  for run in $(seq "$runs"); do
    /usr/bin/time -f "%e %M" -o "$dir/time.txt" "$@" > /dev/null 2>&1
    cat "$dir/time.txt"
  done | sort -g > "$dir/runs.txt"
  read -r low _ < "$dir/runs.txt"
  read -r median rss < <(sed -n "$(((runs + 1) / 2))p" "$dir/runs.txt")
  read -r high _ < <(tail -1 "$dir/runs.txt")
  printf '%-52s %8.2f s (%.2f-%.2f)  %8.0f MiB max RSS\n' "$label" "$median" "$low" "$high" "$(awk "BEGIN {print $rss / 1024}")"
}

$python tests/bench/make_big_snapshot.py "$entries" "$dir/huge.pickle" --list-per-entry
echo "snapshot: $entries entries, $(stat -c %s "$dir/huge.pickle") bytes"
measure "python3 pickle.load" $python -c "import pickle,sys; pickle.load(open(sys.argv[1], 'rb'))" "$dir/huge.pickle"
measure "peaklens-cli summary (the whole file)" "$bin/peaklens-cli" summary "$dir/huge.pickle"
runs_asked=$runs; runs=1
measure "first open: read, native copy written, window" "$bin/bench_tracefile" open "$dir/huge.pickle"
runs=$runs_asked
"$bin/bench_tracefile" open "$dir/huge.pickle"
echo "native copy: $(stat -c %s "$dir"/cache/copies/*.peaklens) bytes"
measure "later open: the window around the peak, from the copy" "$bin/bench_tracefile" open "$dir/huge.pickle"
measure "a range: the window half-way through, from the copy" "$bin/bench_tracefile" open-at "$dir/huge.pickle" 0.5
"$bin/bench_tracefile" open-at "$dir/huge.pickle" 0.5
measure "the app to its first paint (copy there)" "$bin/peaklens" --screenshot "$dir/shot.png" --force --size 1400x900 "$dir/huge.pickle"

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The desktop app on big traces:
#  - a 10M-event native trace: time to first paint, timeline repaints after zoom and after
#    pan, the block under the cursor (a hover) and a click's live set and flame graph
#    (QBENCHMARK); the app's peak memory against the CLI's on the same file;
#  - a memory snapshot with 3M trace entries: the app's time to first paint against
#    Python's pickle.load of the same file (what memory_viz and any script start with).
# Usage: tests/bench/run_gui_bench.sh [EVENTS] [SNAPSHOT_ENTRIES]   (0 entries: no snapshot)
#        PEAKLENS_BIN=build-rel/bin tests/bench/run_gui_bench.sh ...  (binaries elsewhere)
set -euo pipefail
cd "$(dirname "$0")/../.."
events=${1:-10000000}
entries=${2:-3000000}
bin=${PEAKLENS_BIN:-build/bin}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen}
bench() { "$bin/bench_timeline" -- "$1" 2>&1 | grep -E "first paint|block index|RESULT|msecs|FAIL"; }
# Peak resident memory in KiB of a command, its output dropped.
max_rss() { /usr/bin/time -f %M -o "$dir/rss" "$@" > /dev/null 2>&1 && cat "$dir/rss"; }

"$bin/bench_tracefile" write "$events" "$dir/big.peaklens" > /dev/null
ls -l "$dir/big.peaklens" | awk '{printf "native trace: %d events, %d bytes\n", '"$events"', $5}'
sync
bench "$dir/big.peaklens"

# The app as a user runs it: the window opens the file, analyses it and paints once
# (--screenshot exits after the first paint); against the CLI's summary of the same file.
app=$(max_rss "$bin/peaklens" --screenshot "$dir/shot.png" "$dir/big.peaklens")
cli=$(max_rss "$bin/peaklens-cli" summary "$dir/big.peaklens")
awk -v app="$app" -v cli="$cli" -v events="$events" 'BEGIN {
  printf "max RSS: app (peaklens --screenshot) %d KiB, CLI (peaklens-cli summary) %d KiB, app/CLI %.2f\n", app, cli, app / cli
  printf "per event: app %.1f bytes, CLI %.1f bytes\n", app * 1024 / events, cli * 1024 / events
}'

[ "$entries" -gt 0 ] || exit 0
/usr/bin/python3 tests/bench/make_big_snapshot.py "$entries" "$dir/big.pickle"
ls -l "$dir/big.pickle" | awk '{printf "\nsnapshot: %d entries, %d bytes\n", '"$entries"', $5}'
for run in 1 2 3; do
  bench "$dir/big.pickle" | grep "first paint"
  /usr/bin/time -f "peer: python3 pickle.load %e s, max RSS %M KiB" \
    /usr/bin/python3 -c "import pickle, sys; pickle.load(open(sys.argv[1], 'rb'))" "$dir/big.pickle"
done

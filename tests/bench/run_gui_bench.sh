#!/usr/bin/env bash
# The desktop app on big traces:
#  - a 10M-event native trace: time to first paint, and timeline repaints after zoom and
#    after pan (QBENCHMARK);
#  - a memory snapshot with 3M trace entries: the app's time to first paint against
#    Python's pickle.load of the same file (what memory_viz and any script start with).
# Usage: tests/bench/run_gui_bench.sh [EVENTS] [SNAPSHOT_ENTRIES]
set -euo pipefail
cd "$(dirname "$0")/../.."
events=${1:-10000000}
entries=${2:-3000000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen}
bench() { build/bin/bench_timeline -- "$1" 2>&1 | grep -E "first paint|RESULT|msecs|FAIL"; }

build/bin/bench_tracefile write "$events" "$dir/big.peaklens" > /dev/null
ls -l "$dir/big.peaklens" | awk '{printf "native trace: %d events, %d bytes\n", '"$events"', $5}'
sync
bench "$dir/big.peaklens"

/usr/bin/python3 tests/bench/make_big_snapshot.py "$entries" "$dir/big.pickle"
ls -l "$dir/big.pickle" | awk '{printf "\nsnapshot: %d entries, %d bytes\n", '"$entries"', $5}'
for run in 1 2 3; do
  bench "$dir/big.pickle" | grep "first paint"
  /usr/bin/time -f "peer: python3 pickle.load %e s, max RSS %M KiB" \
    /usr/bin/python3 -c "import pickle, sys; pickle.load(open(sys.argv[1], 'rb'))" "$dir/big.pickle"
done

#!/usr/bin/env bash
# Write, read and analyse N memory events (default 10M) on one core, next to the floor:
# SQLite's own shell scanning the same events, one row each.
#   tests/bench/run_tracefile_bench.sh [EVENTS]
set -euo pipefail
cd "$(dirname "$0")/../.."
events=${1:-10000000}
bench=build/bin/bench_tracefile
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
one_core="taskset -c 0"

$one_core $bench write "$events" "$dir/bench.peaklens"
ls -l "$dir/bench.peaklens" | awk '{printf "file: %d bytes, %.1f bytes per event\n", $5, $5 / '"$events"'}'
sync
for run in 1 2 3; do
  /usr/bin/time -v $one_core $bench read "$dir/bench.peaklens" 2> "$dir/time.txt"
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$dir/time.txt")
  echo "max RSS: ${rss} KiB, $(awk "BEGIN {printf \"%.1f\", $rss * 1024 / $events}") bytes per event"
done

$bench rows "$dir/bench.peaklens" "$dir/rows.db"
for run in 1 2 3; do
  start=$(date +%s.%N)
  $one_core sqlite3 "$dir/rows.db" 'select count(*), sum(delta_bytes) from events' > /dev/null
  end=$(date +%s.%N)
  echo "floor (sqlite3 shell, one row per event): $(awk "BEGIN {printf \"%.0f\", $events / ($end - $start)}") events/s"
done
start=$(date +%s.%N)
$one_core sqlite3 "$dir/bench.peaklens" 'select sum(count), sum(bytes_allocated) - sum(bytes_freed) from events' > /dev/null
end=$(date +%s.%N)
echo "sqlite3 shell on the chunk summaries of the native file: $(awk "BEGIN {printf \"%.3f\", $end - $start}") s"

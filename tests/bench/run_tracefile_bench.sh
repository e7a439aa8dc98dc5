#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The native file side by side with its floor, in one run: N memory events (default 10M)
# written in the newest format (with its summary figures) and in format 1, each read whole
# and analysed (as the app does) and summarized (as `peaklens-cli summary` does), on one
# core and on every core, next to SQLite's own shell scanning the same events stored one row
# each. Then bytes per event of the newest format on the real recordings in tests/data/real.
#   tests/bench/run_tracefile_bench.sh [EVENTS]
set -euo pipefail
cd "$(dirname "$0")/../.."
events=${1:-10000000}
bench=build/bin/bench_tracefile
cli=build/bin/peaklens-cli
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
one_core="taskset -c 0"
runs=5

# min / median / max of the numbers on stdin, one per line
spread() { sort -g | awk '{v[NR] = $1} END {printf "%s / %s / %s", v[1], v[int((NR + 1) / 2)], v[NR]}'; }

$bench write "$events" "$dir/new.peaklens"
$bench write-v1 "$events" "$dir/v1.peaklens"
for format in v1 new; do
  size=$(stat -c %s "$dir/$format.peaklens")
  echo "format $format: $size bytes, $(awk "BEGIN {printf \"%.2f\", $size / $events}") bytes per event"
done
sync

# read: the whole file into memory, then analysed (as the app opens a file of up to
# LoadBudget::kDocumentEvents events); open: what the app and `plan` do with this one (the
# window around its peak, the events before it streamed by); summary: what `peaklens-cli
# summary` does, the figures the writer stored (format 3); summary-events: the same file
# analysed from its events as it is read, the stored figures passed over.
echo "read + analyse, events/s (min / median / max of $runs):"
for mode in read open summary summary-events; do
  for format in v1 new; do
    for cores in one all; do
      prefix=""
      [ $cores = one ] && prefix=$one_core
      for run in $(seq $runs); do
        $prefix $bench $mode "$dir/$format.peaklens" | sed -E 's/.*"events_per_second": ([0-9]+).*/\1/'
      done | spread > "$dir/spread"
      echo "  $mode, format $format, $cores core(s): $(cat "$dir/spread")"
      [ $format = new ] && awk '{print $2}' FS=' / ' "$dir/spread" > "$dir/$mode-$cores"
    done
  done
done
for mode in read open summary summary-events; do
  /usr/bin/time -f "%M" -o "$dir/rss" $bench $mode "$dir/new.peaklens" > /dev/null
  echo "  $mode, newest format, max RSS: $(cat "$dir/rss") KiB, $(awk "BEGIN {printf \"%.1f\", $(cat "$dir/rss") * 1024 / $events}") bytes per event"
done

$bench rows "$dir/new.peaklens" "$dir/rows.db"
for run in $(seq $runs); do
  start=$(date +%s.%N)
  $one_core sqlite3 "$dir/rows.db" 'select count(*), sum(delta_bytes) from events' > /dev/null
  end=$(date +%s.%N)
  awk "BEGIN {printf \"%.0f\n\", $events / ($end - $start)}"
done | spread > "$dir/floor"
echo "  floor, sqlite3 shell scanning one row per event: $(cat "$dir/floor")"
floor=$(awk '{print $2}' FS=' / ' "$dir/floor")
for mode in read open summary summary-events; do
  echo "$mode of the newest format against the floor (medians): $(awk "BEGIN {printf \"%.2f\", $(cat "$dir/$mode-one") / $floor}")x on one core," \
       "$(awk "BEGIN {printf \"%.2f\", $(cat "$dir/$mode-all") / $floor}")x on all cores (goal >= 3)"
done
start=$(date +%s.%N)
$one_core sqlite3 "$dir/new.peaklens" 'select sum(count), sum(bytes_allocated) - sum(bytes_freed) from events' > /dev/null
end=$(date +%s.%N)
echo "sqlite3 shell on the chunk summaries of the native file: $(awk "BEGIN {printf \"%.3f\", $end - $start}") s"

echo "newest format on real recordings (events table only):"
for input in tests/data/real/*.pickle.gz tests/data/real/*.pt.trace.json.gz; do
  $cli convert "$input" "$dir/real.peaklens" > /dev/null
  sqlite3 "$dir/real.peaklens" \
    "select printf('  %-48s %9d events %6.2f bytes per event', '$(basename "$input")', sum(count),
            1.0 * sum(length(columns) + length(totals) + 80) / max(sum(count), 1)) from events"
  rm -f "$dir/real.peaklens"
done

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The native file side by side with its floor, in one run: N memory events (default 10M)
# written in format 2 and in format 1, each read whole and analysed (as the app does) and
# summarized (as `peaklens-cli summary` does: a format-2 file as it is read), on one core
# and on every core, next to SQLite's own shell scanning the same events stored one row
# each. Then bytes per event of format 2 on the real recordings in tests/data/real.
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

$bench write "$events" "$dir/v2.peaklens"
$bench write-v1 "$events" "$dir/v1.peaklens"
for format in v1 v2; do
  size=$(stat -c %s "$dir/$format.peaklens")
  echo "format ${format#v}: $size bytes, $(awk "BEGIN {printf \"%.2f\", $size / $events}") bytes per event"
done
sync

# read: the whole file into memory, then analysed (the app); summary: what `peaklens-cli
# summary` does, a format-2 file analysed as it is read.
echo "read + analyse, events/s (min / median / max of $runs):"
for mode in read summary; do
  for format in v1 v2; do
    for cores in one all; do
      prefix=""
      [ $cores = one ] && prefix=$one_core
      for run in $(seq $runs); do
        $prefix $bench $mode "$dir/$format.peaklens" | sed -E 's/.*"events_per_second": ([0-9]+).*/\1/'
      done | spread > "$dir/spread"
      echo "  $mode, format ${format#v}, $cores core(s): $(cat "$dir/spread")"
      [ $mode = summary ] && [ $format = v2 ] && awk '{print $2}' FS=' / ' "$dir/spread" > "$dir/v2$cores"
    done
  done
done
for mode in read summary; do
  /usr/bin/time -f "%M" -o "$dir/rss" $bench $mode "$dir/v2.peaklens" > /dev/null
  echo "  $mode, format 2, max RSS: $(cat "$dir/rss") KiB, $(awk "BEGIN {printf \"%.1f\", $(cat "$dir/rss") * 1024 / $events}") bytes per event"
done

$bench rows "$dir/v2.peaklens" "$dir/rows.db"
for run in $(seq $runs); do
  start=$(date +%s.%N)
  $one_core sqlite3 "$dir/rows.db" 'select count(*), sum(delta_bytes) from events' > /dev/null
  end=$(date +%s.%N)
  awk "BEGIN {printf \"%.0f\n\", $events / ($end - $start)}"
done | spread > "$dir/floor"
echo "  floor, sqlite3 shell scanning one row per event: $(cat "$dir/floor")"
floor=$(awk '{print $2}' FS=' / ' "$dir/floor")
echo "summary of format 2 against the floor (medians): $(awk "BEGIN {printf \"%.2f\", $(cat "$dir/v2one") / $floor}")x on one core," \
     "$(awk "BEGIN {printf \"%.2f\", $(cat "$dir/v2all") / $floor}")x on all cores (goal >= 3)"
start=$(date +%s.%N)
$one_core sqlite3 "$dir/v2.peaklens" 'select sum(count), sum(bytes_allocated) - sum(bytes_freed) from events' > /dev/null
end=$(date +%s.%N)
echo "sqlite3 shell on the chunk summaries of the native file: $(awk "BEGIN {printf \"%.3f\", $end - $start}") s"

echo "format 2 on real recordings (events table only):"
for input in tests/data/real/*.pickle.gz tests/data/real/*.pt.trace.json.gz; do
  $cli convert "$input" "$dir/real.peaklens" > /dev/null
  sqlite3 "$dir/real.peaklens" \
    "select printf('  %-48s %9d events %6.2f bytes per event', '$(basename "$input")', sum(count),
            1.0 * sum(length(columns) + length(totals) + 80) / max(sum(count), 1)) from events"
  rm -f "$dir/real.peaklens"
done

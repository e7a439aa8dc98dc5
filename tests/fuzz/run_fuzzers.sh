#!/usr/bin/env bash
# Runs every fuzzer for SECONDS (default 300), two at a time, seeded with the fixtures.
# Findings land in build-fuzz/findings/NAME/; the last status line of each run is printed.
#   cmake --preset fuzz && cmake --build build-fuzz && tests/fuzz/run_fuzzers.sh 300 [NAME...]
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-300}
bin=build-fuzz/bin
declare -A seeds=(
  [fuzz_pickle]="tests/data/*.pickle"
  [fuzz_snapshot_json]="tests/data/snapshot.json"
  [fuzz_kineto]="tests/data/kineto*.json"
  [fuzz_timeline]="tests/data/memory_timeline.json"
  [fuzz_native]="resources/samples/training-step.peaklens"
  [fuzz_tracetext]="tests/data/modelled-step.pltxt tests/data/*.pltxt"
  [fuzz_manifest]="tests/data/manifest.json"
)
run() {
  local name=$1 corpus=build-fuzz/corpus/$1 findings=build-fuzz/findings/$1
  mkdir -p "$corpus" "$findings"
  for f in ${seeds[$name]}; do [ -f "$f" ] && cp "$f" "$corpus/"; done
  local max_len=65536
  [ "$name" = fuzz_native ] && max_len=262144 # a whole small trace file
  "$bin/$name" -max_total_time="$seconds" -rss_limit_mb=4096 -max_len="$max_len" -print_final_stats=1 \
    -artifact_prefix="$findings/" "$corpus" > "build-fuzz/$name.log" 2>&1 || true
  echo "$name: $(grep -a -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE)' "build-fuzz/$name.log" | tail -1)"
  echo "$name: $(grep -a -E 'stat::number_of_executed_units' "build-fuzz/$name.log") findings: $(ls "$findings" | wc -l)"
}
names=(fuzz_pickle fuzz_snapshot_json fuzz_kineto fuzz_timeline fuzz_native fuzz_tracetext fuzz_manifest)
[ $# -gt 1 ] && names=("${@:2}") # or just the fuzzers named after SECONDS
for ((i = 0; i < ${#names[@]}; i += 2)); do
  run "${names[i]}" &
  [ $((i + 1)) -lt ${#names[@]} ] && run "${names[i + 1]}" &
  wait
done

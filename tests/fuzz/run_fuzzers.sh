#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every fuzzer for SECONDS (default 300), two at a time, seeded with the fixtures.
# Findings land in build-fuzz/findings/NAME/; the last status line of each run is printed.
#   cmake --preset fuzz && cmake --build build-fuzz && tests/fuzz/run_fuzzers.sh 300 [NAME...]
# For CI, a fixed amount of work instead of time, and a failing exit status on any finding:
#   tests/fuzz/run_fuzzers.sh --runs 3000 [NAME...]
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD # absolute paths: fuzz_cli_args runs in a folder of its own
if [ "${1:-}" = --runs ]; then
  budget=(-runs="$2") strict=1
  shift
else
  budget=(-max_total_time="${1:-300}") strict=0
fi
bin=build-fuzz/bin
# The inputs of fuzz_native_sql and fuzz_report are programs and choices, not files: any
# bytes make one, and these give the fuzzer varied ones to start from.
declare -A seeds=(
  [fuzz_pickle]="tests/data/*.pickle"
  [fuzz_snapshot_json]="tests/data/snapshot.json"
  [fuzz_kineto]="tests/data/kineto*.json"
  [fuzz_timeline]="tests/data/memory_timeline.json"
  [fuzz_native]="resources/samples/training-step.peaklens tests/data/format/training-step.v1.peaklens tests/data/format/training-step.v3.peaklens"
  [fuzz_native_sql]="tests/data/expected.json tests/data/memory_timeline.json tests/data/manifest.json"
  [fuzz_tracetext]="tests/data/modelled-step.pltxt tests/data/*.pltxt"
  [fuzz_views]="tests/data/*.pltxt"
  [fuzz_manifest]="tests/data/manifest.json"
  [fuzz_cli_args]=""
  [fuzz_report]="tests/data/expected.json tests/data/memory_timeline.json"
  [fuzz_pageorder]="resources/samples/training-step.peaklens tests/data/format/training-step.v1.peaklens tests/data/modelled-step.pltxt"
)
declare -A max_lens=([fuzz_native]=524288 [fuzz_pageorder]=524288 [fuzz_native_sql]=4096 [fuzz_cli_args]=1024 [fuzz_report]=16384)
declare -A dicts=([fuzz_cli_args]=tests/fuzz/cli_args.dict)
# Argument lists for fuzz_cli_args, '|' between arguments: a first byte ('@') that adds no
# subcommand or fixture in front, then what a user would type after peaklens-cli.
cli_seeds=(
  'info|training-step.peaklens'
  'summary|training-step.peaklens'
  'summary|modelled-step.pltxt|--json|--top|3'
  'summary|snapshot.json|--full-stacks'
  'convert|modelled-step.pltxt|out.peaklens'
  'convert|snapshot.json|training-step.peaklens|--force'
  'plan|modelled-step.pltxt|--budget|70%'
  'plan|training-step.peaklens|--strategy|every:2|--json'
  'plan|modelled-step.pltxt|--max-batch|--budget|6GiB|--batch|4'
  'plan|modelled-step.pltxt|--checkpoint|blocks.0,blocks.1|--layers|blocks\.[0-9]+'
  'plan|modelled-step.pltxt|--overhead|10%'
  'pareto|training-step.peaklens|--json'
  'report|training-step.peaklens|modelled-step.pltxt|-o|out.html'
  'report|modelled-step.pltxt|--output|out.csv|--table|sites'
  'report|snapshot.json|-o|out.json|--budget|512MiB'
  '--help'
  'plan|--help'
  '--version'
  $'summary|training-step.peaklens|--top|\x01\x019' # 512 nines: "\x01" COUNT TEXT repeats TEXT
)
write_cli_seeds() {
  local i=0
  for seed in "${cli_seeds[@]}"; do
    printf '@%s' "$seed" | tr '|' '\0' > "$1/seed-$i"
    i=$((i + 1))
  done
}
run() {
  local name=$1 corpus=$root/build-fuzz/corpus/$1 findings=$root/build-fuzz/findings/$1
  if [ ! -x "$bin/$name" ]; then
    echo "$name: not built (its dependency was not found when configuring)"
    return 0
  fi
  mkdir -p "$corpus" "$findings"
  for f in ${seeds[$name]:-}; do [ -f "$f" ] && cp "$f" "$corpus/"; done
  [ "$name" = fuzz_cli_args ] && write_cli_seeds "$corpus"
  local options=("${budget[@]}" -rss_limit_mb=4096 -max_len="${max_lens[$name]:-65536}"
                 -print_final_stats=1 -artifact_prefix="$findings/")
  [ -n "${dicts[$name]:-}" ] && options+=(-dict="$root/${dicts[$name]}")
  local status=0
  "$bin/$name" "${options[@]}" "$corpus" > "build-fuzz/$name.log" 2>&1 || status=$?
  echo "$name: $(grep -a -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE)' "build-fuzz/$name.log" | tail -1)"
  echo "$name: $(grep -a -E 'stat::number_of_executed_units' "build-fuzz/$name.log") findings: $(ls "$findings" | wc -l)"
  if [ "$strict" = 1 ] && [ "$status" != 0 ]; then
    echo "$name: FAILED (exit $status); the end of build-fuzz/$name.log:"
    tail -40 "build-fuzz/$name.log"
    return 1
  fi
}
names=(fuzz_pickle fuzz_snapshot_json fuzz_kineto fuzz_timeline fuzz_native fuzz_native_sql fuzz_tracetext fuzz_manifest
       fuzz_cli_args fuzz_report fuzz_views fuzz_pageorder)
[ $# -gt 1 ] && names=("${@:2}") # or just the fuzzers named after SECONDS or --runs N
failed=0
for ((i = 0; i < ${#names[@]}; i += 2)); do
  pids=()
  run "${names[i]}" & pids+=($!)
  if [ $((i + 1)) -lt ${#names[@]} ]; then run "${names[i + 1]}" & pids+=($!); fi
  for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
done
exit $failed

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The one command that checks PeakLens's GPU half on a Linux machine with an NVIDIA GPU,
# the CUDA toolkit (with CUPTI) and a pip PyTorch; no Qt and no network needed
# (docs/recording.md, "Checking on a GPU"). It builds peaklens-cli, libpeaklens_cupti.so
# and peaklens-replay into build-gpu/ (SQLite, zlib, zstd, simdjson, nlohmann_json and CLI11
# from the Debian packages tests/gpu/fetch-deps.sh put in tests/gpu/deps/, unpacked into
# build-gpu/deps-prefix, never into /), then:
#   1. records tests/gpu/gpt_train.py under `peaklens-cli record` in each allocator mode
#      and runs it again without: per-layer activation bytes against what PyTorch saved,
#      the collector's cost in step time, peaks against PyTorch's own;
#   2. plans toggles for a budget on that trace, reruns with PEAKLENS_CHECKPOINT set to
#      them: predicted against measured peak and step time;
#   3. peaklens-replay --device cuda for gpt/mlp/cnn with none/all/every:2/the planner's
#      toggles: measured against predicted, and against torch.utils.checkpoint
#      (tests/gpu/checkpoint_reference.py); the GPT with a block kept in bfloat16 and one
#      offloaded to host memory (peak and step time against predicted);
#   4. a memory snapshot, a Kineto trace and a memory timeline of the same GPT
#      (tests/gpu/record_fixtures.py) imported by `peaklens-cli summary --json`, their
#      peaks against torch.cuda.max_memory_allocated();
#   5. small real recordings copied to OUT/fixtures/ with a README, for tests/data/real/;
#   6. records gpt_train.py through PyTorch's own allocator (`record --backend torch`, the
#      caching allocator left as it is): activation bytes per block, its peak against
#      torch.cuda.max_memory_allocated, the cost in step time, and `peaklens-cli rerun`
#      with every:2, then with every block under a per-op policy and kept in bfloat16
#      (predicted against measured peak).
# Every figure and file goes to one folder; the end is one table (step | figure |
# measured | reference | goal | verdict), also OUT/summary.tsv and OUT/summary.json. A
# step that fails is a FAILED row with its reason; the others still run. Exit status 1
# when any row is FAIL or FAILED.
#
#   tests/gpu/acceptance.sh [--out DIR] [--dry-run] [--build-only]
#
#   --out DIR     where everything goes (default: gpu-acceptance-<date>/ here)
#   --dry-run     no GPU: builds build-gpu-dry/ from the system's packages, with the
#                 tests' CUDA stand-ins, and runs steps 1-2 on the stand-in trainer and
#                 step 3 on the CPU; the rows that need a GPU say so
#   --build-only  configure and build, then stop
#   --only N      build, then run step N alone (6: the torch backend)
#   PYTHON=...    the python3 with torch (default: the first that imports torch of
#                 python3, /usr/bin/python3 and the environment run.sh makes)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
here=$root/tests/gpu
figures=$here/figures.py
started=$SECONDS

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'; }
out="" dry=0 build_only=0 only=""
while [ $# -gt 0 ]; do
  case $1 in
    --out) [ $# -ge 2 ] || { echo "acceptance.sh: --out needs a folder." >&2; exit 2; }; out=$2; shift 2 ;;
    --out=*) out=${1#--out=}; shift ;;
    --dry-run) dry=1; shift ;;
    --build-only) build_only=1; shift ;;
    --only) [ $# -ge 2 ] || { echo "acceptance.sh: --only needs a step." >&2; exit 2; }; only=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "acceptance.sh: unknown argument '$1' (see --help)." >&2; exit 2 ;;
  esac
done
out=${out:-gpu-acceptance-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
mkdir -p "$out/logs"
rows=$out/rows.tsv
timings=$out/logs/timings.tsv
: >"$rows"
: >"$timings"

# Python for figures (standard library only) and Python with torch for the scripts.
FPY=$(command -v python3 || command -v python || true)
[ -n "$FPY" ] || { echo "acceptance.sh: python3 is missing." >&2; exit 2; }
PY=""
for candidate in "${PYTHON:-}" python3 /usr/bin/python3 "${XDG_CACHE_HOME:-$HOME/.cache}"/peaklens/torch-*/bin/python; do
  if [ -n "$candidate" ] && command -v "$candidate" >/dev/null && "$candidate" -c 'import torch' 2>/dev/null; then
    PY=$(command -v "$candidate")
    break
  fi
done
fig() { "$FPY" "$figures" --rows "$rows" "$@"; }
get() { "$FPY" "$figures" get "$@"; }

row() { # row STEP FIGURE MEASURED REFERENCE GOAL VERDICT
  local cells=()
  for cell in "$@"; do cells+=("$(printf '%s' "$cell" | tr '\t\n' '  ')"); done
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "${cells[@]}" >>"$rows"
}
say() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*"; }

# guard STEP WHAT FUNCTION ARGS...: runs FUNCTION in a subshell that stops at the first
# failing command; the failure becomes a FAILED row naming it, and the script goes on.
guard() {
  local step=$1 what=$2
  shift 2
  local slug log reason begin rc
  slug=$(printf '%s' "$what" | tr -c 'A-Za-z0-9.:-' '_' | cut -c1-60)
  log=$out/logs/step$step-$slug.log
  reason=$out/logs/.reason-$step-$slug
  rm -f "$reason"
  begin=$SECONDS
  say "step $step: $what ..."
  set +e
  (
    set -eEuo pipefail
    REASON=$reason
    # shellcheck disable=SC2154  # status is set inside the trap
    trap 'status=$?; [ -s "$REASON" ] || echo "exit $status of: $BASH_COMMAND" >"$REASON"' ERR
    "$@"
  ) >"$log" 2>&1
  rc=$?
  set -e
  printf '%s\t%s\n' "$step $what" "$((SECONDS - begin))" >>"$timings"
  if [ $rc -ne 0 ]; then
    local why
    why=$(cat "$reason" 2>/dev/null || echo "exit $rc")
    local last
    last=$(grep -v '^\s*$' "$log" | tail -1 | cut -c1-160 || true)
    [ "$last" = "$why" ] && last=""
    row "$step" "$what" "FAILED: $why${last:+ — $last}" "" "" FAILED
    say "step $step: $what FAILED after $((SECONDS - begin)) s ($why); log: ${log#"$out"/}"
    tail -5 "$log" | sed 's/^/    /'
  else
    say "step $step: $what done in $((SECONDS - begin)) s"
  fi
  rm -f "$reason"
}
fail() { echo "$*" >"$REASON"; echo "$*" >&2; exit 1; }

# ---- the runs' sizes ---------------------------------------------------------------------

if [ $dry -eq 1 ]; then
  build=$root/build-gpu-dry
  replay_device=cpu
  specs=(
    'gpt:{"model": "gpt", "layers": 4, "d_model": 128, "heads": 4, "seq": 64, "vocab": 1024, "batch": 4}'
    'mlp:{"model": "mlp", "layers": 6, "d_model": 256, "batch": 256}'
    'cnn:{"model": "cnn", "layers": 4, "channels": 16, "image": 32, "batch": 8}'
  )
else
  build=$root/build-gpu
  replay_device=cuda
  specs=(
    'gpt:{"model": "gpt", "layers": 4, "d_model": 256, "heads": 8, "seq": 256, "vocab": 4096, "batch": 8}'
    'mlp:{"model": "mlp", "layers": 8, "d_model": 1024, "batch": 4096}'
    'cnn:{"model": "cnn", "layers": 4, "channels": 64, "image": 64, "batch": 32}'
  )
fi
# The GPT of steps 1, 2 (and 5, smaller), and the stand-in trainer of a dry run.
gpt_model=(--layers 4 --d-model 256 --heads 8 --seq 512 --vocab 8192 --batch 8)
gpt_timed=(--steps 50 --warmup 5)
trainer_args=(--layers 6 --steps 40 --step-ms 10)
replay_steps=(--steps 5 --warmup 2)
[ $dry -eq 1 ] && replay_steps=(--steps 9 --warmup 2) # a shared CPU is noisier than a GPU

cli=$build/bin/peaklens-cli
replay=$build/bin/peaklens-replay
trainer=$build/bin/peaklens-test-trainer
standin=$build/standin
helper=$root/plugins/python

machine() {
  if [ $dry -eq 0 ] && command -v nvidia-smi >/dev/null; then
    printf '%s, %s' "$(uname -n)" "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
  else
    printf '%s, no GPU (dry run)' "$(uname -n)"
  fi
}

# ---- step 0: build -------------------------------------------------------------------------

# Unpacks tests/gpu/deps/*.deb into a prefix of its own; links that point at / are made
# to point inside it.
unpack_deps() {
  local prefix=$1
  rm -rf "$prefix"
  mkdir -p "$prefix"
  local debs=("$here"/deps/*.deb)
  [ -e "${debs[0]}" ] || return 1
  for deb in "${debs[@]}"; do
    if command -v dpkg-deb >/dev/null; then
      dpkg-deb -x "$deb" "$prefix"
    else # a .deb is an ar archive holding data.tar.*
      local member
      member=$(ar t "$deb" | grep '^data\.tar')
      ar p "$deb" "$member" | tar -x -a -f - -C "$prefix" 2>/dev/null \
        || ar p "$deb" "$member" | tar -x --xz -f - -C "$prefix"
    fi
  done
  while IFS= read -r link; do
    local target
    target=$(readlink "$link")
    case $target in /*) ln -sfn "$prefix$target" "$link" ;; esac
  done < <(find "$prefix" -type l)
}

# A pip CUPTI (nvidia-cuda-cupti) for a toolkit without one: its library and include folder.
pip_cupti() {
  [ -n "$PY" ] || return 1
  local dirs lib inc
  dirs=$("$PY" -c 'import site,sys; print(" ".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null) || return 1
  for d in $dirs; do
    [ -d "$d/nvidia" ] || continue
    lib=$(find "$d/nvidia" -name 'libcupti.so*' -type f 2>/dev/null | sort | head -1)
    inc=$(find "$d/nvidia" -name cupti.h 2>/dev/null | head -1)
    if [ -n "$lib" ] && [ -n "$inc" ]; then
      printf '%s\n%s\n' "$lib" "$(dirname "$inc")"
      return 0
    fi
  done
  return 1
}

# Whether the configured build has a target (read once per configure: grep -q would end
# the pipe early, and pipefail would count cmake's broken pipe as a failure).
has_target() {
  [ -s "$build/.acceptance-targets" ] || cmake --build "$build" --target help >"$build/.acceptance-targets" 2>/dev/null || true
  grep -Eq "(^|[ .])$1(:| |$)" "$build/.acceptance-targets"
}

build_step() {
  local generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  local options=(-DCMAKE_BUILD_TYPE=Release -DPEAKLENS_BUILD_GUI=OFF)
  if [ $dry -eq 1 ]; then
    options+=(-DBUILD_TESTING=ON)
  else
    options+=(-DBUILD_TESTING=OFF)
    local prefix_path=()
    local prefix=$build/deps-prefix
    mkdir -p "$build"
    if unpack_deps "$prefix"; then
      local usr=$prefix/usr lib=$prefix/usr/lib/x86_64-linux-gnu
      prefix_path+=("$usr")
      [ -f "$usr/include/sqlite3.h" ] && options+=(-DSQLite3_INCLUDE_DIR="$usr/include" -DSQLite3_LIBRARY="$lib/libsqlite3.so")
      [ -f "$usr/include/zlib.h" ] && options+=(-DZLIB_ROOT="$usr" -DZLIB_INCLUDE_DIR="$usr/include" -DZLIB_LIBRARY="$lib/libz.so")
      [ -d "$lib/cmake/zstd" ] && options+=(-Dzstd_DIR="$lib/cmake/zstd")
      [ -d "$lib/cmake/simdjson" ] && options+=(-Dsimdjson_DIR="$lib/cmake/simdjson")
      [ -d "$usr/share/cmake/nlohmann_json" ] && options+=(-Dnlohmann_json_DIR="$usr/share/cmake/nlohmann_json")
      [ -d "$usr/share/cmake/CLI11" ] && options+=(-DCLI11_DIR="$usr/share/cmake/CLI11")
      echo "dependencies from tests/gpu/deps/ in $prefix"
    else
      echo "tests/gpu/deps/ holds no packages (tests/gpu/fetch-deps.sh fetches them); using the system's."
    fi
    [ -n "$PY" ] || fail "no python3 here imports torch: set PYTHON=/path/to/python3 (a pip PyTorch with CUDA)."
  fi
  if [ -n "$PY" ]; then
    local torch_prefix
    torch_prefix=$("$PY" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
    prefix_path+=("$torch_prefix")
    options+=("-DCMAKE_PREFIX_PATH=$(IFS=';'; echo "${prefix_path[*]}")" "-DPEAKLENS_PYTHON=$PY")
  fi
  rm -f "$build/.acceptance-targets"
  cmake -S "$root" -B "$build" "${generator[@]}" "${options[@]}" | tee "$out/logs/configure.log"
  if [ $dry -eq 0 ] && ! grep -q 'CUDA_cupti_LIBRARY:FILEPATH=/' "$build/CMakeCache.txt"; then
    local found
    if found=$(pip_cupti); then
      echo "the toolkit has no CUPTI; using the pip one: $found"
      cmake -S "$root" -B "$build" -DCUDA_cupti_LIBRARY="$(sed -n 1p <<<"$found")" \
        -DCUDAToolkit_CUPTI_INCLUDE_DIR="$(sed -n 2p <<<"$found")" | tee "$out/logs/configure.log"
    fi
  fi
  local targets=() missing=() standins=()
  local wanted=(peaklens-cli peaklens_cupti peaklens-replay peaklens_torch)
  [ $dry -eq 1 ] && wanted+=(peaklens-standin-cuda peaklens-standin-cupti peaklens-test-trainer)
  for t in "${wanted[@]}"; do
    if ! has_target "$t"; then
      missing+=("$t")
    else
      case $t in peaklens-standin-*|peaklens-test-trainer) standins+=("$t") ;; *) targets+=("$t") ;; esac
    fi
  done
  [ ${#targets[@]} -gt 0 ] || fail "CMake configured none of ${wanted[*]}."
  # One target at a time: a replay engine that does not compile against this LibTorch
  # leaves the CLI and the collector built, and their steps still run.
  local built_targets=() broken=()
  for t in "${targets[@]}"; do
    if cmake --build "$build" --parallel "$(nproc)" --target "$t"; then
      built_targets+=("$t")
    else
      broken+=("$t")
    fi
  done
  targets=("${built_targets[@]}")
  # The stand-ins are tests' code: when they do not build, the dry run says so in their rows.
  if [ ${#standins[@]} -gt 0 ]; then
    if cmake --build "$build" --parallel "$(nproc)" --target "${standins[@]}"; then
      targets+=("${standins[@]}")
    else
      row 0 "build the CUDA stand-ins" "stand-ins not built: their build failed (logs/step0-configure_and_build.log)" "" "" "stand-ins not built"
    fi
  fi
  local note="" verdict=PASS
  if [ $dry -eq 0 ] && has_target peaklens-replay && ! grep -q 'LibTorch has CUDA' "$out/logs/configure.log"; then
    note="; the LibTorch found has no CUDA"
    verdict=FAIL
  fi
  for t in "${missing[@]}"; do
    case $t in peaklens-standin-*|peaklens-test-trainer) ;; *) verdict=FAIL ;; esac
  done
  for t in "${broken[@]}"; do
    row 0 "build $t" "FAILED: it did not compile or link (logs/step0-configure_and_build.log)" "" "" FAILED
    verdict=FAIL
  done
  local built="${targets[*]}"
  row 0 "build ($(basename "$build"))" "built ${built// /, }$note" "" "all of ${wanted[*]}" "$verdict"
  for t in "${missing[@]}"; do
    case $t in
      peaklens-standin-*|peaklens-test-trainer) row 0 "build $t" "stand-ins not built: CMake has no target $t (tests/plugins/cupti/standin)" "" "" "stand-ins not built" ;;
      peaklens_cupti) row 0 "build $t" "FAILED: no collector: CMake found no CUPTI (see logs/configure.log)" "" "" FAILED ;;
      peaklens-replay|peaklens_torch) row 0 "build $t" "FAILED: CMake found no LibTorch (see logs/configure.log)" "" "" FAILED ;;
      *) row 0 "build $t" "FAILED: CMake has no target $t" "" "" FAILED ;;
    esac
  done
  if [ $dry -eq 1 ] && ! grep -q 'CUDA_cupti_LIBRARY:FILEPATH=/' "$build/CMakeCache.txt"; then
    echo "no CUDA toolkit with CUPTI here: no collector, no stand-ins."
  fi
}

if [ $dry -eq 0 ] && [ $build_only -eq 0 ]; then
  if [ -z "$PY" ] || ! "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    echo "acceptance.sh: ${PY:-python3 (with torch)} sees no CUDA device (torch.cuda.is_available() is False): on a machine without a GPU, run --dry-run." >&2
    row - "CUDA device" "FAILED: torch.cuda.is_available() is False in ${PY:-python3, which has no torch}" "" "" FAILED
    "$FPY" "$figures" --rows "$rows" table --out "$out" --mode gpu --timings "$timings" --machine "$(machine)" || true
    exit 1
  fi
fi

guard 0 "configure and build" build_step
if [ $build_only -eq 1 ]; then
  "$FPY" "$figures" --rows "$rows" table --out "$out" --mode build-only --timings "$timings" --machine "$(machine)"
  exit $?
fi

standins_ok=0
if [ -x "$trainer" ] && [ -e "$standin/libcuda.so.1" ] && compgen -G "$standin/libcupti.so.*" >/dev/null; then
  standins_ok=1
fi

# ---- running the training program ------------------------------------------------------------

# The command steps 1 and 2 record: the GPT script, or the stand-in trainer.
# With DIR, the GPT script also counts what autograd saves in its first step (DIR/saved.json).
train_command() { # train_command [DIR] -> the words, one per line
  local dir=${1:-}
  if [ $dry -eq 1 ]; then
    printf '%s\n' "$trainer" "${trainer_args[@]}"
  else
    printf '%s\n' "$PY" "$here/gpt_train.py" "${gpt_model[@]}" "${gpt_timed[@]}"
    [ -n "$dir" ] && printf '%s\n' --saved-bytes "$dir/saved.json"
  fi
  return 0
}

# The environment `record --allocator MODE` gives the command, less the collector: the
# same invocation otherwise, for the plain run.
plain_environment() {
  local mode=$1
  local allocator=$mode
  [ "$mode" = torch ] && allocator=native # the torch backend leaves the caching allocator as it is
  local env_words=(env -u CUDA_INJECTION64_PATH -u PEAKLENS_OUT "PYTHONPATH=$helper${PYTHONPATH:+:$PYTHONPATH}" "PEAKLENS_ALLOCATOR=$allocator")
  case $mode in
    exact) env_words+=(PYTORCH_NO_CUDA_MEMORY_CACHING=1) ;;
    async) env_words+=(PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync) ;;
  esac
  [ $dry -eq 1 ] && env_words+=("LD_LIBRARY_PATH=$standin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
  printf '%s\n' "${env_words[@]}"
}

record_environment() {
  if [ $dry -eq 1 ]; then
    printf '%s\n' env "LD_LIBRARY_PATH=$standin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  else
    printf '%s\n' env
  fi
}

# run_plain MODE DIR: the program without the collector; its step times in DIR/plain.json.
run_plain() {
  local mode=$1 dir=$2
  local envw cmd
  mapfile -t envw < <(plain_environment "$mode")
  mapfile -t cmd < <(train_command "$dir/plain")
  mkdir -p "$dir/plain"
  if ! (cd "$dir/plain" && "${envw[@]}" "${cmd[@]}" 2>&1) | "$FPY" "$figures" stamp "$dir/plain.stamps" >"$dir/plain.log"; then
    fail "the run without record failed: $(tail -1 "$dir/plain.log")"
  fi
  "$FPY" "$figures" steptimes "$dir/plain.log" --stamps "$dir/plain.stamps" --json "$dir/plain.json"
}

# run_recorded MODE DIR [CHECKPOINT]: the program under `peaklens-cli record` (MODE: an
# allocator of the collector, or torch for the torch backend); the trace's
# path in DIR/trace.path, its summary in DIR/summary.json, step times in DIR/record.json.
run_recorded() {
  local mode=$1 dir=$2 checkpoint=${3:-}
  local envw cmd
  mapfile -t envw < <(record_environment)
  if [ -n "$checkpoint" ]; then
    mapfile -t cmd < <(train_command)
    envw+=("PEAKLENS_CHECKPOINT=$checkpoint")
  else
    mapfile -t cmd < <(train_command "$dir")
  fi
  rm -rf "$dir/trace"
  mkdir -p "$dir"
  local how=(--backend cupti --allocator "$mode")
  [ "$mode" = torch ] && how=(--backend torch)
  if ! (cd "$dir" && "${envw[@]}" "$cli" record "${how[@]}" --out "$dir/trace" -- "${cmd[@]}" 2>&1) \
    | "$FPY" "$figures" stamp "$dir/record.stamps" >"$dir/record.log"; then
    fail "the recorded run failed: $(tail -1 "$dir/record.log")"
  fi
  local trace
  trace=$(ls -S "$dir"/trace/*.peaklens 2>/dev/null | head -1 || true)
  [ -n "$trace" ] || fail "record left no trace in ${dir#"$out"/}/trace ($(tail -1 "$dir/record.log"))"
  echo "$trace" >"$dir/trace.path"
  "$cli" summary "$trace" --json >"$dir/summary.json"
  "$cli" info "$trace" >"$dir/info.txt"
  "$FPY" "$figures" steptimes "$dir/record.log" --stamps "$dir/record.stamps" --json "$dir/record.json"
}

program_name() { [ $dry -eq 1 ] && echo "stand-in trainer" || echo "gpt_train.py"; }

# ---- step 1: record in each allocator mode ------------------------------------------------------

step1_mode() {
  local mode=$1 dir=$out/step1/$1
  mkdir -p "$dir"
  run_plain "$mode" "$dir"
  run_recorded "$mode" "$dir"
  fig overhead --step 1 --figure "step time under record, $mode ($(program_name))" \
    --record "$dir/record.json" --plain "$dir/plain.json" --max-pct 3
  local manifest
  manifest=$(ls "$dir"/trace/*.manifest.json 2>/dev/null | head -1 || true)
  case $mode in
    exact|async)
      if [ $dry -eq 0 ]; then
        [ -f "$dir/saved.json" ] || fail "gpt_train.py wrote no saved.json"
        fig activation --step 1 --figure "activation bytes per block, $mode" --summary "$dir/summary.json" \
          --saved "$dir/saved.json" --within 2 --details "$dir/activation.json"
      else
        [ -n "$manifest" ] || fail "the trainer wrote no manifest beside its trace"
        fig activation --step 1 --figure "activation bytes per block, $mode (stand-in)" --summary "$dir/summary.json" \
          --manifest "$manifest" --within 2 --details "$dir/activation.json"
      fi
      ;;
  esac
  if [ $dry -eq 0 ]; then
    local result="$dir/result.json"
    grep '^result ' "$dir/record.log" | tail -1 | cut -d' ' -f2- >"$result"
    case $mode in
      async)
        fig compare --step 1 --figure "peak allocated, async, vs PyTorch's" --unit bytes --within 2 \
          --measured "$(get "$dir/summary.json" peak.allocated_bytes)" \
          --reference "$(get "$result" max_memory_allocated)" --reference-note "(torch.cuda.max_memory_allocated)" ;;
      native)
        fig compare --step 1 --figure "peak reserved, native, vs PyTorch's" --unit bytes --within 2 \
          --measured "$(get "$dir/summary.json" peak.reserved_bytes --default "$(get "$dir/summary.json" peak.allocated_bytes)")" \
          --reference "$(get "$result" max_memory_reserved)" --reference-note "(torch.cuda.max_memory_reserved)" ;;
    esac
  fi
}

# The reference of the activation rows, checked on the CPU: gpt_train.py's count of what
# autograd saves, against the activation bytes per block of peaklens-replay's trace of
# the same GPT (its model is built the same way, plugins/torch/replaymodel.cpp).
step1_reference() {
  local dir=$out/step1/reference-cpu
  local dims=(--layers 4 --d-model 128 --heads 4 --seq 64 --vocab 1024 --batch 4)
  mkdir -p "$dir"
  "$replay" --model gpt "${dims[@]}" --device cpu --steps 1 --warmup 1 --calibration-steps 0 \
    --out "$dir/replay.peaklens" --json --progress none >"$dir/replay.json"
  "$cli" summary "$dir/replay.peaklens" --json >"$dir/replay.summary.json"
  (cd "$dir" && "$PY" "$here/gpt_train.py" "${dims[@]}" --device cpu --steps 1 --warmup 1 \
    --saved-bytes "$dir/saved.json" >"$dir/gpt_train.log" 2>&1)
  fig activation --step 1 --figure "the activation reference, on the CPU: gpt_train.py's count vs replay gpt" \
    --summary "$dir/replay.summary.json" --saved "$dir/saved.json" --within 2 --details "$dir/activation.json"
}

step1() {
  if [ $dry -eq 1 ] && [ -n "$PY" ]; then
    guard 1 "the activation reference on the CPU" step1_reference
  fi
  if [ $dry -eq 1 ] && [ $standins_ok -eq 0 ]; then
    for mode in exact async native; do
      row 1 "record the stand-in trainer, $mode" "stand-ins not built ($trainer, $standin/)" "" "" "stand-ins not built"
    done
    return
  fi
  for mode in exact async native; do
    guard 1 "record, allocator $mode" step1_mode "$mode"
  done
  if [ $dry -eq 1 ]; then
    row 1 "peak allocated, async, vs PyTorch's" "needs a GPU" "torch.cuda.max_memory_allocated" "within 2 %" "needs a GPU"
    row 1 "peak reserved, native, vs PyTorch's" "needs a GPU" "torch.cuda.max_memory_reserved" "within 2 %" "needs a GPU"
  fi
}

# ---- planning: a budget halfway between the lowest reachable peak and the measured one ------------

# plan_for_budget TRACE DIR: DIR/plan.json for that budget, DIR/budget the bytes.
plan_for_budget() {
  local trace=$1 dir=$2
  mkdir -p "$dir"
  "$cli" plan "$trace" --budget 1 --json >"$dir/lowest.json"
  local lowest measured
  lowest=$(get "$dir/lowest.json" predicted.peak_bytes)
  measured=$(get "$dir/lowest.json" baseline.peak_bytes)
  echo $((lowest + (measured - lowest) / 2)) >"$dir/budget"
  "$cli" plan "$trace" --budget "$(cat "$dir/budget")" --json >"$dir/plan.json"
  echo "lowest reachable $lowest, measured $measured, budget $(cat "$dir/budget")"
}

# ---- step 2: relaunch with the planner's toggles ------------------------------------------------------

step2() {
  local base=$out/step1/exact dir=$out/step2
  [ -s "$base/trace.path" ] || fail "step 1 (allocator exact) left no trace to plan on"
  plan_for_budget "$(cat "$base/trace.path")" "$dir"
  local budget strategy predicted_json
  budget=$(cat "$dir/budget")
  if [ $dry -eq 1 ]; then
    # The trainer toggles layers one by one: the plan's layers, predicted as exactly those.
    strategy=$(get "$dir/plan.json" checkpoint --join ,)
    [ -n "$strategy" ] || fail "the plan for $budget bytes checkpoints nothing"
    "$cli" plan "$(cat "$base/trace.path")" --checkpoint "$strategy" --json >"$dir/predicted.json"
    predicted_json=$dir/predicted.json
  else
    strategy=$(get "$dir/plan.json" strategy --default "$(get "$dir/plan.json" checkpoint --join ,)")
    [ -n "$strategy" ] || fail "the plan for $budget bytes checkpoints nothing"
    predicted_json=$dir/plan.json
  fi
  row 2 "plan for a budget halfway to the lowest peak" "$strategy" \
    "budget $("$FPY" -c "print(f'{$budget/2**20:.2f} MiB')"); lowest reachable $("$FPY" -c "print(f'{$(get "$dir/lowest.json" predicted.peak_bytes)/2**20:.2f} MiB')")" \
    "" info
  run_recorded exact "$dir/rerun" "$strategy"
  local applied
  applied=$(get "$dir/rerun/summary.json" meta.checkpoint --default "")
  fig compare --step 2 --figure "peak with the plan's toggles ($(program_name), exact)" --unit bytes --within 5 \
    --at-most "$budget" --measured "$(get "$dir/rerun/summary.json" peak.allocated_bytes)" \
    --reference "$(get "$predicted_json" predicted.peak_bytes)" --reference-note "predicted" \
    --measured-note "${applied:+(applied: $applied)}"
  "$FPY" - "$dir/rerun/summary.json" "$dir/rerun/steps.json" <<'EOF'
import json, statistics, sys
steps = json.load(open(sys.argv[1])).get("steps") or []
durations = [s["duration_ns"] / 1e6 for s in steps if s.get("duration_ns")]
json.dump({"median_ms": statistics.median(durations) if durations else None, "n": len(durations)}, open(sys.argv[2], "w"))
EOF
  fig compare --step 2 --figure "step time with the plan's toggles ($(program_name))" --unit ms --within 10 \
    --measured "$(get "$dir/rerun/steps.json" median_ms)" --measured-note "(median of the trace's steps)" \
    --reference "$(get "$predicted_json" predicted.step_time_ms)" --reference-note "predicted"
}

# ---- step 3: the replay engine against its predictions and against torch.utils.checkpoint --------------

step3_model() {
  local name=$1 spec=$2 dir=$out/step3/$1
  mkdir -p "$dir"
  printf '%s\n' "$spec" >"$dir/spec.json"
  "$replay" --model "$dir/spec.json" --device "$replay_device" --checkpoint none "${replay_steps[@]}" \
    --out "$dir/base.peaklens" --json --progress none >"$dir/base.json"
  plan_for_budget "$dir/base.peaklens" "$dir/plan"
  local planner
  planner=$(get "$dir/plan/plan.json" strategy --default "$(get "$dir/plan/plan.json" checkpoint --join ,)")
  local strategies=(none all every:2)
  [ -n "$planner" ] && strategies+=("$planner")
  local i=0
  for strategy in "${strategies[@]}"; do
    local label=$strategy
    [ $i -eq 3 ] && label="planner ($strategy)"
    if [ $i -eq 3 ]; then
      cp "$dir/plan/plan.json" "$dir/predicted-$i.json"
    else
      "$cli" plan "$dir/base.peaklens" --strategy "$strategy" --json >"$dir/predicted-$i.json"
    fi
    "$replay" --model "$dir/spec.json" --device "$replay_device" --checkpoint "$strategy" --baseline none \
      "${replay_steps[@]}" --json --progress none >"$dir/run-$i.json"
    fig compare --step 3 --figure "replay $name $label: peak" --unit bytes --within 2 \
      --measured "$(get "$dir/run-$i.json" peak_allocated_bytes)" \
      --reference "$(get "$dir/predicted-$i.json" predicted.peak_bytes)" --reference-note "predicted"
    fig replaytime --step 3 --figure "replay $name $label: step time" --within 10 \
      --run "$dir/run-$i.json" --predicted "$dir/predicted-$i.json"
    i=$((i + 1))
  done
  # A block run plainly keeping what it saves in bfloat16, or in host memory (its copies
  # out and back are timed on a GPU only, against the model's host bandwidth), and a block
  # checkpointed with a per-op policy that keeps its softmax.
  if [ "$name" = gpt ]; then
    local kept j=0
    for kept in 'blocks.1[bf16]' 'blocks.1[offload]' 'blocks.1[save:aten._softmax.default]'; do
      "$cli" plan "$dir/base.peaklens" --checkpoint "$kept" --json >"$dir/kept-predicted-$j.json"
      "$replay" --model "$dir/spec.json" --device "$replay_device" --checkpoint "$kept" --baseline none \
        "${replay_steps[@]}" --json --progress none >"$dir/kept-run-$j.json"
      fig compare --step 3 --figure "replay $name $kept: peak" --unit bytes --within 3 \
        --measured "$(get "$dir/kept-run-$j.json" peak_allocated_bytes)" \
        --reference "$(get "$dir/kept-predicted-$j.json" predicted.peak_bytes)" --reference-note "predicted"
      fig replaytime --step 3 --figure "replay $name $kept: step time" --within 10 \
        --run "$dir/kept-run-$j.json" --predicted "$dir/kept-predicted-$j.json"
      j=$((j + 1))
    done
  fi
  printf '%s\n' "${strategies[@]}" >"$dir/strategies.txt"
  "$cli" summary "$dir/base.peaklens" --json >"$dir/base.summary.json"
  if [ $dry -eq 1 ]; then
    # The reference model on the CPU: no peaks there, but its stages must be the replay's.
    if [ -n "$PY" ]; then
      "$PY" "$here/checkpoint_reference.py" --spec "$dir/base.json" --replay-json --device cpu --steps 1 --warmup 0 \
        --json "$dir/reference-cpu.json"
      fig mirror --step 3 --figure "checkpoint_reference.py builds the replay's $name (parameters per stage)" \
        --reference "$dir/reference-cpu.json" --summary "$dir/base.summary.json"
    fi
    for strategy in none all every:2 planner; do
      row 3 "replay $name $strategy: peak vs torch.utils.checkpoint" "needs a GPU" \
        "torch.utils.checkpoint (CUDA peak)" "within 2 %" "needs a GPU"
    done
    return
  fi
  local args=()
  for strategy in "${strategies[@]}"; do args+=(--strategy "$strategy"); done
  "$PY" "$here/checkpoint_reference.py" --spec "$dir/base.json" --replay-json --device cuda \
    "${replay_steps[@]}" "${args[@]}" --json "$dir/reference.json"
  fig mirror --step 3 --figure "checkpoint_reference.py builds the replay's $name (parameters per stage)" \
    --reference "$dir/reference.json" --summary "$dir/base.summary.json"
  i=0
  for strategy in "${strategies[@]}"; do
    local label=$strategy
    [ $i -eq 3 ] && label="planner ($strategy)"
    fig compare --step 3 --figure "replay $name $label: peak vs torch.utils.checkpoint" --unit bytes --within 2 \
      --measured "$(get "$dir/run-$i.json" peak_allocated_bytes)" --measured-note "replay" \
      --reference "$(get "$dir/reference.json" "results.$i.peak_allocated_bytes")" --reference-note "(reentrant, Python)"
    i=$((i + 1))
  done
}

step3() {
  for entry in "${specs[@]}"; do
    guard 3 "replay ${entry%%:*} on $replay_device" step3_model "${entry%%:*}" "${entry#*:}"
  done
}

# ---- step 4: PyTorch's own recordings imported --------------------------------------------------------

step4() {
  local dir=$out/step4
  mkdir -p "$dir"
  "$PY" "$here/record_fixtures.py" --out "$dir" --layers 2 --d-model 256 --heads 8 --seq 256 --vocab 8192 --batch 4 \
    --steps 2 --device cuda
  local figures_json=$dir/figures.json
  local kind file goal
  for kind in snapshot kineto memory_timeline memory_timeline_raw; do
    file=$(get "$figures_json" "$kind.file" --default "")
    if [ -z "$file" ]; then
      row 4 "$kind peak vs torch.cuda.max_memory_allocated" "FAILED: record_fixtures.py wrote no $kind" "" "" FAILED
      continue
    fi
    if ! "$cli" summary "$dir/$file" --json >"$dir/$kind.summary.json" 2>"$dir/$kind.summary.err"; then
      row 4 "$kind ($file) peak vs torch.cuda.max_memory_allocated" "FAILED: summary: $(head -1 "$dir/$kind.summary.err")" "" "" FAILED
      continue
    fi
    case $kind in memory_timeline*) goal=5 ;; *) goal=1 ;; esac
    fig compare --step 4 --figure "$file peak vs PyTorch's" --unit bytes --within "$goal" \
      --measured "$(get "$dir/$kind.summary.json" peak.allocated_bytes --default null)" --measured-note "summary --json" \
      --reference "$(get "$figures_json" "$kind.max_memory_allocated")" --reference-note "(torch.cuda.max_memory_allocated)"
  done
}

# ---- step 5: small real recordings for tests/data/real/ ------------------------------------------------

step5() {
  local dir=$out/step5
  mkdir -p "$dir"
  local small=(--layers 2 --d-model 128 --heads 4 --seq 128 --vocab 2048 --batch 4 --steps 2 --warmup 1)
  local files=() summaries=() commands=()
  for mode in exact async; do
    rm -rf "${dir:?}/$mode"
    if ! (cd "$dir" && "$cli" record --allocator "$mode" --out "$dir/$mode" -- "$PY" "$here/gpt_train.py" "${small[@]}") \
      >"$dir/$mode.log" 2>&1; then
      fail "record --allocator $mode failed: $(tail -1 "$dir/$mode.log")"
    fi
    local trace
    trace=$(ls -S "$dir/$mode"/*.peaklens | head -1)
    cp "$trace" "$dir/gpt_train_$mode.peaklens"
    files+=(--file "$dir/gpt_train_$mode.peaklens")
    local manifest
    manifest=$(ls "$dir/$mode"/*.manifest.json 2>/dev/null | head -1 || true)
    if [ -n "$manifest" ]; then
      cp "$manifest" "$dir/gpt_train_$mode.manifest.json"
      files+=(--file "$dir/gpt_train_$mode.manifest.json")
    fi
    "$cli" summary "$dir/gpt_train_$mode.peaklens" --json >"$dir/gpt_train_$mode.summary.json"
    summaries+=(--summary "gpt_train_$mode.peaklens=$dir/gpt_train_$mode.summary.json")
    commands+=(--command "peaklens-cli record --allocator $mode -- python3 tests/gpu/gpt_train.py ${small[*]}")
  done
  local step4=$out/step4
  if [ -f "$step4/figures.json" ]; then
    for kind in snapshot kineto memory_timeline memory_timeline_raw; do
      local file peak
      file=$(get "$step4/figures.json" "$kind.file" --default "")
      [ -n "$file" ] || continue
      peak=$(get "$step4/figures.json" "$kind.max_memory_allocated" --default "")
      files+=(--file "$step4/$file${peak:+=$peak}")
      [ -f "$step4/$kind.summary.json" ] && summaries+=(--summary "$file=$step4/$kind.summary.json")
    done
    commands+=(--command "python3 tests/gpu/record_fixtures.py --out DIR --layers 2 --d-model 256 --heads 8 --seq 256 --vocab 8192 --batch 4 --steps 2 --device cuda")
  fi
  fig fixtures --step 5 --figure "recordings for tests/data/real/" --dest "$out/fixtures" "${files[@]}" "${summaries[@]}" \
    "${commands[@]}" --machine "$(machine), torch $("$PY" -c 'import torch; print(torch.__version__)')" \
    --made-by '{"gpt_train_exact": "tests/gpu/gpt_train.py under peaklens-cli record --allocator exact", "gpt_train_async": "tests/gpu/gpt_train.py under peaklens-cli record --allocator async"}' \
    --default-made-by "tests/gpu/record_fixtures.py"
}

# ---- step 6: the torch backend ---------------------------------------------------------------------------------

step6() {
  local dir=$out/step6
  mkdir -p "$dir"
  run_plain torch "$dir"
  run_recorded torch "$dir"
  fig overhead --step 6 --figure "step time under record --backend torch (gpt_train.py)" \
    --record "$dir/record.json" --plain "$dir/plain.json" --max-pct 3
  [ -f "$dir/saved.json" ] || fail "gpt_train.py wrote no saved.json"
  fig activation --step 6 --figure "activation bytes per block, torch backend" --summary "$dir/summary.json" \
    --saved "$dir/saved.json" --within 2 --details "$dir/activation.json"
  grep '^result ' "$dir/record.log" | tail -1 | cut -d' ' -f2- >"$dir/result.json"
  fig compare --step 6 --figure "peak allocated, torch backend, vs PyTorch's" --unit bytes --within 1 \
    --measured "$(get "$dir/summary.json" peak.allocated_bytes)" \
    --reference "$(get "$dir/result.json" max_memory_allocated)" --reference-note "(torch.cuda.max_memory_allocated)"
  (cd "$dir" && "$cli" rerun "$(cat "$dir/trace.path")" --checkpoint every:2 --out "$dir/rerun" --json) \
    >"$dir/rerun.json" 2>"$dir/rerun.log" || fail "peaklens-cli rerun failed: $(tail -1 "$dir/rerun.log")"
  fig compare --step 6 --figure "peaklens-cli rerun every:2, torch backend: peak" --unit bytes --within 5 \
    --measured "$(get "$dir/rerun.json" measured.peak_bytes)" \
    --reference "$(get "$dir/rerun.json" predicted.peak_bytes)" --reference-note "predicted"
  # Every block with a per-op policy (its matrix products' outputs kept), then kept in
  # bfloat16, then offloaded to pinned host memory (docs/planning.md): predicted against
  # measured peak on the GPU, and for offload the step time, its copies timed at the
  # default host bandwidth.
  "$cli" plan "$(cat "$dir/trace.path")" --checkpoint all --json >"$dir/all.json" || fail "peaklens-cli plan --checkpoint all failed"
  local blocks policy kind
  blocks=$(get "$dir/all.json" checkpoint --join ,)
  for policy in save:aten.addmm.default bf16 offload; do
    kind=${policy%%:*}
    (cd "$dir" && "$cli" rerun "$(cat "$dir/trace.path")" --checkpoint "$(echo "$blocks" | sed "s/\([^,]*\)/\1[$policy]/g")" \
      --out "$dir/rerun-$kind" --json) >"$dir/rerun-$kind.json" 2>"$dir/rerun-$kind.log" \
      || fail "peaklens-cli rerun with [$policy] failed: $(tail -1 "$dir/rerun-$kind.log")"
    fig compare --step 6 --figure "peaklens-cli rerun, every block [$policy], torch backend: peak" --unit bytes --within 3 \
      --measured "$(get "$dir/rerun-$kind.json" measured.peak_bytes)" \
      --reference "$(get "$dir/rerun-$kind.json" predicted.peak_bytes)" --reference-note "predicted"
  done
  fig compare --step 6 --figure "peaklens-cli rerun, every block [offload], torch backend: step time" --unit ms --within 10 \
    --measured "$(get "$dir/rerun-offload.json" measured.step_time_ms)" \
    --reference "$(get "$dir/rerun-offload.json" predicted.step_time_ms)" --reference-note "predicted"
}

# ---- the run ------------------------------------------------------------------------------------------------

if [ -n "$only" ]; then
  [ "$only" = 6 ] || { echo "acceptance.sh: --only knows step 6." >&2; exit 2; }
  if [ $dry -eq 1 ]; then
    row 6 "the torch backend on gpt_train.py" "needs a GPU (tests/plugins/python/test_torchrecord.py checks it on the CPU)" "" "" "needs a GPU"
  else
    guard 6 "the torch backend" step6
  fi
  "$FPY" "$figures" --rows "$rows" table --out "$out" --mode "$([ $dry -eq 1 ] && echo dry-run || echo gpu)" \
    --timings "$timings" --machine "$(machine)"
  exit $?
fi

begin=$SECONDS
step1
printf '%s\t%s\n' "1 (all)" "$((SECONDS - begin))" >>"$timings"

if [ $dry -eq 1 ] && [ $standins_ok -eq 0 ]; then
  row 2 "peak with the plan's toggles (stand-in trainer, exact)" "stand-ins not built" "predicted" "within 5 %" "stand-ins not built"
  row 2 "step time with the plan's toggles (stand-in trainer)" "stand-ins not built" "predicted" "within 10 %" "stand-ins not built"
else
  guard 2 "plan and rerun with the toggles" step2
fi

begin=$SECONDS
step3
printf '%s\t%s\n' "3 (all)" "$((SECONDS - begin))" >>"$timings"

if [ $dry -eq 1 ]; then
  for kind in "memory snapshot (_dump_snapshot)" "Kineto trace (export_chrome_trace)" "memory timeline (export_memory_timeline)"; do
    row 4 "$kind peak vs torch.cuda.max_memory_allocated" "needs a GPU" "torch.cuda.max_memory_allocated" "within 1-5 %" "needs a GPU"
  done
  row 5 "recordings for tests/data/real/" "needs a GPU" "" "each at most 512 KiB" "needs a GPU"
else
  guard 4 "PyTorch's recordings imported" step4
  guard 5 "fixtures" step5
fi

if [ $dry -eq 1 ]; then
  row 6 "the torch backend on gpt_train.py" "needs a GPU (tests/plugins/python/test_torchrecord.py checks it on the CPU)" "" "" "needs a GPU"
else
  guard 6 "the torch backend" step6
fi

total=$((SECONDS - started))
if [ $dry -eq 1 ]; then
  row all "wall time of this check" "$((total / 60))m$((total % 60))s (dry run)" "" "under 8 min on one H100" info
else
  row all "wall time of this check" "$((total / 60))m$((total % 60))s" "" "under 8 min on one H100" \
    "$([ $total -lt 480 ] && echo PASS || echo FAIL)"
fi
echo
"$FPY" "$figures" --rows "$rows" table --out "$out" --mode "$([ $dry -eq 1 ] && echo dry-run || echo gpu)" \
  --timings "$timings" --machine "$(machine)"

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Compiles peaklens-replay (plugins/torch) against LibTorch 2.x, on a machine without a pip
# PyTorch or a GPU.
#
# peaklens-replay builds against Debian 12's LibTorch 1.13 (libtorch-dev) and against the
# LibTorch inside a pip PyTorch 2.x with CUDA on GPU machines; what differs between them
# lives in plugins/torch/torchcompat.h. Debian 13 (trixie) packages PyTorch 2.6 twice:
# libtorch-dev (main, CPU) and libtorch-cuda-dev (contrib: adds the CUDA config headers and a
# TorchConfig.cmake that enables CUDA). This script fetches both with `apt-get download` from
# a private apt state under .deps/ (the system's apt configuration and package lists are not
# touched), unpacks them with `dpkg -x` into .deps/, and runs these stages:
#
#   cpu    g++ -fsyntax-only of every plugins/torch/*.cpp against libtorch-dev 2.6.
#   cuda   the same with -DPEAKLENS_REPLAY_CUDA against libtorch-cuda-dev 2.6 and the CUDA
#          toolkit's headers ($CUDA_HOME/include, default /usr/local/cuda/include).
#   tests  tests/plugins/torch/*.cpp against libtorch-dev 2.6, with the flags and moc output
#          of a configured 1.13 build ($PEAKLENS_BUILD_DIR, default build/); skipped without one.
#   cmake  configures the project against libtorch-cuda-dev's TorchConfig.cmake the way a pip
#          PyTorch is found (CMAKE_PREFIX_PATH), checks that the replay gets its CUDA parts, and
#          compiles plugins/torch with the flags CMake generated. The package's shared libraries
#          are not fetched (480 MB, and they need trixie's libstdc++): empty files stand in for
#          them, so nothing is linked. Needs cmake and nvcc ($CUDA_HOME/bin).
#
# Every compile also fails if a header came from Debian's 1.13 in /usr/include instead.
# Not covered: linking and running against a real pip PyTorch 2.x (2.11.0+cu130 on our GPU
# machine), and any API change after 2.6 that no header here shows.
#
# Usage: tests/gpu/libtorch2-check.sh [cpu] [cuda] [tests] [cmake]     (default: all four)
# Exit status: 0 when every stage that ran passed, 1 when one failed, 2 when the packages
# could not be had.

set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DEPS=$ROOT/.deps/libtorch2-trixie
BUILD_DIR=${PEAKLENS_BUILD_DIR:-$ROOT/build}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
CXX=${CXX:-g++}
JOBS=${JOBS:-$(nproc)}
MIRROR=http://deb.debian.org/debian
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
# The compile definitions Caffe2Targets.cmake puts on torch_cpu (Debian's 2.6 and pip's).
TORCH_DEFINES=(-DUSE_DISTRIBUTED -DUSE_C10D_GLOO -DUSE_RPC -DUSE_TENSORPIPE -D_GLIBCXX_USE_CXX11_ABI=1)

stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(cpu cuda tests cmake)
failed=()
say() { printf '\n== %s\n' "$*"; }

fetchPackages()
{
    if [ -f "$DEPS/cpu/usr/include/torch/csrc/api/include/torch/version.h" ] \
        && [ -f "$DEPS/cuda/usr/include/c10/cuda/impl/cuda_cmake_macros.h" ]; then
        return 0
    fi
    local apt=$DEPS/apt
    mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/parts" "$DEPS/debs"
    : >"$apt/status"
    echo "deb [signed-by=$KEYRING] $MIRROR trixie main contrib" >"$apt/sources.list"
    local options=(-o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=$apt/parts"
        -o "Dir::Etc::Preferences=$apt/none" -o "Dir::Etc::PreferencesParts=$apt/parts"
        -o "Dir::State::Lists=$apt/lists" -o "Dir::State::Status=$apt/status" -o "Dir::Cache=$apt/cache"
        -o APT::Architecture=amd64 -o APT::Architectures=amd64 -q)
    [ "$(id -u)" -eq 0 ] && options+=(-o APT::Sandbox::User=root)
    say "fetching trixie's libtorch-dev and libtorch-cuda-dev into $DEPS"
    apt-get "${options[@]}" update >"$apt/update.log" 2>&1 || { cat "$apt/update.log"; return 2; }
    (cd "$DEPS/debs" && rm -f ./*.deb && apt-get "${options[@]}" download libtorch-dev libtorch-cuda-dev) || return 2
    rm -rf "$DEPS/cpu" "$DEPS/cuda"
    dpkg -x "$DEPS"/debs/libtorch-dev_*.deb "$DEPS/cpu" && dpkg -x "$DEPS"/debs/libtorch-cuda-dev_*.deb "$DEPS/cuda" || return 2
}

torchVersion() # include dir
{
    local header=$1/torch/csrc/api/include/torch/version.h part version=()
    for part in MAJOR MINOR PATCH; do
        version+=("$(sed -n "s/^#define TORCH_VERSION_$part \([0-9]*\)/\1/p" "$header")")
    done
    (IFS=.; echo "${version[*]}")
}

# Compiles one translation unit (syntax only) and prints one report: it fails on a compiler
# error or on a header taken from Debian's 1.13 (/usr/include/{torch,ATen,c10,...}).
compileOne() # label, dependency file, command...
{
    local label=$1 depfile=$2 log=$2.log stray
    shift 2
    if ! "$@" -fsyntax-only -MD -MF "$depfile" >"$log" 2>&1; then
        printf 'FAIL %s\n%s\n' "$label" "$(sed -n '1,40p' "$log")"
        return 1
    fi
    stray=$(tr ' ' '\n' <"$depfile" | grep -E '^/usr/include/(torch|ATen|c10|caffe2|THC)/' | head -3)
    if [ -n "$stray" ]; then
        printf 'FAIL %s: takes LibTorch 1.13 headers from /usr/include:\n%s\n' "$label" "$stray"
        return 1
    fi
    printf 'ok   %s\n%s' "$label" "$(sed -n '1,20p' "$log")" # and its warnings, if any
    [ -s "$log" ] && echo
    return 0
}

# Runs the commands of a list (`label<TAB>shell-quoted command` lines), $JOBS at a time.
runCompiles() # stage name, list file
{
    local stage=$1 list=$2 running=0 status=0 label args argv=()
    mkdir -p "$DEPS/out/$stage"
    while IFS=$'\t' read -r label args; do
        eval "argv=($args)"
        compileOne "$label" "$DEPS/out/$stage/$(basename "$label").d" "${argv[@]}" &
        if ((++running >= JOBS)); then
            wait -n || status=1
            ((running--))
        fi
    done <"$list"
    while ((running-- > 0)); do wait -n || status=1; done
    return $status
}

# Writes `label<TAB>compile command` lines for plugins/torch/*.cpp with the given flags. An
# API that 2.6 marks deprecated is the next one to go, so using one is an error.
pluginCommands() # output file, flags...
{
    local out=$1 file
    shift
    : >"$out"
    for file in "$ROOT"/plugins/torch/*.cpp; do
        printf '%s\t%s\n' "${file#"$ROOT"/}" \
            "$(printf '%q ' "$CXX" -std=c++20 -Wall -Wextra -Werror=deprecated-declarations \
                -DPEAKLENS_VERSION='"libtorch2-check"' "$@" -I"$ROOT" "$file")" >>"$out"
    done
}

# Writes `label<TAB>compile command` lines for the sources under `subdir` found in a
# compile_commands.json: LibTorch 1.13's include directory and the output options taken out,
# `flags` put first.
databaseCommands() # output file, compile_commands.json, subdir, flags...
{
    python3 - "$ROOT" "$@" <<'EOF'
import json, os, shlex, sys
root, out, database, subdir, flags = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
with open(out, 'w') as lines:
    for entry in json.load(open(database)):
        label = os.path.relpath(entry['file'], root)
        if not label.startswith(subdir + '/'):
            continue
        args = shlex.split(entry['command']) if 'command' in entry else entry['arguments']
        kept, skip = [args[0]] + flags, False
        for i, arg in enumerate(args[1:], 1):
            if skip:
                skip = False
            elif arg in ('-o', '-MF', '-MT', '-MQ'):
                skip = True
            elif arg in ('-c', '-MD', '-MMD'):
                pass
            elif arg == '-isystem' and args[i + 1].startswith('/usr/include/torch'):
                skip = True
            else:
                kept.append(arg)
        lines.write(label + '\t' + shlex.join(kept) + '\n')
EOF
}

stageCpu()
{
    local include=$DEPS/cpu/usr/include
    say "cpu: plugins/torch against libtorch-dev $(torchVersion "$include") (trixie), without PEAKLENS_REPLAY_CUDA"
    echo "headers: $include"
    pluginCommands "$DEPS/out/cpu.list" "${TORCH_DEFINES[@]}" -isystem "$include" \
        -isystem "$include/torch/csrc/api/include"
    runCompiles cpu "$DEPS/out/cpu.list"
}

stageCuda()
{
    local include=$DEPS/cuda/usr/include
    say "cuda: plugins/torch against libtorch-cuda-dev $(torchVersion "$include") (trixie), with PEAKLENS_REPLAY_CUDA"
    if [ ! -f "$CUDA_HOME/include/cuda_runtime_api.h" ]; then
        echo "FAIL: no CUDA toolkit headers in $CUDA_HOME/include (set CUDA_HOME)"
        return 1
    fi
    local cuda
    cuda=$(sed -n 's/^#define CUDA_VERSION \([0-9]*\)/\1/p' "$CUDA_HOME/include/cuda.h")
    echo "headers: $include, CUDA $((cuda / 1000)).$((cuda % 1000 / 10)) in $CUDA_HOME/include"
    pluginCommands "$DEPS/out/cuda.list" -DPEAKLENS_REPLAY_CUDA "${TORCH_DEFINES[@]}" -isystem "$include" \
        -isystem "$include/torch/csrc/api/include" -isystem "$CUDA_HOME/include"
    runCompiles cuda "$DEPS/out/cuda.list"
}

stageTests()
{
    local include=$DEPS/cpu/usr/include
    say "tests: tests/plugins/torch against libtorch-dev $(torchVersion "$include") (trixie)"
    if ! grep -q 'tests/plugins/torch/tst_' "$BUILD_DIR/compile_commands.json" 2>/dev/null \
        || ! ls "$BUILD_DIR"/tests/plugins/torch/*_autogen/include/*.moc >/dev/null 2>&1; then
        echo "skipped: $BUILD_DIR is no configured and built LibTorch build (needs its compile_commands.json"
        echo "and moc output; set PEAKLENS_BUILD_DIR)"
        return 0
    fi
    echo "headers: $include; flags and moc output from $BUILD_DIR"
    databaseCommands "$DEPS/out/tests.list" "$BUILD_DIR/compile_commands.json" tests/plugins/torch \
        -isystem "$include" -isystem "$include/torch/csrc/api/include"
    runCompiles tests "$DEPS/out/tests.list"
}

stageCmake()
{
    local prefix=$DEPS/cuda/usr build=$DEPS/cmake-build
    say "cmake: configure against the TorchConfig.cmake of libtorch-cuda-dev $(torchVersion "$prefix/include"), CUDA from $CUDA_HOME"
    if ! command -v cmake >/dev/null || [ ! -x "$CUDA_HOME/bin/nvcc" ]; then
        echo "skipped: needs cmake and $CUDA_HOME/bin/nvcc"
        return 0
    fi
    # Empty stand-ins for the libraries the package's imported targets and symlinks name.
    local lib
    sed -n 's|.*"${_IMPORT_PREFIX}/\([^"]*\)".*|\1|p' "$prefix"/lib/x86_64-linux-gnu/cmake/Caffe2/Caffe2Targets-*.cmake |
        while read -r lib; do
            [ -e "$prefix/lib/$lib" ] || : >"$prefix/lib/$lib"
        done
    for lib in "$prefix"/lib/x86_64-linux-gnu/*.so; do
        [ -e "$lib" ] || : >"$(dirname "$lib")/$(readlink "$lib")"
    done
    # Debian's 2.6 links torch::nvtoolsext to CUDA::nvToolsExt, a library CUDA 13 no longer
    # has (pip's 2.x use the header-only NVTX 3); an empty target lets it generate.
    echo 'if(NOT TARGET CUDA::nvToolsExt)
  add_library(CUDA::nvToolsExt INTERFACE IMPORTED)
endif()' >"$DEPS/nvtoolsext-stub.cmake"
    rm -rf "$build"
    local generator=()
    command -v ninja >/dev/null && generator=(-G Ninja)
    if ! PATH=$CUDA_HOME/bin:$PATH cmake -S "$ROOT" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
        -DPEAKLENS_BUILD_GUI=OFF -DBUILD_TESTING=OFF -DPEAKLENS_BUILD_COLLECTOR=OFF \
        -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_PROJECT_INCLUDE="$DEPS/nvtoolsext-stub.cmake" >"$build.log" 2>&1; then
        echo "FAIL: cmake could not configure the project against it; see $build.log:"
        grep -B2 -A6 'CMake Error' "$build.log" | head -40
        if grep -q 'language dialect "CUDA20"' "$build.log"; then
            echo "-> TorchConfig enables CUDA with CMAKE_CUDA_STANDARD = CMAKE_CXX_STANDARD (20), which CMake"
            echo "   $(cmake --version | sed -n 's/cmake version //p') cannot give nvcc (needs 3.25.2): the top-level CMakeLists.txt must"
            echo "   set CMAKE_CUDA_STANDARD 17 before find_package(Torch)."
        fi
        return 1
    fi
    if ! grep -q 'peaklens-replay: LibTorch has CUDA' "$build.log"; then
        echo "FAIL: configured, but plugins/torch/CMakeLists.txt did not see CUDA in this LibTorch"
        return 1
    fi
    echo "configured; plugins/torch/CMakeLists.txt saw CUDA. Compiling with the flags it generated:"
    databaseCommands "$DEPS/out/cmake.list" "$build/compile_commands.json" plugins/torch
    if ! grep 'replayrunner.cpp' "$DEPS/out/cmake.list" | grep -q -- '-DPEAKLENS_REPLAY_CUDA'; then
        echo "FAIL: replayrunner.cpp is not compiled with PEAKLENS_REPLAY_CUDA"
        return 1
    fi
    runCompiles cmake "$DEPS/out/cmake.list"
}

fetchPackages || { echo "could not fetch or unpack trixie's LibTorch packages"; exit 2; }
mkdir -p "$DEPS/out"
for stage in "${stages[@]}"; do
    case $stage in
    cpu) stageCpu || failed+=(cpu) ;;
    cuda) stageCuda || failed+=(cuda) ;;
    tests) stageTests || failed+=(tests) ;;
    cmake) stageCmake || failed+=(cmake) ;;
    *) echo "unknown stage '$stage' (cpu, cuda, tests, cmake)"; exit 2 ;;
    esac
done

packages=("$DEPS"/debs/*.deb)
say "packages: ${packages[*]##*/}"
if [ ${#failed[@]} -gt 0 ]; then
    echo "FAILED: ${failed[*]}"
    exit 1
fi
echo "all stages that ran passed: ${stages[*]}"

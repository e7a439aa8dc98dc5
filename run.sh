#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# PeakLens set-up, build and entry point.
#   ./run.sh          install what is missing, build, open the bundled sample
#   ./run.sh test     install what is missing, build, run the whole test suite
#   ./run.sh package  install what is missing, build, write build/peaklens_<version>_amd64.deb
# Any further arguments after the command are passed on (./run.sh -- FILE opens FILE).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

# Every Debian package any part of PeakLens needs, to build, test or run.
packages=(
  # build tools
  cmake ninja-build g++ pkg-config
  # core
  libsqlite3-dev sqlite3 zlib1g-dev libzstd-dev libsimdjson-dev nlohmann-json3-dev
  # command line
  libcli11-dev
  # desktop app and its tests (PDF reports: Qt SVG renders the charts, poppler reads them back)
  qt6-base-dev qt6-svg-dev libqcustomplot-dev libqcustomplot2.1-qt6 xvfb xauth poppler-utils
  # the project's Python (PyTorch comes from pip, below), the real-world corpus check
  # (tests/data/real/expected.py) and the helper as a pip package
  python3 python3-pip python3-setuptools python3-venv
  # installing: the .deb (dpkg-shlibdeps), man pages, desktop integration and its checks,
  # shell completion checks
  dpkg-dev help2man desktop-file-utils shared-mime-info xdg-utils libfile-mimeinfo-perl zsh
  # benchmarks (RSS measurements) and the fuzz preset (clang with libFuzzer)
  time clang libclang-rt-14-dev
  # remote hosts (ssh://HOST/PATH) through the OpenSSH client; its server stands in for a
  # GPU host in the tests, started by them on a loopback port
  openssh-client openssh-server
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [ "$status" = installed ] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "run.sh: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# PyTorch: the pinned pip release, CUDA build included (it runs on the CPU where there is
# no GPU), in one virtual environment per machine outside the source tree, which every
# clone and CI reuse. Its LibTorch builds peaklens-replay and the torch recorder; its
# Python runs the helper's tests, the examples and the benchmarks. A half-made one (no
# .complete) is made again.
torch_version=2.15.0
numpy_version=2.3.5
python_env=${PEAKLENS_PYTHON_ENV:-${XDG_CACHE_HOME:-$HOME/.cache}/peaklens/torch-$torch_version}
if [ ! -f "$python_env/.complete" ]; then
  echo "run.sh: installing PyTorch $torch_version into $python_env (once per machine)" >&2
  rm -rf "$python_env"
  mkdir -p "$(dirname "$python_env")"
  /usr/bin/python3 -m venv "$python_env"
  "$python_env/bin/python" -m pip install -q --disable-pip-version-check --no-cache-dir \
    "torch==$torch_version" "numpy==$numpy_version"
  touch "$python_env/.complete"
fi
python=$python_env/bin/python
torch_prefix=$("$python" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')

# A build folder configured against another LibTorch or Python is configured afresh (its
# objects are kept; what changed rebuilds).
if [ -f build/CMakeCache.txt ] && ! grep -qxF "PEAKLENS_PYTHON:FILEPATH=$python" build/CMakeCache.txt; then
  rm -f build/CMakeCache.txt
fi
if [ ! -f build/CMakeCache.txt ]; then
  cmake --preset release -DCMAKE_PREFIX_PATH="$torch_prefix" -DPEAKLENS_PYTHON="$python"
fi
cmake --build build --parallel "$(nproc)"

command=${1:-}
[ $# -gt 0 ] && shift
[ "${1:-}" = "--" ] && shift
case "$command" in
  test)
    ctest --test-dir build --output-on-failure --parallel "$(nproc)" "$@"
    ;;
  package)
    (cd build && cpack -G DEB "$@")
    ;;
  ""|run)
    sample=${1:-resources/samples/training-step.peaklens}
    if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ -x build/bin/peaklens ]; then
      exec build/bin/peaklens "$sample"
    fi
    # No display: what the app would show first, as text, and the report beside the build.
    build/bin/peaklens-cli summary "$sample"
    build/bin/peaklens-cli report "$sample" -o build/report.html --force
    ;;
  *)
    echo "usage: ./run.sh [test | package | run [FILE]]" >&2
    exit 2
    ;;
esac

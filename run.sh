#!/usr/bin/env bash
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
  # replay engine (Debian's libtorch runs on the reference BLAS without OpenBLAS)
  libtorch-dev libopenblas0-pthread python3-torch
  # the real-world corpus check (tests/data/real/expected.py); the helper as a pip package
  python3 python3-pip python3-setuptools python3-venv
  # installing: the .deb (dpkg-shlibdeps), man pages, desktop integration and its checks,
  # shell completion checks
  dpkg-dev help2man desktop-file-utils shared-mime-info xdg-utils libfile-mimeinfo-perl zsh
  # benchmarks (RSS measurements) and the fuzz preset (clang with libFuzzer)
  time clang libclang-rt-14-dev
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

if [ ! -f build/CMakeCache.txt ]; then
  cmake --preset release
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

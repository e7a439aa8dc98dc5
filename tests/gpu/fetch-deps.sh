#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Downloads the Debian packages that a GPU machine without them needs to build PeakLens's
# core, CLI, collector and replay engine (SQLite, zlib, zstd, simdjson, nlohmann_json, CLI11)
# into tests/gpu/deps/, to be carried there with the checkout: tests/gpu/acceptance.sh
# unpacks them into a private prefix under build-gpu/ (never into /). Run it on Debian 12
# (bookworm, amd64) with its mirror reachable. It installs nothing and leaves apt's own
# state as it was: `apt-get download` only reads the package lists, and when those are
# too old to download from, a private copy of the lists is updated in a temporary folder.
#
#   tests/gpu/fetch-deps.sh            # replaces what tests/gpu/deps/ held
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
deps=$here/deps
# Runtime libraries ride along with their -dev packages: the prefix is then complete on
# its own, and the binaries find these copies through their build-tree RUNPATH.
packages=(
  libsqlite3-dev libsqlite3-0
  zlib1g-dev zlib1g
  libzstd-dev libzstd1
  libsimdjson-dev libsimdjson14
  nlohmann-json3-dev
  libcli11-dev
)
limit_bytes=$((32 * 1024 * 1024)) # the folder travels with the checkout (64 MiB in all)

die() {
  echo "fetch-deps.sh: $*" >&2
  exit 1
}

command -v apt-get >/dev/null || die "apt-get is missing: run this on Debian 12 (bookworm)."
command -v dpkg-deb >/dev/null || die "dpkg-deb is missing: run this on Debian 12 (bookworm)."
arch=$(dpkg --print-architecture)
[ "$arch" = amd64 ] || die "this machine is $arch; the GPU machine is amd64 (x86-64), so run this on amd64."
if [ -r /etc/os-release ]; then
  # shellcheck disable=SC1091
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  [ "$codename" = bookworm ] || echo "fetch-deps.sh: warning: this is '$codename', not Debian 12 (bookworm); acceptance.sh was tested with bookworm's packages." >&2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
apt_options=()
# As root, apt drops to the _apt user to download, which cannot write into this private
# folder; it would warn and go on as root anyway.
[ "$(id -u)" -eq 0 ] && apt_options+=(-o APT::Sandbox::User=root)

download() {
  (cd "$work/debs" && apt-get "${apt_options[@]}" "$@" download "${packages[@]}")
}

mkdir -p "$work/debs"
# PEAKLENS_FETCH_PRIVATE_LISTS=1 takes the second way at once (to check it).
if [ "${PEAKLENS_FETCH_PRIVATE_LISTS:-0}" = 1 ] || ! download >"$work/download.log" 2>&1; then
  echo "fetch-deps.sh: the system's package lists cannot download these (too old?); updating a private copy of them." >&2
  mkdir -p "$work/lists/partial" "$work/cache/archives/partial"
  private=(-o Dir::State::Lists="$work/lists" -o Dir::Cache="$work/cache" -o Debug::NoLocking=1)
  apt-get "${apt_options[@]}" "${private[@]}" update >"$work/update.log" 2>&1 \
    || { cat "$work/update.log" >&2; die "apt-get update of the private lists failed (is the Debian mirror reachable?)."; }
  rm -f "$work/debs"/*.deb
  download "${private[@]}" >"$work/download.log" 2>&1 \
    || { cat "$work/download.log" >&2; die "apt-get download failed."; }
fi

count=$(find "$work/debs" -name '*.deb' | wc -l)
[ "$count" -eq "${#packages[@]}" ] || die "expected ${#packages[@]} packages, got $count (see apt-get's output above)."
total=$(du -cb "$work/debs"/*.deb | tail -1 | cut -f1)
[ "$total" -le "$limit_bytes" ] || die "the packages take $total bytes, more than the $limit_bytes this folder may carry."

mkdir -p "$deps"
rm -f "$deps"/*.deb "$deps/PACKAGES.txt"
mv "$work/debs"/*.deb "$deps/"
{
  echo "# Debian packages for tests/gpu/acceptance.sh, fetched $(date -u +%Y-%m-%dT%H:%M:%SZ) by tests/gpu/fetch-deps.sh"
  echo "# package version architecture sha256 file"
  for deb in "$deps"/*.deb; do
    printf '%s %s %s %s %s\n' "$(dpkg-deb -f "$deb" Package)" "$(dpkg-deb -f "$deb" Version)" \
      "$(dpkg-deb -f "$deb" Architecture)" "$(sha256sum "$deb" | cut -d' ' -f1)" "$(basename "$deb")"
  done
} >"$deps/PACKAGES.txt"

echo "fetch-deps.sh: $count packages, $((total / 1024)) KiB, in ${deps#"$PWD"/}:"
sed -n '3,$p' "$deps/PACKAGES.txt" | awk '{printf "  %-22s %s\n", $1, $2}'

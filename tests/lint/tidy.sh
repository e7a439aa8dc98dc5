#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# clang-tidy (.clang-tidy's checks, every finding an error) on the C++ sources changed since
# REV (default: the commit before HEAD), with the compile commands of BUILD_DIR (default
# build-dev). A changed header is checked through the sources that include it.
#   tests/lint/tidy.sh [REV] [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
rev=${1:-HEAD~1}
build=${2:-build-dev}
[ -f "$build/compile_commands.json" ] || { echo "tidy: $build/compile_commands.json is missing; configure $build first." >&2; exit 2; }
if ! git rev-parse -q --verify "$rev^{commit}" > /dev/null; then
  echo "tidy: no $rev to compare with; nothing to check."
  exit 0
fi
changed=$(git diff --name-only --diff-filter=ACMR "$rev" -- 'core/*' 'app/*' 'plugins/*' | grep -E '\.(cpp|h)$' || true)
# The sources to run on: the changed ones, and those including a changed header.
sources=$(for f in $changed; do
  case "$f" in
    *.cpp) echo "$f" ;;
    *.h) git grep -l -F "$(basename "$f")" -- 'core/*.cpp' 'app/*.cpp' 'plugins/*.cpp' || true ;;
  esac
done | sort -u)
# Only what this build compiles (a part left out of it, as the replay without LibTorch, is skipped).
sources=$(for f in $sources; do grep -q "\"file\": \"[^\"]*/$f\"" "$build/compile_commands.json" && echo "$f"; done || true)
if [ -z "$sources" ]; then
  echo "tidy: no C++ source changed since $rev."
  exit 0
fi
echo "tidy: $(echo "$sources" | wc -l) sources changed since $rev"
echo "$sources" | xargs -P "$(nproc)" -n 4 clang-tidy -p "$build" --quiet

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Opening the real-world corpus (tests/data/real), per file: PeakLens reading it and
# computing everything the app and `summary` show (bench_corpus: import, peak, live set,
# sites, layers, steps) against the peer, a Python reading of the same file that computes
# only its peak (tests/data/real/expected.py, json or pickle parsing plus one pass), seven
# runs each, medians with their range. For the snapshots, also what `summary --json` does
# in its process (open, then write the whole JSON answer) against Python's pickle.load of
# the same file alone. Then the figures PeakLens reads from each file.
# Usage: tests/bench/run_corpus_bench.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-7}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
files=(tests/data/real/*.gz)

build/bin/bench_corpus "$runs" "${files[@]}" > "$dir/ours.tsv"
python3 - "$runs" "$dir/ours.tsv" "${files[@]}" <<'PY'
import gzip, os, pickle, statistics, sys, time
sys.path.insert(0, "tests/data/real")
import expected
runs, ours = int(sys.argv[1]), {}
print("%-46s %-15s %-24s %-24s %-6s %-24s %-24s %s" % ("file", "events", "PeakLens opens", "Python peak only", "ratio",
      "summary --json", "pickle.load", "ratio"))
def timed(call):
    times = []
    for _ in range(runs):
        begin = time.perf_counter()
        call()
        times.append((time.perf_counter() - begin) * 1000)
    times.sort()
    return times[len(times) // 2], times[0], times[-1]
for line in open(sys.argv[2]):
    path, events, timing, answer = line.rstrip("\n").split("\t")
    ours[path] = (events, timing, float(timing.split()[0]), answer)
for path in sys.argv[3:]:
    median, low, high = timed(lambda: expected.figures_of(path))
    events, timing, ours_ms, answer = ours[path]
    row = "%-46s %-15s %-24s %-24s %-6.2f" % (os.path.basename(path), events, timing,
          "%.2f ms (%.2f-%.2f)" % (median, low, high), ours_ms / median)
    if ".pickle" in path:
        def load():
            with (gzip.open(path) if path.endswith(".gz") else open(path, "rb")) as f:
                pickle.load(f)
        p_median, p_low, p_high = timed(load)
        row += " %-24s %-24s %.2f" % (answer.split(",")[0], "%.2f ms (%.2f-%.2f)" % (p_median, p_low, p_high),
                                      float(answer.split()[0]) / p_median)
    print(row)
PY

echo
for file in "${files[@]}"; do
  build/bin/peaklens-cli summary --json --top 40 "$file" > "$dir/s.json"
  python3 - "$file" "$dir/s.json" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[2]))
peak = d["peak"]
gib = lambda b: "%.3f GiB" % (b / 2**30) if b is not None else "none"
sites = d["live_at_peak"]["by_site"] if d["live_at_peak"] else []
named = [s for s in sites if s["kind"] != "none"]
user = [s for s in sites if s["kind"] == "user"]
print("%s\n  peak %s (%d B) on %s, reserved peak %s\n  top site: %s\n  top user site: %s" % (
    os.path.basename(sys.argv[1]), gib(peak["allocated_bytes"]), peak["allocated_bytes"], peak["device"],
    gib(peak["reserved_bytes"]), named[0]["site"] + " (%s)" % gib(named[0]["bytes"]) if named else "(no stacks)",
    user[0]["site"] + " (%s)" % gib(user[0]["bytes"]) if user else "none"))
PY
done

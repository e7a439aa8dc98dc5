#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Drives `peaklens-cli query` from a script: one trace loaded once, questions asked one
at a time over its standard input, each answer read as its JSON line comes back.

    python3 examples/query_trace.py run.peaklens
    python3 examples/query_trace.py --cli build/bin/peaklens-cli --group file snapshot.pickle

Prints the peak, the largest groups of what is live at it, and how what is live grows
towards it: the same figures `peaklens-cli summary --json` gives.
"""

import argparse
import json
import shutil
import subprocess
import sys


class Trace:
    """One `peaklens-cli query` process over one trace."""

    def __init__(self, cli, path):
        self._process = subprocess.Popen([cli, "query", path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         text=True, bufsize=1)
        self._next = 0

    def ask(self, **question):
        self._next += 1
        question["id"] = self._next
        self._process.stdin.write(json.dumps(question) + "\n")
        self._process.stdin.flush()
        line = self._process.stdout.readline()
        if not line:
            raise RuntimeError("peaklens-cli query ended without answering")
        reply = json.loads(line)
        if reply.get("id") != self._next:
            raise RuntimeError(f"answer {reply.get('id')} for question {self._next}")
        if "error" in reply:
            raise RuntimeError(reply["error"])
        return reply["answer"]

    def close(self):
        self._process.stdin.close()
        return self._process.wait()


def mib(n):
    return f"{n / 2**20:,.2f} MiB"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("--cli", default=shutil.which("peaklens-cli") or "build/bin/peaklens-cli")
    parser.add_argument("--group", default="file", help="file, or regex:PATTERN (as summary --group)")
    parser.add_argument("--top", type=int, default=5)
    args = parser.parse_args()

    trace = Trace(args.cli, args.trace)
    peak = trace.ask(ask="peak")
    if peak is None:
        print("The trace allocates nothing.")
        return trace.close()
    print(f"peak {peak['allocated_bytes']} bytes ({mib(peak['allocated_bytes'])}) on {peak['device']} "
          f"at {peak['time_ns']} ns, {peak['phase']}")
    live = trace.ask(ask="live", group=args.group, top=args.top)
    print(f"live at the peak by {live['by_group']['grouping']}:")
    for group in live["by_group"]["groups"]:
        print(f"  {group['bytes']:>14} bytes  {group['blocks']:>6} blocks  {group['group']}")
    # What is live a quarter, half and three quarters of the way from the first event to the peak.
    first = trace.ask(ask="summary", top=1)["first_ns"]
    for share in (0.25, 0.5, 0.75):
        at = first + int((peak["time_ns"] - first) * share)
        print(f"at {share:.0%} of the way to the peak: {trace.ask(ask='live', at_ns=at, top=1)['bytes']} bytes live")
    return trace.close()


if __name__ == "__main__":
    sys.exit(main())

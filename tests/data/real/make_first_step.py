#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes snapshot_cs336_first_step.pickle.gz: the real snapshot
snapshot_cs336_three_steps.pickle.gz cut before its second training step, so that the
file holds one step whose forward is a warm-up (the first forward of a fresh process:
its first block runs many times longer than the others). The step boundary is the
file's own: the first allocation the training loop's model call (profile_memory.py line
40) makes after an allocation made elsewhere, the second time it happens. The entries
before it are kept as they are (MIT, (c) 2025 Stanford University, as the original);
the dump-time segments are left out, since they describe the allocator after the last
step, not at the cut.

    python3 make_first_step.py
"""

import gzip
import os
import pickle

from expected import load_snapshot

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "snapshot_cs336_three_steps.pickle.gz")
TARGET = os.path.join(HERE, "snapshot_cs336_first_step.pickle.gz")
MODEL_CALL = ("profile_memory.py", 40)


def loop_line(entry):
    for frame in entry.get("frames", []):
        if frame.get("filename", "").endswith(MODEL_CALL[0]):
            return frame.get("line")
    return None


def main():
    snapshot = load_snapshot(SOURCE)
    trace = snapshot["device_traces"][0]
    starts, previous = [], None
    for index, entry in enumerate(trace):
        if entry["action"] != "alloc":
            continue
        line = loop_line(entry)
        if line == MODEL_CALL[1] and previous != MODEL_CALL[1]:
            starts.append(index)
        previous = line
    if len(starts) < 2:
        raise SystemExit("the source holds fewer than two steps")
    snapshot["device_traces"][0] = trace[: starts[1]]
    snapshot["segments"] = []
    with open(TARGET, "wb") as f:
        f.write(gzip.compress(pickle.dumps(snapshot, protocol=4), compresslevel=9, mtime=0))


if __name__ == "__main__":
    main()

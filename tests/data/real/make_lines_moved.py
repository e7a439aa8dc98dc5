#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes snapshot_cs336_medium_train_lines_moved.pickle.gz: the real snapshot
snapshot_cs336_medium_train.pickle.gz as if its script had been edited before the run,
three lines inserted into model.py above line 200 and one into nsys_profile.py above
line 100. Only frame line numbers change; every allocation, size and time is the
original's (MIT, © 2025 Stanford University, as the original). A diff of the two must
match every layer (tests/core/analysis/tst_tracediff.cpp).

    python3 make_lines_moved.py
"""

import gzip
import os
import pickle

from expected import load_snapshot

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "snapshot_cs336_medium_train.pickle.gz")
TARGET = os.path.join(HERE, "snapshot_cs336_medium_train_lines_moved.pickle.gz")
MOVES = {"model.py": (200, 3), "nsys_profile.py": (100, 1)}  # file: (from line, by)


def moved(frame, seen):
    # The pickle shares one dict among the stacks that hold the frame: move it once.
    if id(frame) in seen:
        return
    seen.add(id(frame))
    base = frame.get("filename", "").replace("\\", "/").rsplit("/", 1)[-1]
    if base in MOVES and frame.get("line", 0) >= MOVES[base][0]:
        frame["line"] += MOVES[base][1]


def main():
    snapshot = load_snapshot(SOURCE)
    seen = set()
    for trace in snapshot["device_traces"]:
        for entry in trace:
            for frame in entry.get("frames", []):
                moved(frame, seen)
    for segment in snapshot["segments"]:
        for block in segment.get("blocks", []):
            for frame in block.get("frames", []):
                moved(frame, seen)
    with open(TARGET, "wb") as f:
        f.write(gzip.compress(pickle.dumps(snapshot, protocol=4), compresslevel=9, mtime=0))


if __name__ == "__main__":
    main()

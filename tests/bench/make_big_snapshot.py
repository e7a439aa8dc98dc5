#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes a PyTorch-style memory snapshot with N trace entries (default 1,000,000), pickled
with Python's default protocol as torch.cuda.memory._dump_snapshot does. Frames are shared
lists, as PyTorch shares them, so the pickle's memo is exercised the same way; with
--list-per-entry each entry has a list of its own (of the shared frame dicts), about 110
bytes an entry as in real recordings (the committed ones take 89 to 164) against 46.

    python3 tests/bench/make_big_snapshot.py 1000000 /tmp/big.pickle [--list-per-entry]
"""

import pickle
import random
import sys


def main():
    entries = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    out = sys.argv[2] if len(sys.argv) > 2 else "big.pickle"
    own_lists = "--list-per-entry" in sys.argv[3:]
    rng = random.Random(7)
    stacks = []
    for s in range(400):
        depth = rng.randint(6, 24)
        stacks.append([{"filename": f"pkg/module_{rng.randint(0, 60)}.py", "line": rng.randint(1, 900),
                        "name": f"function_{rng.randint(0, 300)}"} for _ in range(depth)])
    trace, live = [], []
    t = 1_700_000_000_000_000
    base = 0x7F0000000000
    next_addr = base
    while len(trace) < entries:
        t += rng.randint(1, 40)
        if live and (len(live) > 3000 or rng.random() < 0.5):
            addr, size, frames = live.pop(rng.randrange(len(live)))
            trace.append({"action": "free_requested", "addr": addr, "size": size, "stream": 0, "time_us": t,
                          "frames": frames})
            trace.append({"action": "free_completed", "addr": addr, "size": size, "stream": 0, "time_us": t,
                          "frames": frames})
        else:
            size = 512 * rng.randint(1, 1 << rng.randint(1, 14))
            frames = stacks[rng.randrange(len(stacks))]
            live.append((next_addr, size, frames))
            trace.append({"action": "alloc", "addr": next_addr, "size": size, "stream": 0, "time_us": t,
                          "frames": list(frames) if own_lists else frames})
            next_addr += size + 512
    snapshot = {"segments": [], "device_traces": [trace[:entries]],
                "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": ""}, "external_annotations": []}
    with open(out, "wb") as f:
        pickle.dump(snapshot, f)


if __name__ == "__main__":
    main()

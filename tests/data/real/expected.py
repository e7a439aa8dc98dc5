#!/usr/bin/env python3
"""The expected figures of the real-world corpus, from each file's own evidence.

PeakLens must agree with these exactly (tests/core/import/tst_realcorpus.cpp). Nothing
here uses PeakLens: each figure follows from what the file itself records and from
PyTorch's own semantics of it.

  Kineto traces     "[memory]" events of each device in time order (ties by "Ev Idx"):
                    the peak is the highest "Total Allocated", the reserved peak the
                    highest "Total Reserved" (none when the device reports none). Old
                    traces without totals: the running sum of "Bytes", lifted by as much
                    as keeps it from going below zero (memory from before profiling).
  Memory snapshots  the allocator's replay semantics: "alloc" adds a block,
                    "free_completed" removes it; a block freed but never allocated, and a
                    block still allocated at dump time but never allocated in the trace,
                    existed before the trace. Trace entries hold the size asked for
                    (the allocator records requested_size), so blocks at dump time count
                    theirs too. Segments likewise with segment_alloc/free (and map/unmap)
                    against the segments present at dump time.
  Memory timelines  export_memory_timeline's raw [time, action, bytes, category] rows
                    summed per timestamp, as PyTorch's own plot does (time -1 is memory
                    that existed before profiling).

    python3 expected.py            print the figures as JSON
    python3 expected.py --write    rewrite expected.json beside this script
    python3 expected.py --check    exit 1 when expected.json differs from the files
    python3 expected.py --file F   the figures of one file (tests/bench/run_corpus_bench.sh times it)
"""

import collections
import gzip
import json
import os
import pickle
import pickletools
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# Opcodes that could run code or build objects; a snapshot is plain dicts and lists.
UNSAFE_OPCODES = {"GLOBAL", "STACK_GLOBAL", "REDUCE", "INST", "OBJ", "NEWOBJ", "NEWOBJ_EX",
                  "BUILD", "EXT1", "EXT2", "EXT4", "PERSID", "BINPERSID"}


def read_bytes(path):
    with open(path, "rb") as f:
        data = f.read()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def device_name(kind, index):
    return "cpu" if kind == "cpu" else "cuda:%d" % index


def kineto(path):
    trace = json.loads(read_bytes(path))
    per_device = collections.defaultdict(list)
    for order, event in enumerate(trace["traceEvents"]):
        if event.get("name") != "[memory]":
            continue
        args = event["args"]
        device_type = args.get("Device Type", 1)
        if device_type == 0:
            device = "cpu"
        elif device_type in (1, 6):  # CUDA, and HIP, which PyTorch names cuda too
            device = device_name("gpu", args.get("Device Id", 0))
        else:
            continue
        per_device[device].append((event["ts"], args.get("Ev Idx", -1), order, args))
    result = {}
    for device, events in per_device.items():
        events.sort(key=lambda e: (e[0], e[1], e[2]))
        if all("Total Allocated" in e[3] for e in events):
            allocated = [e[3]["Total Allocated"] for e in events]
        else:
            # Traces of PyTorch 1.8 carry only "Bytes": the running sum, lifted by the
            # memory that must have been allocated before profiling for it never to go below zero.
            running, allocated = 0, []
            for e in events:
                running += e[3]["Bytes"]
                allocated.append(running)
            lift = max(0, -min(allocated))
            allocated = [a + lift for a in allocated]
        reserved = [e[3].get("Total Reserved", 0) for e in events]
        result[device] = {"peak_bytes": max(allocated),
                          "reserved_peak_bytes": max(reserved) if max(reserved) > 0 else None}
    return result


def load_snapshot(path):
    data = read_bytes(path)
    unsafe = {op.name for op, _, _ in pickletools.genops(data)} & UNSAFE_OPCODES
    if unsafe:
        raise SystemExit("%s: refusing a pickle with %s" % (path, ", ".join(sorted(unsafe))))
    return pickle.loads(data)


def curve_peak(initial, deltas):
    level = peak = initial
    for delta in deltas:
        level += delta
        peak = max(peak, level)
    return peak


def snapshot(path):
    snap = load_snapshot(path)
    segments = snap.get("segments", []) if isinstance(snap, dict) else snap
    traces = snap.get("device_traces", []) if isinstance(snap, dict) else []
    devices = sorted({s["device"] for s in segments} | {d for d, t in enumerate(traces) if t})
    result = {}
    for device in devices:
        entries = traces[device] if device < len(traces) else []
        times = [e["time_us"] for e in entries if "time_us" in e]
        if any(b < a for a, b in zip(times, times[1:])):
            raise SystemExit("%s: device %d's trace is not in time order" % (path, device))
        live, initial, deltas = {}, 0, []
        segment_deltas = []
        for e in entries:
            action, addr, size = e["action"], e["addr"], e["size"]
            if action == "alloc":
                if addr in live:  # its free was lost
                    deltas.append(-live[addr])
                live[addr] = size
                deltas.append(size)
            elif action in ("free_completed", "free"):
                if addr in live:
                    deltas.append(-live.pop(addr))
                else:
                    initial += size
                    deltas.append(-size)
            elif action in ("segment_alloc", "segment_map"):
                segment_deltas.append(size)
            elif action in ("segment_free", "segment_unmap"):
                segment_deltas.append(-size)
        device_segments = [s for s in segments if s["device"] == device]
        for segment in device_segments:
            for block in segment.get("blocks", []):
                if block["state"] in ("active_allocated", "active_pending_free") and block["address"] not in live:
                    # Trace entries carry the size asked for, not the rounded block size.
                    initial += block.get("requested_size", block["size"])
        # The segments at dump time are those reserved before the trace plus its changes.
        net, lowest = 0, 0
        for delta in segment_deltas:
            net += delta
            lowest = min(lowest, net)
        initial_reserved = max(-lowest, sum(s["total_size"] for s in device_segments) - net)
        reserved = curve_peak(initial_reserved, segment_deltas) if device_segments or segment_deltas else None
        result[device_name("gpu", device)] = {"peak_bytes": curve_peak(initial, deltas),
                                              "reserved_peak_bytes": reserved}
    return result


def memory_timeline(path):
    rows = json.loads(read_bytes(path))
    by_time = collections.OrderedDict()
    for t, action, size, category in rows:
        by_time.setdefault(t, 0)
        by_time[t] += size
    level = peak = 0
    for t in sorted(by_time):  # -1 (before profiling) sorts first
        level += by_time[t]
        peak = max(peak, level)
    return {"cuda:0": {"peak_bytes": peak, "reserved_peak_bytes": None}}


READERS = {".pt.trace.json.gz": kineto, ".pickle.gz": snapshot, ".raw.json.gz": memory_timeline}


def figures_of(path):
    for suffix, reader in READERS.items():
        if path.endswith(suffix):
            return reader(path)
    return None


def figures():
    result = {}
    for name in sorted(os.listdir(HERE)):
        found = figures_of(os.path.join(HERE, name))
        if found is not None:
            result[name] = found
    return result


def main():
    if "--file" in sys.argv:
        print(json.dumps(figures_of(sys.argv[sys.argv.index("--file") + 1]), sort_keys=True))
        return 0
    result = figures()
    text = json.dumps(result, indent=2, sort_keys=True) + "\n"
    target = os.path.join(HERE, "expected.json")
    if "--write" in sys.argv:
        with open(target, "w") as f:
            f.write(text)
    elif "--check" in sys.argv:
        with open(target) as f:
            if json.load(f) != result:
                print("expected.json does not match the corpus files; run expected.py --write", file=sys.stderr)
                return 1
        print("expected.json matches %d corpus files" % len(result))
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
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
  GPU kernels       Kineto's complete events of category kernel, gpu_memcpy and
                    gpu_memset (Kernel, Memcpy, Memset in 2021 traces), counted per
                    device and stream ("device" and "stream" in args, else the GPU row's
                    pid, below 256, and tid), with the first and last begin in nanoseconds
                    after the first "[memory]" event. ROCm traces number GPUs as HSA
                    agents, the CPUs first: the lowest agent with kernels is the lowest GPU
                    with memory. Times are exact decimals: ts (us) * 1000 + baseTimeNanoseconds.

    python3 expected.py            print the figures as JSON
    python3 expected.py --write    rewrite expected.json beside this script
    python3 expected.py --check    exit 1 when expected.json differs from the files
    python3 expected.py --file F   the peak figures of one file (tests/bench/run_corpus_bench.sh times them)

expected.json holds, per file, "devices" (the peaks) and, for Kineto traces, "kernels".
"""

import collections
import decimal
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


GPU_ACTIVITIES = {"kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset"}


def stream_of_thread(tid):
    if isinstance(tid, int):
        return tid
    text = str(tid)
    text = text[len("stream "):] if text.startswith("stream ") else text
    text = text.rstrip(" ")
    return int(text) if text.isdigit() else None


def kineto_kernels(path):
    # Decimals, so that times are the file's own digits, not a double's nearest value.
    trace = json.loads(read_bytes(path), parse_float=decimal.Decimal)
    base = int(trace.get("baseTimeNanoseconds", 0))
    rocm = "roctracer_version" in trace or "hip_runtime_version" in trace

    def ns(micros):
        return int((decimal.Decimal(micros) * 1000).to_integral_value(decimal.ROUND_HALF_UP)) + base

    first_memory, memory_gpus, activities = None, set(), []
    for event in trace["traceEvents"]:
        if event.get("name") == "[memory]" and "ts" in event:
            device_type = event["args"].get("Device Type", 1)
            if device_type not in (0, 1, 6):  # CPU, CUDA, HIP: the devices PeakLens reads
                continue
            first_memory = ns(event["ts"]) if first_memory is None else min(first_memory, ns(event["ts"]))
            rocm = rocm or device_type == 6
            if device_type in (1, 6):
                memory_gpus.add(event["args"].get("Device Id", 0))
            continue
        if event.get("ph") != "X" or event.get("cat") not in GPU_ACTIVITIES or "ts" not in event:
            continue
        args = event.get("args", {})
        pid = event.get("pid")
        row = pid if isinstance(pid, int) and 0 <= pid < 256 else None  # GPU rows are numbered by device
        device = args.get("device", row)
        stream = args.get("stream", stream_of_thread(event["tid"]) if "tid" in event else None)
        if event.get("dur", 0) < 0 or device is None or stream is None or device < 0 or stream < 0:
            continue
        activities.append((device, stream, ns(event["ts"])))
    if not activities:
        return None
    offset = 0
    if rocm and memory_gpus:
        offset = max(0, min(a[0] for a in activities) - min(memory_gpus))
    lanes = {}
    for device, stream, begin in activities:
        lane = lanes.setdefault("cuda:%d stream %d" % (device - offset, stream), {"count": 0, "first": begin, "last": begin})
        lane["count"] += 1
        lane["first"] = min(lane["first"], begin)
        lane["last"] = max(lane["last"], begin)
    return {"first_memory_ns": first_memory,
            "lanes": {name: {"count": lane["count"],
                             "first_begin_after_memory_ns": lane["first"] - first_memory,
                             "last_begin_after_memory_ns": lane["last"] - first_memory}
                      for name, lane in lanes.items()}}


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
            # Snapshots before PyTorch 2.1 give no block addresses: blocks tile their
            # segment in address order, from the segment's address.
            address = segment["address"]
            for block in segment.get("blocks", []):
                block_address = block.get("address", address)
                address = block_address + block["size"]
                if block["state"] in ("active_allocated", "active_pending_free") and block_address not in live:
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


def reader_of(path):
    for suffix, reader in READERS.items():
        if path.endswith(suffix):
            return reader
    return None


def figures_of(path):
    reader = reader_of(path)
    return reader(path) if reader else None


def figures():
    result = {}
    for name in sorted(os.listdir(HERE)):
        path = os.path.join(HERE, name)
        found = figures_of(path)
        if found is None:
            continue
        result[name] = {"devices": found}
        kernels = kineto_kernels(path) if reader_of(path) is kineto else None
        if kernels is not None:
            result[name]["kernels"] = kernels
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

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the PyTorch-format fixtures in tests/data and expected.json beside them.

The files have the shapes PyTorch writes (torch.cuda.memory._dump_snapshot, the Kineto
Chrome trace of torch.profiler with profile_memory=True, export_memory_timeline), built
here with Python's own pickle, json and gzip modules so no GPU is needed. For each file
the expected peak allocated bytes and the time it is first reached are computed by a
plain replay of the file's events, written independently of PeakLens:

    python3 tests/data/make_pytorch_fixtures.py      # from the repository root

Snapshot semantics: a block is allocated from "alloc" until "free_completed" (or the
older "free"); a free without an alloc, and a block still active at dump time that the
trace never allocated, were allocated before the trace began. Kineto: memory allocated
before profiling is the first event's "Total Allocated" minus its "Bytes".
"""

import copy
import gzip
import json
import os
import pickle

HERE = os.path.dirname(os.path.abspath(__file__))
MiB = 1 << 20


def frame(name, filename, line):
    return {"filename": filename, "line": line, "name": name}


# ---------------------------------------------------------------- memory snapshots

def make_snapshot(high_addresses):
    """Two steps of a small model on cuda:0 (and a little on cuda:1)."""
    base = 0x7F3A00000000 if not high_addresses else 0xFFFF800000000000  # 9-byte LONG1 when >= 2**63
    # Frame lists are shared objects, as PyTorch shares them: pickle's memo reuses them.
    train = frame("train_step", "train.py", 61)
    fwd = {
        "linear": [frame("linear", "torch/nn/functional.py", 1848), frame("forward", "model.py", 55), train],
        "gelu": [frame("gelu", "torch/nn/functional.py", 1697), frame("forward", "model.py", 56), train],
        "backward": [frame("backward", "torch/autograd/__init__.py", 200), train],
        "adam": [frame("step", "torch/optim/adam.py", 160), train],
    }
    t = 1_700_000_000_000_000  # time_us, Unix epoch microseconds
    trace = []

    def entry(action, addr, size, frames=None, stream=0):
        nonlocal t
        t += 7
        e = {"action": action, "addr": addr, "size": size, "stream": stream, "time_us": t}
        if frames is not None:
            e["frames"] = frames
        trace.append(e)

    annotations = []

    def annotate(name, stage, device=0):
        annotations.append({"device": device, "name": name, "stage": stage, "time_us": t + 1})

    entry("segment_alloc", base, 64 * MiB, fwd["linear"])
    # A parameter allocated before the trace began is freed inside it (no alloc seen).
    preexisting_freed = (base + 60 * MiB, 2 * MiB)
    addr = base
    for step in range(2):
        annotate(f"ProfilerStep#{step}", "START")
        saved = []
        for layer in range(3):
            annotate(f"fwd:blocks.{layer}", "START")
            a = addr + (step * 3 + layer) * 4 * MiB
            entry("alloc", a, 3 * MiB, fwd["linear"])
            tmp = a + 3 * MiB
            entry("alloc", tmp, MiB // 2, fwd["gelu"])
            entry("free_requested", tmp, MiB // 2, fwd["gelu"])
            entry("free_completed", tmp, MiB // 2, fwd["gelu"])
            saved.append(a)
            annotate(f"fwd:blocks.{layer}", "END")
        for layer, a in reversed(list(enumerate(saved))):
            annotate(f"bwd:blocks.{layer}", "START")
            g = base + 40 * MiB + layer * MiB
            entry("alloc", g, MiB, fwd["backward"])
            entry("free_requested", a, 3 * MiB, fwd["backward"])
            # A block whose free was requested stays allocated until free_completed.
            entry("alloc", base + 50 * MiB, 256 * 1024, fwd["backward"])
            entry("free_completed", a, 3 * MiB, fwd["backward"])
            entry("free_requested", base + 50 * MiB, 256 * 1024, fwd["backward"])
            entry("free_completed", base + 50 * MiB, 256 * 1024, fwd["backward"])
            entry("free_requested", g, MiB, fwd["backward"])
            entry("free_completed", g, MiB, fwd["backward"])
            annotate(f"bwd:blocks.{layer}", "END")
        annotate("Optimizer.step#Adam.step", "START")
        if step == 0:
            entry("segment_map", base + 64 * MiB, 32 * MiB)
            entry("alloc", base + 64 * MiB, 8 * MiB, fwd["adam"])  # optimizer state, kept
            entry("free_completed", *preexisting_freed, fwd["adam"])
        annotate("Optimizer.step#Adam.step", "END")
        annotate(f"ProfilerStep#{step}", "END")
    entry("oom", 0, 80 * 1024 * MiB)
    trace[-1]["device_free"] = 3 * MiB
    del trace[-1]["addr"]
    entry("segment_unmap", base + 80 * MiB, 16 * MiB)
    entry("snapshot", 0, 8 * MiB)

    segments = [
        {"device": 0, "address": base, "total_size": 64 * MiB, "allocated_size": 0, "active_size": 0,
         "requested_size": 0, "stream": 0, "segment_type": "large", "segment_pool_id": (0, 0),
         "is_expandable": False, "frames": [],
         "blocks": [
             # Allocated before the trace and never freed: a parameter of 4 MiB.
             {"address": base + 56 * MiB, "size": 4 * MiB, "requested_size": 4 * MiB,
              "state": "active_allocated", "frames": [frame("__init__", "model.py", 120)]},
             {"address": base + 64 * MiB, "size": 8 * MiB, "requested_size": 8 * MiB,
              "state": "active_allocated", "frames": fwd["adam"]},
             {"address": base + 72 * MiB, "size": 8 * MiB, "requested_size": 8 * MiB, "state": "inactive",
              "frames": []},
         ]},
        {"device": 1, "address": base + (1 << 40), "total_size": 2 * MiB, "allocated_size": MiB,
         "active_size": MiB, "requested_size": MiB, "stream": 0, "segment_type": "small",
         "segment_pool_id": (0, 0), "is_expandable": False, "frames": [],
         "blocks": [{"address": base + (1 << 40), "size": MiB, "requested_size": MiB,
                     "state": "active_allocated", "frames": []}]},
    ]
    device1 = [{"action": "alloc", "addr": base + (1 << 40), "size": MiB, "stream": 0, "time_us": t + 100,
                "frames": fwd["linear"]}]
    return {
        "segments": segments,
        "device_traces": [trace, device1],
        "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:False", "max_split_size": -1},
        "external_annotations": annotations,
    }


def make_context_snapshot():
    """What a snapshot holds beside frames: each entry's compile_context (the torch.compile
    graph, "N/A" when recorded without it) and user_metadata (torch.cuda.memory.
    _set_memory_metadata), and external_annotations PeakLens does not know (stages)."""
    t = 1_700_000_000_000_000
    step = [frame("train_step", "train.py", 40)]
    trace, annotations = [], []

    def entry(addr, size, compile_context, user_metadata, action="alloc"):
        nonlocal t
        t += 10
        trace.append({"action": action, "addr": addr, "size": size, "stream": 0, "time_us": t, "frames": step,
                      "compile_context": compile_context, "user_metadata": user_metadata})

    def annotate(name, stage):
        annotations.append({"device": 0, "name": name, "stage": stage, "time_us": t + 1})

    annotate("data_loading", "START")
    entry(0x1000, 1 * MiB, "N/A", "")
    annotate("data_loading", "END")
    annotate("compiled_forward", "START")
    entry(0x200000, 4 * MiB, "0/0", "phase=fwd")
    entry(0x800000, 2 * MiB, "0/0", "phase=fwd")
    annotate("compiled_forward", "END")
    annotate("compiled_backward", "START")
    entry(0x800000, 2 * MiB, "0/0", "phase=fwd", "free_completed")
    entry(0xC00000, 3 * MiB, "1/0", "phase=bwd")
    annotate("compiled_backward", "END")
    entry(0x1000, 1 * MiB, "N/A", "", "free_completed")
    return {"segments": [], "device_traces": [trace], "external_annotations": annotations}


def replay_snapshot(snapshot):
    """Expected (peak bytes, peak time ns) over devices, by the semantics in the docstring."""
    best = (0, 0)
    for device, trace in enumerate(snapshot.get("device_traces", [])):
        live, initial, events = {}, 0, []
        for i, e in enumerate(trace):
            time_ns = e.get("time_us", i) * 1000
            action = e["action"]
            if action == "alloc":
                if e["addr"] in live:
                    events.append((time_ns, -live[e["addr"]]))
                live[e["addr"]] = e["size"]
                events.append((time_ns, e["size"]))
            elif action in ("free_completed", "free"):
                if e["addr"] in live:
                    events.append((time_ns, -live.pop(e["addr"])))
                else:
                    initial += e["size"]
                    events.append((time_ns, -e["size"]))
        for seg in snapshot["segments"]:
            if seg["device"] != device:
                continue
            for b in seg["blocks"]:
                if b["state"] in ("active_allocated", "active_pending_free") and b["address"] not in live:
                    initial += b["size"]
        start = min((e.get("time_us", i) * 1000 for i, e in enumerate(trace)), default=0)
        total = initial
        peak = (total, start)
        for time_ns, delta in events:
            total += delta
            if total > peak[0]:
                peak = (total, time_ns)
        best = max(best, peak, key=lambda p: p[0])
    return best


def legacy_forms(snapshot):
    """The oldest forms: a bare list of segments, and 2.0's blocks with 'history'."""
    bare = copy.deepcopy(snapshot["segments"])
    history = copy.deepcopy(snapshot["segments"])
    for seg in history:
        for b in seg["blocks"]:
            frames = b.pop("frames")
            b.pop("address")
            b["history"] = [{"addr": 0, "real_size": b["requested_size"], "frames": frames}]
    return bare, {"segments": history}


def dump_state_peak(segments):
    per_device = {}
    for seg in segments:
        for b in seg["blocks"]:
            if b["state"] in ("active_allocated", "active_pending_free"):
                per_device[seg["device"]] = per_device.get(seg["device"], 0) + b["size"]
    return (max(per_device.values(), default=0), 0)


# ---------------------------------------------------------------- Kineto trace

def make_kineto(with_base):
    base_ns = 1_699_992_000_000_000_000  # baseTimeNanoseconds: a 3-month boundary
    events = []
    pid, main_tid, autograd_tid = 4242, 4242, 4250
    ts = 1000.0  # microseconds relative to base (absolute when there is no base)
    if not with_base:
        ts = 1_700_000_000_000_000.0
    totals = {"alloc": 64 * MiB, "reserved": 128 * MiB}

    def t(us):
        return round(us, 3) if with_base else int(us)

    def memory(at, addr, size, tid=main_tid):
        totals["alloc"] += size
        events.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": pid, "tid": tid,
                       "ts": t(at), "args": {"Total Reserved": totals["reserved"], "Total Allocated": totals["alloc"],
                                             "Bytes": size, "Addr": addr, "Device Id": 0, "Device Type": 1,
                                             "Ev Idx": len(events)}})

    def span(cat, name, begin, dur, tid=main_tid, args=None):
        events.append({"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": t(begin), "dur": t(dur),
                       "args": args or {}})

    addr = 0x7F3A40000000
    for step in range(2):
        step_begin = ts
        saved = []
        model_begin = ts
        ts += 5
        for block in range(2):
            block_begin = ts
            ts += 2
            lin_begin = ts
            ts += 3
            a = addr + (step * 2 + block) * 4 * MiB
            memory(ts, a, 3 * MiB)
            ts += 20
            span("python_function", "nn.Module: Linear_%d" % block, lin_begin, ts - lin_begin)
            ts += 2
            memory(ts, a + 3 * MiB, MiB // 2)  # in the block, outside the Linear
            memory(ts + 1, a + 3 * MiB, -(MiB // 2))
            ts += 4
            span("python_function", "nn.Module: Block_%d" % block, block_begin, ts - block_begin)
            saved.append(a)
            ts += 1
        span("python_function", "nn.Module: GPT_0", model_begin, ts - model_begin)
        ts += 10
        if step == 1:
            totals["reserved"] += 64 * MiB
        for a in reversed(saved):
            b = ts
            ts += 2
            memory(ts, 0x7F3A80000000, MiB, autograd_tid)
            memory(ts + 1, a, -3 * MiB, autograd_tid)
            memory(ts + 2, 0x7F3A80000000, -MiB, autograd_tid)
            ts += 10
            span("cpu_op", "autograd::engine::evaluate_function: AddmmBackward0", b, ts - b, autograd_tid)
            ts += 1
        ob = ts
        memory(ts + 1, 0x7F3AC0000000, 2 * MiB)
        memory(ts + 2, 0x7F3AC0000000, -2 * MiB)
        ts += 5
        span("user_annotation", "Optimizer.step#Adam.step", ob, ts - ob)
        span("user_annotation", "ProfilerStep#%d" % step, step_begin, ts - step_begin + 1)
        ts += 3
    events.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[OutOfMemory]", "pid": pid,
                   "tid": main_tid, "ts": t(ts),
                   "args": {"Device Type": 1, "Device Id": 0, "Bytes": 80 << 30,
                            "Total Allocated": totals["alloc"], "Total Reserved": totals["reserved"]}})
    # Unrelated events, as real traces are mostly these.
    span("cpu_op", "aten::mm", 1001.0 if with_base else 1_700_000_000_000_001.0, 2.5, main_tid,
         {"External id": 3, "Input Dims": [[4, 8], [8, 4]], "Input type": ["float", "float"]})
    events.append({"ph": "X", "cat": "kernel", "name": "ampere_sgemm_32x32_sliced1x4_tn", "pid": 0, "tid": 7,
                   "ts": t(ts - 50), "dur": t(4.25), "args": {"stream": 7, "device": 0}})
    doc = {"schemaVersion": 1,
           "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85045608448}],
           "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1},
           "traceEvents": events, "traceName": "fixture", "displayTimeUnit": "ms"}
    if with_base:
        doc["baseTimeNanoseconds"] = base_ns
    return doc


def replay_kineto(doc):
    base = doc.get("baseTimeNanoseconds", 0)
    mem = [e for e in doc["traceEvents"] if e.get("name") == "[memory]"]
    mem.sort(key=lambda e: e["ts"])  # the importer orders by time too
    if not mem:
        return (0, 0)
    first = mem[0]["args"]
    total = first["Total Allocated"] - first["Bytes"]
    peak = (total, base + round(mem[0]["ts"] * 1000))
    for e in mem:
        total += e["args"]["Bytes"]
        if total > peak[0]:
            peak = (total, base + round(e["ts"] * 1000))
    return peak


# ---------------------------------------------------------------- memory timeline

def make_timeline():
    """[times, sizes] (microseconds) and the raw [t_ns, action, bytes, category] list."""
    raw = []
    t0 = 1_700_000_000_000_000_000
    raw.append([-1, 1, 40 * MiB, 0])      # PREEXISTING parameters
    raw.append([-1, 1, 80 * MiB, 1])      # PREEXISTING optimizer state
    t = t0
    for step in range(2):
        t += 1000
        raw.append([t, 2, 2 * MiB, 2])    # CREATE input
        for layer in range(3):
            t += 5000
            raw.append([t, 2, 6 * MiB, 4])   # activation
            raw.append([t + 100, 2, MiB, 3])  # temporary
            raw.append([t + 200, 4, -MiB, 3])
        for layer in range(3):
            t += 5000
            raw.append([t, 2, 40 * MiB // 3, 5])  # gradient
            raw.append([t + 50, 4, -6 * MiB, 4])
        raw.append([t + 60, 3, -2 * MiB, 2])   # INCREMENT_VERSION: input becomes
        raw.append([t + 60, 3, 2 * MiB, 6])    # autograd detail
        t += 2000
        raw.append([t, 4, -2 * MiB, 6])
        for layer in range(3):
            raw.append([t + 10, 4, -(40 * MiB // 3), 5])
    raw.sort(key=lambda r: (r[0], r[1]))
    # The plain form: cumulative bytes per category at each time, in microseconds.
    times, sizes, current = [], [], [0] * 8
    earliest = min(r[0] for r in raw if r[0] >= 0)
    for r in raw:
        at = (r[0] if r[0] >= 0 else earliest) // 1000
        current[r[3]] += r[2]
        if times and times[-1] == at:
            sizes[-1] = [0] + current[:]
        else:
            times.append(at)
            sizes.append([0] + current[:])
    for row in sizes:
        del row[9:]
    return [times, sizes], raw


def replay_plain_timeline(doc):
    times, sizes = doc
    peak = (0, 0)
    for at, row in zip(times, sizes):
        total = sum(row[1:9])
        if total > peak[0]:
            peak = (total, at * 1000)
    return peak


def replay_raw_timeline(raw):
    earliest = min(r[0] for r in raw if r[0] >= 0)
    total, peak = 0, (0, 0)
    for r in raw:
        total += r[2]
        if total > peak[0]:
            peak = (total, r[0] if r[0] >= 0 else earliest)
    return peak


# ---------------------------------------------------------------- writing

def write(name, data, expected, kind):
    path = os.path.join(HERE, name)
    opener = gzip.open if name.endswith(".gz") else open
    with opener(path, "wb") as f:
        if kind.startswith("pickle"):
            f.write(pickle.dumps(data, protocol=int(kind[-1])))
        else:
            f.write(json.dumps(data, indent=None if len(json.dumps(data)) > 4000 else 1).encode())
    return {name: {"peak_bytes": expected[0], "peak_time_ns": expected[1]}}


def main():
    expected = {}
    snap = make_snapshot(False)
    high = make_snapshot(True)
    peak = replay_snapshot(snap)
    expected.update(write("snapshot_p2.pickle", snap, peak, "pickle2"))
    expected.update(write("snapshot_p4.pickle", snap, peak, "pickle4"))
    expected.update(write("snapshot_p5.pickle.gz", snap, peak, "pickle5"))
    expected.update(write("snapshot_high_addresses_p4.pickle", high, replay_snapshot(high), "pickle4"))
    expected.update(write("snapshot.json", snap, peak, "json"))
    bare, history = legacy_forms(snap)
    expected.update(write("snapshot_legacy_list_p2.pickle", bare, dump_state_peak(bare), "pickle2"))
    expected.update(write("snapshot_legacy_history_p4.pickle", history, dump_state_peak(history["segments"]), "pickle4"))
    context = make_context_snapshot()
    expected.update(write("snapshot_compile_context_p4.pickle", context, replay_snapshot(context), "pickle4"))
    kineto = make_kineto(True)
    expected.update(write("kineto.pt.trace.json", kineto, replay_kineto(kineto), "json"))
    expected.update(write("kineto.pt.trace.json.gz", kineto, replay_kineto(kineto), "json"))
    old = make_kineto(False)
    expected.update(write("kineto_absolute_us.pt.trace.json", old, replay_kineto(old), "json"))
    plain, raw = make_timeline()
    expected.update(write("memory_timeline.json", plain, replay_plain_timeline(plain), "json"))
    expected.update(write("memory_timeline.raw.json.gz", raw, replay_raw_timeline(raw), "json"))
    with open(os.path.join(HERE, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()

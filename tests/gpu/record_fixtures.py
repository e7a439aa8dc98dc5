# SPDX-License-Identifier: Apache-2.0
"""Records the GPT of gpt_train.py the ways PyTorch itself records memory, for
tests/gpu/acceptance.sh to import with `peaklens-cli summary --json`:

1. a memory snapshot: torch.cuda.memory._record_memory_history() (Python frames) around
   a few training steps, then torch.cuda.memory._dump_snapshot(snapshot.pickle);
2. a Kineto trace of a few more steps: torch.profiler.profile(activities=[CPU, CUDA],
   profile_memory=True, record_shapes=True, with_stack=True), exported with
   export_chrome_trace (kineto.pt.trace.json, gzipped) and export_memory_timeline
   (memory_timeline.json and memory_timeline.raw.json.gz).

Each part resets the caching allocator's peak when it starts recording and prints
torch.cuda.max_memory_allocated() when it stops: the peak the recorded file should show.
figures.json in --out holds them, with the files' names.

    python3 record_fixtures.py --out DIR [gpt_train.py's model options] [--steps 2]

On the CPU (--device cpu, a smoke run) there is no snapshot and no CUDA peak; the Kineto
part still runs, and the memory timeline is left out where PyTorch has no
export_memory_timeline (before 2.1).
"""

import argparse
import gzip
import json
import os
import shutil
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpt_train  # noqa: E402  the same model, batch and optimizer


def gzip_file(path):
    with open(path, "rb") as src, gzip.open(path + ".gz", "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    os.remove(path)
    return path + ".gz"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    gpt_train.add_model_arguments(parser)
    parser.add_argument("--out", required=True, help="folder for the files and figures.json")
    parser.add_argument("--steps", type=int, default=2, help="steps recorded by each part")
    parser.add_argument("--warmup", type=int, default=1, help="steps before the first part")
    args = parser.parse_args(argv)

    device = torch.device(args.device)
    cuda = device.type == "cuda"
    if cuda and not torch.cuda.is_available():
        parser.error("--device cuda, but torch sees no CUDA device (use --device cpu for a smoke run)")
    os.makedirs(args.out, exist_ok=True)
    model, ids, target = gpt_train.build(args, device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def train_step():
        logits = model(ids)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), target.reshape(-1))
        del logits
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        del loss

    def begin():
        gpt_train.synchronize(device)
        if cuda:
            torch.cuda.reset_peak_memory_stats(device)

    def peak():
        gpt_train.synchronize(device)
        return torch.cuda.max_memory_allocated(device) if cuda else None

    for _ in range(args.warmup):
        train_step()
    figures = {"torch": torch.__version__, "device": str(device),
               "device_name": torch.cuda.get_device_name(device) if cuda else "cpu",
               "model": {k: getattr(args, k) for k in ("layers", "d_model", "heads", "seq", "vocab", "batch")},
               "steps": args.steps}

    if cuda:
        begin()
        try:  # Python frames only: the file stays small enough to keep as a fixture
            torch.cuda.memory._record_memory_history(max_entries=1_000_000, stacks="python")
        except TypeError:  # PyTorch 2.0's signature
            torch.cuda.memory._record_memory_history(True, max_entries=1_000_000)
        for _ in range(args.steps):
            train_step()
        figures["snapshot"] = {"max_memory_allocated": peak(), "file": "snapshot.pickle"}
        torch.cuda.memory._dump_snapshot(os.path.join(args.out, "snapshot.pickle"))
        torch.cuda.memory._record_memory_history(enabled=None)
        print(f"snapshot: max_memory_allocated {figures['snapshot']['max_memory_allocated']}", flush=True)

    from torch.profiler import ProfilerActivity, profile
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    begin()
    with profile(activities=activities, profile_memory=True, record_shapes=True, with_stack=True) as prof:
        for _ in range(args.steps):
            train_step()
        kineto_peak = peak()
    trace = os.path.join(args.out, "kineto.pt.trace.json")
    prof.export_chrome_trace(trace)
    figures["kineto"] = {"max_memory_allocated": kineto_peak, "file": os.path.basename(gzip_file(trace))}
    print(f"kineto: max_memory_allocated {kineto_peak}", flush=True)
    if hasattr(prof, "export_memory_timeline"):
        where = str(device) if not cuda else f"cuda:{device.index or 0}"
        prof.export_memory_timeline(os.path.join(args.out, "memory_timeline.json"), device=where)
        prof.export_memory_timeline(os.path.join(args.out, "memory_timeline.raw.json.gz"), device=where)
        figures["memory_timeline"] = {"max_memory_allocated": kineto_peak, "file": "memory_timeline.json"}
        figures["memory_timeline_raw"] = {"max_memory_allocated": kineto_peak, "file": "memory_timeline.raw.json.gz"}
    with open(os.path.join(args.out, "figures.json"), "w") as out:
        json.dump(figures, out, indent=1)
    print("figures " + json.dumps(figures), flush=True)


if __name__ == "__main__":
    main()

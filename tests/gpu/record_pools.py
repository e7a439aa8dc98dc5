# SPDX-License-Identifier: Apache-2.0
"""Records small real memory snapshots of what PyTorch's caching allocator does beyond one
stream's default pool, for tests/data/real/ (the readers' pools, streams, pre-existing
blocks and expandable segments):

1. pools_streams.pickle: blocks allocated before recording began (memory_viz's "ghost"
   blocks), a training step of a small MLP on the default stream, work on a side stream,
   a CUDA graph captured into its private pool and replayed, and tensors made inside a
   torch.cuda.MemPool;
2. expandable_segments.pickle: the same MLP step in a child process started with
   PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True.

Every part that fails is written to figures.json with its error; the others still run.
figures.json also holds torch.cuda.max_memory_allocated() and memory_stats() totals at
each dump, the figures the files must agree with.

    python3 record_pools.py --out DIR
"""

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import traceback

import torch


def mlp(width):
    return torch.nn.Sequential(
        torch.nn.Linear(width, 4 * width), torch.nn.GELU(),
        torch.nn.Linear(4 * width, width), torch.nn.LayerNorm(width),
    ).cuda()


def train_step(model, optimizer, x):
    loss = model(x).square().mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)


def dump(path):
    torch.cuda.synchronize()
    torch.cuda.memory._dump_snapshot(path)
    torch.cuda.memory._record_memory_history(enabled=None)
    stats = torch.cuda.memory_stats()
    with open(path, "rb") as src, gzip.open(path + ".gz", "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    os.remove(path)
    return {
        "file": os.path.basename(path) + ".gz",
        "max_memory_allocated": torch.cuda.max_memory_allocated(),
        "memory_allocated": torch.cuda.memory_allocated(),
        "memory_reserved": torch.cuda.memory_reserved(),
        "num_alloc_retries": stats.get("num_alloc_retries", 0),
    }


def pools_streams(out):
    width, batch = 256, 64
    ghost = [torch.empty(1 << 20, device="cuda") for _ in range(3)]  # before recording
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.memory._record_memory_history(max_entries=200000, stacks="python")
    notes = {}
    model = mlp(width)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(batch, width, device="cuda")
    train_step(model, optimizer, x)
    del ghost[0]  # a pre-existing block freed during the recording

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        y = torch.randn(batch, 4 * width, device="cuda")
        z = y @ y.T
    torch.cuda.current_stream().wait_stream(side)
    z.record_stream(torch.cuda.current_stream())
    del y, z
    notes["side_stream"] = side.cuda_stream

    infer = mlp(width).eval()
    static_in = torch.randn(batch, width, device="cuda")
    warm = torch.cuda.Stream()
    warm.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(warm), torch.no_grad():
        for _ in range(3):
            infer(static_in)
    torch.cuda.current_stream().wait_stream(warm)
    graph = torch.cuda.CUDAGraph()
    with torch.no_grad(), torch.cuda.graph(graph):
        static_out = infer(static_in)
    for _ in range(2):
        static_in.copy_(torch.randn_like(static_in))
        graph.replay()
    notes["graph_pool"] = list(graph.pool())
    del static_out

    if hasattr(torch.cuda, "MemPool") and hasattr(torch.cuda, "use_mem_pool"):
        pool = torch.cuda.MemPool()
        with torch.cuda.use_mem_pool(pool):
            pooled = [torch.empty(256 * 1024, device="cuda") for _ in range(4)]
        notes["mem_pool"] = list(pool.id)
        del pooled[1]
    else:
        notes["mem_pool"] = "torch.cuda.MemPool is missing in this PyTorch"

    train_step(model, optimizer, x)
    figures = dump(os.path.join(out, "pools_streams.pickle"))
    figures.update(notes)
    return figures


def expandable(out):
    env = dict(os.environ, PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True")
    child = subprocess.run([sys.executable, os.path.abspath(__file__), "--out", out, "--child"],
                           env=env, capture_output=True, text=True, timeout=120)
    if child.returncode != 0:
        raise RuntimeError(child.stderr.strip().splitlines()[-1] if child.stderr else
                           f"exit {child.returncode}")
    return json.loads(child.stdout.strip().splitlines()[-1])


def expandable_child(out):
    torch.cuda.memory._record_memory_history(max_entries=200000, stacks="python")
    model = mlp(512)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for batch in (64, 256, 128):  # growing and shrinking activations map and unmap pages
        train_step(model, optimizer, torch.randn(batch, 512, device="cuda"))
    figures = dump(os.path.join(out, "expandable_segments.pickle"))
    figures["alloc_conf"] = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
    print(json.dumps(figures))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.child:
        expandable_child(args.out)
        return
    if not torch.cuda.is_available():
        sys.exit("record_pools.py: torch sees no CUDA device.")
    figures = {"torch": torch.__version__, "device_name": torch.cuda.get_device_name()}
    for name, part in (("pools_streams", pools_streams), ("expandable_segments", expandable)):
        try:
            figures[name] = part(args.out)
        except Exception as error:  # one part's failure is a figure, not the end
            figures[name] = {"error": f"{type(error).__name__}: {error}",
                             "traceback": traceback.format_exc()}
            torch.cuda.memory._record_memory_history(enabled=None)
    with open(os.path.join(args.out, "figures.json"), "w") as f:
        json.dump(figures, f, indent=2)
    print(json.dumps({k: (v.get("error", "ok") if isinstance(v, dict) else v) for k, v in figures.items()}))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Trains a small GPT-style language model for a few steps with the PeakLens helper: the
smallest script to record, plan and rerun with PeakLens (see examples/README.md).

    python3 examples/train_small.py --steps 5
    python3 -m peaklens record --out runs/small -- python3 examples/train_small.py
    PEAKLENS_CHECKPOINT=every:2 python3 examples/train_small.py --device cpu

The model keeps its repeated blocks in a ModuleList and the forward iterates it, so every
checkpoint strategy of the planner applies, segments included. Under torchrun (or srun
with the usual MASTER_ADDR/MASTER_PORT) each process trains its replica with
DistributedDataParallel, on the GPU of its local rank; with --fsdp, its shard of the
model with FSDP2 (fully_shard per block, then the whole model), on the CPU too.
"""

import argparse
import math
import os
import sys
import time

try:
    import peaklens
except ImportError:
    # Run from a checkout without installing the package: it lies in plugins/python.
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "plugins", "python"))
    import peaklens

import torch
from torch import nn


class CausalSelfAttention(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)

    def forward(self, x, mask):
        batch, length, width = x.shape
        q, k, v = self.qkv(x).view(batch, length, 3, self.heads, width // self.heads).permute(2, 0, 3, 1, 4)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(width // self.heads)
        y = (scores + mask[:length, :length]).softmax(dim=-1) @ v
        return self.proj(y.transpose(1, 2).reshape(batch, length, width))


class Block(nn.Module):
    """A pre-norm transformer block: attention, then an MLP, each on a residual path."""

    def __init__(self, width, heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(width)
        self.attn = CausalSelfAttention(width, heads)
        self.norm2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x, mask):
        x = x + self.attn(self.norm1(x), mask)
        return x + self.mlp(self.norm2(x))


class SmallGpt(nn.Module):
    def __init__(self, vocab=256, width=128, layers=4, heads=4, context=64):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.position = nn.Embedding(context, width)
        self.blocks = nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab)
        # Additive (-inf above the diagonal) rather than boolean: gloo cannot broadcast bool buffers.
        self.register_buffer("mask", torch.full((context, context), float("-inf")).triu(1), persistent=False)

    def forward(self, ids):
        positions = torch.arange(ids.shape[1], device=ids.device)
        x = self.embed(ids) + self.position(positions)
        # Iterated, not indexed: a checkpoint segment (blocks.0..blocks.1) runs as one here.
        for block in self.blocks:
            x = block(x, self.mask)
        return self.head(self.norm(x))


def batches(batch_size, length, vocab, device, generator):
    """Endless batches of counting sequences (each token one more than the last, with a
    random start and stride), so the loss visibly falls within a few steps."""
    while True:
        start = torch.randint(0, vocab, (batch_size, 1), generator=generator)
        stride = torch.randint(1, 4, (batch_size, 1), generator=generator)
        tokens = (start + stride * torch.arange(length + 1)) % vocab
        yield tokens[:, :-1].to(device), tokens[:, 1:].to(device)


def choose_device(name, local_rank):
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda":
        if not torch.cuda.is_available():
            sys.exit("train_small.py: --device cuda, but PyTorch sees no CUDA device here; use --device cpu.")
        return torch.device("cuda", local_rank % torch.cuda.device_count())
    return torch.device("cpu")


def launcher_rank(torchrun, slurm, default):
    """A rank from torchrun's variable, else Slurm's, else ``default``."""
    return int(os.environ.get(torchrun) or os.environ.get(slurm) or default)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=10, help="training steps (default 10)")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                        help="where to train; auto: CUDA when PyTorch sees a GPU, else the CPU")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--layers", type=int, default=4, help="transformer blocks (default 4)")
    parser.add_argument("--width", type=int, default=128)
    parser.add_argument("--fsdp", action="store_true",
                        help="under torchrun: shard parameters, gradients and optimizer state with FSDP2")
    arguments = parser.parse_args(argv)

    rank = launcher_rank("RANK", "SLURM_PROCID", 0)
    local_rank = launcher_rank("LOCAL_RANK", "SLURM_LOCALID", 0)
    world_size = launcher_rank("WORLD_SIZE", "SLURM_NTASKS", 1)
    device = choose_device(arguments.device, local_rank)
    if device.type == "cuda":
        torch.cuda.set_device(device)
    distributed = world_size > 1 and torch.distributed.is_available()
    if distributed:
        os.environ.setdefault("RANK", str(rank))  # srun sets only SLURM_*; init_process_group reads these
        os.environ.setdefault("WORLD_SIZE", str(world_size))
        torch.distributed.init_process_group("nccl" if device.type == "cuda" else "gloo")

    torch.manual_seed(0)  # the same weights on every rank
    model = SmallGpt(layers=arguments.layers, width=arguments.width).to(device)
    # Before any wrapper: the ranges and the manifest then name the model's own modules.
    model = peaklens.instrument(model)
    if distributed and arguments.fsdp:
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import fully_shard

        mesh = init_device_mesh(device.type, (world_size,))
        for block in model.blocks:
            fully_shard(block, mesh=mesh)
        trained = fully_shard(model, mesh=mesh)
    else:
        trained = nn.parallel.DistributedDataParallel(model) if distributed else model
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    schedule = model._peaklens.schedule
    print(f"rank {rank}: training on {device}, {sum(p.numel() for p in model.parameters())} parameters, "
          f"checkpoint {schedule}", flush=True)

    generator = torch.Generator().manual_seed(1 + rank)
    data = batches(arguments.batch_size, 64, 256, device, generator)
    for _ in range(arguments.steps):
        ids, targets = next(data)
        started = time.perf_counter()
        with peaklens.step() as number:
            logits = trained(ids)
            loss = nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        print(f"rank {rank}: step {number} loss {loss.item():.4f} ({(time.perf_counter() - started) * 1000:.1f} ms)",
              flush=True)
    if device.type == "cuda":
        print(f"rank {rank}: peak allocated {torch.cuda.max_memory_allocated(device) / 2**20:.1f} MiB", flush=True)
    if distributed:
        torch.distributed.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())

# SPDX-License-Identifier: Apache-2.0
"""What torch.utils.checkpoint does with the models peaklens-replay builds: the reference
tests/gpu/acceptance.sh holds the replay engine's measured peaks against.

It builds the replay's built-in model from the same spec (the `model` object of
`peaklens-replay --json`, or a spec file; docs/replay.md) as plugins/torch/replaymodel.cpp
builds it: the same stages (GPT `embed`, `blocks.i`, `ln_f`, `head`; MLP `layers.i`,
`head`; CNN `stem`, `blocks.i`, `head`), the same operations in the same order, the same
parts inside a block (GPT `ln1`, `attn`, `ln2`, `mlp`; MLP `linear`, `act`, `dropout`;
CNN `conv1`, `bn1`, `dropout`, `conv2`, `bn2`), one fixed batch, AdamW. Then it trains
as the replay does (plugins/torch/replayrunner.cpp): warm-up steps, then measured steps,
each from gradients set to none to the end of the optimizer step, with the CUDA caching
allocator's peak reset before each (torch.cuda.max_memory_allocated).

A checkpoint strategy in PeakLens's grammar (docs/planning.md; read with the Python
helper's own parser) checkpoints stages, segments of stages, nested segments and parts
with torch.utils.checkpoint. Reentrant by default, which is what the replay engine's
checkpoint does (docs/replay.md: input kept, recompute under grad in the backward, the
recomputed output held until it returns); --non-reentrant for PyTorch's newer variant,
which stops recomputing early and so may hold less. A reentrant checkpoint whose input
needs no gradient (the MLP's first layer takes the batch) is given a one-element tensor
that does, so that its parameters still get gradients, as the replay's passes them.

    python3 checkpoint_reference.py --spec '{"model": "gpt", ...}' \
        --strategy none --strategy all --strategy every:2 --device cuda --json out.json

Prints one line per strategy and, with --json, writes
{"torch", "device", "device_name", "reentrant", "spec", "parameter_bytes": {stage: bytes},
 "results": [{"strategy", "checkpoint", "peak_allocated_bytes", "step_peaks_bytes",
              "step_times_ms", "step_time_ms", "loss"}]}
On the CPU (a smoke run) peaks are null: PyTorch counts no CPU allocations.
"""

import argparse
import gc
import json
import math
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "plugins", "python"))
from peaklens._instrument import checkpoint_schedule, held_layers  # noqa: E402  the grammar, as the helper reads it

# The defaults of plugins/torch/modelspec.cpp.
DEFAULTS = {
    "gpt": {"layers": 4, "d_model": 128, "heads": 4, "seq": 64, "vocab": 1024, "batch": 4},
    "mlp": {"layers": 8, "d_model": 512, "classes": 10, "batch": 1024},
    "cnn": {"layers": 4, "channels": 32, "image": 32, "classes": 10, "batch": 8},
}
COMMON = {"dropout": 0.1, "lr": 0.001, "seed": 0}


def read_spec(text):
    """A spec: JSON text, a file holding it, or a built-in name; defaults filled in."""
    if text in DEFAULTS:
        spec = {"model": text}
    elif os.path.exists(text):
        with open(text) as f:
            spec = json.load(f)
    else:
        spec = json.loads(text)
    kind = spec.get("model")
    if kind not in DEFAULTS:
        raise SystemExit(f"checkpoint_reference.py: the model must be gpt, mlp or cnn, not {kind!r}.")
    full = dict(COMMON)
    full.update(DEFAULTS[kind])
    full.update(spec)
    unknown = set(full) - set(DEFAULTS[kind]) - set(COMMON) - {"model"}
    if unknown:
        raise SystemExit(f"checkpoint_reference.py: unknown spec keys {sorted(unknown)} for {kind}.")
    return full


# ---- the replay's modules -------------------------------------------------------------


class CausalSelfAttention(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.heads = s["heads"]
        self.qkv = nn.Linear(s["d_model"], 3 * s["d_model"])
        self.proj = nn.Linear(s["d_model"], s["d_model"])
        self.attn_dropout = nn.Dropout(s["dropout"])
        self.resid_dropout = nn.Dropout(s["dropout"])
        self.register_buffer("future", torch.ones(s["seq"], s["seq"], dtype=torch.bool).triu(1))

    def forward(self, x):
        batch, time_, width = x.shape
        head_width = width // self.heads
        parts = self.qkv(x).split(width, 2)

        def split(t):
            return t.view(batch, time_, self.heads, head_width).transpose(1, 2)

        q, k, v = split(parts[0]), split(parts[1]), split(parts[2])
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(head_width))
        scores = scores.masked_fill(self.future[:time_, :time_], float("-inf"))
        attention = self.attn_dropout(torch.softmax(scores, -1))
        y = torch.matmul(attention, v).transpose(1, 2).contiguous().view(batch, time_, width)
        return self.resid_dropout(self.proj(y))


class GptMlp(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.fc = nn.Linear(s["d_model"], 4 * s["d_model"])
        self.proj = nn.Linear(4 * s["d_model"], s["d_model"])
        self.dropout = nn.Dropout(s["dropout"])

    def forward(self, x):
        return self.dropout(self.proj(F.gelu(self.fc(x))))


class Embedding(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.wte = nn.Embedding(s["vocab"], s["d_model"])
        self.wpe = nn.Embedding(s["seq"], s["d_model"])
        self.dropout = nn.Dropout(s["dropout"])

    def forward(self, ids):
        where = torch.arange(ids.size(1), dtype=torch.long, device=ids.device)
        return self.dropout(self.wte(ids) + self.wpe(where))


class CnnStem(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.conv = nn.Conv2d(3, s["channels"], 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(s["channels"])

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


class CnnHead(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.fc = nn.Linear(s["channels"], s["classes"])

    def forward(self, x):
        return self.fc(x.mean((2, 3)))


class Stage:
    """A stage as replaymodel.h has it: a path, whether it is in the chain, a module, and
    for a block its parts (path, module) with `compose(x, run)` written over them."""

    def __init__(self, path, module, chain=False, parts=(), compose=None):
        self.path, self.module, self.chain = path, module, chain
        self.parts = list(parts)
        self.compose = compose

    def forward(self, x, run_part=None):
        if not self.parts:
            return self.module(x)
        return self.compose(x, run_part or (lambda i, inp: self.parts[i][1](inp)))


def gpt_block(path, s):
    ln1, attn, ln2, mlp = nn.LayerNorm(s["d_model"]), CausalSelfAttention(s), nn.LayerNorm(s["d_model"]), GptMlp(s)

    def compose(x, run):
        x = x + run(1, run(0, x))
        return x + run(3, run(2, x))

    module = nn.ModuleDict({"ln1": ln1, "attn": attn, "ln2": ln2, "mlp": mlp})
    return Stage(path, module, True, [(path + "." + n, m) for n, m in module.items()], compose)


def mlp_block(path, s):
    module = nn.ModuleDict({"linear": nn.Linear(s["d_model"], s["d_model"]), "act": nn.GELU(),
                            "dropout": nn.Dropout(s["dropout"])})

    def compose(x, run):
        return run(2, run(1, run(0, x)))

    return Stage(path, module, True, [(path + "." + n, m) for n, m in module.items()], compose)


def cnn_block(path, s):
    c = s["channels"]
    module = nn.ModuleDict({"conv1": nn.Conv2d(c, c, 3, padding=1, bias=False), "bn1": nn.BatchNorm2d(c),
                            "dropout": nn.Dropout(s["dropout"]),
                            "conv2": nn.Conv2d(c, c, 3, padding=1, bias=False), "bn2": nn.BatchNorm2d(c)})

    def compose(x, run):
        y = run(2, torch.relu(run(1, run(0, x))))
        return torch.relu(x + run(4, run(3, y)))

    return Stage(path, module, True, [(path + "." + n, m) for n, m in module.items()], compose)


def build_model(s, device):
    """The stages, in order, on `device`, parameters drawn from the seeded generator."""
    kind, n = s["model"], s["layers"]
    if kind == "gpt":
        stages = [Stage("embed", Embedding(s))] + [gpt_block(f"blocks.{i}", s) for i in range(n)]
        stages += [Stage("ln_f", nn.LayerNorm(s["d_model"])), Stage("head", nn.Linear(s["d_model"], s["vocab"], bias=False))]
    elif kind == "mlp":
        stages = [mlp_block(f"layers.{i}", s) for i in range(n)] + [Stage("head", nn.Linear(s["d_model"], s["classes"]))]
    else:
        stages = [Stage("stem", CnnStem(s))] + [cnn_block(f"blocks.{i}", s) for i in range(n)]
        stages += [Stage("head", CnnHead(s))]
    for stage in stages:
        stage.module.to(device).train()
    return stages


def make_batch(s, device):
    kind, b = s["model"], s["batch"]
    if kind == "gpt":
        return (torch.randint(s["vocab"], (b, s["seq"]), device=device),
                torch.randint(s["vocab"], (b, s["seq"]), device=device))
    if kind == "mlp":
        return torch.randn(b, s["d_model"], device=device), torch.randint(s["classes"], (b,), device=device)
    return (torch.randn(b, 3, s["image"], s["image"], device=device),
            torch.randint(s["classes"], (b,), device=device))


# ---- checkpointing ----------------------------------------------------------------------


class Runner:
    """The forward of the model under a schedule of Units (peaklens._instrument.Unit)."""

    def __init__(self, stages, units, reentrant):
        self.stages, self.reentrant = stages, reentrant
        self.index = {stage.path: i for i, stage in enumerate(stages)}
        self.part_index = {path: (i, k) for i, stage in enumerate(stages) for k, (path, _) in enumerate(stage.parts)}
        self.whole = {}        # first stage index -> Unit of whole stages
        self.parts = set()     # (stage, part) checkpointed on their own
        for unit in units:
            if unit.first in self.part_index:
                self.parts.add(self.part_index[unit.first])
            else:
                self.whole[self.index[unit.first]] = unit
        self.dummy = None

    def checkpoint(self, function, x):
        if not torch.is_grad_enabled():
            return function(x)  # an inner unit in a checkpoint's first forward runs plainly, as in the replay
        if not self.reentrant:
            return torch.utils.checkpoint.checkpoint(function, x, use_reentrant=False)
        if x.requires_grad:
            return torch.utils.checkpoint.checkpoint(function, x, use_reentrant=True)
        if self.dummy is None:
            self.dummy = torch.zeros(1, device=x.device, requires_grad=True)
        return torch.utils.checkpoint.checkpoint(lambda inp, _: function(inp), x, self.dummy, use_reentrant=True)

    def stage(self, i, x):
        stage = self.stages[i]
        if not stage.parts:
            return stage.forward(x)

        def run(k, inp):
            module = stage.parts[k][1]
            return self.checkpoint(module, inp) if (i, k) in self.parts else module(inp)

        return stage.forward(x, run)

    def unit(self, unit, x):
        """Runs a unit's stages; inner units checkpointed again (which, in the no-grad
        forward of a reentrant checkpoint, runs them plainly, as the replay does)."""
        first, last = self.index[unit.first], self.index[unit.last]
        inner = {self.index[u.first]: u for u in unit.inner}
        i = first
        while i <= last:
            if i in inner:
                x = self.checkpoint(lambda inp, u=inner[i]: self.unit(u, inp), x)
                i = self.index[inner[i].last] + 1
            else:
                x = self.stage(i, x)
                i += 1
        return x

    def forward(self, x):
        i = 0
        while i < len(self.stages):
            if i in self.whole:
                unit = self.whole[i]
                x = self.checkpoint(lambda inp, u=unit: self.unit(u, inp), x)
                i = self.index[unit.last] + 1
            else:
                x = self.stage(i, x)
                i += 1
        return x


def schedule(stages, text):
    toggleable = []
    for stage in stages:
        toggleable.append(stage.path)
        toggleable.extend(path for path, _ in stage.parts)
    chain = [stage.path for stage in stages if stage.chain]
    units = checkpoint_schedule(text, chain, toggleable)
    return units, held_layers(units, toggleable)


def synchronize(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def measure(spec, text, device, steps, warmup, reentrant):
    """One strategy from a fresh model: the replay's steps, measured."""
    torch.manual_seed(spec["seed"])
    stages = build_model(spec, device)
    units, held = schedule(stages, text)
    runner = Runner(stages, units, reentrant)
    inputs, target = make_batch(spec, device)
    parameters = [p for stage in stages for p in stage.module.parameters()]
    optimizer = torch.optim.AdamW(parameters, lr=spec["lr"], foreach=False)  # LibTorch's loop, one tensor at a time
    peaks, times, loss_value = [], [], None
    for step in range(warmup + steps):
        synchronize(device)
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(device)
        begin = time.perf_counter()
        for p in parameters:
            p.grad = None
        output = runner.forward(inputs)
        loss = F.cross_entropy(output.reshape(-1, output.size(-1)), target.reshape(-1))
        del output
        loss.backward()
        optimizer.step()
        synchronize(device)
        elapsed = (time.perf_counter() - begin) * 1e3
        loss_value = float(loss)
        del loss
        if step >= warmup:
            times.append(elapsed)
            peaks.append(torch.cuda.max_memory_allocated(device) if device.type == "cuda" else None)
    parameter_bytes = {stage.path: sum(p.numel() * p.element_size() for p in stage.module.parameters()) for stage in stages}
    del stages, runner, inputs, target, parameters, optimizer
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()
    known = [p for p in peaks if p is not None]
    return {"strategy": text, "checkpoint": held, "peak_allocated_bytes": max(known) if known else None,
            "step_peaks_bytes": peaks, "step_times_ms": [round(t, 4) for t in times],
            "step_time_ms": statistics.median(times), "loss": loss_value}, parameter_bytes


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", required=True, help="gpt, mlp, cnn, a spec file, or the spec as JSON text")
    parser.add_argument("--replay-json", action="store_true",
                        help="--spec is peaklens-replay's --json output: take its `model` object")
    parser.add_argument("--strategy", action="append", help="a checkpoint strategy (repeat); default: none")
    parser.add_argument("--device", default="cuda", help="cuda (default) or cpu (a smoke run: no peaks)")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--non-reentrant", action="store_true", help="use_reentrant=False instead of True")
    parser.add_argument("--json", metavar="FILE", help="write the results here")
    args = parser.parse_args(argv)

    if args.replay_json:
        with open(args.spec) as f:
            spec = read_spec(json.dumps(json.load(f)["model"]))
    else:
        spec = read_spec(args.spec)
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda, but torch sees no CUDA device (use --device cpu for a smoke run)")
    results, parameter_bytes = [], {}
    for text in args.strategy or ["none"]:
        result, parameter_bytes = measure(spec, text, device, args.steps, args.warmup, not args.non_reentrant)
        results.append(result)
        peak = result["peak_allocated_bytes"]
        print(f"{spec['model']} {text}: peak {'-' if peak is None else f'{peak / 2**20:.2f} MiB'}, "
              f"step {result['step_time_ms']:.2f} ms, loss {result['loss']:.4f}, "
              f"checkpointed {','.join(result['checkpoint']) or 'nothing'}", flush=True)
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"torch": torch.__version__, "device": str(device),
                       "device_name": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
                       "reentrant": not args.non_reentrant, "spec": spec, "parameter_bytes": parameter_bytes,
                       "results": results}, out, indent=1)


if __name__ == "__main__":
    main()

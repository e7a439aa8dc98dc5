# SPDX-License-Identifier: Apache-2.0
"""A small GPT trained for a fixed number of steps: the script tests/gpu/acceptance.sh
records with `peaklens-cli record` and runs again without it.

The model is the one peaklens-replay builds as `gpt` (plugins/torch/replaymodel.cpp):
token + position embedding, blocks of LayerNorm, causal multi-head attention, LayerNorm
and a GELU MLP with residuals, a final LayerNorm and a head without bias, cross-entropy
over the tokens, AdamW. It is instrumented with the PeakLens helper (ranges, manifest,
PEAKLENS_CHECKPOINT toggles) and times each step itself, CUDA-synchronised:

    step 3 time_ms 12.345

and, at the end, one line `result {...}` (JSON): the step times, the device, and
torch.cuda.max_memory_allocated / max_memory_reserved since the process started.

--saved-bytes FILE also counts, in the first step, what autograd keeps for the backward
pass: every tensor the forward saves (saved-tensor hooks), attributed to the module whose
forward allocated its storage (a dispatch mode that sees each op's new storages), summed
per module with its sub-modules. That is what PeakLens calls a layer's activation bytes,
measured from PyTorch's side; the file also has each module's output bytes from the
shapes the helper's manifest records.

    python3 gpt_train.py --steps 40 --warmup 5 [--device cuda|cpu] [--saved-bytes F]
"""

import argparse
import contextlib
import json
import math
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import peaklens
except ImportError:  # not under `peaklens-cli record`: the helper from this checkout
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "plugins", "python"))
    import peaklens


class Embedding(nn.Module):
    def __init__(self, vocab, seq, width, dropout):
        super().__init__()
        self.wte = nn.Embedding(vocab, width)
        self.wpe = nn.Embedding(seq, width)
        self.dropout = nn.Dropout(dropout)

    def forward(self, ids):
        where = torch.arange(ids.size(1), dtype=torch.long, device=ids.device)
        return self.dropout(self.wte(ids) + self.wpe(where))


class CausalSelfAttention(nn.Module):
    def __init__(self, width, heads, seq, dropout):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)
        self.register_buffer("future", torch.ones(seq, seq, dtype=torch.bool).triu(1))

    def forward(self, x):
        batch, time_, width = x.shape
        head_width = width // self.heads
        q, k, v = self.qkv(x).split(width, 2)

        def split(t):
            return t.view(batch, time_, self.heads, head_width).transpose(1, 2)

        q, k, v = split(q), split(k), split(v)
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(head_width))
        scores = scores.masked_fill(self.future[:time_, :time_], float("-inf"))
        attention = self.attn_dropout(torch.softmax(scores, -1))
        y = torch.matmul(attention, v).transpose(1, 2).contiguous().view(batch, time_, width)
        return self.resid_dropout(self.proj(y))


class MLP(nn.Module):
    def __init__(self, width, dropout):
        super().__init__()
        self.fc = nn.Linear(width, 4 * width)
        self.proj = nn.Linear(4 * width, width)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(self.proj(F.gelu(self.fc(x))))


class Block(nn.Module):
    def __init__(self, width, heads, seq, dropout):
        super().__init__()
        self.ln1 = nn.LayerNorm(width)
        self.attn = CausalSelfAttention(width, heads, seq, dropout)
        self.ln2 = nn.LayerNorm(width)
        self.mlp = MLP(width, dropout)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, layers, width, heads, seq, vocab, dropout):
        super().__init__()
        self.embed = Embedding(vocab, seq, width, dropout)
        self.blocks = nn.ModuleList(Block(width, heads, seq, dropout) for _ in range(layers))
        self.ln_f = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab, bias=False)

    def forward(self, ids):
        x = self.embed(ids)
        for block in self.blocks:  # iterated, so that checkpoint segments can run
            x = block(x)
        return self.head(self.ln_f(x))


def add_model_arguments(parser):
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--d-model", type=int, default=256)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--seq", type=int, default=512)
    parser.add_argument("--vocab", type=int, default=8192)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cuda", help="cuda (default) or cpu (a smoke run)")


def build(args, device):
    """The model, its optimizer and one fixed batch, drawn from the seeded generator."""
    torch.manual_seed(args.seed)
    model = GPT(args.layers, args.d_model, args.heads, args.seq, args.vocab, args.dropout).to(device)
    ids = torch.randint(args.vocab, (args.batch, args.seq), device=device)
    target = torch.randint(args.vocab, (args.batch, args.seq), device=device)
    return model, ids, target


def synchronize(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


# ---- what autograd keeps, from PyTorch's side ---------------------------------------


def _storage(tensor):
    """(address, bytes) of a tensor's storage; (0, 0) for one without (sparse, meta)."""
    try:
        storage = tensor.untyped_storage()
    except AttributeError:  # PyTorch before 2.0
        storage = tensor.storage()
    try:
        return storage.data_ptr(), storage.nbytes()
    except (RuntimeError, NotImplementedError):
        return 0, 0


class SavedBytes:
    """Within `with`, counts the storages autograd saves, by the module that made them."""

    def __init__(self, model):
        from torch.utils._python_dispatch import TorchDispatchMode
        from torch.utils._pytree import tree_flatten

        self.model = model
        self.stack = [""]
        self.made = {}    # storage address -> (module path, bytes)
        self.saved = set()  # storage addresses saved for backward
        outer = self

        class Made(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                out = func(*args, **(kwargs or {}))
                inputs = {_storage(t)[0] for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)}
                for t in tree_flatten(out)[0]:
                    if isinstance(t, torch.Tensor):
                        address, nbytes = _storage(t)
                        if address and address not in inputs:  # a new storage, not a view or in place
                            outer.made[address] = (outer.stack[-1], nbytes)
                return out

        self.mode = Made()
        self.handles = []

    def __enter__(self):
        for path, module in self.model.named_modules():
            if path:
                self.handles.append(module.register_forward_pre_hook(self._enter_module(path)))
                self.handles.append(module.register_forward_hook(self._leave_module))

        def pack(tensor):
            self.saved.add(_storage(tensor)[0])
            return tensor

        self.hooks = torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor)
        self.hooks.__enter__()
        self.mode.__enter__()
        return self

    def __exit__(self, *exc):
        self.mode.__exit__(*exc)
        self.hooks.__exit__(*exc)
        for handle in self.handles:
            handle.remove()
        return False

    def _enter_module(self, path):
        def enter(module, inputs):
            self.stack.append(path)
        return enter

    def _leave_module(self, module, inputs, output):
        self.stack.pop()  # and return None: a value would replace the output

    def per_module(self):
        """Bytes saved for the backward per module path, with its sub-modules (the root: '')."""
        own = {}
        for address in self.saved:
            if address in self.made:
                path, nbytes = self.made[address]
                own[path] = own.get(path, 0) + nbytes
        total = {}
        for path, nbytes in own.items():
            parts = path.split(".") if path else []
            for depth in range(len(parts) + 1):
                prefix = ".".join(parts[:depth])
                total[prefix] = total.get(prefix, 0) + nbytes
        return own, total


def _elements(shape):
    if isinstance(shape, list) and all(isinstance(n, int) for n in shape):
        return math.prod(shape)
    if isinstance(shape, list):
        return sum(_elements(s) for s in shape)
    return 0


def output_bytes(model, element_size=4):
    """Each module's output bytes from the shapes the helper's manifest records."""
    manifest = model._peaklens.manifest()
    return {entry["path"]: _elements(entry.get("output")) * element_size
            for entry in manifest["modules"] if entry.get("output") is not None}


# ---- the run --------------------------------------------------------------------------


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_model_arguments(parser)
    parser.add_argument("--steps", type=int, default=40, help="timed steps")
    parser.add_argument("--warmup", type=int, default=5, help="steps first, not timed")
    parser.add_argument("--saved-bytes", metavar="FILE", help="count what autograd keeps in the first step (JSON)")
    args = parser.parse_args(argv)

    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda, but torch sees no CUDA device (use --device cpu for a smoke run)")
    model, ids, target = build(args, device)
    model = peaklens.instrument(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    saved = None
    times = []
    for step in range(args.warmup + args.steps):
        counting = SavedBytes(model) if step == 0 and args.saved_bytes else None
        synchronize(device)
        begin = time.perf_counter()
        with peaklens.step():
            with counting or contextlib.nullcontext():
                logits = model(ids)
                loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), target.reshape(-1))
            if counting is not None:
                saved = counting.per_module()  # what is kept as the backward begins
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            del logits, loss
        synchronize(device)
        elapsed = (time.perf_counter() - begin) * 1e3
        if step >= args.warmup:
            times.append(elapsed)
        print(f"step {step} time_ms {elapsed:.4f}{' (warm-up)' if step < args.warmup else ''}", flush=True)

    if saved is not None:
        own, total = saved
        outputs = output_bytes(model)
        with open(args.saved_bytes, "w") as out:
            json.dump({"what": "bytes autograd saved for the backward in step 0, by the module whose forward "
                               "allocated them, with sub-modules (activation_bytes), without (self_activation_bytes)",
                       "activation_bytes": total, "self_activation_bytes": own, "output_bytes": outputs,
                       "chain": model._peaklens.manifest()["chain"]}, out, indent=1)

    result = {
        "device": str(device),
        "device_name": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "torch": torch.__version__,
        "checkpoint": model._peaklens.checkpointed,
        "allocator": os.environ.get("PEAKLENS_ALLOCATOR", ""),
        "step_times_ms": [round(t, 4) for t in times],
        "median_step_ms": statistics.median(times) if times else None,
        "max_memory_allocated": torch.cuda.max_memory_allocated(device) if device.type == "cuda" else None,
        "max_memory_reserved": torch.cuda.max_memory_reserved(device) if device.type == "cuda" else None,
    }
    print("result " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()

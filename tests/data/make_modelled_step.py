#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes modelled-step.pltxt: PeakLens trace text modelling two training steps of a small
GPT-style decoder (4 blocks, d_model 768, 12 heads, sequence 512, batch 4, fp32, AdamW).

It is a model, not a recording: tensor sizes follow the architecture, times are rough
estimates, and the caching allocator is approximated by 20 MiB-rounded segments that are
never released. The tests use it as a rich, readable trace with known figures (stacks,
segments, steps); the bundled sample in resources/samples is a real recording.

    python3 tests/data/make_modelled_step.py > tests/data/modelled-step.pltxt
"""

import sys

BATCH, SEQ, DIM, HEADS, VOCAB, BLOCKS = 4, 512, 768, 12, 50257, 4
FP32 = 4
SEGMENT = 20 * 1024 * 1024


class Writer:
    def __init__(self):
        self.lines = []
        self.next_block = 0
        self.allocated = 0
        self.reserved = 0
        self.segments = 0

    def emit(self, text):
        self.lines.append(text)

    def at(self, micros, text):
        self.emit(f"+{micros}us {text}")

    def alloc(self, size, category, stack=None, scope=None):
        """Allocates a block, growing the reserved pool first when it runs short."""
        name = f"b{self.next_block}"
        self.next_block += 1
        self.allocated += size
        if self.allocated > self.reserved:
            need = self.allocated - self.reserved
            grow = -(-need // SEGMENT) * SEGMENT
            self.emit(f"reserve s{self.segments} {grow}")
            self.segments += 1
            self.reserved += grow
        where = f" stack={';'.join(stack)}" if stack else ""
        where += f" @{scope}" if scope else ""
        self.emit(f"alloc {name} {size} {category}{where}")
        return (name, size)

    def free(self, block):
        self.allocated -= block[1]
        self.emit(f"free {block[0]}")


def frames(*inner):
    return ["main@train.py:88", "train_step@train.py:61"] + list(inner)


def block_of(path):
    return path.rsplit(".", 1)[0]


def layer_params(path):
    d = DIM
    if path.endswith(("ln1", "ln2")) or path == "ln_f":
        return 2 * d * FP32
    if path.endswith("attn"):
        return (4 * d * d + 4 * d) * FP32
    if path.endswith("mlp"):
        return (8 * d * d + 5 * d) * FP32
    if path == "embed":
        return (VOCAB * d + SEQ * d) * FP32
    return 0


def main():
    w = Writer()
    bt = BATCH * SEQ
    act = bt * DIM * FP32
    scores = BATCH * HEADS * SEQ * SEQ * FP32
    w.emit("# PeakLens trace text, written by make_training_step.py (a model, not a recording).")
    w.emit("meta description Modelled GPT-style training step (4 blocks, d_model 768, seq 512, batch 4, fp32, "
           "AdamW), built with PeakLens trace text; not a recording.")
    w.emit("meta device.name modelled CUDA device")
    w.emit("meta sample.origin modelled")

    paths = ["embed"]
    for i in range(BLOCKS):
        paths += [f"blocks.{i}.ln1", f"blocks.{i}.attn", f"blocks.{i}.ln2", f"blocks.{i}.mlp"]
    paths += ["ln_f", "lm_head"]
    kinds = {"embed": "Embedding", "ln1": "LayerNorm", "ln2": "LayerNorm", "ln_f": "LayerNorm",
             "attn": "CausalSelfAttention", "mlp": "MLP", "lm_head": "Linear"}
    for i in range(BLOCKS):
        w.emit(f"layer blocks.{i} kind=Block params={sum(layer_params(p) for p in paths if p.startswith(f'blocks.{i}.'))}")
    for p in paths:
        w.emit(f"layer {p} kind={kinds[p.split('.')[-1]]} params={layer_params(p)}")

    params = [(p, w.alloc(layer_params(p), "parameter", frames("__init__@model.py:120"), f"other:{p}"))
              for p in paths if layer_params(p)]
    grads, optimizer_state = [], []
    for step in (1, 2):
        w.at(50, f"begin step {step}")
        for g in grads:  # zero_grad(set_to_none=True)
            w.free(g)
        grads = []
        batch = w.alloc(bt * 8 * 2, "input", frames("load_batch@train.py:40"))
        saved = {}  # layer -> blocks kept for its backward

        # Forward: each layer allocates its output; what autograd saves stays until backward.
        x = None
        for p in paths:
            if p.endswith(".ln1"):
                w.at(2, f"begin fwd:{block_of(p)}")
            w.at(5, f"begin fwd:{p}")
            kind = p.split(".")[-1]
            keep = []
            if p == "embed":
                out = w.alloc(act, "activation", frames("forward@model.py:140", "embedding@torch/nn/functional.py:2210"))
                w.at(40, "")
            elif kind in ("ln1", "ln2", "ln_f"):
                out = w.alloc(act, "activation", frames("forward@model.py:97", "layer_norm@torch/nn/functional.py:2515"))
                keep.append(w.alloc(bt * 2 * FP32, "activation", frames("forward@model.py:97")))
                w.at(30, "")
            elif kind == "attn":
                qkv = w.alloc(3 * act, "activation", frames("forward@model.py:71", "linear@torch/nn/functional.py:1848"))
                w.at(180, "")
                att = w.alloc(scores, "temporary", frames("forward@model.py:74", "matmul@model.py:74"))
                probs = w.alloc(scores, "activation", frames("forward@model.py:76", "softmax@torch/nn/functional.py:1843"))
                w.free(att)
                mask = w.alloc(scores // FP32, "activation", frames("forward@model.py:77", "dropout@torch/nn/functional.py:1252"))
                y = w.alloc(act, "activation", frames("forward@model.py:78", "matmul@model.py:78"))
                w.at(160, "")
                out = w.alloc(act, "activation", frames("forward@model.py:80", "linear@torch/nn/functional.py:1848"))
                keep += [qkv, probs, mask, y]
                w.at(60, "")
            elif kind == "mlp":
                h = w.alloc(4 * act, "activation", frames("forward@model.py:55", "linear@torch/nn/functional.py:1848"))
                w.at(240, "")
                g = w.alloc(4 * act, "activation", frames("forward@model.py:56", "gelu@torch/nn/functional.py:1697"))
                w.at(20, "")
                out = w.alloc(act, "activation", frames("forward@model.py:57", "linear@torch/nn/functional.py:1848"))
                keep += [h, g]
                w.at(240, "")
            else:  # lm_head: logits and the loss
                out = w.alloc(bt * VOCAB * FP32, "activation", frames("forward@model.py:150", "linear@torch/nn/functional.py:1848"))
                w.at(2900, "")
                lse = w.alloc(bt * VOCAB * FP32, "temporary", frames("forward@model.py:151", "cross_entropy@torch/nn/functional.py:3029"))
                w.free(lse)
                keep.append(w.alloc(bt * FP32, "activation", frames("forward@model.py:151")))
            if x is not None:
                keep.append(x)  # every layer here saves its input for backward
            saved[p] = keep
            x = out
            w.at(1, f"end fwd:{p}")
            if p.endswith(".mlp"):
                w.at(2, f"end fwd:{block_of(p)}")
        saved["lm_head"].append(x)

        # Backward: layers in reverse; gradients flow, saved tensors are released.
        grad = None
        for p in reversed(paths):
            if p.endswith(".mlp"):
                w.at(2, f"begin bwd:{block_of(p)}")
            w.at(5, f"begin bwd:{p}")
            kind = p.split(".")[-1]
            new_grad = w.alloc(act, "autograd_detail", frames("backward@torch/autograd/__init__.py:200"))
            if kind in ("attn", "mlp"):
                tmp = w.alloc(scores if kind == "attn" else 4 * act, "temporary",
                              frames("backward@torch/autograd/__init__.py:200"))
                w.at(400 if kind == "attn" else 480, "")
                w.free(tmp)
            else:
                w.at(5800 if p == "lm_head" else 40, "")
            if layer_params(p):
                grads.append(w.alloc(layer_params(p), "gradient", frames("backward@torch/autograd/__init__.py:200")))
            for block in saved.pop(p):
                w.free(block)
            if grad is not None:
                w.free(grad)
            grad = new_grad
            w.at(1, f"end bwd:{p}")
            if p.endswith(".ln1"):
                w.at(2, f"end bwd:{block_of(p)}")
        w.free(grad)
        w.free(batch)

        # AdamW: state is created on the first step and kept.
        w.at(20, "begin opt")
        if not optimizer_state:
            for p, prm in params:
                for line in (160, 161):  # exp_avg, exp_avg_sq
                    optimizer_state.append(w.alloc(prm[1], "optimizer_state",
                                                   frames(f"step@torch/optim/adamw.py:{line}"), f"opt:{p}"))
        for p, prm in params:
            tmp = w.alloc(prm[1], "temporary", frames("step@torch/optim/adamw.py:350"), f"opt:{p}")
            w.at(15, "")
            w.free(tmp)
        w.at(10, "end opt")
        w.at(5, f"end step {step}")

    # Drop the empty "+Nus" placeholders: fold their time into the next statement.
    out, pending = [], 0
    for line in w.lines:
        if line.startswith("+") and line.endswith("us "):
            pending += int(line[1:-3])
            continue
        if pending and not line.startswith(("#", "meta", "layer")):
            if line.startswith("+"):
                micros, rest = line[1:].split("us ", 1)
                line = f"+{int(micros) + pending}us {rest}"
            else:
                line = f"+{pending}us {line}"
            pending = 0
        out.append(line)
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()

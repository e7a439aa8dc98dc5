#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Exports a small sequential model as TorchScript blocks plus a peaklens-replay spec.

    python3 export_torchscript_blocks.py OUT_DIR [--head]

Each block (Linear -> GELU -> Dropout with a residual, and a final Linear) is traced in
training mode with torch.jit.trace, so its dropout stays active in the replay; the spec
names the block files relative to itself. With --head the final Linear is named "head"
rather than "blocks.3", as a model's head is. Used by tst_replayrunner with the project's
PyTorch (PEAKLENS_PYTHON).
"""

import json
import pathlib
import sys

import torch

WIDTH, BATCH, BLOCKS, OUT = 32, 16, 3, 8


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(WIDTH, WIDTH)
        self.dropout = torch.nn.Dropout(0.2)

    def forward(self, x):
        return x + self.dropout(torch.nn.functional.gelu(self.linear(x)))


def main():
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    example = torch.randn(BATCH, WIDTH)
    modules = [Block() for _ in range(BLOCKS)] + [torch.nn.Linear(WIDTH, OUT)]
    blocks = []
    for i, module in enumerate(modules):
        module.train()
        traced = torch.jit.trace(module, example, check_trace=False)
        name = f"block{i}.pt"
        traced.save(str(out / name))
        head = "--head" in sys.argv[2:] and i == len(modules) - 1
        blocks.append({"name": "head" if head else f"blocks.{i}", "file": name})
        example = module(example)
    spec = {"model": "torchscript", "blocks": blocks,
            "input": {"shape": [BATCH, WIDTH], "dtype": "float32"}, "loss": "mse"}
    (out / "spec.json").write_text(json.dumps(spec, indent=2) + "\n")


if __name__ == "__main__":
    main()

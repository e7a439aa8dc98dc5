# SPDX-License-Identifier: Apache-2.0
"""Writes tests/data/manifest.json: the peaklens helper's manifest of a small GPT-style
model after one CPU training step with blocks.1 checkpointed (Debian's python3-torch).

    PYTHONPATH=plugins/python python3 tests/data/make_manifest.py tests/data/manifest.json
"""

import sys

import torch
from torch import nn

import peaklens


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.ln = nn.LayerNorm(width)
        self.attn = nn.MultiheadAttention(width, 4, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x):
        h = self.ln(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(x)


class Tiny(nn.Module):
    def __init__(self, vocab=100, width=32, blocks=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.blocks = nn.ModuleList(Block(width) for _ in range(blocks))
        self.head = nn.Linear(width, vocab)

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def main(out):
    torch.manual_seed(0)
    model = peaklens.instrument(Tiny(), checkpoint="blocks.1", manifest_path=out)
    optimizer = torch.optim.AdamW(model.parameters())
    tokens = torch.randint(0, 100, (2, 16))
    with peaklens.step():
        logits = model(tokens)
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), tokens.flatten())
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main(sys.argv[1])

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Trains a small residual CNN on random images for a few steps with the PeakLens helper:
a script of another shape than train_small.py (see examples/README.md).

    python3 examples/train_resnet.py --steps 5 --device cpu
    peaklens-cli record --out runs/resnet -- python3 examples/train_resnet.py --device cpu
    PEAKLENS_CHECKPOINT=every:2 python3 examples/train_resnet.py --device cpu

The model keeps its stages (each two residual blocks of 3x3 convolutions with batch norm,
at one width and resolution) in a ModuleList that forward iterates, so the planner's chain
is stages.0 ... stages.N-1 and every checkpoint strategy applies to it.
"""

import argparse
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


class ResidualBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.norm1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.norm2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        y = torch.relu(self.norm1(self.conv1(x)))
        return torch.relu(x + self.norm2(self.conv2(y)))


class Stage(nn.Module):
    """Two residual blocks at one width and resolution."""

    def __init__(self, channels):
        super().__init__()
        self.first = ResidualBlock(channels)
        self.second = ResidualBlock(channels)

    def forward(self, x):
        return self.second(self.first(x))


class SmallResNet(nn.Module):
    def __init__(self, stages=4, channels=32, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, channels, 3, padding=1, bias=False), nn.BatchNorm2d(channels), nn.ReLU())
        self.stages = nn.ModuleList(Stage(channels) for _ in range(stages))
        self.head = nn.Linear(channels, classes)

    def forward(self, images):
        x = self.stem(images)
        # Iterated, not indexed: a checkpoint segment (stages.0..stages.1) runs as one here.
        for stage in self.stages:
            x = stage(x)
        return self.head(x.mean(dim=(2, 3)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=10, help="training steps (default 10)")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                        help="where to train; auto: CUDA when PyTorch sees a GPU, else the CPU")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--stages", type=int, default=4, help="residual stages (default 4)")
    parser.add_argument("--channels", type=int, default=32)
    parser.add_argument("--size", type=int, default=32, help="image height and width (default 32)")
    arguments = parser.parse_args(argv)

    if arguments.device == "auto":
        arguments.device = "cuda" if torch.cuda.is_available() else "cpu"
    if arguments.device == "cuda" and not torch.cuda.is_available():
        sys.exit("train_resnet.py: --device cuda, but PyTorch sees no CUDA device here; use --device cpu.")
    device = torch.device(arguments.device)

    torch.manual_seed(0)
    model = peaklens.instrument(SmallResNet(arguments.stages, arguments.channels).to(device))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    print(f"training on {device}, {sum(p.numel() for p in model.parameters())} parameters, "
          f"checkpoint {model._peaklens.schedule}", flush=True)
    generator = torch.Generator().manual_seed(1)
    for _ in range(arguments.steps):
        images = torch.randn(arguments.batch_size, 3, arguments.size, arguments.size, generator=generator).to(device)
        labels = torch.randint(0, 10, (arguments.batch_size,), generator=generator).to(device)
        started = time.perf_counter()
        with peaklens.step() as number:
            loss = nn.functional.cross_entropy(model(images), labels)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        print(f"step {number} loss {loss.item():.4f} ({(time.perf_counter() - started) * 1000:.1f} ms)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

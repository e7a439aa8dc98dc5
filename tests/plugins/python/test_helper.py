"""Tests of the peaklens Python helper on Debian's python3-torch (CPU).

Run by tst_pythonhelper: python3 -m unittest test_helper, with PYTHONPATH=plugins/python.
"""

import json
import os
import re
import tempfile
import unittest

import torch

import peaklens
from peaklens._instrument import checkpoint_chain, resolve_checkpoint


class Recorder:
    """A range sink that keeps the ranges as a tree of (name, children)."""

    def __init__(self):
        self.root = ("root", [])
        self.stack = [self.root]
        self.pushes = []

    def push(self, name):
        node = (name, [])
        self.stack[-1][1].append(node)
        self.stack.append(node)
        self.pushes.append(name)

    def pop(self):
        assert len(self.stack) > 1, "pop without push"
        self.stack.pop()


class Block(torch.nn.Module):
    calls = {}

    def __init__(self, name):
        super().__init__()
        self.name = name
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 16)
        self.dropout = torch.nn.Dropout(0.3)

    def forward(self, x):
        Block.calls[self.name] = Block.calls.get(self.name, 0) + 1
        return x + self.dropout(self.fc2(torch.relu(self.fc1(x))))


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Linear(8, 16)
        self.blocks = torch.nn.ModuleList([Block(str(i)) for i in range(3)])
        self.head = torch.nn.Linear(16, 4)

    def forward(self, x):
        x = self.embed(x)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def train_step(model, seed=0):
    torch.manual_seed(seed)
    x = torch.randn(5, 8)
    with peaklens.step():
        model(x).pow(2).mean().backward()
    return [p.grad.clone() for p in model.parameters()]


def fresh_model():
    torch.manual_seed(1)
    return Net()


class HelperTest(unittest.TestCase):
    def setUp(self):
        Block.calls = {}
        os.environ.pop("PEAKLENS_CHECKPOINT", None)
        for name in ("PEAKLENS_MANIFEST", "PEAKLENS_OUT", "RANK", "LOCAL_RANK"):
            os.environ.pop(name, None)

    def test_ranges_nest_forward_then_backward_in_reverse(self):
        recorder = Recorder()
        model = peaklens.instrument(fresh_model(), sink=recorder)
        train_step(model)
        self.assertEqual(len(recorder.stack), 1, "every range was closed")
        (step,) = recorder.root[1]
        self.assertEqual(step[0], "step:0")
        top = [name for name, _ in step[1]]
        forward = [n for n in top if n.startswith("fwd:")]
        backward = [n for n in top if n.startswith("bwd:")]
        self.assertEqual(forward, ["fwd:embed", "fwd:blocks.0", "fwd:blocks.1", "fwd:blocks.2", "fwd:head"])
        self.assertEqual(backward, ["bwd:head", "bwd:blocks.2", "bwd:blocks.1", "bwd:blocks.0", "bwd:embed"])
        block0 = dict(step[1])["fwd:blocks.0"]
        self.assertEqual([n for n, _ in block0], ["fwd:blocks.0.fc1", "fwd:blocks.0.fc2", "fwd:blocks.0.dropout"])
        self.assertLess(top.index("fwd:head"), top.index("bwd:head"))

    def test_checkpoint_recomputes_the_named_module_with_equal_gradients(self):
        plain = train_step(peaklens.instrument(fresh_model(), checkpoint="none", sink=Recorder()))
        self.assertEqual(Block.calls, {"0": 1, "1": 1, "2": 1})
        Block.calls = {}
        os.environ["PEAKLENS_CHECKPOINT"] = "blocks.1"
        recorder = Recorder()
        model = peaklens.instrument(fresh_model(), sink=recorder)
        self.assertEqual(model._peaklens.checkpointed, ["blocks.1"])
        checkpointed = train_step(model)
        self.assertEqual(Block.calls, {"0": 1, "1": 2, "2": 1})  # the recompute
        self.assertEqual(recorder.pushes.count("fwd:blocks.1"), 1, "no second forward range for the recompute")
        self.assertEqual(len(plain), len(checkpointed))
        for a, b in zip(plain, checkpointed):
            self.assertTrue(torch.allclose(a, b, rtol=1e-5, atol=1e-7))

    def test_all_toggles_the_repeated_blocks(self):
        self.assertEqual(checkpoint_chain(Net()), ["blocks.0", "blocks.1", "blocks.2"])
        model = peaklens.instrument(fresh_model(), checkpoint="all", sink=Recorder())
        self.assertEqual(model._peaklens.checkpointed, ["blocks.0", "blocks.1", "blocks.2"])
        train_step(model)
        self.assertEqual(Block.calls, {"0": 2, "1": 2, "2": 2})

    def test_the_chain_is_the_repeated_blocks(self):
        class MlpBlock(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.mlp = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.GELU(), torch.nn.Linear(8, 4))

        stack = torch.nn.Sequential(torch.nn.Embedding(5, 4), torch.nn.ModuleList([MlpBlock(), MlpBlock()]),
                                    torch.nn.Linear(4, 5))
        # Not the deeper numbered MLP parts, nor the top-level Sequential of unlike parts.
        self.assertEqual(checkpoint_chain(stack), ["1.0", "1.1"])

    def test_the_strategy_grammar_is_the_planners(self):
        """The cases core/plan/checkpointstrategy.cpp is tested against, read the same here."""
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "checkpoint_strategies.json")
        with open(path) as file:
            shared = json.load(file)
        for case in shared["cases"]:
            with self.subTest(text=case["text"]):
                if "error" in case:
                    with self.assertRaisesRegex(ValueError, re.escape(case["error"])):
                        resolve_checkpoint(case["text"], shared["chain"], shared["toggleable"])
                else:
                    self.assertEqual(resolve_checkpoint(case["text"], shared["chain"], shared["toggleable"]), case["toggles"])

    def test_every_k_over_the_repeated_blocks(self):
        model = peaklens.instrument(fresh_model(), checkpoint="every:2", sink=Recorder())
        self.assertEqual(model._peaklens.checkpointed, ["blocks.0", "blocks.2"])

    def test_unknown_toggles_are_an_error(self):
        with self.assertRaisesRegex(ValueError, "blocks.9"):
            peaklens.instrument(fresh_model(), checkpoint="blocks.1,blocks.9", sink=Recorder())

    def test_manifest(self):
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "manifest.json")
            os.environ["PEAKLENS_MANIFEST"] = path
            model = peaklens.instrument(fresh_model(), checkpoint="blocks.2", sink=Recorder())
            train_step(model)
            with open(path) as source:
                manifest = json.load(source)
        self.assertEqual(manifest["format"], "peaklens-manifest")
        self.assertEqual(manifest["checkpoint"], ["blocks.2"])
        self.assertEqual(manifest["chain"], ["blocks.0", "blocks.1", "blocks.2"])
        modules = {m["path"]: m for m in manifest["modules"]}
        self.assertEqual(modules["blocks.0"]["type"], "Block")
        self.assertEqual(modules["blocks.0.fc1"]["parameter_bytes"], (16 * 32 + 32) * 4)
        self.assertEqual(modules[""]["parameter_bytes"], sum(p.numel() * 4 for p in model.parameters()))
        self.assertEqual(modules["embed"]["inputs"], [[5, 8]])
        self.assertEqual(modules["head"]["output"], [5, 4])

    def test_manifest_lands_beside_the_trace_under_record(self):
        with tempfile.TemporaryDirectory() as directory:
            os.environ["PEAKLENS_OUT"] = directory
            os.environ["RANK"] = "3"
            peaklens.instrument(fresh_model(), sink=Recorder())
            expected = os.path.join(directory, "rank3-pid%d.manifest.json" % os.getpid())
            self.assertTrue(os.path.exists(expected), os.listdir(directory))
            del os.environ["RANK"]
            os.environ["LOCAL_RANK"] = "1"
            peaklens.instrument(fresh_model(), sink=Recorder())
            expected = os.path.join(directory, "local1-pid%d.manifest.json" % os.getpid())
            self.assertTrue(os.path.exists(expected), os.listdir(directory))


if __name__ == "__main__":
    unittest.main()

# SPDX-License-Identifier: Apache-2.0
"""Tests of the peaklens Python helper on the project's PyTorch (CPU).

Run by tst_pythonhelper (python3 -m unittest discover, with PYTHONPATH=plugins/python) beside
the tests of the package (test_package), of record (test_record), of the manifest's name
(test_manifestpath) and of the example (test_example).
"""

import collections
import json
import os
import re
import tempfile
import unittest

import torch

import peaklens
from peaklens._instrument import checkpoint_chain, checkpoint_schedule, resolve_checkpoint, write_schedule
from support import LAUNCHER_VARIABLES


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
        for name in LAUNCHER_VARIABLES:
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
        """The cases core/plan/checkpointstrategy.cpp is tested against, read the same here.
        The helper's toggleable paths are all the model's modules in order, so each layer's
        parts follow it."""
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "checkpoint_strategies.json")
        with open(path) as file:
            shared = json.load(file)
        chain, parts = shared["chain"], shared.get("parts", {})
        toggleable = [path for layer in shared["toggleable"] for path in [layer] + parts.get(layer, [])]
        for case in shared["cases"]:
            with self.subTest(text=case["text"]):
                if "error" in case:
                    with self.assertRaisesRegex(ValueError, re.escape(case["error"])):
                        checkpoint_schedule(case["text"], chain, toggleable)
                    with self.assertRaisesRegex(ValueError, re.escape(case["error"])):
                        resolve_checkpoint(case["text"], chain, toggleable)
                else:
                    self.assertEqual(write_schedule(checkpoint_schedule(case["text"], chain, toggleable)), case["schedule"])
                    self.assertEqual(resolve_checkpoint(case["text"], chain, toggleable), case["toggles"])
                    # The canonical text reads back to the same units.
                    self.assertEqual(write_schedule(checkpoint_schedule(case["schedule"], chain, toggleable)), case["schedule"])

    def test_units_nest_at_most_64_deep(self):
        chain = ["b.%d" % i for i in range(70)]

        def nested(depth):
            return "b.0..b.%d" % (69 - depth) + ("(" + nested(depth + 1) + ")" if depth < 66 else "")

        deep = nested(0)
        with self.assertRaisesRegex(ValueError, "deeper than 64"):
            checkpoint_schedule(deep, chain, chain)
        fits = "b.0..b.69(" * 64 + "b.0" + ")" * 64
        with self.assertRaisesRegex(ValueError, "inner unit"):  # parsed, then refused as not nested within
            checkpoint_schedule(fits, chain, chain)

    def test_a_segment_holds_its_layers_sub_layers(self):
        """Over the whole module tree a segment's layers keep their sub-layers: they neither
        break a rule's run of chain layers nor are named on their own. A sub-layer of a chain
        layer is a part, checkpointed on its own or not at all."""
        toggleable = [path for path, _ in Net().named_modules() if path]
        chain = ["blocks.0", "blocks.1", "blocks.2"]
        self.assertEqual(write_schedule(checkpoint_schedule("segments:2", chain, toggleable)), "blocks.0..blocks.1")
        self.assertEqual(resolve_checkpoint("segments:2", chain, toggleable), ["blocks.0", "blocks.1"])
        self.assertEqual(resolve_checkpoint("blocks.0..blocks.2(blocks.1)", chain, toggleable),
                         ["blocks.0", "blocks.1", "blocks.2"])
        self.assertEqual(resolve_checkpoint("blocks.2.fc2,blocks.0..blocks.1,embed", chain, toggleable),
                         ["embed", "blocks.0", "blocks.1", "blocks.2.fc2"])
        with self.assertRaisesRegex(ValueError, re.escape("blocks.1.fc1 is a module inside blocks.1; it is "
                                                          "checkpointed on its own, not as part of a segment")):
            checkpoint_schedule("blocks.0..blocks.2(blocks.1.fc1)", chain, toggleable)
        with self.assertRaisesRegex(ValueError, re.escape("blocks.0.fc2 lies inside blocks.0..blocks.1, which a unit "
                                                          "already holds whole")):
            checkpoint_schedule("blocks.0..blocks.1,blocks.0.fc2", chain, toggleable)
        with self.assertRaisesRegex(ValueError, "overlap"):
            checkpoint_schedule("blocks.0..blocks.1,blocks.1..blocks.2", chain, toggleable)
        with self.assertRaisesRegex(ValueError, re.escape('"blocks.1.fc3" is not a module of blocks.1 that can be '
                                                          "checkpointed on its own (blocks.1.fc1, blocks.1.fc2, "
                                                          "blocks.1.dropout).")):
            checkpoint_schedule("blocks.1.fc3", chain, toggleable)
        with self.assertRaisesRegex(ValueError, "embed runs between"):
            checkpoint_schedule("segments:2", chain, ["blocks.0", "embed", "blocks.1", "blocks.2"])

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
        self.assertEqual(manifest["schedule"], "blocks.2")
        self.assertEqual(manifest["chain"], ["blocks.0", "blocks.1", "blocks.2"])
        modules = {m["path"]: m for m in manifest["modules"]}
        self.assertEqual(modules["blocks.0"]["type"], "Block")
        self.assertEqual(modules["blocks.0.fc1"]["parameter_bytes"], (16 * 32 + 32) * 4)
        self.assertEqual(modules[""]["parameter_bytes"], sum(p.numel() * 4 for p in model.parameters()))
        self.assertEqual(modules["embed"]["inputs"], [[5, 8]])
        self.assertEqual(modules["head"]["output"], [5, 4])


class Residual(torch.nn.Module):
    """A block of the segment tests: an MLP with dropout on a residual path, counting its
    forwards (recomputes included) in ``runs``."""

    runs = {}

    def __init__(self, name, width=16):
        super().__init__()
        self.name = name
        self.fc1 = torch.nn.Linear(width, 2 * width)
        self.act = torch.nn.GELU()
        self.fc2 = torch.nn.Linear(2 * width, width)
        self.dropout = torch.nn.Dropout(0.3)

    def forward(self, x, gate=None, shift=None):
        Residual.runs[self.name] = Residual.runs.get(self.name, 0) + 1
        y = self.dropout(self.fc2(self.act(self.fc1(x))))
        if gate is not None:
            y = y * gate
        return x + y if shift is None else x + y + shift


class Tower(torch.nn.Module):
    """Six blocks in a ModuleList, iterated with extra arguments that need gradients."""

    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Linear(8, 16)
        self.gate = torch.nn.Parameter(torch.linspace(0.5, 1.5, 16))
        self.blocks = torch.nn.ModuleList([Residual("blocks.%d" % i) for i in range(6)])
        self.head = torch.nn.Linear(16, 4)

    def forward(self, x):
        x = self.embed(x)
        gate, shift = torch.sigmoid(self.gate), 0.1 * self.gate
        for block in self.blocks:
            x = block(x, gate, shift=shift)
        return self.head(x)


class IndexingTower(Tower):
    """Calls its blocks by index, which a segment cannot run through."""

    def forward(self, x):
        x = self.embed(x)
        for i in range(len(self.blocks)):
            x = self.blocks[i](x)
        return self.head(x)


class EnumeratingTower(Tower):
    """Gives each block its own scale by index, ``x = block(x, scale[i])``: floats, or
    tensors that need gradients. ``picks`` builds the list: ``scale[i]`` is the ``picks[i]``-th
    of six distinct scales (the i-th by default), the same object for equal picks; or, when
    ``fresh``, a value computed anew for each block (equal, but another object)."""

    def __init__(self, tensors, picks=range(6), fresh=False):
        torch.manual_seed(3)
        super().__init__()
        self.tensors, self.picks, self.fresh = tensors, list(picks), fresh

    def forward(self, x):
        factors = torch.sigmoid(self.gate)
        x = self.embed(x) * factors

        def scale_of(k):
            return factors * (1 + 0.1 * k) if self.tensors else 1 + 0.1 * k

        distinct = [scale_of(k) for k in range(6)]
        scale = [scale_of(k) if self.fresh else distinct[k] for k in self.picks]
        for i, block in enumerate(self.blocks):
            x = block(x, scale[i])
        return self.head(x)


# Strategy -> picks of EnumeratingTower alike within each outermost segment (the scale of
# its first layer), so that the segment's runner gives each block the scale it is given.
ENUMERATED_SCALES = {
    "segments:2": [0, 0, 2, 2, 4, 5],
    "blocks.0..blocks.3(blocks.0..blocks.1)": [0, 0, 0, 0, 4, 5],
}


def sequential_tower():
    """An nn.Sequential whose chain is a Sequential of four blocks (paths 1.0 .. 1.3)."""
    torch.manual_seed(2)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Sequential(*[Residual("1.%d" % i) for i in range(4)]),
                               torch.nn.Linear(16, 4))


def fresh_tower():
    torch.manual_seed(3)
    return Tower()


def counted_step(model, seed=0):
    """One training step: the parameters' gradients and each block's forward count."""
    Residual.runs = {}
    model.zero_grad(set_to_none=True)
    torch.manual_seed(seed)
    x = torch.randn(5, 8)
    with peaklens.step():
        model(x).pow(2).mean().backward()
    return [p.grad.clone() for p in model.parameters()], dict(Residual.runs)


def ranges_per_step(recorder):
    """Per step range of the recorder: how often each range name opened within it."""
    def names(node):
        for child in node[1]:
            yield child[0]
            yield from names(child)

    return [collections.Counter(names(step)) for step in recorder.root[1]]


# Strategy -> forwards per block of Tower in one step: 1 + the units (any level) holding it.
TOWER_STRATEGIES = {
    "segments:2": [2, 2, 2, 2, 1, 1],
    "sqrt": [2, 2, 2, 1, 1, 1],  # ceil(sqrt(6)) = 3: one segment, the last run stays plain
    "blocks.0..blocks.3(blocks.0..blocks.1)": [3, 3, 2, 2, 1, 1],
    "blocks.0..blocks.4(blocks.0..blocks.3(blocks.0..blocks.1))": [4, 4, 3, 3, 2, 1],
    "blocks.0..blocks.2(blocks.1),blocks.3,blocks.4.fc1,blocks.5": [2, 3, 2, 2, 1, 2],
}


class SegmentTest(unittest.TestCase):
    """Segments and nested units run by the helper, on CPU."""

    def setUp(self):
        os.environ.pop("PEAKLENS_CHECKPOINT", None)
        for name in LAUNCHER_VARIABLES:
            os.environ.pop(name, None)

    def assert_same_gradients(self, expected, actual):
        # Bitwise: the recompute replays the random state, so every dropout mask, every
        # value and the backward graph itself are those of the plain step.
        self.assertEqual(len(expected), len(actual))
        for a, b in zip(expected, actual):
            self.assertTrue(torch.equal(a, b), (a - b).abs().max())

    def test_gradients_equal_those_without_checkpoints(self):
        plain, runs = counted_step(peaklens.instrument(fresh_tower(), checkpoint="none", sink=Recorder()))
        self.assertEqual(runs, {"blocks.%d" % i: 1 for i in range(6)})
        for strategy in TOWER_STRATEGIES:
            with self.subTest(strategy=strategy):
                model = peaklens.instrument(fresh_tower(), checkpoint=strategy, sink=Recorder())
                self.assert_same_gradients(plain, counted_step(model)[0])

    def test_each_block_runs_once_more_per_unit_holding_it(self):
        for strategy, expected in TOWER_STRATEGIES.items():
            with self.subTest(strategy=strategy):
                model = peaklens.instrument(fresh_tower(), checkpoint=strategy, sink=Recorder())
                runs = counted_step(model)[1]
                self.assertEqual([runs["blocks.%d" % i] for i in range(6)], expected)
        # Module hooks see a layer's forward and a segment's recompute, not a part's own
        # recompute (which calls its forward directly): a part's hook fires once, the hook of
        # a layer inside a segment's block twice.
        model = peaklens.instrument(fresh_tower(), checkpoint="blocks.3.fc1,blocks.4..blocks.5", sink=Recorder())
        fc1_calls = collections.Counter()
        for i in (3, 4):
            model.blocks[i].fc1.register_forward_hook(lambda *args, i=i: fc1_calls.update([i]))
        counted_step(model)
        self.assertEqual(fc1_calls, {3: 1, 4: 2})

    def test_one_forward_and_one_backward_range_per_block_per_step(self):
        for strategy in TOWER_STRATEGIES:
            with self.subTest(strategy=strategy):
                recorder = Recorder()
                model = peaklens.instrument(fresh_tower(), checkpoint=strategy, sink=recorder)
                counted_step(model, seed=0)
                counted_step(model, seed=1)
                self.assertEqual(len(recorder.stack), 1, "every range was closed")
                steps = ranges_per_step(recorder)
                self.assertEqual(len(steps), 2)
                for ranges in steps:
                    for i in range(6):
                        self.assertEqual(ranges["fwd:blocks.%d" % i], 1)
                        self.assertEqual(ranges["bwd:blocks.%d" % i], 1)
                        self.assertEqual(ranges["fwd:blocks.%d.fc1" % i], 1)

    def test_the_step_of_an_optimizer_of_the_model_is_an_opt_range(self):
        recorder = Recorder()
        model = peaklens.instrument(fresh_tower(), checkpoint="none", sink=recorder)
        own = torch.optim.SGD(model.parameters(), lr=0.1)
        other = torch.optim.SGD([torch.nn.Parameter(torch.zeros(2))], lr=0.1)
        other.param_groups[0]["params"][0].grad = torch.ones(2)
        with peaklens.step():
            model(torch.randn(5, 8)).pow(2).mean().backward()
            own.step()
            other.step()  # not this model's: no range
        (step,) = recorder.root[1]
        self.assertEqual([name for name, _ in step[1] if name == "opt"], ["opt"])
        self.assertEqual(ranges_per_step(recorder)[0]["opt"], 1)
        self.assertEqual(len(recorder.stack), 1, "every range was closed")
        # A step that raises leaves no range open once its training step ends.
        class Broken(torch.optim.SGD):
            def step(self, closure=None):
                raise ZeroDivisionError

        with self.assertRaises(ZeroDivisionError), peaklens.step():
            Broken(model.parameters(), lr=0.1).step()
        self.assertEqual(ranges_per_step(recorder)[-1]["opt"], 1, "the broken step was ranged")
        self.assertEqual(len(recorder.stack), 1, "every range was closed")
        model._peaklens.remove()
        own.step()
        self.assertEqual(ranges_per_step(recorder)[-1]["opt"], 1, "no range after remove()")

    def test_enumerating_the_blocks_keeps_their_indices(self):
        """The iteration yields one item per child, a pass-through at a segment's later
        positions, so ``scale[i]`` reaches the i-th block outside segments; inside one, every
        layer gets the arguments given at the segment's first position, which the code must
        give at its other positions too: then the gradients are those of the plain step."""
        for tensors in (False, True):
            for strategy, uses in ENUMERATED_SCALES.items():
                with self.subTest(tensors=tensors, strategy=strategy):
                    recorder = Recorder()
                    model = peaklens.instrument(EnumeratingTower(tensors, uses), checkpoint=strategy, sink=recorder)
                    self.assertEqual(len(list(model.blocks)), len(model.blocks))
                    self.assertEqual(len(list(enumerate(model.blocks))), 6)
                    gradients, runs = counted_step(model)
                    self.assertEqual([runs["blocks.%d" % i] for i in range(6)], TOWER_STRATEGIES[strategy])
                    (ranges,) = ranges_per_step(recorder)
                    for i in range(6):
                        self.assertEqual(ranges["fwd:blocks.%d" % i], 1)
                        self.assertEqual(ranges["bwd:blocks.%d" % i], 1)
                    self.assertEqual(len(recorder.stack), 1, "every range was closed")
                    expected, plain_runs = counted_step(
                        peaklens.instrument(EnumeratingTower(tensors, uses), checkpoint="none", sink=Recorder()))
                    self.assert_same_gradients(expected, gradients)
                    self.assertEqual(plain_runs, {"blocks.%d" % i: 1 for i in range(6)})
        # The picks tell the steps apart: a plain step with a scale per block differs.
        plain = counted_step(peaklens.instrument(EnumeratingTower(False), checkpoint="none", sink=Recorder()))[0]
        alike = counted_step(peaklens.instrument(EnumeratingTower(False, ENUMERATED_SCALES["segments:2"]),
                                                 checkpoint="none", sink=Recorder()))[0]
        self.assertFalse(all(torch.equal(a, b) for a, b in zip(plain, alike)))

    def test_per_layer_arguments_in_a_segment_are_an_error(self):
        """``x = block(x, scale[i])`` with a scale per block: the segment's runner would give
        its later layers the first one's scale, so their pass-throughs refuse theirs."""
        failing = {"segments:2": "blocks.0..blocks.1", "blocks.0..blocks.3(blocks.0..blocks.1)": "blocks.0..blocks.3"}
        for tensors in (False, True):
            for strategy, label in failing.items():
                with self.subTest(tensors=tensors, strategy=strategy):
                    recorder = Recorder()
                    model = peaklens.instrument(EnumeratingTower(tensors), checkpoint=strategy, sink=recorder)
                    message = (f"blocks.1 was given extra arguments other than those given to blocks.0, but it is a "
                               f"layer of the checkpoint segment {label}, which gave every layer blocks.0's: layers "
                               "in one checkpoint segment must take the same extra arguments")
                    with self.assertRaisesRegex(RuntimeError, re.escape(message)):
                        counted_step(model)
                    self.assertEqual(len(recorder.stack), 1, "every range was closed")
                    # Nothing stale is left: with the scales alike, the next step is the plain one.
                    model.picks = ENUMERATED_SCALES[strategy]
                    expected = counted_step(peaklens.instrument(EnumeratingTower(tensors, model.picks),
                                                                checkpoint="none", sink=Recorder()))[0]
                    self.assert_same_gradients(expected, counted_step(model)[0])
        # Single-layer checkpoints take a scale per block.
        plain = counted_step(peaklens.instrument(EnumeratingTower(True), checkpoint="none", sink=Recorder()))[0]
        single = peaklens.instrument(EnumeratingTower(True), checkpoint="blocks.0,blocks.1,blocks.2", sink=Recorder())
        self.assert_same_gradients(plain, counted_step(single)[0])

    def test_equal_numbers_pass_but_equal_tensors_must_be_the_same(self):
        """Floats equal within each segment but computed anew per block (other objects)
        pass; tensors so computed do not, though equal, for a tensor is compared by identity."""
        strategy = "blocks.0..blocks.3(blocks.0..blocks.1)"
        uses = ENUMERATED_SCALES[strategy]
        plain = counted_step(peaklens.instrument(EnumeratingTower(False, uses, fresh=True), checkpoint="none",
                                                 sink=Recorder()))[0]
        model = peaklens.instrument(EnumeratingTower(False, uses, fresh=True), checkpoint=strategy, sink=Recorder())
        self.assert_same_gradients(plain, counted_step(model)[0])
        model = peaklens.instrument(EnumeratingTower(True, uses, fresh=True), checkpoint=strategy, sink=Recorder())
        with self.assertRaisesRegex(RuntimeError, "blocks.1 was given extra arguments other than those given to "
                                                  "blocks.0.*same extra arguments.*single-layer checkpoints"):
            counted_step(model)

    def test_a_segments_layers_must_be_called_alike_in_order(self):
        """Each pass-through checks its input is the segment's output and its keyword
        arguments are the runner's, key for key."""
        class Skipping(Tower):  # never calls blocks.0, the segment's runner
            def forward(self, x):
                x = self.embed(x)
                for i, block in enumerate(self.blocks):
                    if i:
                        x = block(x)
                return self.head(x)

        class Rescaling(Tower):  # changes x between the segment's layers
            def forward(self, x):
                x = self.embed(x)
                for block in self.blocks:
                    x = block(x) * 1.0
                return self.head(x)

        class Shifting(Tower):  # a shift at even blocks only
            def forward(self, x):
                x = self.embed(x)
                shift = 0.1 * self.gate
                for i, block in enumerate(self.blocks):
                    x = block(x, shift=shift) if i % 2 == 0 else block(x)
                return self.head(x)

        class ShiftingEach(Tower):  # a shift of its own for each block, by keyword
            def forward(self, x):
                x = self.embed(x)
                for i, block in enumerate(self.blocks):
                    x = block(x, shift=0.1 * i * self.gate)
                return self.head(x)

        other_input = "blocks.1 was called on something other than the output of the checkpoint segment blocks.0..blocks.1"
        other_arguments = ("blocks.1 was given extra arguments other than those given to blocks.0, but it is a layer "
                           "of the checkpoint segment blocks.0..blocks.1")
        for tower, message in ((Skipping, other_input), (Rescaling, other_input), (Shifting, other_arguments),
                               (ShiftingEach, other_arguments)):
            with self.subTest(tower=tower.__name__):
                torch.manual_seed(3)
                model = peaklens.instrument(tower(), checkpoint="segments:2", sink=Recorder())
                with self.assertRaisesRegex(RuntimeError, re.escape(message)):
                    counted_step(model)
                with torch.no_grad(), self.assertRaisesRegex(RuntimeError, re.escape(message)):
                    model(torch.randn(2, 8))
                torch.manual_seed(3)  # single-layer checkpoints take such calls
                single = peaklens.instrument(tower(), checkpoint="blocks.0,blocks.1,blocks.2", sink=Recorder())
                single(torch.randn(2, 8)).pow(2).mean().backward()

    def test_a_sequential_chain_runs_its_segments(self):
        self.assertEqual(checkpoint_chain(sequential_tower()), ["1.0", "1.1", "1.2", "1.3"])
        plain, _ = counted_step(peaklens.instrument(sequential_tower(), checkpoint="none", sink=Recorder()))
        for strategy, expected in {"segments:2": [2, 2, 1, 1], "1.0..1.3(1.1..1.2)": [2, 3, 3, 2]}.items():
            with self.subTest(strategy=strategy):
                recorder = Recorder()
                model = peaklens.instrument(sequential_tower(), checkpoint=strategy, sink=recorder)
                gradients, runs = counted_step(model)
                self.assert_same_gradients(plain, gradients)
                self.assertEqual([runs["1.%d" % i] for i in range(4)], expected)
                (ranges,) = ranges_per_step(recorder)
                self.assertEqual([ranges["fwd:1.%d" % i] for i in range(4)], [1] * 4)
                self.assertEqual([ranges["bwd:1.%d" % i] for i in range(4)], [1] * 4)

    def test_without_gradients_segments_run_plainly(self):
        plain = fresh_tower().eval()
        model = peaklens.instrument(fresh_tower().eval(), checkpoint="blocks.0..blocks.3(blocks.1..blocks.2)",
                                    sink=Recorder())
        x = torch.randn(3, 8)
        Residual.runs = {}
        with torch.no_grad():
            self.assertTrue(torch.equal(plain(x), model(x)))
        self.assertEqual(Residual.runs, {"blocks.%d" % i: 2 for i in range(6)})  # once each, in both

    def test_the_manifest_names_the_schedule(self):
        model = peaklens.instrument(fresh_tower(), checkpoint=" blocks.3..blocks.5 , blocks.0..blocks.2(blocks.1) ",
                                    sink=Recorder())
        manifest = model._peaklens.manifest()
        self.assertEqual(manifest["schedule"], "blocks.0..blocks.2(blocks.1),blocks.3..blocks.5")
        self.assertEqual(manifest["checkpoint"], ["blocks.%d" % i for i in range(6)])
        self.assertEqual({m["path"]: m["type"] for m in manifest["modules"]}["blocks"], "ModuleList")

    def test_remove_restores_the_container(self):
        keys = list(fresh_tower().state_dict())
        model = peaklens.instrument(fresh_tower(), checkpoint="blocks.0..blocks.3(blocks.0..blocks.1),blocks.5",
                                    sink=Recorder())
        self.assertIsNot(type(model.blocks), torch.nn.ModuleList)
        self.assertIsInstance(model.blocks, torch.nn.ModuleList)
        self.assertEqual(type(model.blocks).__name__, "ModuleList")
        self.assertEqual(list(model.state_dict()), keys)
        # The segment's runner, three pass-throughs, blocks.4, blocks.5: one item per child.
        items = list(model.blocks)
        self.assertEqual(len(items), 6)
        self.assertEqual(repr(items[0]), "<checkpoint segment blocks.0..blocks.3>")
        self.assertEqual([repr(item) for item in items[1:4]],
                         ["<checkpoint segment blocks.0..blocks.3: pass-through at %d>" % i for i in (1, 2, 3)])
        self.assertEqual(items[4:], [model.blocks[4], model.blocks[5]])
        counted_step(model)
        model._peaklens.remove()
        self.assertIs(type(model.blocks), torch.nn.ModuleList)
        self.assertEqual(list(model.blocks), [model.blocks[i] for i in range(6)])
        self.assertNotIn("forward", model.blocks[5].__dict__)
        self.assertEqual(list(model.state_dict()), keys)
        self.assertEqual(counted_step(model)[1], {"blocks.%d" % i: 1 for i in range(6)})

    def test_calling_a_segments_first_layer_by_index_is_an_error(self):
        torch.manual_seed(3)
        model = peaklens.instrument(IndexingTower(), checkpoint="blocks.2..blocks.3", sink=Recorder())
        with self.assertRaisesRegex(RuntimeError, re.escape("blocks.2 was called on its own, but it begins the "
                                                            "checkpoint segment blocks.2..blocks.3, which runs as "
                                                            "one only when the code iterates blocks")):
            model(torch.randn(2, 8))

    def test_a_segment_outside_a_container_is_an_error(self):
        model = fresh_tower()
        with self.assertRaisesRegex(ValueError, "embed..blocks.0 cannot run as one checkpoint.*ModuleList or Sequential"):
            peaklens.instrument(model, checkpoint="embed..blocks.0", sink=Recorder())
        with self.assertRaisesRegex(ValueError, "blocks.5..head cannot run"):
            peaklens.instrument(model, checkpoint="blocks.0,blocks.1.fc2,blocks.5..head", sink=Recorder())
        self.assertNotIn("forward", model.blocks[0].__dict__, "nothing was left applied")
        self.assertNotIn("forward", model.blocks[1].fc2.__dict__)
        with self.assertRaisesRegex(ValueError, "blocks.5.fc1 is a module inside blocks.5; it is checkpointed on its own"):
            peaklens.instrument(model, checkpoint="blocks.5.fc1..blocks.5.fc2", sink=Recorder())
        self.assertEqual(counted_step(model)[1], {"blocks.%d" % i: 1 for i in range(6)})

    def test_a_container_takes_the_segments_of_one_instrument_at_a_time(self):
        model = peaklens.instrument(fresh_tower(), checkpoint="segments:2", sink=Recorder())
        with self.assertRaisesRegex(ValueError, "remove"):
            peaklens.instrument(model, checkpoint="segments:3", sink=Recorder())
        model._peaklens.remove()
        model = peaklens.instrument(model, checkpoint="segments:3", sink=Recorder())
        self.assertEqual(model._peaklens.schedule, "blocks.0..blocks.2")



class CausalSelfAttention(torch.nn.Module):
    """The attention of the C++ replay's GPT block, counting its forwards in ``runs``."""

    def __init__(self, runs, width, heads, dropout):
        super().__init__()
        self.runs, self.heads = runs, heads
        self.qkv = torch.nn.Linear(width, 3 * width)
        self.proj = torch.nn.Linear(width, width)
        self.attn_dropout = torch.nn.Dropout(dropout)
        self.resid_dropout = torch.nn.Dropout(dropout)

    def forward(self, x):
        self.runs.update(["attn"])
        batch, time, width = x.shape
        q, k, v = (t.view(batch, time, self.heads, -1).transpose(1, 2) for t in self.qkv(x).split(width, 2))
        scores = q @ k.transpose(-2, -1) / (width // self.heads) ** 0.5
        scores = scores.masked_fill(torch.ones(time, time, dtype=torch.bool).triu(1), float("-inf"))
        y = (self.attn_dropout(torch.softmax(scores, -1)) @ v).transpose(1, 2).reshape(batch, time, width)
        return self.resid_dropout(self.proj(y))


class GptMlp(torch.nn.Module):
    def __init__(self, runs, width, dropout):
        super().__init__()
        self.runs = runs
        self.fc = torch.nn.Linear(width, 4 * width)
        self.proj = torch.nn.Linear(4 * width, width)
        self.dropout = torch.nn.Dropout(dropout)

    def forward(self, x):
        self.runs.update(["mlp"])
        return self.dropout(self.proj(torch.nn.functional.gelu(self.fc(x))))


class GptBlock(torch.nn.Module):
    """``x + attn(ln1(x))``, then ``x + mlp(ln2(x))``; ``runs`` counts the forwards of the
    block, its attention and its MLP."""

    def __init__(self, width, heads, dropout):
        super().__init__()
        self.runs = collections.Counter()
        self.ln1 = torch.nn.LayerNorm(width)
        self.attn = CausalSelfAttention(self.runs, width, heads, dropout)
        self.ln2 = torch.nn.LayerNorm(width)
        self.mlp = GptMlp(self.runs, width, dropout)

    def forward(self, x):
        self.runs.update(["block"])
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class Gpt(torch.nn.Module):
    def __init__(self, dropout=0.0, vocab=11, width=16, heads=2, seq=8, layers=4):
        torch.manual_seed(5)
        super().__init__()
        self.wte = torch.nn.Embedding(vocab, width)
        self.wpe = torch.nn.Embedding(seq, width)
        self.blocks = torch.nn.ModuleList([GptBlock(width, heads, dropout) for _ in range(layers)])
        self.ln_f = torch.nn.LayerNorm(width)
        self.head = torch.nn.Linear(width, vocab)

    def forward(self, ids):
        x = self.wte(ids) + self.wpe(torch.arange(ids.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))

    def runs(self):
        """Per block: its forwards, its attention's and its MLP's, since the last call."""
        blocks = [self.blocks[i] for i in range(len(self.blocks))]  # not the segments' runners
        runs = [[block.runs[name] for name in ("block", "attn", "mlp")] for block in blocks]
        for block in blocks:
            block.runs.clear()
        return runs


def gpt_step(model, seed=0):
    """One training step of ``model``: the parameters' gradients and its runs (see Gpt.runs)."""
    model.zero_grad(set_to_none=True)
    model.runs()
    torch.manual_seed(seed)
    ids = torch.randint(0, 11, (3, 8))
    targets = torch.randint(0, 11, (3, 8))
    with peaklens.step():
        torch.nn.functional.cross_entropy(model(ids).flatten(0, 1), targets.flatten()).backward()
    return [p.grad.clone() for p in model.parameters()], model.runs()


class SelectiveTest(unittest.TestCase):
    """Modules inside a layer checkpointed on their own, the rest of the layer run plainly."""

    def setUp(self):
        os.environ.pop("PEAKLENS_CHECKPOINT", None)
        for name in LAUNCHER_VARIABLES:
            os.environ.pop(name, None)

    def tearDown(self):
        os.environ.pop("PEAKLENS_CHECKPOINT", None)

    def test_parts_recompute_alone_with_the_gradients_of_the_plain_step(self):
        for dropout in (0.0, 0.1):
            with self.subTest(dropout=dropout):
                plain, plain_runs = gpt_step(peaklens.instrument(Gpt(dropout), checkpoint="none", sink=Recorder()))
                self.assertEqual(plain_runs, [[1, 1, 1]] * 4)
                os.environ["PEAKLENS_CHECKPOINT"] = "blocks.2.mlp, blocks.1.attn"
                recorder = Recorder()
                model = peaklens.instrument(Gpt(dropout), sink=recorder)
                self.assertEqual(model._peaklens.checkpointed, ["blocks.1.attn", "blocks.2.mlp"])
                self.assertEqual(model._peaklens.schedule, "blocks.1.attn,blocks.2.mlp")
                self.assertEqual(checkpoint_chain(model), ["blocks.%d" % i for i in range(4)])
                for step in range(2):
                    gradients, runs = gpt_step(model, seed=step)
                    # Each part runs again in the backward; its block and the rest do not.
                    self.assertEqual(runs, [[1, 1, 1], [1, 2, 1], [1, 1, 2], [1, 1, 1]])
                    if step == 0:
                        self.assertEqual(len(plain), len(gradients))
                        for a, b in zip(plain, gradients):
                            self.assertTrue(torch.equal(a, b), (a - b).abs().max())
                self.assertEqual(len(recorder.stack), 1, "every range was closed")
                for ranges in ranges_per_step(recorder):
                    for path in ("blocks.1", "blocks.1.attn", "blocks.1.attn.qkv", "blocks.2.mlp", "blocks.2.mlp.fc"):
                        self.assertEqual((ranges["fwd:" + path], ranges["bwd:" + path]), (1, 1), path)
                model._peaklens.remove()
                self.assertEqual(gpt_step(model)[1], [[1, 1, 1]] * 4)
                os.environ.pop("PEAKLENS_CHECKPOINT")

    def test_a_per_op_policy_keeps_its_operators_results_and_recomputes_the_rest(self):
        from torch.utils._python_dispatch import TorchDispatchMode

        class Calls(TorchDispatchMode):
            """Every operator the step dispatches, by overload."""

            def __init__(self):
                super().__init__()
                self.calls = collections.Counter()

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                self.calls[str(func)] += 1
                return func(*args, **(kwargs or {}))

        def counted(checkpoint):
            model = peaklens.instrument(Gpt(0.1), checkpoint=checkpoint, sink=Recorder())
            with Calls() as calls:
                gradients, runs = gpt_step(model)
            model._peaklens.remove()
            return model, gradients, runs, calls.calls

        _, plain, _, plain_calls = counted("none")
        model, gradients, runs, calls = counted("blocks.1 [save: aten::addmm]")
        self.assertEqual(model._peaklens.schedule, "blocks.1[save:aten.addmm.default]")
        self.assertEqual(model._peaklens.checkpointed, ["blocks.1"])
        # The block's modules run again in its backward, but its matrix products do not:
        # their outputs were kept. Dropout draws the same masks again.
        self.assertEqual(runs, [[1, 1, 1], [2, 2, 2], [1, 1, 1], [1, 1, 1]])
        self.assertEqual(calls["aten.addmm.default"], plain_calls["aten.addmm.default"])
        self.assertGreater(calls["aten.native_layer_norm.default"], plain_calls["aten.native_layer_norm.default"])
        whole_calls = counted("blocks.1")[3]
        self.assertEqual(whole_calls["aten.addmm.default"] - plain_calls["aten.addmm.default"], 4)  # its four Linears
        for a, b in zip(plain, gradients):
            self.assertTrue(torch.equal(a, b), (a - b).abs().max())
        with self.assertRaisesRegex(ValueError, re.escape("PEAKLENS_CHECKPOINT: aten.nosuch.default is not an operator "
                                                          "of PyTorch " + torch.__version__)):
            peaklens.instrument(model, checkpoint="blocks.1[save:aten.nosuch.default]", sink=Recorder())
        self.assertFalse([name for name, module in model.named_modules() if "forward" in module.__dict__],
                         "nothing was left applied")

    def test_a_layer_kept_in_bfloat16_runs_once_with_close_gradients(self):
        plain = gpt_step(peaklens.instrument(Gpt(), checkpoint="none", sink=Recorder()))[0]
        model = peaklens.instrument(Gpt(), checkpoint="blocks.1[bf16], blocks.2", sink=Recorder())
        self.assertEqual(model._peaklens.schedule, "blocks.1[bf16],blocks.2")
        self.assertEqual(model._peaklens.checkpointed, ["blocks.2"])  # a layer kept in bfloat16 is no checkpoint
        gradients, runs = gpt_step(model)
        # It runs once (no recompute); its gradients are bfloat16-close to the plain step's.
        self.assertEqual(runs, [[1, 1, 1], [1, 1, 1], [2, 2, 2], [1, 1, 1]])
        # Over all the parameters, as a rerun compares them: a small gradient alone can move
        # by more than its own size where bfloat16 rounds the tensors it comes from.
        difference = torch.cat([(a - b).flatten() for a, b in zip(plain, gradients)]).norm()
        self.assertLessEqual((difference / torch.cat([a.flatten() for a in plain]).norm()).item(), 2e-2)
        self.assertGreater(difference.item(), 0, "bfloat16 rounds something")
        # Without gradients it runs plainly.
        with torch.no_grad():
            ids = torch.randint(0, 11, (2, 8))
            self.assertTrue(torch.equal(Gpt()(ids), model(ids)))
        model._peaklens.remove()
        self.assertFalse([name for name, module in model.named_modules() if "forward" in module.__dict__])

    def test_bfloat16_packing_packs_activations_once_and_leaves_parameters(self):
        from peaklens._instrument import SavedTensorPacking, packed_saved_tensors

        linear = torch.nn.Linear(8, 8)
        packing = SavedTensorPacking(linear, "bf16")
        x = torch.randn(4, 8)
        packed = packing.pack(x)
        self.assertEqual((packed[0], packed[1].dtype), (torch.float32, torch.bfloat16))
        self.assertIs(packing.pack(x), packed)  # saved twice, packed once
        self.assertIsNot(packing.pack(x[1:]), packed)  # another view
        x.add_(1)
        self.assertIsNot(packing.pack(x), packed)  # a new version
        # A tensor freed gives its memory to the next of its size: that one is packed anew.
        first = torch.randn(1024, 64)
        address, before = first.untyped_storage().data_ptr(), packing.pack(first)
        del first
        second = torch.randn(1024, 64)
        if second.untyped_storage().data_ptr() == address:
            self.assertFalse(torch.equal(packing.pack(second)[1], before[1]))
        self.assertTrue(torch.equal(packing.pack(second)[1], second.to(torch.bfloat16)))
        for kept in (linear.weight, linear.weight.t(), linear.bias, torch.arange(4), x.half()):
            self.assertIs(packing.pack(kept), kept)
        unpacked = packing.unpack(packed)
        self.assertEqual(unpacked.dtype, torch.float32)
        self.assertTrue(torch.allclose(unpacked, x - 1, rtol=1e-2))
        # Under the hooks a backward gets its tensors back in their own dtype, close to the plain ones.
        inputs = torch.randn(4, 8, requires_grad=True)
        with packed_saved_tensors(linear, "bf16"):
            y = torch.relu(linear(inputs)) * torch.relu(linear(inputs))
        self.assertEqual(y.grad_fn._saved_self.dtype, torch.float32)
        y.sum().backward()
        plain = inputs.detach().clone().requires_grad_(True)
        (torch.relu(linear(plain)) * torch.relu(linear(plain))).sum().backward()
        self.assertTrue(torch.allclose(inputs.grad, plain.grad, rtol=2e-2, atol=1e-2))

    def test_offload_packing_copies_activations_out_of_their_memory_and_back(self):
        from peaklens._instrument import SavedTensorPacking, packed_saved_tensors

        linear = torch.nn.Linear(8, 8)
        packing = SavedTensorPacking(linear, "offload")
        x = torch.randn(4, 8).t()  # not contiguous
        device, host = packed = packing.pack(x)
        self.assertEqual(device, x.device)
        self.assertTrue(torch.equal(host, x))
        self.assertNotEqual(host.untyped_storage().data_ptr(), x.untyped_storage().data_ptr())
        self.assertIs(packing.pack(x), packed)  # saved twice, copied once
        for kept in (linear.weight, linear.weight.t(), linear.bias, torch.empty(0)):
            self.assertIs(packing.pack(kept), kept)
        # Integer tensors go to host memory too (bfloat16 leaves them).
        self.assertTrue(torch.equal(packing.pack(torch.arange(4))[1], torch.arange(4)))
        back = packing.unpack(packed)
        self.assertTrue(torch.equal(back, x))
        self.assertNotEqual(back.untyped_storage().data_ptr(), host.untyped_storage().data_ptr())
        # The copy lives outside PyTorch's allocator: a CPU "device" keeps nothing of it.
        self.assertEqual(host.untyped_storage().nbytes(), x.numel() * x.element_size())
        with self.assertRaisesRegex(ValueError, "no saved-tensor form 'fp3'"):
            SavedTensorPacking(linear, "fp3")
        # Under the hooks the backward's gradients are the plain ones, to the bit.
        inputs = torch.randn(4, 8, requires_grad=True)
        with packed_saved_tensors(linear, "offload"):
            y = torch.relu(linear(inputs)) * torch.relu(linear(inputs))
        self.assertEqual(y.grad_fn._saved_self.device, x.device)
        y.sum().backward()
        plain = inputs.detach().clone().requires_grad_(True)
        (torch.relu(linear(plain)) * torch.relu(linear(plain))).sum().backward()
        self.assertTrue(torch.equal(inputs.grad, plain.grad))

    def test_a_layer_offloaded_runs_once_with_the_same_gradients(self):
        plain = gpt_step(peaklens.instrument(Gpt(), checkpoint="none", sink=Recorder()))[0]
        model = peaklens.instrument(Gpt(), checkpoint="blocks.1[offload], blocks.2", sink=Recorder())
        self.assertEqual(model._peaklens.schedule, "blocks.1[offload],blocks.2")
        self.assertEqual(model._peaklens.checkpointed, ["blocks.2"])  # an offloaded layer is no checkpoint
        gradients, runs = gpt_step(model)
        self.assertEqual(runs, [[1, 1, 1], [1, 1, 1], [2, 2, 2], [1, 1, 1]])
        for a, b in zip(plain, gradients):
            self.assertTrue(torch.equal(a, b), (a - b).abs().max())
        model._peaklens.remove()
        self.assertFalse([name for name, module in model.named_modules() if "forward" in module.__dict__])

    def test_without_gradients_parts_run_plainly(self):
        plain = Gpt().eval()
        model = peaklens.instrument(Gpt().eval(), checkpoint="blocks.1.attn,blocks.2.mlp", sink=Recorder())
        ids = torch.randint(0, 11, (2, 8))
        with torch.no_grad():
            self.assertTrue(torch.equal(plain(ids), model(ids)))
        self.assertEqual(model.runs(), [[1, 1, 1]] * 4)

    def test_parts_beside_segments_and_layers(self):
        model = peaklens.instrument(Gpt(), checkpoint="blocks.3,blocks.0..blocks.1,blocks.2.attn.qkv", sink=Recorder())
        self.assertEqual(model._peaklens.schedule, "blocks.0..blocks.1,blocks.2.attn.qkv,blocks.3")
        self.assertEqual(model._peaklens.checkpointed, ["blocks.0", "blocks.1", "blocks.2.attn.qkv", "blocks.3"])
        plain = gpt_step(peaklens.instrument(Gpt(), checkpoint="none", sink=Recorder()))[0]
        gradients, runs = gpt_step(model)
        self.assertEqual(runs, [[2, 2, 2], [2, 2, 2], [1, 1, 1], [2, 2, 2]])
        for a, b in zip(plain, gradients):
            self.assertTrue(torch.equal(a, b), (a - b).abs().max())

    def test_a_part_of_a_layer_checkpointed_whole_is_an_error(self):
        model = Gpt()
        for text, part, whole in (("blocks.1,blocks.1.attn", "blocks.1.attn", "blocks.1"),
                                  ("blocks.1.attn,blocks.1", "blocks.1.attn", "blocks.1"),
                                  ("blocks.1.attn,blocks.1..blocks.2", "blocks.1.attn", "blocks.1..blocks.2"),
                                  ("blocks.0..blocks.2,blocks.1.mlp.fc", "blocks.1.mlp.fc", "blocks.0..blocks.2")):
            with self.subTest(text=text):
                os.environ["PEAKLENS_CHECKPOINT"] = text
                with self.assertRaisesRegex(ValueError, re.escape(f"PEAKLENS_CHECKPOINT: {part} lies inside {whole}, "
                                                                  "which a unit already holds whole.")):
                    peaklens.instrument(model, sink=Recorder())
        self.assertFalse([name for name, module in model.named_modules() if "forward" in module.__dict__],
                         "nothing was left applied")
        self.assertIs(type(model.blocks), torch.nn.ModuleList)

    def test_parts_that_cannot_be_units(self):
        model = Gpt()
        errors = {
            "blocks.1.attn,blocks.1.attn.proj": "The units blocks.1.attn and blocks.1.attn.proj overlap: one module "
                                                "is inside the other.",
            "blocks.1.attn..blocks.2": '"blocks.1.attn..blocks.2": blocks.1.attn is a module inside blocks.1; it is '
                                       "checkpointed on its own, not as part of a segment.",
            "blocks.0..blocks.2(blocks.1.mlp)": '"blocks.1.mlp": blocks.1.mlp is a module inside blocks.1; it is '
                                                "checkpointed on its own, not as part of a segment.",
            "blocks.0..blocks.1.mlp": '"blocks.0..blocks.1.mlp": blocks.1.mlp is a module inside a layer, so it '
                                      "cannot end a segment.",
            "blocks.1.ffn": '"blocks.1.ffn" is not a module of blocks.1 that can be checkpointed on its own '
                            "(blocks.1.ln1, blocks.1.attn, blocks.1.attn.qkv, blocks.1.attn.proj, ",
        }
        for text, message in errors.items():
            with self.subTest(text=text):
                with self.assertRaisesRegex(ValueError, re.escape(message)):
                    peaklens.instrument(model, checkpoint=text, sink=Recorder())
        self.assertEqual(gpt_step(model)[1], [[1, 1, 1]] * 4)

if __name__ == "__main__":
    unittest.main()

# SPDX-License-Identifier: Apache-2.0
"""Checkpoint segments: a ModuleList or Sequential whose iteration runs several
consecutive children as one checkpoint (see Instrumented)."""

import numbers

import torch
import torch.utils.checkpoint


class _SegmentRunner:
    """Runs a segment, consecutive children of one ModuleList or Sequential, as one
    checkpoint: each layer is called with the previous one's output and the extra arguments
    the segment was called with, those given at its first layer's position; inner segments
    of the same container run through their own runners (a nested checkpoint); the
    recompute runs the same way. A call of an outermost runner is kept, on this thread,
    until the pass-throughs at the segment's other positions have checked theirs against it
    (see _PassThrough)."""

    def __init__(self, label, container, start, layers, paths, local):
        self.label = label          # first..last
        self.container = container  # the container's path
        self.start = start          # the index of the first layer among its children
        self.layers = layers
        self.paths = paths          # the layers' paths
        self.inner = {}             # offset in `layers` -> the runner of an inner segment starting there
        self._local = local

    def __repr__(self):
        return f"<checkpoint segment {self.label}>"

    def __call__(self, x, *args, **kwargs):
        """A call at the segment's first position, from the container's iteration: runs the
        segment and keeps the call for its pass-throughs."""
        calls = self._calls()
        calls.pop(self, None)
        output = self._checkpointed(x, *args, **kwargs)
        calls[self] = output, args, kwargs
        return output

    def _checkpointed(self, x, *args, **kwargs):
        if not torch.is_grad_enabled():
            return self._run(x, *args, **kwargs)
        return torch.utils.checkpoint.checkpoint(self._run, x, *args, use_reentrant=False, **kwargs)

    def _calls(self):
        """This thread's last call of each runner not yet checked by all its pass-throughs:
        runner -> (output, args, kwargs)."""
        if not hasattr(self._local, "segment_calls"):
            self._local.segment_calls = {}
        return self._local.segment_calls

    def _run(self, x, *args, **kwargs):
        offset = 0
        while offset < len(self.layers):
            inner = self.inner.get(offset)
            if inner is not None:
                x = inner._checkpointed(x, *args, **kwargs)  # inner: no pass-throughs to check
                offset += len(inner.layers)
                continue
            layer = self.layers[offset]
            if offset == 0:
                self._local.entering = layer  # lets the first layer's guard through
            x = layer(x, *args, **kwargs)
            offset += 1
        return x


def _same_argument(given, used):
    """Whether an extra argument given at a segment's later position is the one its runner
    gave the layer there: the same object; or, neither being a tensor, an equal number or
    string of the same type (``scale[i]`` from a list of equal floats); or a tuple, list or
    dict of the same type whose items are, item by item, the same arguments."""
    if given is used:
        return True
    if isinstance(given, torch.Tensor) or isinstance(used, torch.Tensor) or type(given) is not type(used):
        return False
    if isinstance(given, (numbers.Number, str, bytes)):
        try:
            return bool(given == used)
        except Exception:
            return False
    if isinstance(given, (tuple, list)):
        return len(given) == len(used) and all(_same_argument(g, u) for g, u in zip(given, used))
    if isinstance(given, dict):
        return given.keys() == used.keys() and all(_same_argument(given[k], used[k]) for k in given)
    return False


class _PassThrough:
    """What a container's iteration yields at a segment's positions after the first: the
    runner yielded at the first has already run all the segment's layers, so this returns
    its first argument, the segment's output, unchanged. It checks first that this argument
    is the output of the runner's last call and that its extra arguments are those the
    runner gave the layer at its position (see _same_argument), raising RuntimeError if not:
    a layer of a segment cannot take arguments of its own. It is no module: it opens no
    range, runs nothing and adds nothing to the autograd graph."""

    __slots__ = ("runner", "index", "offset")

    def __init__(self, runner, index, offset):
        self.runner = runner  # the segment's runner
        self.index = index    # the position it stands in for among the container's children
        self.offset = offset  # that position's offset in the segment

    @property
    def label(self):
        return self.runner.label  # the segment's first..last

    def __repr__(self):
        return f"<checkpoint segment {self.label}: pass-through at {self.index}>"

    def __call__(self, x, *args, **kwargs):
        runner = self.runner
        calls = runner._calls()
        last = self.offset == len(runner.layers) - 1
        call = calls.pop(runner, None) if last else calls.get(runner)
        layer, first = runner.paths[self.offset], runner.paths[0]
        if call is None or x is not call[0]:
            calls.pop(runner, None)
            raise RuntimeError(
                f"{layer} was called on something other than the output of the checkpoint segment {self.label}, "
                f"which runs it as one with the layers before it when {first} is called: the code must call the "
                "segment's layers in order, each on the previous one's output (for layer in ...: x = layer(x, ...)).")
        _, used_args, used_kwargs = call
        if not (len(args) == len(used_args) and all(map(_same_argument, args, used_args))
                and kwargs.keys() == used_kwargs.keys()
                and all(_same_argument(kwargs[k], used_kwargs[k]) for k in kwargs)):
            calls.pop(runner, None)
            raise RuntimeError(
                f"{layer} was given extra arguments other than those given to {first}, but it is a layer of the "
                f"checkpoint segment {self.label}, which gave every layer {first}'s: layers in one checkpoint "
                "segment must take the same extra arguments (the same tensors), or choose single-layer "
                f"checkpoints for them ({','.join(runner.paths)} rather than {self.label}).")
        return x


def _with_segments(layers, runners):
    """``layers`` with each segment's runner in place of its first layer and a
    pass-through in place of each of its other layers, so the iteration keeps the
    container's length and each child's index (``for i, block in enumerate(...)``)."""
    passing = None
    for index, layer in enumerate(layers):
        if passing is not None and index <= passing[1]:
            yield _PassThrough(passing[0], index, index - passing[2])
            continue
        runner = runners.get(index)
        passing = None
        if runner is None:
            yield layer
        else:
            yield runner
            passing = runner, index + len(runner.layers) - 1, index


_ITERATING_CLASSES = {}


def _iterating_class(cls):
    """A subclass of the container class ``cls``, named alike, whose iteration yields, for
    each checkpoint segment (the instance's ``_peaklens_segments``: the index of a segment's
    first child -> its runner), its runner in place of its first child and a pass-through in
    place of each of its other children: as many items as children, in their places."""
    if cls not in _ITERATING_CLASSES:
        def __iter__(self):
            layers = cls.__iter__(self)
            runners = self.__dict__.get("_peaklens_segments")
            return _with_segments(layers, runners) if runners else layers

        _ITERATING_CLASSES[cls] = type(cls.__name__, (cls,), {
            "__iter__": __iter__, "__module__": cls.__module__, "__qualname__": cls.__qualname__,
            "__doc__": cls.__doc__})
    return _ITERATING_CLASSES[cls]

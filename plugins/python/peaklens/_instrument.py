"""Ranges, manifest and checkpoint toggles for one model (see the package docstring)."""

import collections
import contextlib
import functools
import json
import math
import numbers
import os
import re
import threading

import torch
import torch.utils.checkpoint

_NUMBERED = re.compile(r"^\d+$")
_DELIMITER = re.compile(r"[,()]")


class _NvtxSink:
    """Pushes ranges to NVTX, where the CUPTI collector sees them; nothing without CUDA."""

    def __init__(self):
        self.enabled = torch.cuda.is_available()

    def push(self, name):
        if self.enabled:
            torch.cuda.nvtx.range_push(name)

    def pop(self):
        if self.enabled:
            torch.cuda.nvtx.range_pop()


def checkpoint_chain(model):
    """The paths ``all`` toggles, the model's repeated blocks, chosen as PeakLens's planner
    chooses its chain: among the containers whose children are numbered 0, 1, 2, ... (a
    ModuleList or Sequential), the one whose children are all of one type, then the one
    with the most children, then the deepest."""
    best, best_rank = None, None
    for path, module in model.named_modules():
        children = list(module.named_children())
        if len(children) < 2 or not all(_NUMBERED.match(name) for name, _ in children):
            continue
        one_type = len({type(child) for _, child in children}) == 1
        depth = path.count(".") + 1 if path else 0
        rank = (one_type, len(children), depth)
        if best_rank is None or rank > best_rank:
            best, best_rank = path, rank
    if best is None:
        return []
    container = model.get_submodule(best)
    prefix = best + "." if best else ""
    return [prefix + name for name, _ in container.named_children()]


class Unit(collections.namedtuple("Unit", "first last inner")):
    """A checkpoint unit: the layers ``first..last`` (paths; equal for one layer) run as one
    checkpoint whose recompute checkpoints its ``inner`` units (a tuple of Units) again."""

    __slots__ = ()

    def __str__(self):
        return write_schedule([self])


class _Item(collections.namedtuple("_Item", "first last inner")):
    """A unit as written: ``last`` is None for a single ``NAME``."""

    __slots__ = ()


_KEYWORDS = ("none", "all", "sqrt")
_RULES = ("every:", "segments:")
_DEEPEST_NESTING = 64  # a schedule deeper than the chain is long means nothing


def _trimmed(text):
    return text.strip(" \t")


def _listed(paths):
    """``a, b, c``, shortened past 12 paths."""
    return ", ".join(paths[:12]) + (", ... " + paths[-1] if len(paths) > 12 else "")


class _ListParser:
    """The list form: ITEM,ITEM,... where ITEM is NAME, NAME..NAME or NAME..NAME(ITEM,...)."""

    def __init__(self, text, body):
        self.text, self.body, self.pos = text, body, 0

    def parse(self):
        items = self._list(0)
        if self.pos < len(self.body):
            char = self.body[self.pos]
            self._fail('a ")" closes nothing' if char == ")" else f'unexpected "{char}"')
        return items

    def _fail(self, why):
        raise ValueError(f'"{self.text}" is not a strategy: {why}.')

    def _list(self, depth):
        if depth > _DEEPEST_NESTING:
            self._fail(f"units nest deeper than {_DEEPEST_NESTING} levels")
        items = [self._item(depth)]
        while self.pos < len(self.body) and self.body[self.pos] == ",":
            self.pos += 1
            items.append(self._item(depth))
        return items

    def _name(self, token):
        token = _trimmed(token)
        if not token or token in _KEYWORDS or token.startswith(_RULES):
            self._fail("say none, all, every:K, segments:K or sqrt on its own, or list units as NAME, "
                       "NAME..NAME or NAME..NAME(UNIT,...), separated by commas")
        return token

    def _skip_blanks(self):
        while self.pos < len(self.body) and self.body[self.pos] in " \t":
            self.pos += 1

    def _item(self, depth):
        delimiter = _DELIMITER.search(self.body, self.pos)
        end = delimiter.start() if delimiter else len(self.body)
        token = self.body[self.pos:end]
        self.pos = end
        dots = token.find("..")
        first = self._name(token if dots < 0 else token[:dots])
        last = None if dots < 0 else self._name(token[dots + 2:])
        inner = []
        self._skip_blanks()
        if self.pos < len(self.body) and self.body[self.pos] == "(":
            if last is None:
                self._fail(f'only a segment FIRST..LAST has inner units ("{first}(")')
            self.pos += 1
            inner = self._list(depth + 1)
            if self.pos >= len(self.body) or self.body[self.pos] != ")":
                self._fail(f'the "(" after {first}..{last} is not closed')
            self.pos += 1
            self._skip_blanks()
        return _Item(first, last, inner)


def _parse(text):
    """A strategy read: ``(rule, k)`` for none, all, every:K, segments:K and sqrt (rule
    None for none), or ``("units", items)``."""
    body = _trimmed(text)
    if body in ("", "none"):
        return None, 0
    if body == "all":
        return "every", 1
    if body == "sqrt":
        return "sqrt", 0
    for rule in _RULES:
        if body.startswith(rule):
            digits = body[len(rule):]
            if not (digits.isascii() and digits.isdigit()) or not 1 <= int(digits) <= 1_000_000:
                raise ValueError(f'"{text}" is not a strategy: {rule}K needs a whole number K of at least 1.')
            return rule[:-1], int(digits)
    return "units", _ListParser(text, body).parse()


class _Resolver:
    """Items placed in ``toggleable`` and checked: ends in order, inner units within their
    unit and ending before it, no overlap among siblings, parts on their own at the top
    level. A part is a module inside a layer of ``chain`` (``blocks.1.attn`` of
    ``blocks.1``): it is checkpointed on its own while the rest of its layer runs plainly,
    so it neither begins, ends nor lies within a segment, and no whole unit holds its layer."""

    def __init__(self, toggleable, chain):
        self.toggleable = toggleable
        self.positions = {}
        for index, path in enumerate(toggleable):
            self.positions.setdefault(path, index)
        self.layers = {path for path in chain if path in self.positions}
        self.parts = {}  # a part's path -> the path of its layer
        for path in self.positions:
            layer = self._layer_holding(path)
            if layer is not None:
                self.parts[path] = layer

    def _layer_holding(self, path):
        """The layer of ``chain`` that ``path`` lies inside, or None."""
        names = path.split(".")
        for count in range(len(names) - 1, 0, -1):
            prefix = ".".join(names[:count])
            if prefix in self.layers:
                return prefix
        return None

    def position(self, path):
        if path not in self.positions:
            layer = self._layer_holding(path)
            if layer is not None:
                parts = [part for part in self.positions if self.parts.get(part) == layer]
                listed = f" ({_listed(parts)})" if parts else ""
                raise ValueError(f'"{path}" is not a module of {layer} that can be checkpointed on its own{listed}.')
            raise ValueError(f'"{path}" is not among the layers that can be checkpointed ({_listed(self.toggleable)}).')
        return self.positions[path]

    def place(self, path):
        """The position of ``path``, or of its layer for a part, and the part's own
        position (None for a layer itself)."""
        position = self.position(path)
        if path in self.parts:
            return self.positions[self.parts[path]], position
        return position, None

    def label(self, first, last):
        return self.toggleable[first] if first == last else self.toggleable[first] + ".." + self.toggleable[last]

    def units(self, items, parent=None):
        """The Units of ``items``, in order; ``parent`` the positions of the unit holding them."""
        placed = []  # (first, last, part, Unit); part None for a unit of whole layers
        for item in items:
            name = item.first if item.last is None else item.first + ".." + item.last
            first, part = self.place(item.first)
            if part is not None:
                if item.last is not None or item.inner or parent:
                    raise ValueError(f'"{name}": {item.first} is a module inside {self.toggleable[first]}; '
                                     "it is checkpointed on its own, not as part of a segment.")
                placed.append((first, first, part, Unit(item.first, item.first, ())))
                continue
            last = first
            if item.last is not None:
                last, last_part = self.place(item.last)
                if last_part is not None:
                    raise ValueError(f'"{name}": {item.last} is a module inside a layer, so it cannot end a segment.')
            if last < first:
                raise ValueError(f'"{name}" is not a segment: {item.last} runs before {item.first}.')
            if parent and (first < parent[0] or last >= parent[1]):
                holder = self.toggleable[parent[0]] + ".." + self.toggleable[parent[1]]
                raise ValueError(f'"{name}" is not an inner unit of {holder}: '
                                 "it must lie within it and end before it ends.")
            inner = tuple(self.units(item.inner, (first, last)))
            placed.append((first, last, None, Unit(self.toggleable[first], self.toggleable[last], inner)))
        # By first layer; a whole unit before the parts of its first layer, which it holds.
        placed.sort(key=lambda entry: (entry[0], entry[2] is not None, entry[1], entry[2] or 0))
        unique = [entry for i, entry in enumerate(placed) if i == 0 or entry != placed[i - 1]]
        whole = None  # the last whole unit so far
        for i, (first, last, part, unit) in enumerate(unique):
            if whole is not None and whole[1] >= first:
                if part is not None:
                    raise ValueError(f"{unit.first} lies inside {self.label(*whole[:2])}, which is checkpointed whole.")
                raise ValueError(f"The units {self.label(*whole[:2])} and {self.label(first, last)} overlap.")
            if part is None:
                whole = first, last
                continue
            for other in unique[i + 1:]:
                if other[0] != first:
                    break
                a, b = unit.first, other[3].first
                if other[2] is not None and (_is_inside(b, a) or _is_inside(a, b)):
                    raise ValueError(f"The units {a} and {b} overlap: one module is inside the other.")
        return [unit for _, _, _, unit in unique]


def _is_inside(path, layer):
    """Whether ``path`` is a sub-layer of ``layer`` (``blocks.0.fc1`` of ``blocks.0``)."""
    return path.startswith(layer + ".")


def checkpoint_schedule(text, chain, toggleable):
    """The Units a checkpoint strategy asks for over ``toggleable`` (layer paths, in the
    order they run): PeakLens's grammar (docs/planning.md), read exactly as its planner and
    replay engine read it. ``none`` or nothing; ``all`` or ``every:K`` (every K-th layer of
    ``chain`` from the first); ``segments:K`` (``chain`` cut into runs of K layers, each one
    unit but the last, as ``torch.utils.checkpoint.checkpoint_sequential`` does); ``sqrt``
    (segments of ceil(sqrt(N)) layers); or units ``NAME``, ``NAME..NAME`` (a segment: those
    layers and all between them, as one checkpoint) and ``NAME..NAME(UNIT,...)`` (a segment
    whose recompute checkpoints its inner units again), separated by commas. A sub-layer of
    a segment's layer (``blocks.0.fc1`` after ``blocks.0``) is part of that layer. A module
    inside a layer of ``chain`` (a part: ``blocks.1.attn``) is a unit of its own, checkpointed
    while the rest of its layer runs plainly: it cannot begin, end or lie within a segment,
    nor lie inside a layer a whole unit holds, nor inside another part. Raises ValueError
    with a sentence for anything else."""
    rule, value = _parse(text)
    if rule == "units":
        return _Resolver(toggleable, chain).units(value)
    n = len(chain)
    if rule == "every":
        items = [_Item(path, None, []) for path in chain[::value]]
    elif rule in ("segments", "sqrt"):
        k = value if rule == "segments" else math.ceil(math.sqrt(max(n, 1)))
        items = [_Item(chain[j], chain[j + k - 1], []) for j in range(0, n - k, k)]
    else:
        items = []
    resolver = _Resolver(toggleable, chain)
    units = resolver.units(items)
    # A rule's segment is the chain's layers from its first to its last, one after another.
    in_chain = set(chain)
    for unit in units:
        layer = unit.first
        for path in toggleable[resolver.position(unit.first):resolver.position(unit.last) + 1]:
            if path in in_chain:
                layer = path
            elif not _is_inside(path, layer):
                raise ValueError(f"{path} runs between the chain's layers {unit.first} and {unit.last}, "
                                 "so they cannot form one segment.")
    return units


def write_schedule(units):
    """Units written in the grammar, canonically: in order, a single layer or part as its
    name, a segment as ``first..last`` with ``(inner,...)``; ``none`` for no units."""
    def written(unit):
        if unit.first == unit.last and not unit.inner:
            return unit.first
        return unit.first + ".." + unit.last + ("(" + write_schedule(unit.inner) + ")" if unit.inner else "")

    return ",".join(written(unit) for unit in units) or "none"


def held_layers(units, toggleable):
    """The layers the (top-level) ``units`` hold, in ``toggleable`` order; a sub-layer of a
    segment's layer is part of it and not named on its own, and a part's unit holds just
    that module."""
    positions = {}
    for index, path in enumerate(toggleable):
        positions.setdefault(path, index)
    held = []
    for unit in units:
        layer = None
        for path in toggleable[positions[unit.first]:positions[unit.last] + 1]:
            if layer is None or not _is_inside(path, layer):
                held.append(path)
                layer = path
    return held


def resolve_checkpoint(text, chain, toggleable):
    """The layers a checkpoint strategy toggles, in ``toggleable`` order: those its
    top-level units hold (see checkpoint_schedule). Raises ValueError with a sentence for
    anything outside the grammar."""
    return held_layers(checkpoint_schedule(text, chain, toggleable), toggleable)


def _shapes(value):
    if isinstance(value, torch.Tensor):
        return list(value.shape)
    if isinstance(value, (list, tuple)):
        return [_shapes(v) for v in value]
    if isinstance(value, dict):
        return {k: _shapes(v) for k, v in value.items()}
    return None


# -- running checkpoint segments ---------------------------------------------------------


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


class Instrumented:
    """The hooks, toggles and manifest of one instrumented model: ``checkpointed`` lists the
    layers the checkpoint strategy toggles, ``schedule`` writes its units out canonically.

    A segment ``FIRST..LAST`` runs when the code iterates the ModuleList or Sequential that
    holds its layers: the iteration yields, in place of FIRST, one callable that runs them
    all as one checkpoint, passing each layer's output to the next and the extra arguments
    it was called with to every layer, and in place of each later layer a pass-through that
    returns its first argument (the segment's output) unchanged. The iteration so keeps the
    container's length and indices, but a segment's layers all receive the extra arguments
    given to its first layer, so each pass-through checks that it gets the segment's output
    and the same extra arguments (the same objects; equal numbers or strings will do) and
    raises RuntimeError if not: ``for i, block in enumerate(self.blocks): x = block(x,
    past[i])`` fails at a segment's second layer. A segment suits layers whose extra
    arguments are alike (a mask, a position encoding), not per-layer state, which needs
    single-layer checkpoints.

    A single layer, or a part (a module inside a layer of the chain, ``blocks.3.attn``), has
    its forward wrapped in a checkpoint; the rest of a part's layer runs plainly."""

    def __init__(self, model, checkpoint=None, manifest_path=None, sink=None):
        self.model = model
        self.sink = sink or _NvtxSink()
        self.manifest_path = manifest_path
        self._local = threading.local()
        self._handles = []
        self._shapes = {}
        self._has_backward_pre_hook = hasattr(torch.nn.Module, "register_full_backward_pre_hook")
        self.checkpointed = self._apply_toggles(checkpoint)
        self._manifest_stale = False
        for path, module in model.named_modules():
            if path:
                self._hook(path, module)
        # A new forward of the whole model: whatever backward is still open has ended.
        self._handles.append(model.register_forward_pre_hook(lambda mod, inputs: self._close_backward()))
        self.write_manifest()

    # -- ranges ---------------------------------------------------------------------------

    def _open_backward(self):
        """The backward ranges open on this thread, innermost last."""
        if not hasattr(self._local, "open_backward"):
            self._local.open_backward = []
        return self._local.open_backward

    def _close_backward(self, path=None):
        """Closes the open backward ranges down to `path` (all of them when None). A module
        whose inputs need no gradient never gets its backward hook; its range ends here."""
        open_backward = self._open_backward()
        while open_backward:
            closed = open_backward.pop()
            self.sink.pop()
            if closed == path:
                return

    def _hook(self, path, module):
        def forward_pre(mod, inputs):
            # A recompute inside a backward would name the module twice: skip it.
            if not self._open_backward():
                self.sink.push("fwd:" + path)

        def forward_post(mod, inputs, output):
            if not self._open_backward():
                self.sink.pop()
                if path not in self._shapes:
                    self._shapes[path] = {"inputs": _shapes(inputs), "output": _shapes(output)}
                    self._manifest_stale = True
            if not self._has_backward_pre_hook and torch.is_grad_enabled():
                # Older PyTorch: the gradient of the output arriving marks the backward's start.
                tensors = [t for t in (output if isinstance(output, (list, tuple)) else [output])
                           if isinstance(t, torch.Tensor) and t.requires_grad]
                if tensors:
                    fired = []

                    def grad_ready(grad, fired=fired):
                        if not fired:
                            fired.append(True)
                            backward_pre(mod, None)
                        return grad

                    tensors[0].register_hook(grad_ready)

        def backward_pre(mod, grad_output):
            self._open_backward().append(path)
            self.sink.push("bwd:" + path)

        def backward_post(mod, grad_input, grad_output):
            if path in self._open_backward():
                self._close_backward(path)

        self._handles.append(module.register_forward_pre_hook(forward_pre))
        self._handles.append(module.register_forward_hook(forward_post))
        if self._has_backward_pre_hook:
            self._handles.append(module.register_full_backward_pre_hook(backward_pre))
        self._handles.append(module.register_full_backward_hook(backward_post))

    @contextlib.contextmanager
    def step(self, number=None):
        """A ``step:<n>`` range around one training step."""
        if number is None:
            number = getattr(self, "_next_step", 0)
        self._next_step = number + 1
        self.sink.push("step:%d" % number)
        try:
            yield number
        finally:
            self._close_backward()
            self.sink.pop()
            if self._manifest_stale:
                self._manifest_stale = False
                self.write_manifest()

    def remove(self):
        """Takes the hooks off and undoes the checkpoint toggles."""
        for handle in self._handles:
            handle.remove()
        self._handles = []
        for module, own_forward in reversed(self._forwards):
            if own_forward is None:
                del module.forward
            else:
                module.forward = own_forward
        self._forwards = []
        for container, original in self._containers:
            container.__class__ = original
            del container.__dict__["_peaklens_segments"]
        self._containers = []
        self._local.__dict__.pop("segment_calls", None)

    # -- toggles --------------------------------------------------------------------------

    def _apply_toggles(self, checkpoint):
        """Applies the strategy; sets ``schedule`` and returns the layers toggled."""
        if checkpoint is None:
            checkpoint = os.environ.get("PEAKLENS_CHECKPOINT", "")
        modules = dict(self.model.named_modules())
        toggleable = [path for path in modules if path]
        self._forwards, self._containers = [], []
        outermost = {}  # container path -> {index of a segment's first child: runner}
        try:
            units = checkpoint_schedule(checkpoint, checkpoint_chain(self.model), toggleable)
            for unit in units:
                self._apply_unit(unit, modules, outermost, None)
        except ValueError as error:
            self.remove()
            raise ValueError(f"PEAKLENS_CHECKPOINT: {error}") from None
        for path, runners in outermost.items():
            container = modules[path]
            self._containers.append((container, type(container)))
            container.__dict__["_peaklens_segments"] = runners
            container.__class__ = _iterating_class(type(container))
        self.schedule = write_schedule(units)
        return held_layers(units, toggleable)

    def _apply_unit(self, unit, modules, outermost, parent):
        """One unit and its inner units: a single layer's forward is wrapped in a
        checkpoint; a segment gets a runner, which its container's iteration yields when
        the segment is outermost in that container, else its ``parent``'s runner calls."""
        if unit.first == unit.last:
            self._checkpoint_forward(modules[unit.first])
            return
        label = f"{unit.first}..{unit.last}"
        path, start, layers, paths = self._segment_layers(unit, modules)
        runner = _SegmentRunner(label, path, start, layers, paths, self._local)
        if parent is not None and parent.container == path:
            parent.inner[start - parent.start] = runner
        else:
            outermost.setdefault(path, {})[start] = runner
            self._guard(unit.first, layers[0], label, path)
        for inner in unit.inner:
            self._apply_unit(inner, modules, outermost, runner)

    @staticmethod
    def _segment_layers(unit, modules):
        """The path of the container a segment runs in, the index of its first layer there,
        its layers and their paths. Raises ValueError unless they are children of one ModuleList or
        Sequential."""
        path, _, first = unit.first.rpartition(".")
        last_path, _, last = unit.last.rpartition(".")
        container = modules[path]
        if last_path != path or not isinstance(container, (torch.nn.ModuleList, torch.nn.Sequential)):
            raise ValueError(f"the segment {unit.first}..{unit.last} cannot run as one checkpoint: its layers "
                             "must be children of one ModuleList or Sequential that the model iterates.")
        if "_peaklens_segments" in container.__dict__:
            raise ValueError(f"{path or 'the model'} already runs the checkpoint segments of an earlier "
                             "instrument(); call its remove() first.")
        names = list(container._modules)
        start, end = names.index(first), names.index(last)
        return (path, start, [container._modules[name] for name in names[start:end + 1]],
                [f"{path}.{name}" if path else name for name in names[start:end + 1]])

    def _checkpoint_forward(self, module):
        """Wraps ``module.forward`` in a non-reentrant checkpoint when gradients are on."""
        own_forward = module.__dict__.get("forward")
        original = module.forward

        @functools.wraps(original)
        def checkpointed(*args, **kwargs):
            if not torch.is_grad_enabled():
                return original(*args, **kwargs)
            return torch.utils.checkpoint.checkpoint(original, *args, use_reentrant=False, **kwargs)

        module.forward = checkpointed
        self._forwards.append((module, own_forward))

    def _guard(self, path, module, label, container):
        """Refuses calls of a segment's first layer that do not come through its runner."""
        local = self._local
        where = container or "the model"

        def guard(mod, inputs):
            if getattr(local, "entering", None) is mod:
                local.entering = None
                return
            raise RuntimeError(f"{path} was called on its own, but it begins the checkpoint segment {label}, "
                               f"which runs as one only when the code iterates {where} "
                               "(for layer in ...: x = layer(x, ...)) rather than calling its layers by index.")

        self._handles.append(module.register_forward_pre_hook(guard))

    # -- manifest -------------------------------------------------------------------------

    def manifest(self):
        """The module tree with types, parameter bytes, shapes seen, and the toggles."""
        modules = []
        for path, module in self.model.named_modules():
            own = sum(p.numel() * p.element_size() for p in module.parameters(recurse=False))
            total = sum(p.numel() * p.element_size() for p in module.parameters())
            entry = {"path": path, "type": type(module).__name__, "parameter_bytes": total, "own_parameter_bytes": own}
            entry.update(self._shapes.get(path, {}))
            modules.append(entry)
        return {"format": "peaklens-manifest", "version": 1, "torch": torch.__version__,
                "checkpoint": self.checkpointed, "schedule": self.schedule, "chain": checkpoint_chain(self.model),
                "modules": modules}

    def write_manifest(self):
        path = self.manifest_path or default_manifest_path()
        if not path:
            return
        temporary = path + ".tmp"
        with open(temporary, "w") as out:
            json.dump(self.manifest(), out, indent=1)
        os.replace(temporary, path)


def default_manifest_path():
    """``PEAKLENS_MANIFEST``, or under ``peaklens-cli record`` the file beside this
    process's trace that the collector reads: ``$PEAKLENS_OUT/[rank<R>-|local<L>-]pid<P>.manifest.json``."""
    if os.environ.get("PEAKLENS_MANIFEST"):
        return os.environ["PEAKLENS_MANIFEST"]
    out = os.environ.get("PEAKLENS_OUT")
    if not out:
        return None
    if os.environ.get("RANK"):
        tag = "rank%s-" % os.environ["RANK"]
    elif os.environ.get("LOCAL_RANK"):
        tag = "local%s-" % os.environ["LOCAL_RANK"]
    else:
        tag = ""
    tag += "pid%d" % os.getpid()
    return os.path.join(out, tag + ".manifest.json")


_current = None


def instrument(model, checkpoint=None, manifest_path=None, sink=None):
    """Instruments ``model`` in place and returns it (see the package docstring).

    ``checkpoint`` overrides ``PEAKLENS_CHECKPOINT``; ``manifest_path`` overrides
    ``PEAKLENS_MANIFEST``; ``sink`` (an object with ``push(name)`` and ``pop()``) replaces
    NVTX, e.g. to follow the ranges in Python."""
    global _current
    _current = Instrumented(model, checkpoint, manifest_path, sink)
    model._peaklens = _current
    return model


def step(number=None):
    """``with peaklens.step():`` marks one training step (of the last instrumented model)."""
    if _current is None:
        return contextlib.nullcontext(number)
    return _current.step(number)

# SPDX-License-Identifier: Apache-2.0
"""Ranges, manifest and checkpoint toggles for one model (see the package docstring)."""

import contextlib
import functools
import json
import os
import threading
import warnings
import weakref

import torch
import torch.utils.checkpoint

from ._schedule import (  # noqa: F401  scripts import the grammar from here
    Unit, checkpoint_chain, checkpoint_schedule, held_layers, resolve_checkpoint, write_schedule)
from ._segments import _iterating_class, _SegmentRunner
from ._torchrecord import recorder


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


# PyTorch 2.x warns whenever a full backward hook fires on a module whose inputs need no
# gradient (an embedding's token ids): the helper's hooks on every module would make every
# script warn about code it did not write.
warnings.filterwarnings("ignore", message="Full backward hook is firing when gradients are computed with respect to "
                        "module outputs", category=UserWarning)


class _RecorderSink:
    """Sends ranges to the torch recorder of ``record --backend torch``, each name encoded
    once: a training step pushes hundreds."""

    def __init__(self, library):
        self._push = library.peaklens_torch_push
        self.pop = library.peaklens_torch_pop
        self._encoded = {}

    def push(self, name):
        encoded = self._encoded.get(name)
        if encoded is None:
            encoded = self._encoded[name] = name.encode("utf-8", "replace")
        self._push(encoded)


def _default_sink():
    """The torch recorder when this process is recorded through it, else NVTX."""
    library = recorder()
    return _RecorderSink(library) if library is not None else _NvtxSink()


def _shapes(value):
    if isinstance(value, torch.Tensor):
        return list(value.shape)
    if isinstance(value, (list, tuple)):
        return [_shapes(v) for v in value]
    if isinstance(value, dict):
        return {k: _shapes(v) for k, v in value.items()}
    return None


class Instrumented:
    """The hooks, toggles and manifest of one instrumented model, made by ``instrument``
    and kept as ``model._peaklens``.

    Attributes: ``model``; ``checkpointed``, the layers the checkpoint strategy toggles
    (the paths its top-level units hold, in the order they run); ``schedule``, the strategy
    written out canonically in the grammar (``none`` for no toggles); ``manifest_path``,
    the file given to ``instrument`` (None: default_manifest_path()); ``sink``, where the
    ranges go. Methods: ``step()`` (what ``peaklens.step()`` calls), ``manifest()`` (the
    manifest as a dict), ``write_manifest()`` and ``remove()``.

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
        self.sink = sink or _default_sink()
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
        self._optimizing = False
        import torch.optim.optimizer as optim

        if hasattr(optim, "register_optimizer_step_pre_hook"):
            # Global hooks: through a weak reference, so that they do not keep this alive.
            this = weakref.ref(self)

            def begins(optimizer, args, kwargs):
                if this() is not None:
                    this()._optimizer_begins(optimizer)

            def ends(optimizer, args, kwargs):
                if this() is not None:
                    this()._optimizer_ends()

            self._handles.append(optim.register_optimizer_step_pre_hook(begins))
            self._handles.append(optim.register_optimizer_step_post_hook(ends))
        self._gradients = {}
        if os.environ.get("PEAKLENS_GRADIENTS") == "1" and default_manifest_path():
            self._watch_first_gradients()
        self.write_manifest()

    # -- ranges ---------------------------------------------------------------------------

    def _open_backward(self):
        """The backward ranges open on this thread, innermost last."""
        if not hasattr(self._local, "open_backward"):
            self._local.open_backward = []
        return self._local.open_backward

    def _optimizer_begins(self, optimizer):
        """An ``opt`` range around the step of an optimizer of this model's parameters, so that
        the state it makes reads as optimizer state."""
        if self._optimizing or threading.current_thread() is not threading.main_thread():
            return
        own = {id(parameter) for parameter in self.model.parameters()}
        if any(id(parameter) in own for group in optimizer.param_groups for parameter in group["params"]):
            self._close_backward()
            self.sink.push("opt")
            self._optimizing = True

    def _optimizer_ends(self):
        if self._optimizing and threading.current_thread() is threading.main_thread():
            self._optimizing = False
            self.sink.pop()

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

    # -- gradients ------------------------------------------------------------------------

    def _watch_first_gradients(self):
        """Under ``rerun`` (PEAKLENS_GRADIENTS=1): notes each parameter's first gradient
        (its norm and sum, in double precision) as backward accumulates it, so that a rerun
        with checkpoint toggles can be checked against the baseline's whatever the script
        does with the gradients afterwards; written beside the trace after the first step."""
        if not hasattr(torch.Tensor, "register_post_accumulate_grad_hook"):
            return
        for name, parameter in self.model.named_parameters():
            if not parameter.requires_grad:
                continue

            def noted(tensor, name=name):
                if name not in self._gradients and tensor.grad is not None:
                    grad = tensor.grad.detach().double()
                    self._gradients[name] = [grad.norm().item(), grad.sum().item()]

            self._handles.append(parameter.register_post_accumulate_grad_hook(noted))

    def _write_gradients(self):
        path = os.path.splitext(default_manifest_path())[0]
        path = path[:-len(".manifest")] if path.endswith(".manifest") else path
        with open(path + ".gradients.json.tmp", "w") as out:
            json.dump({"format": "peaklens-gradients", "version": 1, "parameters": self._gradients}, out)
        os.replace(path + ".gradients.json.tmp", path + ".gradients.json")

    @contextlib.contextmanager
    def step(self, number=None):
        """A ``step:<n>`` range around one training step (see peaklens.step)."""
        if number is None:
            number = getattr(self, "_next_step", 0)
        self._next_step = number + 1
        self.sink.push("step:%d" % number)
        try:
            yield number
        finally:
            self._close_backward()
            if self._optimizing:  # its step raised before the post-hook
                self._optimizing = False
                self.sink.pop()
            self.sink.pop()
            if self._gradients and not getattr(self, "_gradients_written", False):
                self._gradients_written = True
                self._write_gradients()
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
        if unit.kept:
            self._keep_forward(modules[unit.first], unit.kept)
            return
        if unit.first == unit.last:
            self._checkpoint_forward(modules[unit.first], unit.save)
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

    def _checkpoint_forward(self, module, save=()):
        """Wraps ``module.forward`` in a non-reentrant checkpoint when gradients are on;
        with ``save`` (operator overload names), a selective one that keeps those
        operators' outputs and recomputes the rest."""
        own_forward = module.__dict__.get("forward")
        original = module.forward
        options = {"context_fn": selective_context(save)} if save else {}

        @functools.wraps(original)
        def checkpointed(*args, **kwargs):
            if not torch.is_grad_enabled():
                return original(*args, **kwargs)
            return torch.utils.checkpoint.checkpoint(original, *args, use_reentrant=False, **options, **kwargs)

        module.forward = checkpointed
        self._forwards.append((module, own_forward))

    def _keep_forward(self, module, form):
        """Runs ``module.forward`` with what it saves for backward kept in ``form``
        (``"bf16"``, ``"offload"``: SavedTensorPacking) while gradients are on."""
        own_forward = module.__dict__.get("forward")
        original = module.forward
        model = self.model

        @functools.wraps(original)
        def kept(*args, **kwargs):
            if not torch.is_grad_enabled():
                return original(*args, **kwargs)
            with packed_saved_tensors(model, form):
                return original(*args, **kwargs)

        module.forward = kept
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
        """Writes manifest() to its file, whole or not at all (a temporary file renamed
        over it), since the collector may read it as the process exits."""
        path = self.manifest_path or default_manifest_path()
        if not path:
            return
        temporary = path + ".tmp"
        with open(temporary, "w") as out:
            json.dump(self.manifest(), out, indent=1)
        os.replace(temporary, path)


def operator_overloads(names):
    """The OpOverloads ``names`` (``aten.addmm.default``) stand for in this PyTorch. Raises
    ValueError naming one it lacks."""
    found = []
    for name in names:
        space, op, overload = name.split(".")
        try:
            found.append(getattr(getattr(getattr(torch.ops, space), op), overload))
        except (AttributeError, RuntimeError):
            raise ValueError(f"{name} is not an operator of PyTorch {torch.__version__}.") from None
    return found


def selective_context(save):
    """A checkpoint's ``context_fn`` that keeps the outputs of the operators named in
    ``save`` (overload names) through the forward and recomputes everything else:
    PyTorch's selective activation checkpointing."""
    from torch.utils.checkpoint import CheckpointPolicy, create_selective_checkpoint_contexts

    kept = frozenset(operator_overloads(save))

    def policy(ctx, op, *args, **kwargs):
        return CheckpointPolicy.MUST_SAVE if op in kept else CheckpointPolicy.PREFER_RECOMPUTE

    return functools.partial(create_selective_checkpoint_contexts, policy)


class SavedTensorPacking:
    """What a layer run plainly does with each tensor autograd saves for its backward, by
    ``form``:

    - ``"bf16"``: a floating-point one is packed to bfloat16 and given back in its own dtype
      when the backward uses it (integer and half-precision tensors stay as they are);
    - ``"offload"``: it is copied to host memory and brought back to its device when the
      backward uses it. From a GPU the copy is pinned and asynchronous, as
      ``torch.autograd.graph.save_on_cpu(pin_memory=True)`` makes it. From the CPU it goes to
      memory outside PyTorch's allocator, as host memory lies outside a GPU's: what the
      device keeps drops as it would, and the copy back is a new tensor, as on a GPU.

    The model's parameters and buffers (and views of them) stay where they are; a tensor
    saved by several operators is packed once."""

    def __init__(self, model, form):
        from torch.utils.weak import WeakIdKeyDictionary

        if form not in ("bf16", "offload"):
            raise ValueError(f"no saved-tensor form {form!r}")
        self.form = form
        self.kept = {tensor.untyped_storage().data_ptr() for tensor in (*model.parameters(), *model.buffers())}
        # Per tensor saved (by identity, while it lives: its memory may go to another one),
        # its version and packed copy.
        self.packed = WeakIdKeyDictionary()

    def pack(self, tensor):
        if tensor.untyped_storage().data_ptr() in self.kept or tensor.numel() == 0:
            return tensor
        if self.form == "bf16" and (not tensor.is_floating_point() or tensor.dtype in (torch.bfloat16, torch.float16)):
            return tensor
        known = self.packed.get(tensor)
        if known is None or known[0] != tensor._version:
            known = (tensor._version, self._copy(tensor.detach()))
            self.packed[tensor] = known
        return known[1]

    def _copy(self, tensor):
        """(what ``unpack`` makes it again, the copy kept)."""
        if self.form == "bf16":
            return tensor.dtype, tensor.to(torch.bfloat16)
        if tensor.device.type == "cpu":
            buffer = bytearray(tensor.numel() * tensor.element_size())
            host = torch.frombuffer(buffer, dtype=tensor.dtype).view(tensor.shape)
            host.copy_(tensor)
            return tensor.device, host
        host = torch.empty(tensor.shape, dtype=tensor.dtype, pin_memory=True)
        host.copy_(tensor, non_blocking=True)
        return tensor.device, host

    @staticmethod
    def unpack(saved):
        if not isinstance(saved, tuple):
            return saved
        how, tensor = saved
        if isinstance(how, torch.dtype):
            return tensor.to(how)
        if how.type == "cpu":
            return tensor.clone()
        return tensor.to(how, non_blocking=True)


@contextlib.contextmanager
def packed_saved_tensors(model, form):
    """Saved-tensor hooks for what runs inside: SavedTensorPacking of ``model`` in ``form``."""
    packing = SavedTensorPacking(model, form)
    try:
        with torch.autograd.graph.saved_tensors_hooks(packing.pack, packing.unpack):
            yield
    finally:
        packing.packed.clear()  # each copy is then freed with the last node that saved it


def _first_set(*names):
    """The value of the first of ``names`` set to something in the environment, or None."""
    for name in names:
        if os.environ.get(name):
            return os.environ[name]
    return None


def process_tag():
    """What names this process's files under ``record``, exactly as the collector names
    its trace: ``rank<R>-pid<P>``, else ``local<L>-pid<P>``, else ``pid<P>``. R is
    ``RANK`` (torchrun and most launchers), else ``SLURM_PROCID`` (``srun``); L is
    ``LOCAL_RANK``, else ``SLURM_LOCALID``. Both halves must agree so that the collector
    finds the manifest beside its trace."""
    rank = _first_set("RANK", "SLURM_PROCID")
    local = _first_set("LOCAL_RANK", "SLURM_LOCALID")
    if rank is not None:
        tag = "rank%s-" % rank
    elif local is not None:
        tag = "local%s-" % local
    else:
        tag = ""
    return tag + "pid%d" % os.getpid()


def default_manifest_path():
    """Where the manifest goes when ``instrument`` is given no ``manifest_path``:
    ``$PEAKLENS_MANIFEST`` when set; else, under ``record`` (which sets ``PEAKLENS_OUT``),
    the file beside this process's trace that the collector reads when the process exits,
    ``$PEAKLENS_OUT/<tag>.manifest.json`` with the tag of process_tag(); else None (no
    manifest)."""
    if os.environ.get("PEAKLENS_MANIFEST"):
        return os.environ["PEAKLENS_MANIFEST"]
    out = os.environ.get("PEAKLENS_OUT")
    if not out:
        return None
    return os.path.join(out, process_tag() + ".manifest.json")


_current = None


def instrument(model, checkpoint=None, manifest_path=None, sink=None):
    """Instruments ``model`` (a ``torch.nn.Module``) in place and returns it.

    - Ranges: every submodule's forward becomes a ``fwd:<path>`` range and its backward a
      ``bwd:<path>`` range, ``<path>`` as ``model.named_modules()`` names it
      (``blocks.3.attn``); the step of an optimizer over its parameters, an ``opt`` range. They go to the torch recorder under ``record --backend torch``
      and to NVTX when CUDA is available (where the CUPTI collector records them); the
      recording gives each allocation the innermost range open on its thread.
    - Toggles: the checkpoint strategy ``checkpoint`` (default: ``$PEAKLENS_CHECKPOINT``;
      nothing or ``none`` toggles nothing) is applied with non-reentrant
      ``torch.utils.checkpoint``; see the package docstring for its grammar. A strategy
      outside the grammar, or naming a module the model lacks, raises ValueError with a
      sentence saying what is wrong, and leaves the model as it was.
    - Manifest: the module tree (types, parameter bytes, input and output shapes of the
      first forward), the chain and the toggles are written as JSON to ``manifest_path``
      (default: default_manifest_path(), which follows ``PEAKLENS_MANIFEST``,
      ``PEAKLENS_OUT`` and the rank variables), now and again after any step that saw new
      shapes. Nothing is written when neither names a file.
    - ``sink``: an object with ``push(name)`` and ``pop()`` that receives the ranges in
      place of NVTX, to follow them in Python or in a test.

    The returned model carries its Instrumented as ``model._peaklens``; call its
    ``remove()`` to take the hooks and toggles off. Instrumenting a second model makes
    ``step()`` mark the steps of that one. Without CUDA the toggles and the manifest work
    all the same; only the ranges go nowhere."""
    global _current
    _current = Instrumented(model, checkpoint, manifest_path, sink)
    model._peaklens = _current
    return model


def step(number=None):
    """A context manager marking one training step: ``with peaklens.step(): ...`` opens a
    ``step:<n>`` range around the forward, backward and optimizer step of one batch, which
    the collector and PeakLens's step statistics split the run by. ``n`` counts from 0, or
    is ``number`` when given (later steps go on from it); the ``with`` statement yields it.
    At its end, backward ranges still open are closed and the manifest is rewritten if the
    step saw new shapes. It marks the steps of the model instrumented last; before any
    ``instrument`` it does nothing."""
    if _current is None:
        return contextlib.nullcontext(number)
    return _current.step(number)

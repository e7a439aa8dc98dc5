"""Ranges, manifest and checkpoint toggles for one model (see the package docstring)."""

import contextlib
import functools
import json
import math
import os
import re
import threading

import torch
import torch.utils.checkpoint

_NUMBERED = re.compile(r"^\d+$")


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


def resolve_checkpoint(text, chain, toggleable):
    """The layers a checkpoint strategy toggles, in ``toggleable`` order: PeakLens's grammar
    (docs/planning.md), read here exactly as its planner and replay engine read it. ``none``
    or nothing; ``all``, ``every:K`` (every K-th layer of ``chain`` from the first) or
    ``sqrt`` (every ceil(sqrt(N))-th); or layer paths ``NAME,NAME,...`` from ``toggleable``.
    Raises ValueError with a sentence for anything else."""
    body = text.strip(" \t")
    if body in ("", "none"):
        return []
    if body == "all":
        k = 1
    elif body == "sqrt":
        k = math.ceil(math.sqrt(max(len(chain), 1)))
    elif body.startswith("every:"):
        digits = body[len("every:"):]
        if not (digits.isascii() and digits.isdigit()) or not 1 <= int(digits) <= 1_000_000:
            raise ValueError(f'"{text}" is not a strategy: every:K needs a whole number K of at least 1.')
        k = int(digits)
    else:
        names = [name.strip(" \t") for name in body.split(",")]
        if any(not n or n in ("none", "all", "sqrt") or n.startswith("every:") for n in names):
            raise ValueError(f'"{text}" is not a strategy: say none, all, every:K or sqrt on its own, '
                             "or name layers as NAME,NAME,...")
        for name in names:
            if name not in toggleable:
                shown = ", ".join(toggleable[:12]) + (", ... " + toggleable[-1] if len(toggleable) > 12 else "")
                raise ValueError(f'"{name}" is not among the layers that can be checkpointed ({shown}).')
        chosen = set(names)
        return [path for path in toggleable if path in chosen]
    picked = set(chain[::k])
    return [path for path in toggleable if path in picked]


def _shapes(value):
    if isinstance(value, torch.Tensor):
        return list(value.shape)
    if isinstance(value, (list, tuple)):
        return [_shapes(v) for v in value]
    if isinstance(value, dict):
        return {k: _shapes(v) for k, v in value.items()}
    return None


class Instrumented:
    """The hooks, toggles and manifest of one instrumented model."""

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
        for handle in self._handles:
            handle.remove()
        self._handles = []

    # -- toggles --------------------------------------------------------------------------

    def _apply_toggles(self, checkpoint):
        if checkpoint is None:
            checkpoint = os.environ.get("PEAKLENS_CHECKPOINT", "")
        modules = dict(self.model.named_modules())
        toggleable = [path for path in modules if path]
        try:
            names = resolve_checkpoint(checkpoint, checkpoint_chain(self.model), toggleable)
        except ValueError as error:
            raise ValueError(f"PEAKLENS_CHECKPOINT: {error}") from None
        for name in names:
            module = modules[name]
            original = module.forward

            @functools.wraps(original)
            def checkpointed(*args, _original=original, **kwargs):
                if not torch.is_grad_enabled():
                    return _original(*args, **kwargs)
                return torch.utils.checkpoint.checkpoint(_original, *args, use_reentrant=False, **kwargs)

            module.forward = checkpointed
        return names

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
                "checkpoint": self.checkpointed, "chain": checkpoint_chain(self.model), "modules": modules}

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

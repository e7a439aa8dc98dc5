# SPDX-License-Identifier: Apache-2.0
"""PeakLens helper for PyTorch training scripts.

One line names the layers of a model for the PeakLens collector and applies the
checkpoint toggles a rerun asks for::

    import peaklens
    model = peaklens.instrument(model)
    for batch in data:
        with peaklens.step():
            ...

``instrument`` pushes ``fwd:<module path>`` and ``bwd:<module path>`` ranges around each
module's forward and backward (NVTX on CUDA, which the collector records), writes a
manifest of the module tree (types, parameter bytes, input/output shapes), and applies
the checkpoint strategy ``PEAKLENS_CHECKPOINT`` asks for. ``step`` marks a training step.
Without CUDA it still applies the toggles and writes the manifest.

Checkpoint strategies, in the grammar of PeakLens's planner (docs/planning.md):

- ``none`` (or nothing): no toggles.
- ``all``, ``every:K``, ``segments:K``, ``sqrt``: rules over the chain, the model's
  repeated blocks (the ModuleList or Sequential of one kind of layer, as the planner
  finds it): every block, every K-th block from the first, runs of K blocks as one
  checkpoint each (all but the last run, as ``checkpoint_sequential``), runs of
  ceil(sqrt(N)) blocks.
- Units separated by commas: ``NAME`` (one module, ``blocks.3`` or a part of a block such
  as ``blocks.3.attn``, checkpointed while the rest of its block runs plainly),
  ``NAME..NAME`` (a segment: consecutive children of one ModuleList or Sequential run as
  one checkpoint, when the code iterates that container), ``NAME..NAME(UNIT,...)`` (a
  segment whose recompute checkpoints its inner units again) and
  ``NAME[save:OP+OP...]`` (a block checkpointed selectively: the outputs of the listed
  operators, ``aten.addmm.default``, are kept through the forward, the rest recomputed,
  through PyTorch's ``create_selective_checkpoint_contexts``), ``NAME[bf16]`` and
  ``NAME[offload]`` (a block run plainly that keeps what it saves for backward in bfloat16
  or in host memory).

Environment: ``PEAKLENS_CHECKPOINT`` (the strategy), ``PEAKLENS_MANIFEST`` (the
manifest's file), and under ``record``: ``PEAKLENS_OUT`` with ``RANK``/``SLURM_PROCID``
and ``LOCAL_RANK``/``SLURM_LOCALID``, which name the manifest beside the process's trace.

``python -m peaklens record -- python train.py`` runs a script under the collector, as
``peaklens-cli record`` does (``python -m peaklens --help``).
"""

import importlib
import os


def _read_version():
    """The repository's VERSION, which the package carries beside this file."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "VERSION"), encoding="utf-8") as source:
        return source.read().strip()


__version__ = _read_version()

__all__ = ["Instrumented", "instrument", "step"]


# torch is imported on first use, so that `python -m peaklens record` starts at once and
# runs on a launcher node where PyTorch is not installed.
def __getattr__(name):
    if name in __all__:
        return getattr(importlib.import_module("._instrument", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))

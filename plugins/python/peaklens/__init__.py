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
the checkpoint strategy ``PEAKLENS_CHECKPOINT`` asks for, in the grammar of PeakLens's
planner: ``all``, ``every:K``, ``segments:K`` or ``sqrt`` over the repeated blocks, or
units ``NAME``, ``NAME..NAME`` and ``NAME..NAME(UNIT,...)`` separated by commas. A layer
is wrapped in non-reentrant ``torch.utils.checkpoint``; a segment of consecutive layers
of a ModuleList or Sequential runs as one such checkpoint when the code iterates that
container (``for block in self.blocks: x = block(x, ...)``), its inner units checkpointed
again within it. Without CUDA it still applies the toggles and writes the manifest.
"""

from ._instrument import Instrumented, instrument, step

__all__ = ["Instrumented", "instrument", "step"]
__version__ = "0.1.0"

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
manifest of the module tree (types, parameter bytes, input/output shapes), and wraps the
modules ``PEAKLENS_CHECKPOINT`` chooses (``all``, ``every:K``, ``sqrt`` over the repeated
blocks, or comma-separated module paths; the grammar of PeakLens's planner) in
non-reentrant ``torch.utils.checkpoint``. Without CUDA it still applies the toggles and
writes the manifest.
"""

from ._instrument import Instrumented, instrument, step

__all__ = ["Instrumented", "instrument", "step"]
__version__ = "0.1.0"

# SPDX-License-Identifier: Apache-2.0
"""The torch backend inside a recorded process (``record --backend torch``).

``record`` puts ``_autostart`` on ``PYTHONPATH`` and names the recorder library in
``PEAKLENS_TORCH_RECORDER``; Python then runs ``_autostart/sitecustomize.py`` at start-up,
which calls start_when_torch_loads(). Right after ``import torch`` finishes, start() loads
``libpeaklens_torch.so`` (plugins/torch/torchrecorder.cpp) and starts it on the importing
thread: from then on PyTorch's allocators report every block to it, and the helper's
ranges go to it too (recorder()). Nothing happens in a process that never imports torch,
nor in torchrun's launcher, whose ranks are recorded instead.
"""

import atexit
import ctypes
import importlib.abc
import importlib.util
import os
import sys

RECORDER_VARIABLE = "PEAKLENS_TORCH_RECORDER"

_library = None


def recorder():
    """The started recorder library (its ``peaklens_torch_push``/``pop``), or None."""
    return _library


def _say(text):
    print(f"peaklens: {text}", file=sys.stderr, flush=True)


def _is_launcher():
    """Whether this process is torchrun's launcher (``torchrun`` or ``python -m
    torch.distributed.run``), which starts the ranks and holds no training memory."""
    main = sys.argv[0] if sys.argv else ""
    return os.path.basename(main) == "torchrun" or main.replace(os.sep, "/").endswith("torch/distributed/run.py")


def _same_release(built, running):
    """Whether two PyTorch versions share major and minor ("2.15.0" and "2.15.1+cu132")."""
    return built.split(".")[:2] == running.split("+")[0].split(".")[:2]


def start():
    """Loads and starts the recorder named by PEAKLENS_TORCH_RECORDER; once per process.
    A recorder built for another PyTorch release is not loaded (its C++ interface to
    PyTorch would not match): the run goes on unrecorded, with one line on stderr."""
    global _library
    path = os.environ.get(RECORDER_VARIABLE)
    if _library is not None or not path or _is_launcher():
        return
    import torch
    try:
        library = ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_LOCAL)
    except OSError as error:
        _say(f"the torch recorder cannot be loaded ({error}); the training runs unrecorded.")
        return
    library.peaklens_torch_version.restype = ctypes.c_char_p
    built = library.peaklens_torch_version().decode()
    if not _same_release(built, torch.__version__):
        _say(f"the torch recorder was built for PyTorch {built}, and this process runs PyTorch {torch.__version__}; "
             "the training runs unrecorded. Record with a PeakLens built against this PyTorch, or with "
             "--backend cupti on a GPU.")
        return
    library.peaklens_torch_push.argtypes = [ctypes.c_char_p]
    library.peaklens_torch_push.restype = None
    library.peaklens_torch_pop.restype = None
    library.peaklens_torch_finish.restype = None
    library.peaklens_torch_start()
    _library = library
    # Before the interpreter's teardown frees what the script still holds.
    atexit.register(library.peaklens_torch_finish)


class _AfterTorchImport(importlib.abc.MetaPathFinder):
    """Finds ``torch`` as the next finders would, and runs start() once its module has
    finished executing."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec("torch")
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        execute = spec.loader.exec_module

        def exec_module(module):
            execute(module)
            start()

        spec.loader.exec_module = exec_module
        return spec


def start_when_torch_loads():
    """Starts the recorder now if torch is loaded, else right after it is imported."""
    if not os.environ.get(RECORDER_VARIABLE):
        return
    if "torch" in sys.modules:
        start()
    elif not any(isinstance(finder, _AfterTorchImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _AfterTorchImport())

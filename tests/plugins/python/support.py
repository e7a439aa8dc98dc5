# SPDX-License-Identifier: Apache-2.0
"""What the helper's tests share: the repository's folders, the interpreter, and an
environment free of what a launcher or an outer recording would leave."""

import os
import sys

TESTS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(TESTS, os.pardir, os.pardir, os.pardir))
HELPER = os.path.join(REPO, "plugins", "python")
EXAMPLE = os.path.join(REPO, "examples", "train_small.py")
# The interpreter running the tests (tst_pythonhelper starts /usr/bin/python3): a python3
# found on PATH may be a pyenv shim without torch.
PYTHON = sys.executable

# Each of these changes what a run does or where its files go.
LAUNCHER_VARIABLES = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS",
                      "CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH", "PEAKLENS_CHECKPOINT", "PEAKLENS_MANIFEST",
                      "PEAKLENS_OUT", "PEAKLENS_PLUGIN_DIR")


def read_version():
    with open(os.path.join(REPO, "VERSION"), encoding="utf-8") as source:
        return source.read().strip()


def clean_environment(**settings):
    """This process's environment without LAUNCHER_VARIABLES and PYTORCH_*, then
    ``settings`` applied (None removes a variable)."""
    environment = {name: value for name, value in os.environ.items()
                   if name not in LAUNCHER_VARIABLES and not name.startswith("PYTORCH_")}
    for name, value in settings.items():
        if value is None:
            environment.pop(name, None)
        else:
            environment[name] = value
    return environment

# SPDX-License-Identifier: Apache-2.0
"""Run by Python at start-up in a process that ``record --backend torch`` started (this
folder is on its PYTHONPATH): arranges for the PeakLens torch recorder to start once the
process imports torch (peaklens/_torchrecord.py), then runs the sitecustomize this one
hides, if any, as Python would have."""

import os
import sys


def _run_hidden_sitecustomize():
    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        candidate = os.path.join(entry or os.getcwd(), "sitecustomize.py")
        if os.path.abspath(os.path.dirname(candidate)) != here and os.path.isfile(candidate):
            with open(candidate, "rb") as source:
                code = compile(source.read(), candidate, "exec")
            exec(code, {"__name__": "sitecustomize", "__file__": candidate})
            return


try:
    from peaklens import _torchrecord
    _torchrecord.start_when_torch_loads()
except Exception as error:  # the training must run, recorded or not
    print(f"peaklens: the torch recorder cannot start ({error}); the training runs unrecorded.", file=sys.stderr)
_run_hidden_sitecustomize()

# SPDX-License-Identifier: Apache-2.0
"""Where the helper writes its manifest: beside the trace the collector writes for the same
process, named by the same rule (rank from RANK, else SLURM_PROCID; local rank from
LOCAL_RANK, else SLURM_LOCALID)."""

import os
import tempfile
import unittest
from unittest import mock

import torch

import peaklens
from peaklens._instrument import default_manifest_path
from support import LAUNCHER_VARIABLES

PID = os.getpid()

# (what the row means, the environment, the file expected; {pid} is this process's id)
ROWS = [
    ("nothing set: no manifest", {}, None),
    ("PEAKLENS_OUT alone: the process id", {"PEAKLENS_OUT": "/o"}, "/o/pid{pid}.manifest.json"),
    ("PEAKLENS_MANIFEST over everything", {"PEAKLENS_MANIFEST": "/m/x.json", "PEAKLENS_OUT": "/o", "RANK": "1"},
     "/m/x.json"),
    ("RANK (torchrun)", {"PEAKLENS_OUT": "/o", "RANK": "3", "LOCAL_RANK": "1"}, "/o/rank3-pid{pid}.manifest.json"),
    ("SLURM_PROCID (srun) when RANK is unset", {"PEAKLENS_OUT": "/o", "SLURM_PROCID": "5", "SLURM_LOCALID": "1"},
     "/o/rank5-pid{pid}.manifest.json"),
    ("RANK over SLURM_PROCID (torchrun inside srun)", {"PEAKLENS_OUT": "/o", "RANK": "1", "SLURM_PROCID": "0"},
     "/o/rank1-pid{pid}.manifest.json"),
    ("an empty RANK counts as unset", {"PEAKLENS_OUT": "/o", "RANK": "", "SLURM_PROCID": "4"},
     "/o/rank4-pid{pid}.manifest.json"),
    ("LOCAL_RANK without a global rank", {"PEAKLENS_OUT": "/o", "LOCAL_RANK": "2"}, "/o/local2-pid{pid}.manifest.json"),
    ("SLURM_LOCALID when LOCAL_RANK is unset", {"PEAKLENS_OUT": "/o", "SLURM_LOCALID": "6"},
     "/o/local6-pid{pid}.manifest.json"),
    ("LOCAL_RANK over SLURM_LOCALID", {"PEAKLENS_OUT": "/o", "LOCAL_RANK": "0", "SLURM_LOCALID": "6"},
     "/o/local0-pid{pid}.manifest.json"),
    ("a global rank from Slurm over a local one from torchrun", {"PEAKLENS_OUT": "/o", "SLURM_PROCID": "7",
                                                                 "LOCAL_RANK": "1"},
     "/o/rank7-pid{pid}.manifest.json"),
]


def launcher_free(**settings):
    """os.environ patched: the launcher's variables cleared, ``settings`` set."""
    environment = {name: value for name, value in os.environ.items() if name not in LAUNCHER_VARIABLES}
    environment.update(settings)
    return mock.patch.dict(os.environ, environment, clear=True)


class ManifestPathTest(unittest.TestCase):
    def test_the_manifest_is_named_as_the_collector_names_the_trace(self):
        for what, settings, expected in ROWS:
            with self.subTest(what), launcher_free(**settings):
                self.assertEqual(default_manifest_path(), expected and expected.format(pid=PID))

    def test_instrument_writes_it_beside_the_trace_under_record(self):
        class Silent:
            def push(self, name):
                pass

            def pop(self):
                pass

        with tempfile.TemporaryDirectory() as directory:
            for settings, name in (({"RANK": "3"}, "rank3"), ({"SLURM_PROCID": "2"}, "rank2"),
                                   ({"SLURM_LOCALID": "1"}, "local1")):
                with launcher_free(PEAKLENS_OUT=directory, **settings):
                    model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Linear(3, 1))
                    peaklens.instrument(model, sink=Silent())
                expected = os.path.join(directory, "%s-pid%d.manifest.json" % (name, PID))
                self.assertTrue(os.path.exists(expected), (expected, os.listdir(directory)))
            self.assertEqual(len(os.listdir(directory)), 3)


if __name__ == "__main__":
    unittest.main()

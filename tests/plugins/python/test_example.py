# SPDX-License-Identifier: Apache-2.0
"""examples/train_small.py trains on the CPU and leaves the manifest a recording needs,
from a checkout with nothing installed as well as with the helper on PYTHONPATH."""

import json
import os
import subprocess
import tempfile
import unittest

from support import EXAMPLE, HELPER, PYTHON, clean_environment

BLOCKS = ["blocks.0", "blocks.1", "blocks.2", "blocks.3"]


class ExampleTest(unittest.TestCase):
    def setUp(self):
        scratch = tempfile.TemporaryDirectory()
        self.addCleanup(scratch.cleanup)
        self.scratch = scratch.name

    def train(self, *arguments, **settings):
        """Runs the example in the scratch folder; its process id, exit code and output."""
        process = subprocess.Popen([PYTHON, EXAMPLE, *arguments], env=clean_environment(**settings), cwd=self.scratch,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        output, _ = process.communicate(timeout=120)
        return process.pid, process.returncode, output

    def read_manifest(self, path):
        with open(path, encoding="utf-8") as source:
            return json.load(source)

    def test_two_steps_on_the_cpu_from_a_bare_checkout(self):
        manifest_path = os.path.join(self.scratch, "manifest.json")
        # Without PYTHONPATH the example finds the helper in the checkout itself.
        _, code, output = self.train("--device", "cpu", "--steps", "2", PYTHONPATH=None,
                                     PEAKLENS_MANIFEST=manifest_path)
        self.assertEqual(code, 0, output)
        lines = output.splitlines()
        self.assertEqual(lines[0].split(", ")[0], "rank 0: training on cpu")
        self.assertEqual([line.split(" loss ")[0] for line in lines[1:]], ["rank 0: step 0", "rank 0: step 1"])
        manifest = self.read_manifest(manifest_path)
        self.assertEqual(manifest["chain"], BLOCKS)
        self.assertEqual(manifest["schedule"], "none")
        modules = {module["path"]: module for module in manifest["modules"]}
        self.assertEqual(modules["blocks.0"]["type"], "Block")
        self.assertEqual(modules["blocks.2.attn.qkv"]["parameter_bytes"], (128 * 384 + 384) * 4)
        self.assertEqual(modules["blocks.0"]["output"], [16, 64, 128], "the shapes of the first forward")

    def test_under_record_the_manifest_lies_beside_the_ranks_trace(self):
        pid, code, output = self.train("--device", "cpu", "--steps", "2", "--layers", "3", PYTHONPATH=HELPER,
                                       PEAKLENS_OUT=self.scratch, SLURM_PROCID="2",
                                       PEAKLENS_CHECKPOINT="blocks.0..blocks.1,blocks.2.mlp")
        self.assertEqual(code, 0, output)
        self.assertIn("checkpoint blocks.0..blocks.1,blocks.2.mlp", output)
        name = "rank2-pid%d.manifest.json" % pid
        self.assertEqual(os.listdir(self.scratch), [name])
        manifest = self.read_manifest(os.path.join(self.scratch, name))
        self.assertEqual(manifest["checkpoint"], ["blocks.0", "blocks.1", "blocks.2.mlp"])
        self.assertEqual(manifest["schedule"], "blocks.0..blocks.1,blocks.2.mlp")

    def test_cuda_asked_for_where_there_is_none_is_an_error(self):
        probe = subprocess.run([PYTHON, "-c", "import torch; print(torch.cuda.is_available())"],
                               stdout=subprocess.PIPE, text=True, env=clean_environment(), timeout=60)
        if probe.stdout.strip() != "False":
            self.skipTest("PyTorch sees a CUDA device here")
        _, code, output = self.train("--device", "cuda", "--steps", "1", PYTHONPATH=HELPER)
        self.assertNotEqual(code, 0)
        self.assertIn("PyTorch sees no CUDA device here; use --device cpu.", output)


if __name__ == "__main__":
    unittest.main()

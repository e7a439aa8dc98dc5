# SPDX-License-Identifier: Apache-2.0
"""The torch backend on real training scripts, on the CPU, with the project's PyTorch:
`peaklens-cli record --backend torch` names the scripts' layers after their modules, with
steps and phases; `peaklens-cli rerun` of them measures the peak it predicted; torchrun's
ranks each leave a trace, which the app opens as one folder. Needs the build's peaklens-cli
and libpeaklens_torch.so (PEAKLENS_TEST_BIN_DIR)."""

import json
import os
import shutil
import subprocess
import tempfile
import unittest
from unittest import mock

from support import HELPER, PYTHON, REPO, clean_environment
from peaklens import _record

BIN_DIR = os.environ.get("PEAKLENS_TEST_BIN_DIR")
CLI = os.path.join(BIN_DIR or "", "peaklens-cli")
APP = os.path.join(BIN_DIR or "", "peaklens")
RECORDER = os.path.join(BIN_DIR or "", "libpeaklens_torch.so")
SMALL = os.path.join(REPO, "examples", "train_small.py")
RESNET = os.path.join(REPO, "examples", "train_resnet.py")


# Builds examples/train_small.py's model of the given width, applies the plan.py in the
# given folder, runs one training step and prints each module's forward calls as JSON.
COUNT_FORWARDS = """
import collections, json, sys
import torch
sys.path[:0] = [sys.argv[1], %r]
import plan, train_small
torch.manual_seed(0)
model = plan.apply(train_small.SmallGpt(width=int(sys.argv[2])))
calls = collections.Counter()
for name, module in model.named_modules():
    module.register_forward_hook(lambda module, inputs, output, name=name: calls.update([name]))
ids = torch.randint(0, 256, (4, 64))
model(ids).sum().backward()
print(json.dumps(calls))
""" % os.path.dirname(SMALL)

def run(command, **settings):
    return subprocess.run(command, capture_output=True, text=True, timeout=600, **settings)


class TorchBackendEnvironmentTest(unittest.TestCase):
    def test_the_torch_backend_leaves_the_allocator_alone(self):
        with mock.patch.dict(os.environ, {"PYTHONPATH": "/somewhere"}):
            environment = _record.record_environment("torch", "/nowhere/libpeaklens_torch.so", "out", "exact",
                                                     ["python3", "train.py"])
        self.assertEqual(environment["PEAKLENS_TORCH_RECORDER"], "/nowhere/libpeaklens_torch.so")
        self.assertEqual(environment["PYTHONPATH"].split(":"),
                         [os.path.dirname(_record.PACKAGE_DIR), os.path.join(_record.PACKAGE_DIR, "_autostart"),
                          "/somewhere"])
        self.assertEqual(environment["PEAKLENS_ALLOCATOR"], "native")
        self.assertNotIn("CUDA_INJECTION64_PATH", environment)
        self.assertNotIn("PYTORCH_NO_CUDA_MEMORY_CACHING", environment)

    def test_an_allocator_mode_is_the_collectors_alone(self):
        result = run([PYTHON, "-m", "peaklens", "record", "--backend", "torch", "--allocator", "exact", "--", "true"],
                     env=clean_environment(PYTHONPATH=HELPER, PEAKLENS_PLUGIN_DIR=BIN_DIR or "/nowhere"))
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertEqual(result.stderr.count("\n"), 1, result.stderr)
        self.assertIn("--allocator exact applies to --backend cupti", result.stderr)


@unittest.skipUnless(BIN_DIR and os.path.exists(RECORDER), "libpeaklens_torch.so is not built (PEAKLENS_TEST_BIN_DIR)")
class RealScriptTest(unittest.TestCase):
    """Each script is recorded once for the class; reruns relaunch it twice more."""

    @classmethod
    def setUpClass(cls):
        cls.scratch = tempfile.TemporaryDirectory()
        cls.environment = clean_environment(PATH=os.path.dirname(PYTHON) + os.pathsep + os.environ.get("PATH", ""))
        cls.traces = {}
        for name, script in (("small", SMALL), ("resnet", RESNET)):
            out = os.path.join(cls.scratch.name, name)
            cls.recorded = run([CLI, "record", "--backend", "torch", "--out", out, "--", PYTHON, script, "--steps", "3",
                                "--device", "cpu"], env=cls.environment, cwd=cls.scratch.name)
            traces = [entry for entry in os.listdir(out) if entry.endswith(".peaklens")] if os.path.isdir(out) else []
            cls.traces[name] = os.path.join(out, traces[0]) if len(traces) == 1 else None

    @classmethod
    def tearDownClass(cls):
        cls.scratch.cleanup()

    def trace(self, name):
        self.assertIsNotNone(self.traces[name], self.recorded.stderr)
        return self.traces[name]

    def summary(self, trace):
        result = run([CLI, "summary", "--json", trace])
        self.assertEqual(result.returncode, 0, result.stderr)
        return json.loads(result.stdout)

    def rerun(self, trace, *how):
        out = tempfile.mkdtemp(dir=self.scratch.name)
        os.rmdir(out)
        result = run([CLI, "rerun", trace, *how, "--out", out, "--json"], env=self.environment)
        self.assertEqual(result.returncode, 0, result.stderr[-2000:])
        return json.loads(result.stdout)

    def test_layers_carry_the_module_names_with_steps_and_phases(self):
        rows = [("small", "blocks", "Block", "CausalSelfAttention", "blocks.0.attn"),
                ("resnet", "stages", "Stage", "ResidualBlock", "stages.0.first")]
        for name, chain, kind, inner_kind, inner in rows:
            with self.subTest(name):
                summary = self.summary(self.trace(name))
                self.assertEqual(summary["meta"]["source.format"], "torch")
                layers = {layer["name"]: layer for layer in summary["layers"]}
                for index in range(4):
                    layer = layers["%s.%d" % (chain, index)]
                    self.assertEqual(layer["kind"], kind)
                    self.assertGreater(layer["activation_bytes"], 0)
                    self.assertEqual(layer["forward_calls"], 3)
                    self.assertEqual(layer["backward_calls"], 3)
                    self.assertGreater(layer["parameter_bytes"], 0)
                self.assertEqual(layers[inner]["kind"], inner_kind)
                self.assertEqual([step["number"] for step in summary["steps"]], [0, 1, 2])
                self.assertEqual(summary["peak"]["device"], "cpu")
        # The helper ranges the optimizer's step: AdamW's state, two moments per parameter,
        # reads as optimizer state.
        live = self.summary(self.trace("small"))["live_at_peak"]["by_category"]
        categories = {row["category"]: row["bytes"] for row in live}
        self.assertAlmostEqual(categories["optimizer_state"] / categories["parameter"], 2, delta=0.05)

    def test_blocks_name_the_operators_that_made_them(self):
        live = self.summary(self.trace("small"))["live_at_peak"]
        sites = {site["site"]: site for site in live["by_site"]}
        self.assertGreater(sites["aten::addmm"]["bytes"], 0, sites.keys())
        self.assertTrue(any(" in " in name and name.endswith("Backward0") for name in sites), sites.keys())
        unnamed = sum(site["bytes"] for site in live["by_site"] if site["kind"] != "operator")
        self.assertLess(unnamed, live["bytes"] / 100, sites.keys())
        # PEAKLENS_TORCH_OPS=0 leaves the operators out.
        out = os.path.join(self.scratch.name, "no-ops")
        recorded = run([CLI, "record", "--backend", "torch", "--out", out, "--", PYTHON, SMALL, "--steps", "1",
                        "--device", "cpu"], env=dict(self.environment, PEAKLENS_TORCH_OPS="0"), cwd=self.scratch.name)
        self.assertEqual(recorded.returncode, 0, recorded.stderr[-2000:])
        trace = [entry for entry in os.listdir(out) if entry.endswith(".peaklens")]
        self.assertEqual(len(trace), 1)
        sites = self.summary(os.path.join(out, trace[0]))["live_at_peak"]["by_site"]
        self.assertEqual([site["site"] for site in sites], ["(no stack)"])

    def test_the_activation_list_shows_what_a_plan_keeps_and_what_its_rerun_kept(self):
        plan = ["--checkpoint", "blocks.1,blocks.2.mlp", "--activations", "--json"]

        def listed(trace):
            result = run([CLI, "plan", trace, *plan])
            self.assertEqual(result.returncode, 0, result.stderr)
            return json.loads(result.stdout)

        planned = listed(self.trace("small"))
        rows = planned["activations"]
        for row in rows:
            if row["layer"] == "blocks.1" and not row["output"]:
                self.assertEqual((row["policy"], row["unit"]), ("RECOMPUTE", "blocks.1"), row)
            elif (row["module"] or "").startswith("blocks.2.mlp.") and not row["output"]:
                self.assertEqual((row["policy"], row["unit"]), ("RECOMPUTE", "blocks.2.mlp"), row)
            else:
                self.assertEqual((row["policy"], row["unit"]), ("SAVE", None), row)
        self.assertIn("aten::addmm", {row["operator"] for row in rows})
        # What each layer keeps but its output is what the model says checkpointing it frees.
        for layer in planned["chain"]["layers"]:
            kept = sum(row["bytes"] for row in rows if row["layer"] == layer["name"] and not row["output"])
            self.assertEqual(kept, layer["saving_bytes"], layer["name"])
        # The rerun's own trace, listed the same way: the units checkpointed kept next to nothing.
        rerun = listed(self.rerun(self.trace("small"), "--checkpoint", "blocks.1,blocks.2.mlp")["measured"]["trace"])

        def recomputed(listing):
            return sum(row["bytes"] for row in listing["activations"] if row["policy"] == "RECOMPUTE")

        self.assertGreater(recomputed(planned), 1 << 20)
        self.assertLess(recomputed(rerun), recomputed(planned) / 100)

    def test_reruns_measure_the_predicted_peak(self):
        # How far the measured peak may be from the predicted one, in percent.
        tolerance = 5.0
        rows = [("small", ["--checkpoint", "every:2"]), ("small", ["--checkpoint", "all"]),
                ("small", ["--budget", "75%"]), ("resnet", ["--checkpoint", "every:2"]),
                ("resnet", ["--budget", "75%"])]
        for name, how in rows:
            with self.subTest(name=name, how=how):
                result = self.rerun(self.trace(name), *how)
                self.assertLessEqual(abs(result["peak_error_percent"]), tolerance, result)
                # Checkpointing lowers the peak, and the baseline measured beside it did not move.
                self.assertLess(result["measured"]["peak_bytes"], result["baseline"]["measured"]["peak_bytes"])
                self.assertEqual(result["baseline"]["measured"]["peak_bytes"],
                                 self.summary(self.trace(name))["peak"]["allocated_bytes"])
                self.assertEqual(len(result["measured"]["step_times_ms"]), 3)
                self.assertTrue(result["gradients"]["agree"], result["gradients"])

    def test_a_per_op_policy_is_predicted_and_its_rerun_measured(self):
        """Blocks checkpointed with their matrix products saved keep more than whole blocks
        and less than no checkpoint; the rerun, through PyTorch's selective checkpoint
        contexts, measures the predicted peak within 3 %. A policy naming an operator the
        blocks never run saves nothing, and says so."""
        trace = self.trace("small")
        selective = ",".join("blocks.%d[save:aten.addmm.default]" % block for block in range(4))

        def planned(how):
            result = run([CLI, "plan", trace, "--checkpoint", how, "--activations", "--json"])
            self.assertEqual(result.returncode, 0, result.stderr)
            return json.loads(result.stdout)

        whole, policy = planned("all"), planned(selective)
        measured = self.summary(trace)["peak"]["allocated_bytes"]
        self.assertLess(whole["predicted"]["peak_bytes"], policy["predicted"]["peak_bytes"])
        self.assertLess(policy["predicted"]["peak_bytes"], measured)
        kept = [row for row in policy["activations"] if row["unit"] and row["policy"] == "SAVE"]
        self.assertTrue(kept and all(row["operator"] == "aten::addmm" for row in kept), kept)
        result = self.rerun(trace, "--checkpoint", selective)
        self.assertLessEqual(abs(result["peak_error_percent"]), 3.0, result)
        self.assertTrue(result["gradients"]["agree"], result["gradients"])
        # aten.mm.default: these blocks' products are addmm, so the policy is a whole checkpoint.
        wrong = planned("blocks.1[save:aten.mm.default]")
        self.assertEqual(wrong["predicted"]["peak_bytes"], planned("blocks.1")["predicted"]["peak_bytes"])
        self.assertTrue(any("blocks.1's policy saves aten.mm.default, which its forward never runs" in note
                            for note in wrong["notes"]), wrong["notes"])
        self.assertFalse(any(row["policy"] == "SAVE" and row["unit"] for row in wrong["activations"]))

    def test_blocks_kept_in_bfloat16_are_predicted_and_their_rerun_measured(self):
        """Every block keeping bfloat16: half of what each keeps (and of its input) freed, no
        recompute; the rerun measures the predicted peak within 3 % and its gradients agree
        within the 1 % bfloat16 allows (and not within float rounding)."""
        trace = self.trace("small")
        compressed = ",".join("blocks.%d[bf16]" % block for block in range(4))
        planned = run([CLI, "plan", trace, "--checkpoint", compressed, "--activations", "--json"])
        self.assertEqual(planned.returncode, 0, planned.stderr)
        plan = json.loads(planned.stdout)
        self.assertEqual(plan["predicted"]["added_time_ms"], 0)
        self.assertLess(plan["predicted"]["peak_bytes"], self.summary(trace)["peak"]["allocated_bytes"])
        self.assertTrue(any(row["policy"] == "COMPRESS" for row in plan["activations"]))
        result = self.rerun(trace, "--checkpoint", compressed)
        self.assertLessEqual(abs(result["peak_error_percent"]), 3.0, result)
        self.assertTrue(result["gradients"]["agree"], result["gradients"])
        self.assertGreater(result["gradients"]["max_relative_difference"], 1e-4, result["gradients"])
        self.assertEqual(result["gradients"]["tolerance"], 1e-2)

    def test_blocks_offloaded_are_predicted_and_their_rerun_measured(self):
        """Every block offloaded: all each keeps (and its input) freed, the copies' time
        added; on the CPU the helper's copies live outside PyTorch's allocator, so the rerun
        measures the predicted peak within 3 %, with the plain step's gradients."""
        trace = self.trace("small")
        offloaded = ",".join("blocks.%d[offload]" % block for block in range(4))

        def planned(*how):
            result = run([CLI, "plan", trace, "--checkpoint", offloaded, "--activations", "--json", *how])
            self.assertEqual(result.returncode, 0, result.stderr)
            return json.loads(result.stdout)

        plan = planned()
        self.assertLess(plan["predicted"]["peak_bytes"], self.summary(trace)["peak"]["allocated_bytes"])
        kept = [row for row in plan["activations"] if row["layer"].startswith("blocks.") and not row["output"]]
        self.assertTrue(kept and all(row["policy"] == "OFFLOAD" for row in kept), kept)
        # Out and back at the host's bandwidth: a tenth of it takes ten times as long.
        slow = planned("--host-bandwidth", "2.5")
        self.assertGreater(plan["predicted"]["added_time_ms"], 0)
        self.assertAlmostEqual(slow["predicted"]["added_time_ms"] / plan["predicted"]["added_time_ms"], 10, delta=0.01)
        self.assertEqual(slow["predicted"]["peak_bytes"], plan["predicted"]["peak_bytes"])
        result = self.rerun(trace, "--checkpoint", offloaded)
        self.assertLessEqual(abs(result["peak_error_percent"]), 3.0, result)
        self.assertTrue(result["gradients"]["agree"], result["gradients"])
        self.assertEqual(result["gradients"]["max_relative_difference"], 0, result["gradients"])

    def test_the_plan_as_python_checkpoints_its_units(self):
        # Each row: how to plan, and how many times a training step runs the forwards of
        # the modules checked (the rest once): twice inside a checkpoint (plainly, then in
        # the recompute), three times inside an inner unit (recomputed again within its
        # segment's recompute). A recompute stops after the last tensor its backward needs,
        # so the modules checked are each block's first ones.
        checked = ["blocks.%d.%s" % (block, part) for block in range(4) for part in ("attn.qkv", "mlp.0")]
        checked += ["embed", "head"]
        rows = [(["--checkpoint", "blocks.1,blocks.2.mlp"],
                 {"blocks.1.attn.qkv": 2, "blocks.1.mlp.0": 2, "blocks.2.mlp.0": 2}),
                # A per-op policy runs the modules again; only its operators' results are reused.
                (["--checkpoint", "blocks.1[save:aten.addmm.default],blocks.2.mlp"],
                 {"blocks.1.attn.qkv": 2, "blocks.1.mlp.0": 2, "blocks.2.mlp.0": 2}),
                # A block kept in bfloat16 runs once.
                (["--checkpoint", "blocks.1[bf16],blocks.2.mlp"], {"blocks.2.mlp.0": 2}),
                (["--checkpoint", "blocks.1[offload],blocks.2.mlp"], {"blocks.2.mlp.0": 2}),
                (["--checkpoint", "blocks.0..blocks.2(blocks.1)"],
                 {"blocks.0.attn.qkv": 2, "blocks.0.mlp.0": 2, "blocks.1.attn.qkv": 3, "blocks.1.mlp.0": 3,
                  "blocks.2.attn.qkv": 2, "blocks.2.mlp.0": 2})]
        for how, counts in rows:
            with self.subTest(how=how):
                emitted = run([CLI, "plan", self.trace("small"), *how, "--emit", "python"])
                self.assertEqual(emitted.returncode, 0, emitted.stderr)
                folder = tempfile.mkdtemp(dir=self.scratch.name)
                with open(os.path.join(folder, "plan.py"), "w", encoding="utf-8") as out:
                    out.write(emitted.stdout)
                counted = run([PYTHON, "-c", COUNT_FORWARDS, folder, "128"],
                              env=dict(self.environment, PYTHONPATH=HELPER))
                self.assertEqual(counted.returncode, 0, counted.stderr[-2000:])
                calls = json.loads(counted.stdout)
                self.assertEqual({name: calls[name] for name in checked}, {name: counts.get(name, 1) for name in checked})
                # Another model (narrower blocks) is refused, naming the module.
                other = run([PYTHON, "-c", COUNT_FORWARDS, folder, "64"], env=dict(self.environment, PYTHONPATH=HELPER))
                self.assertNotEqual(other.returncode, 0)
                self.assertIn("the plan was made for another model", other.stderr)
                self.assertIn("ValueError: blocks.", other.stderr)

    def test_cpu_blocks_freed_or_made_on_threads_torch_did_not_start_are_recorded(self):
        # A collective's worker thread (gloo's) frees and makes CPU blocks as this thread does.
        script = os.path.join(self.scratch.name, "threads.py")
        with open(script, "w") as out:
            out.write("import threading, torch\n"
                      "held = [torch.empty(3 << 20, dtype=torch.uint8)]\n"
                      "freer = threading.Thread(target=held.clear)\n"
                      "freer.start(); freer.join()\n"
                      "kept = []\n"
                      "maker = threading.Thread(target=lambda: kept.append(torch.empty(5 << 20, dtype=torch.uint8)))\n"
                      "maker.start(); maker.join()\n")
        out = os.path.join(self.scratch.name, "threads")
        result = run([CLI, "record", "--backend", "torch", "--out", out, "--", PYTHON, script], env=self.environment)
        self.assertEqual(result.returncode, 0, result.stderr[-2000:])
        trace = [os.path.join(out, entry) for entry in os.listdir(out) if entry.endswith(".peaklens")]
        self.assertEqual(len(trace), 1, result.stderr[-2000:])
        events = os.path.join(self.scratch.name, "threads.csv")
        result = run([CLI, "report", trace[0], "-o", events, "--table", "events"])
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(events) as rows:
            rows = [line.split(",") for line in rows.read().splitlines()[1:]]
        by_size = {}
        for row in rows:
            by_size.setdefault(abs(int(row[2])), []).append((int(row[2]) > 0, row[3]))
        freed = by_size.get(3 << 20, [])
        self.assertEqual([made for made, _ in freed], [True, False], freed)
        self.assertEqual(freed[0][1], freed[1][1])  # the same block
        self.assertIn(True, [made for made, _ in by_size.get(5 << 20, [])])

    def test_torchrun_ranks_each_leave_a_trace_the_app_opens_as_a_folder(self):
        torchrun = os.path.join(os.path.dirname(PYTHON), "torchrun")
        if not os.access(torchrun, os.X_OK):
            self.skipTest("no torchrun beside " + PYTHON)
        out = os.path.join(self.scratch.name, "ranks")
        result = run([CLI, "record", "--backend", "torch", "--out", out, "--", torchrun, "--nproc-per-node", "2",
                      SMALL, "--steps", "2", "--device", "cpu"], env=self.environment, cwd=self.scratch.name)
        self.assertEqual(result.returncode, 0, result.stderr[-2000:])
        traces = sorted(entry for entry in os.listdir(out) if entry.endswith(".peaklens"))
        self.assertEqual(len(traces), 2, traces)
        self.assertRegex(traces[0], r"\Arank0-pid\d+\.peaklens\Z")
        self.assertRegex(traces[1], r"\Arank1-pid\d+\.peaklens\Z")
        for trace in traces:
            summary = self.summary(os.path.join(out, trace))
            self.assertEqual(summary["meta"]["world_size"], "2")
            self.assertIn("blocks.3", {layer["name"] for layer in summary["layers"]})
        if not os.access(APP, os.X_OK):
            return
        screenshot = os.path.join(self.scratch.name, "ranks.png")
        opened = run([APP, "--screenshot", screenshot, out], env=dict(self.environment, QT_QPA_PLATFORM="offscreen"))
        self.assertEqual(opened.returncode, 0, opened.stderr)
        self.assertGreater(os.path.getsize(screenshot), 0)


if __name__ == "__main__":
    unittest.main()

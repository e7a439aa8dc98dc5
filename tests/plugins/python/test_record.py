# SPDX-License-Identifier: Apache-2.0
"""python -m peaklens record: what it refuses without a driver, where it looks for the
collector, the environment and signals it hands the command, and, with the CUDA stand-ins
(PEAKLENS_TEST_STANDIN_DIR and PEAKLENS_TEST_BIN_DIR, set by tst_pythonhelper when they are
built), a real recording of four ranks through the real collector."""

import contextlib
import io
import json
import os
import signal
import subprocess
import tempfile
import threading
import unittest
from unittest import mock

from peaklens import _record
from support import HELPER, PYTHON, clean_environment

COLLECTOR = "libpeaklens_cupti.so"


def run(command, **options):
    return subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120, **options)


def touch(*parts, mode=0o644):
    path = os.path.join(*parts)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w"):
        pass
    os.chmod(path, mode)
    return path


class CommandLineTest(unittest.TestCase):
    def setUp(self):
        scratch = tempfile.TemporaryDirectory()
        self.addCleanup(scratch.cleanup)
        self.scratch = scratch.name

    def test_without_a_driver_record_says_so_in_one_line_and_exits_2(self):
        no_libraries = os.path.join(self.scratch, "empty")
        os.makedirs(no_libraries)
        environment = clean_environment(PYTHONPATH=HELPER, LD_LIBRARY_PATH=no_libraries)
        probe = run([PYTHON, "-c", "from peaklens._record import require_cuda_device; require_cuda_device()"],
                    env=environment)
        if probe.returncode == 0:
            self.skipTest("the NVIDIA driver sees a CUDA device here")
        out = os.path.join(self.scratch, "out")
        marker = os.path.join(self.scratch, "ran")
        result = run([PYTHON, "-m", "peaklens", "record", "--out", out, "--", PYTHON, "-c",
                      "open(%r, 'w')" % marker], env=environment, cwd=self.scratch)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertEqual(result.stdout, "")
        self.assertRegex(result.stderr, r"\Apeaklens: record needs a CUDA device, and "
                                        r"(this machine has none|the NVIDIA driver sees none)[^\n]*\.\n\Z")
        self.assertFalse(os.path.exists(out), "nothing is created")
        self.assertFalse(os.path.exists(marker), "the command does not run")

    def test_usage_errors_exit_2(self):
        environment = clean_environment(PYTHONPATH=HELPER)
        for what, arguments in (("no command", []), ("record without the command", ["record"]),
                                ("record with an unknown allocator", ["record", "--allocator", "fast", "--", "true"])):
            with self.subTest(what):
                result = run([PYTHON, "-m", "peaklens", *arguments], env=environment)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn("usage: python -m peaklens", result.stderr)


class CollectorLookupTest(unittest.TestCase):
    """The folders record looks in, in order: PEAKLENS_PLUGIN_DIR, the package's own
    (test_package), then beside peaklens-cli on PATH and under its prefix's lib*/."""

    def setUp(self):
        scratch = tempfile.TemporaryDirectory()
        self.addCleanup(scratch.cleanup)
        self.root = scratch.name
        self.cli = touch(self.root, "prefix", "bin", "peaklens-cli", mode=0o755)

    def find(self, path, plugin_dir=None):
        environment = {"PATH": path}
        if plugin_dir:
            environment["PEAKLENS_PLUGIN_DIR"] = plugin_dir
        with mock.patch.dict(os.environ, environment):
            if not plugin_dir:
                os.environ.pop("PEAKLENS_PLUGIN_DIR", None)
            return _record.find_collector()

    def test_the_first_folder_holding_it_wins(self):
        prefix = os.path.join(self.root, "prefix")
        bin_dir = os.path.join(prefix, "bin")
        rows = [
            ("PEAKLENS_PLUGIN_DIR first", ["plugins", "prefix/bin", "prefix/lib/peaklens"], bin_dir, "plugins"),
            ("beside peaklens-cli (the build tree) before its lib folder", ["prefix/bin", "prefix/lib/peaklens"],
             bin_dir, "prefix/bin"),
            ("lib/peaklens of peaklens-cli's prefix", ["prefix/lib/peaklens"], bin_dir, "prefix/lib/peaklens"),
            ("lib64/peaklens", ["prefix/lib64/peaklens"], bin_dir, "prefix/lib64/peaklens"),
            ("lib/<multiarch>/peaklens", ["prefix/lib/x86_64-linux-gnu/peaklens"], bin_dir,
             "prefix/lib/x86_64-linux-gnu/peaklens"),
            ("the prefix of the peaklens-cli a link on PATH leads to", ["prefix/lib/peaklens"],
             os.path.join(self.root, "links"), "prefix/lib/peaklens"),
        ]
        os.makedirs(os.path.join(self.root, "links"))
        os.symlink(self.cli, os.path.join(self.root, "links", "peaklens-cli"))
        for what, holders, path, expected in rows:
            with self.subTest(what):
                made = [touch(self.root, holder, COLLECTOR) for holder in holders]
                try:
                    plugin_dir = os.path.join(self.root, "plugins") if "plugins" in holders else None
                    self.assertEqual(self.find(path, plugin_dir), os.path.join(self.root, expected, COLLECTOR))
                finally:
                    for file in made:
                        os.remove(file)

    def test_nowhere_is_an_error_naming_where_it_looked(self):
        bin_dir = os.path.join(self.root, "prefix", "bin")
        with self.assertRaises(_record.RecordError) as raised:
            self.find(bin_dir)
        message = str(raised.exception)
        for place in ("$PEAKLENS_PLUGIN_DIR (unset)", os.path.join(_record.PACKAGE_DIR, "_lib"), bin_dir,
                      os.path.join(self.root, "prefix", "lib*", "peaklens")):
            self.assertIn(place, message)
        self.assertNotIn("\n", message)
        self.assertNotIn("not on PATH", message)


class CommandEnvironmentTest(unittest.TestCase):
    def test_each_allocator_mode(self):
        rows = [("exact", {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}),
                ("async", {"PYTORCH_CUDA_ALLOC_CONF": "backend:cudaMallocAsync"}),
                ("native", {})]
        command = ["python3", "train.py", "--name", "caf\u00e9 \"x\""]
        outside = {"PYTHONPATH": "/somewhere", "NVTX_INJECTION64_PATH": ""}
        for allocator, pytorch in rows:
            with self.subTest(allocator), mock.patch.dict(os.environ, outside):
                for name in ("PYTORCH_NO_CUDA_MEMORY_CACHING", "PYTORCH_CUDA_ALLOC_CONF"):
                    os.environ.pop(name, None)
                environment = _record.record_environment("cupti", "/nowhere/" + COLLECTOR, "relative/out", allocator,
                                                         command)
                self.assertEqual(environment["CUDA_INJECTION64_PATH"], "/nowhere/" + COLLECTOR)
                self.assertEqual(environment["PEAKLENS_OUT"], os.path.join(os.getcwd(), "relative", "out"))
                self.assertEqual(environment["PEAKLENS_COMMAND"],
                                 '["python3","train.py","--name","caf\u00e9 \\"x\\""]')
                self.assertEqual(json.loads(environment["PEAKLENS_COMMAND"]), command)
                self.assertEqual(environment["PEAKLENS_CWD"], os.getcwd())
                self.assertEqual(environment["PEAKLENS_ALLOCATOR"], allocator)
                self.assertEqual(environment["PYTHONPATH"], os.path.dirname(_record.PACKAGE_DIR) + ":/somewhere")
                self.assertEqual({name: environment[name] for name in environment if name.startswith("PYTORCH_")},
                                 pytorch)
                # A collector this process cannot load leaves NVTX to the collector itself.
                self.assertEqual(environment["NVTX_INJECTION64_PATH"], "")

    def test_exit_codes_of_the_command(self):
        environment = clean_environment()
        rows = [("its own code", ["sh", "-c", "exit 3"], 3),
                ("128 + the signal that ended it", ["sh", "-c", "kill -TERM $$"], 128 + signal.SIGTERM),
                ("127 when it cannot be started", [os.path.join(os.sep, "no", "such", "program")], 127)]
        for what, command, code in rows:
            with self.subTest(what), contextlib.redirect_stderr(io.StringIO()) as stderr:
                self.assertEqual(_record.run_forwarding_signals(command, environment), code)
                self.assertEqual(stderr.getvalue(), "peaklens: cannot run %s.\n" % command[0] if code == 127 else "")

    def test_sigint_to_record_reaches_the_command(self):
        previous = signal.getsignal(signal.SIGINT)
        timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        try:
            code = _record.run_forwarding_signals(["sleep", "20"], clean_environment())
        finally:
            timer.cancel()
        self.assertEqual(code, 128 + signal.SIGINT)
        self.assertIs(signal.getsignal(signal.SIGINT), previous, "record's handler is taken off again")


STANDIN_DIR = os.environ.get("PEAKLENS_TEST_STANDIN_DIR")
BIN_DIR = os.environ.get("PEAKLENS_TEST_BIN_DIR")


@unittest.skipUnless(STANDIN_DIR and BIN_DIR, "the CUDA stand-ins are not built (PEAKLENS_TEST_STANDIN_DIR, "
                                              "PEAKLENS_TEST_BIN_DIR)")
class StandinRecordTest(unittest.TestCase):
    """The real collector under python -m peaklens record, with the stand-in driver, runtime
    and CUPTI first on the library path (tests/plugins/cupti/standin)."""

    def setUp(self):
        self.trainer = os.path.join(BIN_DIR, "peaklens-test-trainer")
        for path in (self.trainer, os.path.join(BIN_DIR, COLLECTOR), os.path.join(STANDIN_DIR, "libcuda.so.1")):
            self.assertTrue(os.path.exists(path), path + " is missing: build the tests")
        scratch = tempfile.TemporaryDirectory()
        self.addCleanup(scratch.cleanup)
        self.out = os.path.join(scratch.name, "traces")
        self.environment = clean_environment(LD_LIBRARY_PATH=STANDIN_DIR, PEAKLENS_PLUGIN_DIR=BIN_DIR,
                                             PYTHONPATH=HELPER)

    def record(self, *command, allocator="exact"):
        return run([PYTHON, "-m", "peaklens", "record", "--allocator", allocator, "--out", self.out, "--", *command],
                   env=self.environment)

    def test_four_ranks_leave_four_traces(self):
        result = self.record(self.trainer, "--steps", "2", "--ranks", "4")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.splitlines()[-1],
                         "recorded 4 trace file(s) in %s; the command exited with 0" % self.out)
        traces = sorted(name for name in os.listdir(self.out) if name.endswith(".peaklens"))
        self.assertEqual(len(traces), 4, traces)
        for rank, name in enumerate(traces):
            self.assertRegex(name, r"\Arank%d-pid\d+\.peaklens\Z" % rank)
        self.assertEqual([name for name in os.listdir(self.out) if name.endswith(("-wal", "-shm"))], [],
                         "every trace was closed")

    def test_the_command_sees_what_peaklens_cli_record_gives_it(self):
        cli = os.path.join(BIN_DIR, "peaklens-cli")
        if not os.access(cli, os.X_OK):
            self.skipTest("peaklens-cli is not built")
        names = ["CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH", "PEAKLENS_OUT", "PEAKLENS_COMMAND", "PEAKLENS_CWD",
                 "PEAKLENS_ALLOCATOR", "PYTORCH_NO_CUDA_MEMORY_CACHING", "PYTORCH_CUDA_ALLOC_CONF"]
        show = [PYTHON, "-c", "import json, os, sys; print(json.dumps({n: os.environ.get(n) for n in sys.argv[1:]}))",
                *names]
        for allocator in ("exact", "async"):
            with self.subTest(allocator):
                ours = self.record(*show, allocator=allocator)
                theirs = run([cli, "record", "--allocator", allocator, "--out", self.out, "--", *show],
                             env=self.environment)
                self.assertEqual(ours.returncode, 0, ours.stderr)
                self.assertEqual(theirs.returncode, 0, theirs.stderr)
                self.assertEqual(ours.stdout, theirs.stdout)
                seen = json.loads(ours.stdout.splitlines()[0])
                self.assertEqual(seen["CUDA_INJECTION64_PATH"], os.path.join(BIN_DIR, COLLECTOR))
                self.assertTrue(seen["NVTX_INJECTION64_PATH"].startswith(STANDIN_DIR), seen)

    def test_a_command_ended_by_a_signal(self):
        result = self.record("sh", "-c", "kill -TERM $$")
        self.assertEqual(result.returncode, 128 + signal.SIGTERM)
        self.assertEqual(result.stdout, "recorded 0 trace file(s) in %s; the command exited with %d\n"
                         % (self.out, 128 + signal.SIGTERM))


if __name__ == "__main__":
    unittest.main()

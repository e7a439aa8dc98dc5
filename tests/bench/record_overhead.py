#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What recording costs a training script: its step times run plainly against the same
script under `peaklens-cli record --backend torch`, alternated run by run so that the
machine's drift falls on both. A benchmark, never a test.

    tests/bench/record_overhead.py [--runs 5] [--steps 12] [--build build] [SCRIPT ARGS...]

Defaults to examples/train_small.py and examples/train_resnet.py on the CPU. Both runs
use the helper (the plain run's ranges go nowhere); the first step of each run is warm-up
and left out. Prints, per script, the median step time of each mode with the range of the
runs' medians, and the recorded run's overhead.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir))
STEP = re.compile(r"step (\d+) loss [-0-9.naninf]+ \(([0-9.]+) ms\)")


def python_with_torch(build):
    """The interpreter run.sh set up, from the build's cache."""
    with open(os.path.join(build, "CMakeCache.txt"), encoding="utf-8") as cache:
        for line in cache:
            if line.startswith("PEAKLENS_PYTHON:FILEPATH="):
                return line.split("=", 1)[1].strip()
    sys.exit("record_overhead.py: the build has no PEAKLENS_PYTHON; build with ./run.sh first.")


def step_times(output):
    """The steps' milliseconds as the example scripts print them, the first left out."""
    times = [float(match.group(2)) for match in STEP.finditer(output)]
    return times[1:]


def run(command, environment):
    result = subprocess.run(command, capture_output=True, text=True, env=environment)
    if result.returncode != 0:
        sys.exit(f"record_overhead.py: {' '.join(command)} failed:\n{result.stderr[-2000:]}")
    return step_times(result.stdout)


def measure(cli, python, script, runs):
    environment = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "plugins", "python"))
    environment.pop("PEAKLENS_CHECKPOINT", None)
    plain, recorded = [], []
    with tempfile.TemporaryDirectory() as scratch:
        for index in range(runs):
            plain.append(statistics.median(run([python, *script], environment)))
            out = os.path.join(scratch, "run%d" % index)
            recorded.append(statistics.median(run([cli, "record", "--backend", "torch", "--out", out, "--", python,
                                                   *script], environment)))
    return plain, recorded


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("script", nargs=argparse.REMAINDER)
    arguments = parser.parse_args()
    python = python_with_torch(arguments.build)
    cli = os.path.join(arguments.build, "bin", "peaklens-cli")
    scripts = [arguments.script] if arguments.script else [
        [os.path.join(ROOT, "examples", name), "--device", "cpu", "--steps", str(arguments.steps)]
        for name in ("train_small.py", "train_resnet.py")]
    print(f"{'script':<18} {'plain ms (runs)':>26} {'recorded ms (runs)':>26} {'overhead':>9}")
    for script in scripts:
        plain, recorded = measure(cli, python, script, arguments.runs)
        base, with_record = statistics.median(plain), statistics.median(recorded)
        print(f"{os.path.basename(script[0]):<18} {base:>9.2f} ({min(plain):.2f}…{max(plain):.2f}) "
              f"{with_record:>9.2f} ({min(recorded):.2f}…{max(recorded):.2f}) {100 * (with_record / base - 1):>+8.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())

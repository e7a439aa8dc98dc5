#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Hostile-input pass over the CLI and the app: every class of input that once crashed,
hung, ran out of memory or lost data, generated here, run with a time and memory watch.

Each run must end within 10 s with at most 2 GiB resident, exit 0 or 2, and when it
fails print one line that names its file; outputs must be valid UTF-8 (JSON that
parses), and no input may change. Prints one table row per class of input:

    tests/bench/attack.py [--build build] [--mutants 150] [--out attack.md]
"""
import argparse
import json
import os
import pickle
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data")
SAMPLE = os.path.join(ROOT, "resources", "samples", "training-step.peaklens")
LIMIT_S = 10
QT_NOISE = ("QStandardPaths:", "This plugin does not support")
LIMIT_RSS_KB = 2 * 1024 * 1024


def run(argv, stdin=None, env=None, timeout=LIMIT_S + 5, file_limit=None):
    """Runs argv (under `ulimit -f` of file_limit bytes when given); returns (rc, seconds, max RSS in KB, stdout, stderr)."""
    start = time.monotonic()
    limit = (lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (file_limit, file_limit))) if file_limit else None
    process = subprocess.Popen(argv, stdin=stdin if stdin is not None else subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, preexec_fn=limit)
    out = []
    readers = [threading.Thread(target=lambda s=s: out.append((s, s.read()))) for s in (process.stdout, process.stderr)]
    for reader in readers:
        reader.start()
    killed = False
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - start > timeout:
            process.kill()
            killed = True
        time.sleep(0.005)
    for reader in readers:
        reader.join()
    streams = dict(out)
    rc = -9 if killed else (os.waitstatus_to_exitcode(status))
    return rc, time.monotonic() - start, usage.ru_maxrss, streams[process.stdout], streams[process.stderr]


def escaped(path):
    """A path as PeakLens prints it: bytes that are not UTF-8 as \\xHH."""
    raw = os.fsencode(path)
    text = raw.decode("utf-8", errors="surrogateescape")
    return "".join("\\x%02X" % (ord(c) - 0xDC00) if 0xDC80 <= ord(c) <= 0xDCFF else c for c in text)


class Verdicts:
    def __init__(self):
        self.rows = defaultdict(Counter)
        self.slowest = defaultdict(float)
        self.largest = defaultdict(int)
        self.failures = []

    def judge(self, klass, label, result, names=None, json_out=False, must_fail=False, check=None):
        rc, seconds, rss, out, err = result
        problems = []
        if rc == -9:
            problems.append("hang")
        elif rc < 0 or rc not in (0, 2):
            problems.append("crash rc=%d" % rc)
        if seconds > LIMIT_S:
            problems.append("slow %.1fs" % seconds)
        if rss > LIMIT_RSS_KB:
            problems.append("rss %d MiB" % (rss // 1024))
        # Qt's own notes about the headless platform are not PeakLens's output.
        lines = [l for l in err.decode("utf-8", errors="replace").strip().splitlines()
                 if not l.startswith(QT_NOISE)]
        if rc == 2:
            if len(lines) != 1:
                problems.append("%d error lines" % len(lines))
            elif names and not any(escaped(n) in lines[0] for n in names):
                problems.append("error does not name the file")
        if must_fail and rc == 0:
            problems.append("accepted")
        try:
            text = out.decode("utf-8")
            if json_out and rc == 0:
                json.loads(text)
        except (UnicodeDecodeError, ValueError) as error:
            problems.append("bad output: %s" % str(error)[:60])
        if check:
            extra = check()
            if extra:
                problems.append(extra)
        self.slowest[klass] = max(self.slowest[klass], seconds)
        self.largest[klass] = max(self.largest[klass], rss)
        outcome = "exit %d" % rc if not problems else "FAIL"
        self.rows[klass][outcome] += 1
        if problems:
            self.failures.append((klass, label, problems, (lines[:2] if lines else [])))
        return not problems

    def table(self):
        out = ["| class of input | tried | outcomes | slowest | largest RSS |", "| --- | ---: | --- | ---: | ---: |"]
        for klass, counts in self.rows.items():
            total = sum(counts.values())
            outcomes = ", ".join("%s: %d" % (k, v) for k, v in sorted(counts.items()))
            slowest = "%.2f s" % self.slowest[klass] if klass in self.slowest else "-"
            largest = "%d MiB" % (self.largest[klass] // 1024) if klass in self.largest else "-"
            out.append("| %s | %d | %s | %s | %s |" % (klass, total, outcomes, slowest, largest))
        return "\n".join(out)


def valid_json_file(path):
    if not os.path.exists(path):
        return None
    try:
        json.loads(open(path, "rb").read().decode("utf-8"))
        return None
    except (UnicodeDecodeError, ValueError) as error:
        return "report is not valid JSON: %s" % str(error)[:60]


def fixtures():
    names = ["snapshot.json", "snapshot_p4.pickle", "snapshot_p2.pickle", "kineto.pt.trace.json",
             "memory_timeline.json", "modelled-step.pltxt", "snapshot_p5.pickle.gz", "kineto.pt.trace.json.gz"]
    return [os.path.join(DATA, n) for n in names] + [SAMPLE]


def mutate(data, rng):
    data = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        kind = rng.random()
        at = rng.randrange(len(data)) if data else 0
        if kind < 0.4 and data:
            data[at] = rng.randrange(256)
        elif kind < 0.6:
            data[at:at] = bytes(rng.choice([b"\xff", b"\xc3", b"\x1b[2J", b"\xe2\x80\xae", b"\x00", b"9" * 20, b"-1"]))
        elif kind < 0.9 and data:
            del data[at:at + rng.randint(1, 64)]
        else:
            data = data[:at]
    return bytes(data)


def native_variant(work, name, sql):
    path = os.path.join(work, name + ".peaklens")
    shutil.copy(SAMPLE, path)
    # In a child: a large script would grow this process, and the children forked from it
    # after would report its size as their own peak resident memory.
    subprocess.run([sys.executable, "-c", "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.executescript(sys.argv[2]); db.close()",
                    path, sql], check=True)
    return path


def shared_pickles(work):
    snapshot = json.load(open(os.path.join(DATA, "snapshot.json")))
    entry = dict(snapshot["device_traces"][0][1])
    shared = [entry] * 100000
    traces = dict(snapshot, device_traces=[shared] * 1000)
    segment = dict(snapshot["segments"][0])
    segment["blocks"] = [dict(segment["blocks"][0])] * 100000 if segment.get("blocks") else []
    segments = dict(snapshot, segments=[segment] * 1000)
    paths = []
    for name, value in (("shared-traces", traces), ("shared-segments", segments)):
        path = os.path.join(work, name + ".pickle")
        with open(path, "wb") as f:
            pickle.dump(value, f, protocol=4)
        paths.append(path)
    return paths


def deep_kineto(work, depth, name_bytes):
    events = []
    for d in range(depth):
        events.append({"ph": "X", "cat": "python_function", "name": "nn.Module: %s_%d" % ("m" * name_bytes, d),
                       "pid": 1, "tid": 1, "ts": d, "dur": 2 * depth - 2 * d})
    events.append({"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "ts": depth,
                   "s": "t", "args": {"Addr": 1, "Bytes": 64, "Total Allocated": 64, "Total Reserved": 64,
                                      "Device Type": 1, "Device Id": 0}})
    path = os.path.join(work, "deep-%d.pt.trace.json" % depth)
    json.dump({"traceEvents": events}, open(path, "w"))
    return path


def deep_text(work, count):
    path = os.path.join(work, "deep.pltxt")
    with open(path, "w") as f:
        for i in range(count):
            f.write("layer " + ".".join("m%d" % j for j in range(1000)) + "_%d\n" % i)
        f.write("alloc a 8\n")
    return path


def unchanged_except(folder, allowed=()):
    """A check: every file in `folder` (but `allowed`) has the bytes it had when this was called."""
    def state():
        found = {}
        for name in sorted(os.listdir(folder)):
            path = os.path.join(folder, name)
            if name in allowed:
                continue
            found[name] = open(path, "rb").read() if os.path.isfile(path) and not os.path.islink(path) else os.readlink(path) if os.path.islink(path) else "special"
        return found
    before = state()
    return lambda: None if state() == before else "a file changed: %s" % sorted(
        k for k in set(before) | set(state()) if before.get(k) != state().get(k))


def files_outputs_and_reruns(work, cli, app, verdicts):
    """The inputs and outputs that lost data or crashed the app: empty traces, damaged chunks and
    totals, a table of millions of rows, a followed file replaced, the file-size limit, existing
    outputs, FIFOs, links, sizes that cannot be painted, option errors, no display."""
    headless = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    folder = os.path.join(work, "outputs")
    os.mkdir(folder)
    at = lambda name: os.path.join(folder, name)

    # Traces with no memory at all.
    with open(at("empty.pickle"), "wb") as f:
        pickle.dump({"segments": [], "device_traces": [[]]}, f, protocol=2)
    open(at("oom.pltxt"), "w").write("oom 1048576\n")
    run([cli, "convert", at("empty.pickle"), at("empty.peaklens")])
    for name in ("empty.pickle", "empty.peaklens", "oom.pltxt"):
        path = at(name)
        for argv, env in (([cli, "summary", "--json", path], None), ([cli, "info", path], None),
                          ([app, "--screenshot", at(name + ".png"), path], headless),
                          ([app, "--tab", "allocator", "--screenshot", at(name + "-allocator.png"), path], headless),
                          ([app, "--export-report", at(name + ".pdf"), path], headless)):
            result = run(argv, env=env)
            verdicts.judge("empty and out-of-memory-only traces (CLI, app, report)", name, result, names=[path],
                           json_out="--json" in argv, check=lambda r=result: None if r[0] == 0 else "refused")

    # Damaged chunk numbering and running totals: one verdict from every command.
    for name, sql in (("chunk-5", "UPDATE events SET chunk = -5 WHERE chunk = (SELECT max(chunk) FROM events);"),
                      ("chunk-gap", "UPDATE events SET chunk = chunk + 7;"),
                      ("empty-totals", "UPDATE events SET totals = x'';")):
        path = native_variant(folder, name, sql)
        check = unchanged_except(folder, allowed=("out.peaklens", "out.html", "out.pdf"))
        for argv, env in (([cli, "info", path], None), ([cli, "summary", "--json", path], None),
                          ([cli, "plan", path, "--strategy", "all"], None), ([cli, "convert", path, at("out.peaklens")], None),
                          ([cli, "report", path, "-o", at("out.html")], None), ([app, "--export-report", at("out.pdf"), path], headless)):
            verdicts.judge("damaged chunk numbers and running totals", name, run(argv, env=env), names=[path], must_fail=True,
                           check=check)

    # A followed file another is moved over.
    live = at("live.peaklens")
    live_writer = os.path.join(os.path.dirname(cli), "peaklens-test-livewriter")
    if os.path.exists(live_writer):
        writer = subprocess.Popen([live_writer, SAMPLE, live, "--commit-every", "200", "--pause-ms", "50"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while not os.path.exists(live):
            time.sleep(0.01)
        watch = threading.Thread(target=lambda: results.append(run([cli, "watch", live, "--interval", "20"], timeout=30)))
        results = []
        watch.start()
        time.sleep(1)
        shutil.copy(SAMPLE, at("other.peaklens"))
        os.rename(at("other.peaklens"), live)
        watch.join()
        writer.kill()
        writer.wait()
        verdicts.judge("a followed file replaced under watch", "live.peaklens", results[0], names=[live], must_fail=True,
                       check=lambda: None if b"was replaced" in results[0][4] else "not noticed")

    # The file-size limit: one sentence, no partial file, no SIGXFSZ.
    replay = os.path.join(os.path.dirname(cli), "peaklens-replay")
    limited = [([cli, "convert", SAMPLE, at("limited.peaklens")], None), ([cli, "report", SAMPLE, "--table", "events", "-o", at("limited.csv")], None),
               ([app, "--export-report", at("limited.html"), SAMPLE], headless)]
    if os.path.exists(replay):
        limited.append(([replay, "--model", "mlp", "--layers", "2", "--steps", "2", "--progress", "none", "--out", at("limited-replay.peaklens")], None))
    for argv, env in limited:
        check = unchanged_except(folder)
        verdicts.judge("ulimit -f 100 KiB (convert, report, app, replay --out)", argv[0], run(argv, env=env, file_limit=100 * 1024, timeout=60),
                       must_fail=True, check=check)

    # Outputs that exist, are FIFOs or links to the input, sizes that cannot be painted.
    shutil.copy(os.path.join(DATA, "modelled-step.pltxt"), at("input.pltxt"))
    os.symlink("input.pltxt", at("link.png"))
    os.link(at("input.pltxt"), at("hard.png"))
    os.mkfifo(at("fifo.png"))
    os.mkfifo(at("fifo.html"))
    open(at("existing.png"), "wb").write(b"the user's picture")
    open(at("existing.html"), "wb").write(b"the user's page")
    source = at("input.pltxt")
    for argv, env in (([app, "--screenshot", source, source], headless), ([app, "--screenshot", at("link.png"), source], headless),
                      ([app, "--screenshot", at("hard.png"), source], headless), ([app, "--screenshot", at("existing.png"), source], headless),
                      ([app, "--screenshot", at("fifo.png"), source], headless), ([app, "--screenshot", at("notes.txt"), source], headless),
                      ([app, "--size", "100000x100000", "--screenshot", at("new.png"), source], headless),
                      ([app, "--export-report", at("existing.html"), source], headless), ([cli, "report", source, "-o", at("existing.html")], None),
                      ([cli, "report", source, "-o", at("fifo.html")], None), ([cli, "convert", source, at("link.png"), "--force"], None)):
        check = unchanged_except(folder)
        verdicts.judge("existing outputs, FIFOs, links, the input, huge sizes", " ".join(argv[1:3]), run(argv, env=env), must_fail=True,
                       check=check)

    # Option errors and no display.
    for argv in ([cli, "summary", SAMPLE, "--top", "0"], [cli, "watch", SAMPLE, "--for", "nan"], [cli, "watch", SAMPLE, "--for=-1"],
                 [cli, "bogus"], [app, "--nope"]):
        result = run(argv, env=headless)
        verdicts.judge("option errors", " ".join(argv[1:]), result, must_fail=True,
                       check=lambda r=result: None if r[4].startswith(b"peaklens") else "no prefix")
    for argv in ([app, "--help"], [app, "--version"], [app, "--export-report", at("headless.pdf"), SAMPLE]):
        result = run(argv, env=headless, timeout=60)
        verdicts.judge("no display, no QT_QPA_PLATFORM", argv[1], result, check=lambda r=result: None if r[0] == 0 else "refused")

    # Two million rows in steps: within the load budget, 512 MiB + 16 bytes per input byte.
    # Last: parsing its output grows this process, and children forked after report its size.
    steps = native_variant(folder, "steps", "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000000) "
                                            "INSERT INTO steps SELECT i + 100, i * 1000, i * 1000 + 500 FROM n;")
    budget_kb = (512 * 1024 * 1024 + 16 * os.path.getsize(steps)) // 1024
    result = run([cli, "summary", "--json", steps], timeout=60)
    verdicts.judge("2,000,000 rows in steps (summary --json)", "steps", result, names=[steps], json_out=True,
                   check=lambda r=result: None if r[2] <= budget_kb else "rss %d MiB over the budget %d MiB" % (r[2] // 1024, budget_kb // 1024))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--mutants", type=int, default=150, help="byte mutants per fixture")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", help="also write the table here")
    args = parser.parse_args()
    cli = os.path.join(args.build, "bin", "peaklens-cli")
    app = os.path.join(args.build, "bin", "peaklens")
    app_env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    rng = random.Random(args.seed)
    verdicts = Verdicts()
    work = tempfile.mkdtemp(prefix="peaklens-attack-")

    # Byte mutants of every fixture, through summary --json (the strictest output).
    for fixture in fixtures():
        data = open(fixture, "rb").read()
        base = os.path.basename(fixture)
        for i in range(args.mutants):
            path = os.path.join(work, "m%d-%s" % (i, base))
            open(path, "wb").write(mutate(data, rng))
            verdicts.judge("byte mutants of the fixtures", path, run([cli, "summary", "--json", path]),
                           names=[path], json_out=True)
            os.unlink(path)

    # Names that are not valid UTF-8 or hold controls and bidi overrides, and such paths.
    text = open(os.path.join(DATA, "modelled-step.pltxt"), "rb").read()
    hostile = [b"\xff\xfe", b"caf\xe9", b"\x1b[31mred", b"evil\xe2\x80\xaetxt.exe", b"\xed\xa0\x80", b"a\x00b"]
    for i, bad in enumerate(hostile):
        for target in (b"blocks.0", b"kind=Block", b"modelled CUDA device"):
            path = os.path.join(work, "names-%d.pltxt" % i)
            open(path, "wb").write(text.replace(target, target[:2] + bad + target[2:], 1))
            verdicts.judge("hostile names (summary --json, report .json)", path, run([cli, "summary", "--json", path]),
                           names=[path], json_out=True)
            verdicts.judge("hostile names (summary --json, report .json)", path,
                           run([cli, "report", path, "-o", path + ".json"]), names=[path],
                           check=lambda p=path + ".json": valid_json_file(p))
    for raw in (b"caf\xe9.pickle", b"\x1b]0;x\x07.pickle", b"\xe2\x80\xaelmth.pickle"):
        path = os.path.join(os.fsencode(work), raw)
        shutil.copy(os.path.join(DATA, "snapshot_p4.pickle"), path)
        verdicts.judge("odd file names", raw, run([cli, "summary", "--json", path]), json_out=True)
        verdicts.judge("odd file names", raw, run([app, "--export-report", os.path.join(work, "odd.html"), path], env=app_env))

    # Pipes, FIFOs, devices.
    for fixture in fixtures():
        with open(fixture, "rb") as f:
            verdicts.judge("pipes (/dev/stdin)", fixture, run([cli, "summary", "--json", "/dev/stdin"], stdin=f), json_out=True)
    fifo = os.path.join(work, "idle.fifo")
    os.mkfifo(fifo)
    for argv in ([cli, "summary", fifo], [app, "--screenshot", os.path.join(work, "x.png"), fifo]):
        verdicts.judge("FIFO, /dev/zero, /dev/null, a directory", fifo, run(argv, env=app_env), names=[fifo], must_fail=True)
    for special in ("/dev/zero", "/dev/null", work):
        verdicts.judge("FIFO, /dev/zero, /dev/null, a directory", special, run([cli, "summary", special]), names=[special],
                       must_fail=True)

    # Native files that would run their own SQL.
    crafted = {
        "generated": "ALTER TABLE steps ADD COLUMN pad BLOB GENERATED ALWAYS AS (zeroblob(1000000000)) VIRTUAL;",
        "generated-events": "ALTER TABLE events ADD COLUMN pad BLOB GENERATED ALWAYS AS (zeroblob(count * 100000)) VIRTUAL;",
        "view": "CREATE VIEW v AS SELECT * FROM events, events, events;",
        "trigger": "CREATE TRIGGER t AFTER INSERT ON steps BEGIN DELETE FROM events; END;",
        "expression-index": "CREATE INDEX i ON steps(number * t_begin_ns);",
        "check": "DROP TABLE markers; CREATE TABLE markers(t_ns INTEGER NOT NULL, lane INTEGER NOT NULL, kind TEXT NOT NULL, bytes INTEGER NOT NULL CHECK(bytes > 0));",
        "wal-no-shm": "PRAGMA journal_mode=WAL;",
    }
    for name, sql in crafted.items():
        path = native_variant(work, name, sql)
        before = sorted(os.listdir(work))
        verdicts.judge("native files with their own SQL", path, run([cli, "summary", "--json", path]), names=[path],
                       json_out=True, must_fail=name != "wal-no-shm",
                       check=lambda b=before: None if sorted(os.listdir(work)) == b else "wrote beside the input")

    # Crafted sizes: memo-shared pickles, deep module spans, deep dotted paths.
    for path in shared_pickles(work) + [deep_kineto(work, 1000, 4000), deep_text(work, 2000)]:
        for argv, env in (([cli, "summary", "--json", path], None), ([app, "--screenshot", os.path.join(work, "y.png"), path], app_env)):
            verdicts.judge("crafted sizes (shared memo, deep nesting)", path, run(argv, env=env), names=[path], must_fail=True)

    # Outputs: onto an input, a device, races, stale temporaries, long names.
    copy = os.path.join(work, "input.html")
    shutil.copy(SAMPLE, copy)
    original = open(copy, "rb").read()
    unchanged = lambda: None if open(copy, "rb").read() == original else "input changed"
    verdicts.judge("outputs that must not be written", copy, run([app, "--export-report", copy, copy], env=app_env),
                   names=[copy], must_fail=True, check=unchanged)
    verdicts.judge("outputs that must not be written", copy, run([cli, "report", copy, "-o", copy]), names=[copy],
                   must_fail=True, check=unchanged)
    verdicts.judge("outputs that must not be written", copy, run([cli, "convert", copy, copy, "--force"]), names=[copy],
                   must_fail=True, check=unchanged)
    verdicts.judge("outputs that must not be written", "/dev/null", run([cli, "convert", SAMPLE, "/dev/null", "--force"]),
                   names=["/dev/null"], must_fail=True,
                   check=lambda: None if os.path.exists("/dev/null") and not os.path.isfile("/dev/null") else "/dev/null replaced")
    for attempt in range(10):
        target = os.path.join(work, "race-%d.peaklens" % attempt)
        processes = [subprocess.Popen([cli, "convert", SAMPLE, target], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                     for _ in range(2)]
        codes = sorted(p.wait() for p in processes)
        verdicts.rows["two converts racing to one new file"]["one wins" if codes == [0, 2] else "FAIL %s" % codes] += 1
    stale = os.path.join(work, "stale.peaklens")
    for pid in (4000001, 4000002):
        open(stale + ".partial-%d-0" % pid, "wb").write(b"x" * 1024)
    verdicts.judge("outputs that must not be written", stale, run([cli, "convert", SAMPLE, stale]),
                   check=lambda: None if not [n for n in os.listdir(work) if n.startswith("stale.peaklens.")] else "stale left")
    long_name = os.path.join(work, "n" * 246 + ".peaklens")
    verdicts.judge("outputs that must not be written", long_name, run([cli, "convert", SAMPLE, long_name]),
                   check=lambda: None if os.path.exists(long_name) else "not written")

    # A full disk: a 512 KiB tmpfs with 500 KiB taken (needs the right to mount, else skipped).
    full = os.path.join(work, "full")
    os.mkdir(full)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", full], capture_output=True).returncode == 0:
        open(os.path.join(full, "filler"), "wb").write(b"x" * 500 * 1024)
        empty = lambda: None if os.listdir(full) == ["filler"] else "left %s" % os.listdir(full)
        for out, argv in ((os.path.join(full, "out.peaklens"), [cli, "convert", SAMPLE]),
                          (os.path.join(full, "out.csv"), [cli, "report", SAMPLE, "--table", "events", "-o"]),
                          (os.path.join(full, "out.pdf"), [app, "--export-report"])):
            argv = argv + [out] + ([SAMPLE] if argv[0] == app else [])
            verdicts.judge("a full disk", out, run(argv, env=app_env), names=[out], must_fail=True, check=empty)
        subprocess.run(["umount", full])

    # Smaller: byte-order marks, trailing bytes, times that overflow, escapes.
    for fixture in ("snapshot.json", "kineto.pt.trace.json", "memory_timeline.json", "modelled-step.pltxt"):
        path = os.path.join(work, "bom-" + fixture)
        open(path, "wb").write(b"\xef\xbb\xbf" + open(os.path.join(DATA, fixture), "rb").read())
        verdicts.judge("byte-order marks, trailing bytes, overflowing times", path, run([cli, "summary", "--json", path]),
                       json_out=True, check=lambda: None)
    for fixture in ("kineto.pt.trace.json", "snapshot_p4.pickle"):
        path = os.path.join(work, "trailing-" + fixture)
        open(path, "wb").write(open(os.path.join(DATA, fixture), "rb").read() + b"GARBAGE")
        result = run([cli, "summary", path])
        verdicts.judge("byte-order marks, trailing bytes, overflowing times", path, result,
                       check=lambda r=result: None if b"were ignored" in r[3] else "no warning")
    for body in (b"alloc a 8\nt=9223372036854775807ns free a\n", b"alloc a 8\n+17280000s free a\n",
                 b"begin step 0\nt=9000000000000000000ns end step 0\n", b"kernel a%1B[2Jb 3us\n"):
        path = os.path.join(work, "numbers.pltxt")
        open(path, "wb").write(body)
        result = run([cli, "summary", "--json", path])
        verdicts.judge("byte-order marks, trailing bytes, overflowing times", body[:30], result, names=[path], json_out=True,
                       check=lambda r=result: "raw ESC in output" if b"\x1b" in r[3] else None)

    files_outputs_and_reruns(work, cli, app, verdicts)

    shutil.rmtree(work, ignore_errors=True)
    table = verdicts.table()
    print(table)
    for klass, label, problems, lines in verdicts.failures[:40]:
        print("FAIL", klass, "|", label, "|", "; ".join(problems), "|", " / ".join(lines))
    if args.out:
        open(args.out, "w").write(table + "\n")
    return 1 if verdicts.failures or any(k.startswith("FAIL") for c in verdicts.rows.values() for k in c) else 0


if __name__ == "__main__":
    sys.exit(main())

# SPDX-License-Identifier: Apache-2.0
"""The figures of tests/gpu/acceptance.sh: reads what the runs left, compares, and writes
the rows of its summary table (step, figure, measured, reference, goal, verdict) as tab-
separated lines; `table` prints them and writes summary.tsv and summary.json. Standard
library only, so any python3 runs it.

    figures.py get FILE.json KEY[.KEY...] [--join SEP] [--default VALUE]
    figures.py stamp STAMPS.tsv < lines           # copies stdin to stdout, each line timed
    figures.py steptimes LOG [--stamps STAMPS.tsv] [--skip N] --json OUT
    figures.py --rows ROWS compare|overhead|activation|fixtures ...
    figures.py --rows ROWS table --out DIR --mode gpu|dry-run --timings FILE
"""

import argparse
import gzip
import json
import os
import re
import shutil
import statistics
import sys
import time

VERDICTS_FAILING = ("FAIL", "FAILED")


# ---- small things ---------------------------------------------------------------------


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def dig(obj, key):
    for part in key.split("."):
        if isinstance(obj, list):
            obj = obj[int(part)]
        elif isinstance(obj, dict) and part in obj:
            obj = obj[part]
        else:
            raise KeyError(key)
    return obj


def mib(n):
    if n is None:
        return "-"
    n = float(n)
    if abs(n) >= 2**30:
        return f"{n / 2**30:.3f} GiB"
    if abs(n) >= 2**20:
        return f"{n / 2**20:.2f} MiB"
    if abs(n) >= 2**10:
        return f"{n / 2**10:.1f} KiB"
    return f"{n:.0f} B"


def ms(x):
    return "-" if x is None else f"{x:.2f} ms"


def fmt(value, unit):
    return mib(value) if unit == "bytes" else ms(value) if unit == "ms" else f"{value}"


def change(measured, reference):
    """Signed relative difference in %, or None."""
    if measured is None or reference in (None, 0):
        return None
    return (measured - reference) / reference * 100.0


def signed(p):
    return "n/a" if p is None else f"{p:+.2f} %"


def clean(text):
    return re.sub(r"[\t\r\n]+", " ", str(text)).strip()


def add_row(rows, step, figure, measured, reference, goal, verdict):
    with open(rows, "a") as out:
        out.write("\t".join(clean(x) for x in (step, figure, measured, reference, goal, verdict)) + "\n")


def median_mad(values):
    if not values:
        return None, None
    m = statistics.median(values)
    return m, statistics.median(abs(v - m) for v in values)


# ---- commands -------------------------------------------------------------------------


def cmd_get(args):
    try:
        value = dig(load(args.file), args.key)
    except (KeyError, IndexError, ValueError, OSError):
        if args.default is None:
            sys.exit(f"figures.py: {args.file} has no {args.key}")
        value = args.default
    if value is None and args.default is not None:  # null: as good as missing
        value = args.default
    if isinstance(value, list) and args.join is not None:
        print(args.join.join(str(v) for v in value))
    elif isinstance(value, (dict, list)):
        print(json.dumps(value))
    elif value is None:
        print("null")
    elif isinstance(value, bool):
        print("true" if value else "false")
    else:
        print(value)


def cmd_stamp(args):
    with open(args.file, "w") as stamps:
        for line in sys.stdin:
            stamps.write(f"{time.monotonic():.6f}\t{line.rstrip(chr(10))}\n")
            stamps.flush()
            sys.stdout.write(line)
            sys.stdout.flush()


STEP_TIME = re.compile(r"^step (\d+) time_ms ([0-9.]+)(.*)$")
STEP_DONE = re.compile(r"^step (\d+)\s*$")


def cmd_steptimes(args):
    """A run's step times: the script's own `step N time_ms X` lines (warm-up ones left
    out), else the time between its `step N` lines as they arrived (--stamps), the first
    --skip of those left out."""
    times, source = [], None
    with open(args.log, errors="replace") as f:
        for line in f:
            found = STEP_TIME.match(line.strip())
            if found and "warm-up" not in found.group(3):
                times.append(float(found.group(2)))
    if times:
        source = "the script's own step times"
    elif args.stamps and os.path.exists(args.stamps):
        arrivals = []
        with open(args.stamps, errors="replace") as f:
            for line in f:
                at, _, text = line.rstrip("\n").partition("\t")
                if STEP_DONE.match(text.strip()):
                    arrivals.append(float(at))
        intervals = [(b - a) * 1e3 for a, b in zip(arrivals, arrivals[1:])]
        times = intervals[args.skip:]
        source = "the time between the program's 'step N' lines"
    if not times:
        sys.exit(f"figures.py: no step times in {args.log}")
    median, mad = median_mad(times)
    with open(args.json, "w") as out:
        json.dump({"times_ms": times, "median_ms": median, "mad_ms": mad, "n": len(times), "source": source}, out)


def cmd_compare(args):
    """measured against reference: PASS when within --within % (and at most --at-most)."""
    def number(text):
        return None if text in (None, "", "null", "None") else float(text)

    measured, reference, limit = number(args.measured), number(args.reference), number(args.at_most)
    p = change(measured, reference)
    verdict = "PASS"
    if measured is None or reference is None:
        verdict = "FAILED"
    elif args.within is not None and abs(p) > args.within:
        verdict = "FAIL"
    if limit is not None and measured is not None and measured > limit:
        verdict = "FAIL"
    goal = args.goal or (f"within {args.within:g} %" if args.within is not None else "")
    if limit is not None:
        goal += f"{', ' if goal else ''}at most {fmt(limit, args.unit)}"
    m_text = f"{fmt(measured, args.unit)} ({signed(p)})" + (f" {args.measured_note}" if args.measured_note else "")
    r_text = fmt(reference, args.unit) + (f" {args.reference_note}" if args.reference_note else "")
    add_row(args.rows, args.step, args.figure, m_text, r_text, goal, verdict)


def cmd_overhead(args):
    """Step time under the collector against the same run without it."""
    rec, plain = load(args.record), load(args.plain)
    p = change(rec["median_ms"], plain["median_ms"])
    verdict = "PASS" if p is not None and p <= args.max_pct else "FAIL"
    add_row(args.rows, args.step, args.figure,
            f"recorded {rec['median_ms']:.3f} ms ± {rec['mad_ms']:.3f} (median ± MAD, n {rec['n']}): {signed(p)}",
            f"plain {plain['median_ms']:.3f} ms ± {plain['mad_ms']:.3f} (n {plain['n']})",
            f"at most +{args.max_pct:g} %", verdict)


def cmd_replaytime(args):
    """A replay's step time against the prediction, drift taken out by the pairs: each
    step of the run against the no-toggle step run beside it (--baseline none), the
    median of those differences against the predicted added time."""
    run, predicted = load(args.run), load(args.predicted)
    base = (run.get("baseline") or {}).get("step_times_ms") or []
    mine = run.get("step_times_ms") or []
    pairs = [a - b for a, b in zip(mine, base)]
    added = dig(predicted, "predicted.added_time_ms")
    if not pairs or added is None:
        add_row(args.rows, args.step, args.figure, "FAILED: no paired steps (--baseline none) or no prediction",
                "", "", "FAILED")
        return
    base_median, difference = statistics.median(base), statistics.median(pairs)
    error = (difference - added) / (base_median + added) * 100.0
    add_row(args.rows, args.step, args.figure,
            f"{statistics.median(mine):.2f} ms, {difference:+.2f} ms on the no-toggle step beside it "
            f"(median of {len(pairs)} pairs): {error:+.2f} %",
            f"{added:+.2f} ms predicted, on {base_median:.2f} ms",
            f"within {args.within:g} % of the step", "PASS" if abs(error) <= args.within else "FAIL")


def cmd_mirror(args):
    """Whether checkpoint_reference.py built the replay's model: the parameter bytes of
    each stage against the replay trace's layers."""
    built = load(args.reference)["parameter_bytes"]
    replayed = {layer["name"]: layer.get("parameter_bytes") for layer in load(args.summary).get("layers", [])}
    differ = [path for path, nbytes in built.items() if replayed.get(path) != nbytes]
    add_row(args.rows, args.step, args.figure,
            f"{len(built) - len(differ)} of {len(built)} stages equal, {mib(sum(built.values()))} in all"
            + (f"; differ: {', '.join(differ)}" if differ else ""),
            f"{mib(sum(v for k, v in replayed.items() if k in built and v))} (the replay trace's layers)",
            "every stage equal", "PASS" if not differ and built else "FAIL")


def chain_of(reference):
    chain = reference.get("chain") or []
    return [path for path in chain if path]


def cmd_activation(args):
    """Per chain layer: PeakLens's activation_bytes against PyTorch's saved-tensor count
    (--saved) or, failing that, the manifest (--manifest): a module's "saved_bytes" where
    it has one, else its output's bytes from its shape (4-byte elements). With --saved,
    each layer's output (from the manifest's shapes) must also be no more than measured."""
    summary = load(args.summary)
    measured = {layer["name"]: layer.get("activation_bytes", 0) for layer in summary.get("layers", [])}
    details = {}
    if args.saved:
        saved = load(args.saved)
        chain = chain_of(saved)
        reference = {path: saved["activation_bytes"].get(path, 0) for path in chain}
        lower = {path: saved.get("output_bytes", {}).get(path, 0) for path in chain}
        source = "torch saved-tensor hooks"
    else:
        manifest = load(args.manifest)
        chain = chain_of(manifest)
        shapes = {m["path"]: m.get("output") for m in manifest.get("modules", [])}

        def elements(shape):
            if isinstance(shape, list) and all(isinstance(n, int) for n in shape):
                product = 1
                for n in shape:
                    product *= n
                return product
            return sum(elements(s) for s in shape) if isinstance(shape, list) else 0

        # A module entry may say what its forward keeps ("saved_bytes"); the helper's
        # manifest has shapes only, so its output's bytes (fp32) stand in for that.
        saved_bytes = {m["path"]: m["saved_bytes"] for m in manifest.get("modules", []) if "saved_bytes" in m}
        reference = {path: saved_bytes.get(path, elements(shapes.get(path)) * 4) for path in chain}
        lower = {}
        source = "manifest saved_bytes" if all(p in saved_bytes for p in chain) else "manifest output shapes x 4 B"
    if not chain:
        add_row(args.rows, args.step, args.figure, "FAILED: the manifest names no chain", "", "", "FAILED")
        return
    worst, worst_path, below = 0.0, None, []
    for path in chain:
        got, want = measured.get(path, 0), reference[path]
        p = change(got, want)
        details[path] = {"measured": got, "reference": want, "change_pct": p, "manifest_output_bytes": lower.get(path)}
        if p is None or abs(p) > abs(worst) or worst_path is None:
            worst, worst_path = (p if p is not None else float("inf")), path
        if lower.get(path) and got < lower[path]:
            below.append(path)
    ok = abs(worst) <= args.within and not below
    note = f"; below its output's bytes: {', '.join(below)}" if below else ""
    add_row(args.rows, args.step, args.figure,
            f"total {mib(sum(measured.get(p, 0) for p in chain))} over {len(chain)} layers; "
            f"worst {worst_path} {mib(measured.get(worst_path, 0))} ({signed(worst if worst != float('inf') else None)}){note}",
            f"total {mib(sum(reference.values()))} ({source})",
            f"each within {args.within:g} %" + (", none below its output" if lower else ""),
            "PASS" if ok else "FAIL")
    if args.details:
        with open(args.details, "w") as out:
            json.dump(details, out, indent=1)


FIXTURE_LIMIT = 512 * 1024


def cmd_fixtures(args):
    """Copies the recordings under --limit bytes (gzipped where that helps) into --dest,
    with figures.json and a README naming the scripts and commands that made them."""
    os.makedirs(args.dest, exist_ok=True)
    copied, skipped, figures = [], [], {}
    for spec in args.file:
        source, _, peak = spec.partition("=")
        if not os.path.exists(source):
            skipped.append((os.path.basename(source), "missing"))
            continue
        name = os.path.basename(source)
        target = os.path.join(args.dest, name)
        # PeakLens inflates gzipped JSON and pickles itself; a native trace (SQLite) must
        # be gunzipped first, so it is gzipped only when that makes it fit.
        native = name.endswith(".peaklens")
        if not name.endswith(".gz") and (not native or os.path.getsize(source) > args.limit):
            with open(source, "rb") as src, gzip.GzipFile(target + ".gz", "wb", 9, mtime=0) as dst:
                shutil.copyfileobj(src, dst)
            if os.path.getsize(target + ".gz") < os.path.getsize(source):
                target += ".gz"
            else:
                os.remove(target + ".gz")
                shutil.copyfile(source, target)
        else:
            shutil.copyfile(source, target)
        size = os.path.getsize(target)
        if size > args.limit:
            os.remove(target)
            skipped.append((name, f"{size} bytes, over {args.limit}"))
            continue
        copied.append((os.path.basename(target), size))
        figures[os.path.basename(target)] = {"bytes": size, "torch_max_memory_allocated": int(peak) if peak else None}
    for summary in args.summary:
        name, _, path = summary.partition("=")
        for key in list(figures):
            if key.startswith(name):
                try:
                    figures[key]["peaklens_peak_allocated_bytes"] = dig(load(path), "peak.allocated_bytes")
                except (KeyError, OSError, ValueError):
                    pass
    with open(os.path.join(args.dest, "figures.json"), "w") as out:
        json.dump(figures, out, indent=1)
    with open(os.path.join(args.dest, "README.md"), "w") as out:
        out.write("# Recordings made on a real GPU by tests/gpu/acceptance.sh\n\n")
        out.write(f"Made {time.strftime('%Y-%m-%d %H:%M %Z')} on {args.machine}.\n\n")
        out.write("Candidates for `tests/data/real/` (they are this project's own recordings, not files other\n"
                  "people published: say so if they are committed). Scripts: `tests/gpu/gpt_train.py` (the\n"
                  "training script), `tests/gpu/record_fixtures.py` (PyTorch's own recordings of the same model),\n"
                  "driven by `tests/gpu/acceptance.sh`. Native traces are plain SQLite files (gunzip any `.gz`\n"
                  "copy before opening it).\n\n")
        out.write("| file | bytes | made by |\n|---|---|---|\n")
        for name, size in copied:
            out.write(f"| `{name}` | {size} | {args.made_by.get(name.split('.')[0], args.default_made_by)} |\n")
        if skipped:
            out.write("\nLeft out:\n\n")
            for name, why in skipped:
                out.write(f"- `{name}`: {why}\n")
        out.write("\n`figures.json`: each file's size, torch.cuda.max_memory_allocated() over the recorded steps\n"
                  "where PyTorch reported one, and the peak `peaklens-cli summary --json` read from it.\n\n")
        out.write("Commands:\n\n```\n" + "\n".join(args.command) + "\n```\n")
    total = sum(size for _, size in copied)
    add_row(args.rows, args.step, args.figure, f"{len(copied)} files, {total / 1024:.0f} KiB, in {args.dest}"
            + (f"; left out {', '.join(n for n, _ in skipped)}" if skipped else ""),
            "", f"each at most {args.limit // 1024} KiB", "PASS" if copied and not skipped else "FAIL")


def cmd_table(args):
    rows = []
    if os.path.exists(args.rows):
        with open(args.rows) as f:
            for line in f:
                cells = line.rstrip("\n").split("\t")
                if len(cells) == 6:
                    rows.append(dict(zip(("step", "figure", "measured", "reference", "goal", "verdict"), cells)))
    timings = []
    if args.timings and os.path.exists(args.timings):
        with open(args.timings) as f:
            timings = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    header = ("step", "figure", "measured", "reference", "goal", "verdict")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "summary.tsv"), "w") as out:
        out.write("\t".join(header) + "\n")
        for row in rows:
            out.write("\t".join(row[h] for h in header) + "\n")
    counts = {}
    for row in rows:
        counts[row["verdict"]] = counts.get(row["verdict"], 0) + 1
    with open(os.path.join(args.out, "summary.json"), "w") as out:
        json.dump({"mode": args.mode, "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "machine": args.machine,
                   "verdicts": counts, "timings_s": {t[0]: float(t[1]) for t in timings if len(t) == 2},
                   "rows": rows}, out, indent=1)

    widths = {"step": 4, "figure": 44, "measured": 58, "reference": 40, "goal": 26, "verdict": 19}

    def cut(text, width):
        return text if len(text) <= width else text[:width - 1] + "…"

    def line(cells):
        return " | ".join(cut(cells[h], widths[h]).ljust(widths[h]) for h in header).rstrip()

    print(line({h: h for h in header}))
    print("-+-".join("-" * widths[h] for h in header))
    for row in rows:
        print(line(row))
    print()
    print("verdicts: " + ", ".join(f"{v} {n}" for v, n in sorted(counts.items())))
    if timings:
        print("time per step: " + ", ".join(f"{t[0]} {float(t[1]):.0f} s" for t in timings if len(t) == 2))
    print(f"full rows: {os.path.join(args.out, 'summary.tsv')} and summary.json")
    if any(row["verdict"] in VERDICTS_FAILING for row in rows):
        sys.exit(1)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", help="the rows file (tab-separated)")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("get")
    p.add_argument("file")
    p.add_argument("key")
    p.add_argument("--join")
    p.add_argument("--default")
    p.set_defaults(handler=cmd_get)

    p = sub.add_parser("stamp")
    p.add_argument("file")
    p.set_defaults(handler=cmd_stamp)

    p = sub.add_parser("steptimes")
    p.add_argument("log")
    p.add_argument("--stamps")
    p.add_argument("--skip", type=int, default=1)
    p.add_argument("--json", required=True)
    p.set_defaults(handler=cmd_steptimes)

    def row_arguments(p):
        p.add_argument("--step", required=True)
        p.add_argument("--figure", required=True)

    p = sub.add_parser("compare")
    row_arguments(p)
    p.add_argument("--measured")
    p.add_argument("--reference")
    p.add_argument("--unit", choices=("bytes", "ms", "plain"), default="bytes")
    p.add_argument("--within", type=float)
    p.add_argument("--at-most")
    p.add_argument("--goal")
    p.add_argument("--measured-note")
    p.add_argument("--reference-note")
    p.set_defaults(handler=cmd_compare)

    p = sub.add_parser("overhead")
    row_arguments(p)
    p.add_argument("--record", required=True)
    p.add_argument("--plain", required=True)
    p.add_argument("--max-pct", type=float, default=3.0)
    p.set_defaults(handler=cmd_overhead)

    p = sub.add_parser("replaytime")
    row_arguments(p)
    p.add_argument("--run", required=True)
    p.add_argument("--predicted", required=True)
    p.add_argument("--within", type=float, default=10.0)
    p.set_defaults(handler=cmd_replaytime)

    p = sub.add_parser("mirror")
    row_arguments(p)
    p.add_argument("--reference", required=True)
    p.add_argument("--summary", required=True)
    p.set_defaults(handler=cmd_mirror)

    p = sub.add_parser("activation")
    row_arguments(p)
    p.add_argument("--summary", required=True)
    p.add_argument("--saved")
    p.add_argument("--manifest")
    p.add_argument("--within", type=float, default=2.0)
    p.add_argument("--details")
    p.set_defaults(handler=cmd_activation)

    p = sub.add_parser("fixtures")
    row_arguments(p)
    p.add_argument("--dest", required=True)
    p.add_argument("--file", action="append", default=[], help="PATH[=torch peak bytes]")
    p.add_argument("--summary", action="append", default=[], help="NAME-PREFIX=summary.json")
    p.add_argument("--limit", type=int, default=FIXTURE_LIMIT)
    p.add_argument("--machine", default="")
    p.add_argument("--command", action="append", default=[])
    p.add_argument("--made-by", type=json.loads, default={})
    p.add_argument("--default-made-by", default="")
    p.set_defaults(handler=cmd_fixtures)

    p = sub.add_parser("table")
    p.add_argument("--out", required=True)
    p.add_argument("--mode", required=True)
    p.add_argument("--timings")
    p.add_argument("--machine", default="")
    p.set_defaults(handler=cmd_table)

    args = parser.parse_args(argv)
    if args.command in ("compare", "overhead", "replaytime", "mirror", "activation", "fixtures", "table") and not args.rows:
        parser.error("--rows is needed")
    args.handler(args)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Predicted against measured checkpointing over a grid of models, strategies, dtypes and
micro-batch counts, on this machine's CPU (or a GPU with --device cuda).

For each model x dtype x micro-batches: replay the baseline and keep its trace; for each
toggle set (strategies, the planner at fractions of the measured peak, seeded random
subsets) predict peak and step time with `peaklens-cli plan`, replay with those toggles and
measure. Every planner plan is also replayed with `--memory-limit` set to its budget: the
budget guarantee is that it never runs out of memory. Prints one table row per run and a
summary of the largest errors; --json FILE keeps every row.

A machine's speed drifts over minutes (on a shared CPU by several per cent), and a
prediction is the baseline trace's step time plus what the toggles add. So every rerun is
bracketed by plain reruns of the baseline, and its step-time error is taken against the
prediction moved onto them: the mean of the two bracketing baselines plus the predicted
added time. The error against the baseline trace's own time is kept beside it ("raw").
"none" is rerun like any other set.

The predicted step time carries a spread (the baseline steps' plus the calibration rounds'
of what it adds); "cover" says whether the error is within it and the measured steps'
spread together.

A model is a name below or a model spec, e.g. SPEC.json for TorchScript blocks.

Usage: replay_grid.py [--build DIR] [--models gpt,mlp,cnn] [--dtypes fp32,bf16]
                      [--micro-batches 1,2,3] [--device cpu|cuda] [--json FILE]
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile

MODELS = {
    "gpt": ["--model", "gpt", "--layers", "8", "--d-model", "128", "--heads", "4", "--seq", "128", "--batch", "8"],
    "mlp": ["--model", "mlp", "--layers", "12", "--batch", "512"],
    "cnn": ["--model", "cnn", "--layers", "6"],
    # Sizes outside the tests' and the grid's own.
    "gpt10": ["--model", "gpt", "--layers", "10", "--d-model", "192", "--heads", "4", "--seq", "128", "--batch", "4"],
    "mlp16": ["--model", "mlp", "--layers", "16", "--d-model", "384", "--batch", "512"],
    "cnn8": ["--model", "cnn", "--layers", "8", "--batch", "12"],
}
FRACTIONS = (0.5, 0.7, 0.85)
RANDOM_SUBSETS = 2


def run(command, allow_oom=False):
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0 and not (allow_oom and done.returncode == 3):
        sys.exit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.strip()}")
    return json.loads(done.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build")
    parser.add_argument("--models", default="gpt,mlp,cnn")
    parser.add_argument("--dtypes", default="fp32,bf16")
    parser.add_argument("--micro-batches", default="1,2,3")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--steps", default="5")
    parser.add_argument("--sets", help="only these sets, e.g. sqrt,two-level,plan@50%%")
    parser.add_argument("--json")
    args = parser.parse_args()
    only = set(args.sets.split(",")) if args.sets else None

    pin = []
    if args.device == "cpu":
        # One core, one BLAS thread: idle BLAS threads spinning on a shared core make step
        # times drift by 10 %.
        os.environ.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
        pin = ["taskset", "-c", os.environ.get("BENCH_CORE", str(os.cpu_count() - 1))]
    replay = pin + [os.path.join(args.build, "bin", "peaklens-replay")]
    cli = [os.path.join(args.build, "bin", "peaklens-cli")]
    rows = []
    print(f"{'model':5} {'dtype':5} {'mb':>2} {'set':14} {'pred MiB':>9} {'meas MiB':>9} {'err':>7} "
          f"{'pred ms':>8} {'±':>6} {'meas ms':>8} {'spread':>7} {'err':>7} {'raw':>7} {'cover':>5}  note")
    with tempfile.TemporaryDirectory() as work:
        base_trace = os.path.join(work, "base.peaklens")
        for model in args.models.split(","):
            for dtype in args.dtypes.split(","):
                for mb in args.micro_batches.split(","):
                    config = (MODELS[model] if model in MODELS else ["--model", model]) + ["--dtype", dtype, "--micro-batches", mb, "--device", args.device,
                                              "--steps", args.steps, "--warmup", "2", "--progress", "none", "--json"]
                    base = run(replay + config + ["--checkpoint", "none", "--out", base_trace, "--force"])
                    before = base["step_time_ms"]
                    chain = run(cli + ["plan", base_trace, "--strategy", "none", "--json"])["chain"]["layers"]
                    names = [layer["name"] for layer in chain]
                    sets = [(s, ["--strategy", s]) for s in ("none", "all", "every:2", "every:3", "segments:2", "sqrt")]
                    # Two levels: the first half as one segment whose recompute checkpoints its first half again.
                    half, quarter = max(len(names) // 2, 2), max(len(names) // 4, 1)
                    sets.append(("two-level", ["--strategy", f"{names[0]}..{names[half - 1]}({names[0]}..{names[quarter - 1]})"]))
                    sets += [(f"plan@{int(f * 100)}%", ["--budget", str(int(base["peak_allocated_bytes"] * f))])
                             for f in FRACTIONS]
                    chooser = random.Random(f"{model}/{dtype}/{mb}")
                    for i in range(RANDOM_SUBSETS):
                        subset = [n for n in names if chooser.random() < 0.5] or names[:1]
                        sets.append((f"random{i + 1}", ["--checkpoint", ",".join(subset)]))
                    # Modules inside the layers (selective checkpointing): each layer's part
                    # that frees most, and a random mix of whole layers and parts.
                    parts = [[p for p in layer["parts"] if "." not in p["name"][len(layer["name"]) + 1:]] for layer in chain]
                    largest = [max(ps, key=lambda p: p["saving_bytes"])["name"] for ps in parts if ps]
                    if largest:
                        sets.append(("parts", ["--strategy", ",".join(largest)]))
                        mixed = []
                        for layer, ps in zip(names, parts):
                            pick = chooser.random()
                            if pick < 0.25:
                                mixed.append(layer)
                            elif pick < 0.75 and ps:
                                mixed += sorted(chooser.sample([p["name"] for p in ps], min(len(ps), 1 + (pick > 0.5))),
                                                key=[p["name"] for p in ps].index)
                        sets.append(("parts-random", ["--strategy", ",".join(mixed) or largest[0]]))
                    for label, plan_args in sets:
                        if only and label not in only and label != "none":
                            continue
                        plan = run(cli + ["plan", base_trace, "--json"] + plan_args)
                        toggles = plan["strategy"]
                        measured = run(replay + config + ["--checkpoint", toggles], True)
                        after = run(replay + config + ["--checkpoint", "none"])["step_time_ms"]
                        added = plan["predicted"]["step_time_ms"] - base["step_time_ms"]
                        row = {"model": model, "dtype": dtype, "micro_batches": int(mb), "set": label,
                               "checkpoint": plan["strategy"], "feasible": plan["feasible"],
                               "predicted_bytes": plan["predicted"]["peak_bytes"],
                               "predicted_ms": plan["predicted"]["step_time_ms"],
                               "baseline_ms": base["step_time_ms"],
                               "baselines_beside_ms": [before, after],
                               "predicted_beside_ms": (before + after) / 2 + added,
                               "measured_bytes": measured["peak_allocated_bytes"],
                               "measured_ms": measured["step_time_ms"],
                               "predicted_spread_ms": plan["predicted"]["step_time_spread_ms"],
                               "measured_ms_runs": measured["step_times_ms"]}
                        note = ""
                        if label.startswith("plan@") and plan["feasible"]:
                            budget = int(plan_args[1])
                            limited = run(replay + config + ["--checkpoint", toggles, "--memory-limit", str(budget)], True)
                            row["budget_bytes"] = budget
                            row["budget_held"] = limited["oom"] is None
                            note = "budget held" if row["budget_held"] else "OUT OF MEMORY under the budget"
                        elif label.startswith("plan@"):
                            note = "infeasible: lowest reachable"
                        before = after
                        rows.append(row)
                        pe = (row["predicted_bytes"] - row["measured_bytes"]) / row["measured_bytes"] * 100
                        te = (row["predicted_beside_ms"] - row["measured_ms"]) / row["measured_ms"] * 100
                        raw = (row["predicted_ms"] - row["measured_ms"]) / row["measured_ms"] * 100
                        runs = row["measured_ms_runs"]
                        spread = (max(runs) - min(runs)) / statistics.median(runs) * 100
                        row["peak_error_pct"], row["time_error_pct"], row["time_error_raw_pct"] = pe, te, raw
                        row["spread_pct"] = spread
                        # Covered: the error is within the predicted spread plus half the runs' range.
                        covered = abs(row["predicted_beside_ms"] - row["measured_ms"]) <= (
                            row["predicted_spread_ms"] + (max(runs) - min(runs)) / 2)
                        row["covered"] = covered
                        print(f"{model:5} {dtype:5} {mb:>2} {label:14} {row['predicted_bytes'] / 2**20:9.2f} "
                              f"{row['measured_bytes'] / 2**20:9.2f} {pe:+6.1f}% {row['predicted_beside_ms']:8.1f} "
                              f"{row['predicted_spread_ms']:6.1f} {row['measured_ms']:8.1f} {spread:6.1f}% {te:+6.1f}% "
                              f"{raw:+6.1f}% {'yes' if covered else 'no':>5}  {note}", flush=True)
    peak_errors = [abs(r["peak_error_pct"]) for r in rows]
    time_errors = [abs(r["time_error_pct"]) for r in rows]
    raw_errors = [abs(r["time_error_raw_pct"]) for r in rows]
    drift = [abs(b - a) / a * 100 for r in rows for a, b in [r["baselines_beside_ms"]]]
    held = [r["budget_held"] for r in rows if "budget_held" in r]
    print(f"\n{len(rows)} runs: peak error max {max(peak_errors):.2f} %, median {statistics.median(peak_errors):.2f} %;"
          f" step time error max {max(time_errors):.1f} %, median {statistics.median(time_errors):.1f} %"
          f" (raw: max {max(raw_errors):.1f} %, median {statistics.median(raw_errors):.1f} %;"
          f" bracketing baselines apart by up to {max(drift):.1f} %, median {statistics.median(drift):.1f} %);"
          f" budgets held {sum(held)} of {len(held)};"
          f" step time within its spread {sum(r['covered'] for r in rows)} of {len(rows)}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(rows, out, indent=1)


if __name__ == "__main__":
    main()

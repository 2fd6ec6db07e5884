#!/usr/bin/python3
"""Times one mixed-architecture run (members that differ in `model.hidden`, e.g.
configs/spirals-widths.yaml: 21 architectures x 8 seeds = 168 members) against training the
same architectures as separate runs, one after another, each still a vectorized swarm of its
own seeds: what a user does without per-member architectures.

    /usr/bin/python3 bench/widths.py
    /usr/bin/python3 bench/widths.py --repeats 5 --out runs/widths.csv
    /usr/bin/python3 bench/widths.py --config configs/spirals-widths.yaml --threads 1

One untimed mixed run first (the page cache; its /members/hparams/model.hidden gives the
architectures and how many members each has, in the order of first appearance). Then, per
repeat, the mixed run and the separate runs (the order of the two alternates between repeats):

    turbanet train CONFIG --out mixed.h5 --force -q
    turbanet train CONFIG --set 'model={layers: [L..., {type: dense, units: 2}]}' --set swarm.size=8 --out arch-A.h5 --force -q

where the separate run's model section is the config's, without `hidden`, its hidden dense
layers replaced by one copy of the first of them per entry of the architecture's units (as
model.hidden does). Each process is timed from outside (time.perf_counter around
subprocess.run: whole-process wall time) and by its run file (/meta/train_seconds: the
training loop). The separate runs train members 0..7 of each architecture, not the mixed run's
members (k, k+21, ...): the same work, other seeds, so only time is compared. The medians over
repeats are printed: mixed against the sum of the separate runs, and their ratio taken repeat
by repeat (separate / mixed: > 1 means the mixed run is faster). --out writes every process
as a CSV row. Needs /usr/bin/python3 (h5py, PyYAML).
"""
import argparse
import csv
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter

import h5py
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cpu_info():
    fields = {}
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            k, _, v = line.partition(":")
            fields[k.strip()] = v.strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return (f"{fields.get('Model name', '?')} (family {fields.get('CPU family', '?')}, model {fields.get('Model', '?')}), "
            f"{len(os.sched_getaffinity(0))} cores usable")


def run_once(cmd, out):
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True)
    wall = time.perf_counter() - t0
    with h5py.File(out, "r") as f:
        meta = f["meta"].attrs
        acc = f["eval/test/member_mean"].attrs["accuracy"] if "eval/test/member_mean" in f else float("nan")
        widths = [f[f"params/layer_{i}/W"].shape[2] for i in range(len(f["params"]))] if "params" in f else None
        return {"wall": wall, "train": float(meta["train_seconds"]), "threads": int(meta["threads"]),
                "kernel": str(meta["kernel"]), "accuracy": float(acc), "widths": widths}


def architectures(run_file):
    """[(units tuple, member count)] in the order of first appearance in the run file."""
    with h5py.File(run_file, "r") as f:
        if "members/hparams/model.hidden" not in f:
            raise SystemExit(f"{run_file}: no /members/hparams/model.hidden: the config's members do not differ in model.hidden")
        labels = list(f["members/hparams/model.hidden"].asstr()[:])
    counts = Counter(labels)
    seen = []
    for s in labels:
        if s not in seen:
            seen.append(s)
    return [(tuple(yaml.safe_load(s)), counts[s]) for s in seen]


def separate_model(config_path, units):
    """The config's model section as written, for one architecture: no `hidden`, its hidden
    dense layers (first dense layer to the one before the output) replaced by len(units)
    copies of the first of them."""
    with open(config_path) as fh:
        model = dict((yaml.safe_load(fh) or {}).get("model") or {})
    layers = list(model.get("layers") or [])
    first = next((i for i, l in enumerate(layers) if l.get("type", "dense") == "dense"), len(layers))
    if first >= len(layers) - 1:
        raise SystemExit(f"{config_path}: model.layers has no hidden dense layer to take model.hidden's settings from")
    varying = [k for k, v in model.items() if k != "hidden" and isinstance(v, dict)]
    varying += [f"layers.{i}.{k}" for i, l in enumerate(layers) for k, v in l.items() if isinstance(v, dict)]
    if varying:
        raise SystemExit(f"{config_path}: model.{', model.'.join(varying)} vary per member; "
                         "bench/widths.py handles members that differ in model.hidden only")
    template = dict(layers[first])
    model.pop("hidden", None)
    model["layers"] = layers[:first] + [dict(template, units=u) for u in units] + [layers[-1]]
    return yaml.safe_dump(model, default_flow_style=True, sort_keys=False, width=1 << 20).strip()


def short_path(p):
    """p relative to the working directory when under it (for the printed commands), else absolute."""
    rel = os.path.relpath(p)
    if rel.startswith(".."):
        return os.path.abspath(p)
    return rel if os.sep in rel else os.path.join(".", rel)  # ./turbanet, not a bare name looked up in PATH


def median_range(xs):
    return f"{statistics.median(xs):8.3f} [{min(xs):.3f}, {max(xs):.3f}]"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default=os.path.join(ROOT, "configs", "spirals-widths.yaml"))
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "turbanet"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, help="turbanet --threads (default: its own, all usable cores)")
    ap.add_argument("--out", help="CSV to write, one row per process")
    args = ap.parse_args()
    binary, config = short_path(args.binary), short_path(args.config)
    extra = ["--threads", str(args.threads)] if args.threads else []

    print(f"cpu: {cpu_info()}")
    rows = []
    summary = []
    with tempfile.TemporaryDirectory(prefix="widths-") as tmp:
        mixed_out = os.path.join(tmp, "mixed.h5")
        mixed_cmd = [binary, "train", config, "--out", mixed_out, "--force", "-q", *extra]
        warm = run_once(mixed_cmd, mixed_out)  # warm-up, untimed; gives the architectures
        archs = architectures(mixed_out)
        separate = []
        for a, (units, count) in enumerate(archs):
            out = os.path.join(tmp, f"arch-{a}.h5")
            cmd = [binary, "train", config, "--set", f"model={separate_model(args.config, units)}",
                   "--set", f"swarm.size={count}", "--out", out, "--force", "-q", *extra]
            separate.append((units, count, cmd, out))
        total = sum(c for _, c in archs)
        print(f"config: {config}: {len(archs)} architectures, {total} members; mixed run on {warm['threads']} threads")
        print(f"  mixed kernel: {warm['kernel']}")
        print("commands:")
        print(f"  mixed:    {shlex.join(mixed_cmd)}")
        for units, count, cmd, _ in separate:
            print(f"  {str(list(units)):15} {shlex.join(cmd)}")

        for rep in range(args.repeats):
            def mixed():
                r = run_once(mixed_cmd, mixed_out)
                rows.append({"repeat": rep, "run": "mixed", "hidden": "all", "members": total, **r})
                return r

            def seps():
                out = []
                for units, count, cmd, path in separate:
                    r = run_once(cmd, path)
                    if r["widths"] is not None and r["widths"][:-1] != list(units):
                        raise SystemExit(f"separate run {list(units)} trained hidden widths {r['widths'][:-1]}")
                    rows.append({"repeat": rep, "run": "separate", "hidden": str(list(units)), "members": count, **r})
                    out.append(r)
                return out

            if rep % 2 == 0:
                m = mixed()
                s = seps()
            else:
                s = seps()
                m = mixed()
            sw = sum(r["wall"] for r in s)
            st = sum(r["train"] for r in s)
            summary.append((m["wall"], sw, sw / m["wall"], m["train"], st, st / m["train"]))
            print(f"repeat {rep + 1}/{args.repeats}: wall mixed {m['wall']:.3f} s, separate {sw:.3f} s; "
                  f"train_seconds mixed {m['train']:.3f} s, separate {st:.3f} s; loadavg {os.getloadavg()[0]:.2f}")

    cols = list(zip(*summary))
    print(f"\nmedians over {args.repeats} repeat(s) [min, max]:")
    print(f"{'':34}{'mixed s':>26}{'sum of separate s':>26}{'separate / mixed':>26}")
    print(f"{'whole-process wall':34}{median_range(cols[0]):>26}{median_range(cols[1]):>26}{median_range(cols[2]):>26}")
    print(f"{'/meta/train_seconds':34}{median_range(cols[3]):>26}{median_range(cols[4]):>26}{median_range(cols[5]):>26}")
    n = len(separate)
    print(f"(separate: {n} processes per repeat; their wall minus train_seconds, i.e. start-up, evaluation and "
          f"writing, median {statistics.median(b - e for b, e in zip(cols[1], cols[4])):.3f} s in all, "
          f"mixed {statistics.median(a - d for a, d in zip(cols[0], cols[3])):.3f} s)")

    print(f"\nseparate runs, medians over repeats:\n{'model.hidden':18}{'members':>8}{'wall s':>10}{'train s':>10}")
    for units, count, _, _ in separate:
        mine = [r for r in rows if r["run"] == "separate" and r["hidden"] == str(list(units))]
        print(f"{str(list(units)):18}{count:8d}{statistics.median(r['wall'] for r in mine):10.3f}"
              f"{statistics.median(r['train'] for r in mine):10.3f}")

    if args.out:
        with open(args.out, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["repeat", "run", "hidden", "members", "wall_s", "train_s", "threads", "accuracy_mean", "kernel"])
            for r in rows:
                w.writerow([r["repeat"], r["run"], r["hidden"], r["members"], f"{r['wall']:.6f}", f"{r['train']:.6f}",
                            r["threads"], f"{r['accuracy']:.6f}", r["kernel"]])
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

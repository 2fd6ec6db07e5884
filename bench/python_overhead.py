#!/usr/bin/env python3
"""The Python package's path against the command line on the same config and seed: the run
files compared dataset by dataset (scripts/compare_runs.py; timings and creation time are
process attributes and not compared), and the time, median [min, max] over repeats that
alternate between the two, after one untimed run of each:

- cli: `turbanet train CONFIG --out F` as a process (wall), and its /meta@train_seconds;
- python: `turbaswarm.train(CONFIG, output=F)` in this process (wall of the call), and its
  /meta@train_seconds.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_overhead.py configs/spirals-small.yaml --repeats 7
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import h5py

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def train_seconds(path):
    with h5py.File(path) as f:
        return float(f["meta"].attrs["train_seconds"])


def cli(binary, config, out, extra):
    t0 = time.perf_counter()
    subprocess.run([binary, "train", config, "--out", out, "--force", "-q", *extra], check=True)
    return time.perf_counter() - t0, train_seconds(out)


def python(ts, config, out, overrides):
    t0 = time.perf_counter()
    ts.train(config, output=out, force=True, overrides=overrides)
    return time.perf_counter() - t0, train_seconds(out)


def summary(values):
    return f"{statistics.median(values):.4f} [{min(values):.4f}, {max(values):.4f}]"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("config")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "turbanet"))
    ap.add_argument("--set", action="append", default=[], help="KEY=VALUE, as train --set (both paths)")
    args = ap.parse_args()
    import turbaswarm as ts
    import yaml
    overrides = {k: yaml.safe_load(v) for k, v in (s.split("=", 1) for s in args.set)}
    extra = [a for s in args.set for a in ("--set", s)]
    with tempfile.TemporaryDirectory() as tmp:
        a, b = os.path.join(tmp, "cli.h5"), os.path.join(tmp, "python.h5")
        cli(args.binary, args.config, a, extra)
        python(ts, args.config, b, overrides)
        # The same output path for both, so /config (output.path) is the same too.
        same = os.path.join(tmp, "run.h5")
        cli(args.binary, args.config, same, extra)
        os.replace(same, a)
        python(ts, args.config, same, overrides)
        r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "compare_runs.py"), a, same],
                           capture_output=True, text=True)
        print(r.stdout.strip().splitlines()[-1] if r.stdout.strip() else r.stderr)
        rows = {"cli": ([], []), "python": ([], [])}
        for _ in range(args.repeats):
            for name, fn in (("cli", lambda: cli(args.binary, args.config, a, extra)),
                             ("python", lambda: python(ts, args.config, b, overrides))):
                wall, loop = fn()
                rows[name][0].append(wall)
                rows[name][1].append(loop)
    print(f"{'path':8} {'wall s, median [min, max]':>30} {'training loop s':>30}")
    for name, (wall, loop) in rows.items():
        print(f"{name:8} {summary(wall):>30} {summary(loop):>30}")
    ratio = statistics.median(rows["python"][1]) / statistics.median(rows["cli"][1])
    print(f"python/cli training loop (medians): {ratio:.3f}; wall: "
          f"{statistics.median(rows['python'][0]) / statistics.median(rows['cli'][0]):.3f}")
    return 0 if r.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

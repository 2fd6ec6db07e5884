#!/usr/bin/env python3
"""Times `turbanet train` on configs: whole-process wall time and the training loop
(/meta/train_seconds from the run file), median/min/max over repeats after one warm-up.

    bench/train_time.py configs/spirals-small.yaml configs/spirals-large.yaml --repeats 5
    bench/train_time.py configs/spirals-small.yaml --set train.epochs=100 --threads 1
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import h5py


def run_once(binary, config, extra, out):
    t0 = time.perf_counter()
    subprocess.run([binary, "train", config, "--out", out, "--force", "-q", *extra], check=True)
    wall = time.perf_counter() - t0
    with h5py.File(out) as f:
        return wall, float(f["meta"].attrs["train_seconds"]), f["meta"].attrs["kernel"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("configs", nargs="+")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--binary", default=os.path.join(os.path.dirname(__file__), "..", "build", "turbanet"))
    ap.add_argument("--threads", type=int)
    ap.add_argument("--set", action="append", default=[])
    args = ap.parse_args()
    extra = [a for s in args.set for a in ("--set", s)]
    if args.threads:
        extra += ["--threads", str(args.threads)]
    print(f"{'config':32} {'train s (median [min, max])':>30} {'process s (median)':>20}")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "bench.h5")
        for config in args.configs:
            run_once(args.binary, config, extra, out)  # warm-up
            runs = [run_once(args.binary, config, extra, out) for _ in range(args.repeats)]
            train = [r[1] for r in runs]
            wall = [r[0] for r in runs]
            print(f"{config:32} {statistics.median(train):10.4f} [{min(train):.4f}, {max(train):.4f}]"
                  f" {statistics.median(wall):20.4f}")
            print(f"  kernel: {runs[0][2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Draws training time against swarm size from `turbanet sweep --out FILE.csv` files (one
line per config and mode: swarm, sequential), optionally with peer timings, to a PNG.

    build/turbanet sweep configs/spirals-small.yaml --mode both --out runs/sweep-small.csv
    scripts/plot_sweep.py runs/sweep-small.csv --out runs/sweep-small.png
    scripts/plot_sweep.py runs/sweep-small.csv --peers bench/results/compare.csv --workload W1

--peers reads bench/compare.py's compare.csv (columns tool, workload, S, train_s);
--workload (W1, W2) picks its rows.
"""
import argparse
import csv
import sys
from collections import defaultdict

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sweeps", nargs="+", help="CSV files written by turbanet sweep --out")
    ap.add_argument("--peers", help="bench/compare.py's compare.csv (columns tool, workload, S, train_s)")
    ap.add_argument("--workload", help="rows of --peers to draw (its workload column)")
    ap.add_argument("--out", default="sweep.png")
    ap.add_argument("--title")
    args = ap.parse_args()

    lines = defaultdict(list)  # label -> [(swarm, seconds)]
    for path in args.sweeps:
        for r in read_rows(path):
            lines[f"turbanet {r['mode']} ({r['config']})"].append((int(float(r["swarm"])), float(r["seconds_median"])))
    if args.peers:
        for r in read_rows(args.peers):
            if args.workload and r.get("workload") != args.workload:
                continue
            if r.get("tool", "").startswith("turbanet"):
                continue  # turbanet's own line comes from the sweep files
            if not r.get("train_s"):
                continue  # a peer that did not finish (status column says why)
            lines[r["tool"]].append((int(float(r["S"])), float(r["train_s"])))
    if not lines:
        print("no rows to plot", file=sys.stderr)
        return 2

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, pts in sorted(lines.items()):
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.set_yscale("log")
    ax.set_xlabel("swarm size (members)")
    ax.set_ylabel("training time (s)")
    ax.set_title(args.title or "training time vs swarm size")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Histogram of per-member (per-series) errors from a turbanet run file, PNG.

    /usr/bin/python3 scripts/plot_series_errors.py RUN.h5 [--metric mae|rmse|mse] [--split test]
        [--units normalized|original] [--bins 30] [--out FILE.png]

(Debian's /usr/bin/python3: needs python3-h5py, python3-numpy, python3-matplotlib.)

Reads the evaluation group `/eval/<split>/` that `turbanet train` and `turbanet eval --save` write
(docs/run-file.md): metric names in `metrics`, each member's value of metric m in
`members/<m>` ([S], float64, NaN for a member left out). A dataset `members` [S, M] (columns
in `metrics` order) is read as well. When the group also holds a per-member baseline,
`baseline_members` (a group `baseline_members/<m>` [S] or a dataset [S, M]; its column names
in `baseline_metrics` if present, else `metrics`), e.g. the naive last-value forecast of
each series, it is drawn as a second histogram on the same bins. A metric that is missing but
derivable is derived: rmse = sqrt(mse), mse = rmse². Members with NaN are left out and
counted in the legend. Prints a one-line summary (and, with a baseline, in how many members
the model beats it). With `--units original` the same is read from `/eval/<split>/original/`
(runs on sequence data with a normalized target: the errors in the target's own units).
Default output: RUN-<split>-<metric>[-original].png next to the run file.
"""
import argparse
import os
import sys

import numpy as np


def strings(ds):
    return [v.decode() if isinstance(v, bytes) else str(v) for v in ds[()].reshape(-1)]


def per_member(g, key, names_key, metric):
    """Values [S] of `metric` from g[key] (a group of per-metric datasets or an [S, M]
    dataset), or None when g has no such key or metric."""
    import h5py
    if key not in g:
        return None
    node = g[key]

    def column(name):
        if isinstance(node, h5py.Group):
            return node[name][()].astype(np.float64).reshape(-1) if name in node else None
        names = strings(g[names_key]) if names_key in g else strings(g["metrics"])
        a = node[()].astype(np.float64)
        if a.ndim != 2 or a.shape[1] != len(names):
            raise SystemExit(f"{node.name}: shape {a.shape} does not match {len(names)} metric names")
        return a[:, names.index(name)] if name in names else None

    v = column(metric)
    if v is None and metric == "rmse":
        v = column("mse")
        v = None if v is None else np.sqrt(v)
    elif v is None and metric == "mse":
        v = column("rmse")
        v = None if v is None else v ** 2
    return v


class _with_metrics:
    """A group seen with the metric names of its parent evaluation group."""

    def __init__(self, grp, parent):
        self.grp, self.parent = grp, parent

    def __contains__(self, key):
        return key in self.grp or key == "metrics"

    def __getitem__(self, key):
        return self.parent["metrics"] if key == "metrics" and "metrics" not in self.grp else self.grp[key]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", help="turbanet run file (.h5)")
    ap.add_argument("--metric", default="mae", choices=["mae", "rmse", "mse"])
    ap.add_argument("--split", default="test")
    ap.add_argument("--units", default="normalized", choices=["normalized", "original"])
    ap.add_argument("--bins", type=int, default=30)
    ap.add_argument("--out", help="PNG path (default: RUN-<split>-<metric>.png)")
    args = ap.parse_args()

    import h5py
    with h5py.File(args.run, "r") as f:
        g = f"eval/{args.split}"
        if g not in f:
            have = sorted(f["eval"]) if "eval" in f else []
            raise SystemExit(f"{args.run}: no /{g} (evaluated splits: {have or 'none'}; "
                             f"run `turbanet eval {args.run} --split {args.split} --save {args.split}`)")
        grp = f[g]
        task = grp.attrs.get("task", "")
        task = task.decode() if isinstance(task, bytes) else str(task)
        if args.units == "original":
            if "original" not in grp:
                raise SystemExit(f"/{g} has no original units (/{g}/original): the run's target was not "
                                 f"normalized, or it is not a per-series run")
            metrics_grp = grp
            grp = grp["original"]
            if "metrics" not in grp:
                grp = _with_metrics(grp, metrics_grp)
        model = per_member(grp, "members", "metrics", args.metric)
        if model is None:
            raise SystemExit(f"/{g} has no per-member {args.metric} (metrics: {strings(grp['metrics'])}; "
                             f"task {task or '?'})")
        base = per_member(grp, "baseline_members", "baseline_metrics", args.metric)

    ok = np.isfinite(model)
    vals = model[ok]
    if vals.size == 0:
        raise SystemExit("every member's value is NaN")
    series = [(f"model ({vals.size} members", vals, int((~ok).sum()))]
    bvals = None
    if base is not None:
        bok = np.isfinite(base)
        bvals = base[bok]
        series.append((f"naive baseline ({bvals.size} members", bvals, int((~bok).sum())))

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    allv = np.concatenate([s[1] for s in series])
    lo, hi = float(allv.min()), float(allv.max())
    if hi <= lo:
        lo, hi = lo - 0.5, hi + 0.5
    bins = np.linspace(lo, hi, args.bins + 1)
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for i, (label, v, nan) in enumerate(series):
        med = float(np.median(v))
        extra = f", {nan} NaN left out" if nan else ""
        ax.hist(v, bins=bins, alpha=0.6 if len(series) > 1 else 0.85, color=f"C{i}",
                label=f"{label}, median {med:.4g}{extra})")
        ax.axvline(med, color=f"C{i}", ls="--", lw=1)
    units = ", original units" if args.units == "original" else ""
    ax.set_xlabel(f"{args.metric} per member ({args.split} split{units})")
    ax.set_ylabel("members")
    ax.set_title(f"{os.path.basename(args.run)}: per-member {args.metric}, {args.split}", fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    suffix = "-original" if args.units == "original" else ""
    out = args.out or f"{os.path.splitext(args.run)[0]}-{args.split}-{args.metric}{suffix}.png"
    fig.savefig(out, dpi=120)
    plt.close(fig)

    msg = (f"{args.metric} on {args.split}: {vals.size} members, mean {vals.mean():.6g}, "
           f"median {np.median(vals):.6g}, min {vals.min():.6g}, max {vals.max():.6g}")
    if bvals is not None:
        msg += f"; baseline median {np.median(bvals):.6g}"
        if base.shape == model.shape:
            both = ok & np.isfinite(base)
            msg += f", model better in {int((model[both] < base[both]).sum())} of {int(both.sum())}"
    print(msg)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

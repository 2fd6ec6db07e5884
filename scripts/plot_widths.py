#!/usr/bin/python3
"""Draws test accuracy against hidden width, one line per depth, from a run file whose members
differ in `model.hidden` (e.g. configs/spirals-widths.yaml: widths 4..256 x 1..3 hidden layers
x 8 seeds), to a PNG, and prints the same figures as two depth x width tables.

    build/turbanet train configs/spirals-widths.yaml --out runs/spirals-widths.h5
    scripts/plot_widths.py runs/spirals-widths.h5 runs/spirals-widths.png

Left panel: each architecture's members (seeds): mean accuracy, error bars one standard
deviation, shaded band min to max. Right panel: the accuracy of each architecture's own
ensemble (the mean of its members' class probabilities from /predictions/<split>/members,
argmax against the targets; members with non-finite predictions are left out). The dashed
line is the majority class of the split. Width and depth come from the /members/hparams/
model.hidden strings ("[64, 64]": width 64, depth 2); architectures whose hidden layers differ
in width, or have none, are listed on stderr and not drawn. Members whose accuracy is NaN
(diverged) are left out of the means and counted in the table.
"""
import argparse
import json
import os
import sys
from collections import defaultdict

import h5py
import numpy as np

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_run(path, split):
    """Per local member: hidden units (tuple), accuracy; the split's predictions and targets."""
    with h5py.File(path, "r") as f:
        if "members/hparams/model.hidden" not in f:
            raise SystemExit(f"{path}: no /members/hparams/model.hidden (members do not differ in model.hidden)")
        hidden = [tuple(json.loads(s)) for s in f["members/hparams/model.hidden"].asstr()[:]]
        meta = f["meta"].attrs
        name = meta["name"]
        name = name.decode() if isinstance(name, bytes) else str(name)
        first = int(meta.get("first_member", 0))
        ev = f.get(f"eval/{split}/members")
        if ev is None:
            raise SystemExit(f"{path}: no /eval/{split}/members (try --split)")
        acc = np.full(len(hidden), np.nan)
        local = ev["member"][:].astype(np.int64) - first  # global member index -> row of /members
        acc[local] = ev["accuracy"][:]
        probs = f[f"predictions/{split}/members"][:]
        targets = f[f"predictions/{split}/targets"][:].astype(np.int64)
    if probs.shape[0] != len(hidden):
        raise SystemExit(f"{path}: {probs.shape[0]} members in /predictions/{split}/members, {len(hidden)} in hparams")
    return name, hidden, acc, probs, targets


def summarize(hidden, acc, probs, targets):
    """One row per architecture (hidden units): member statistics and its own ensemble's accuracy."""
    groups = defaultdict(list)
    for k, units in enumerate(hidden):
        groups[units].append(k)
    rows = {}
    for units, ks in groups.items():
        ks = np.array(ks)
        a = acc[ks]
        finite = a[np.isfinite(a)]
        ok = ks[np.isfinite(probs[ks]).all(axis=(1, 2))]
        ens = float((probs[ok].mean(axis=0).argmax(axis=-1) == targets).mean()) if len(ok) else float("nan")
        rows[units] = {
            "members": len(ks),
            "nan": len(ks) - len(finite),
            "ens_members": len(ok),
            "mean": float(finite.mean()) if len(finite) else float("nan"),
            "std": float(finite.std()) if len(finite) else float("nan"),  # population std, as turbanet eval
            "min": float(finite.min()) if len(finite) else float("nan"),
            "max": float(finite.max()) if len(finite) else float("nan"),
            "ensemble": ens,
        }
    return rows


def print_tables(rows, by_depth, widths):
    for title, key in (("mean member accuracy", "mean"), ("architecture-ensemble accuracy", "ensemble")):
        print(f"{title:32}" + "".join(f"{w:>7}" for w in widths) + "  (width)")
        for depth in sorted(by_depth):
            cells = []
            for w in widths:
                r = rows.get((w,) * depth)
                cells.append(f"{r[key]:7.3f}" if r is not None else f"{'-':>7}")
            print(f"{'  depth ' + str(depth):32}" + "".join(cells))
    sizes = sorted({r["members"] for r in rows.values()})
    print(f"members per architecture: {', '.join(map(str, sizes))}")
    for units, r in sorted(rows.items(), key=lambda kv: (len(kv[0]), kv[0])):
        if r["nan"] or r["ens_members"] != r["members"]:
            print(f"  {list(units)}: {r['nan']} of {r['members']} members with NaN accuracy (left out of the mean), "
                  f"{r['members'] - r['ens_members']} with non-finite predictions (left out of the ensemble)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", help="run file (HDF5) written by turbanet train")
    ap.add_argument("out", help="PNG to write")
    ap.add_argument("--split", default="test", help="evaluation split (/eval/SPLIT, /predictions/SPLIT; default test)")
    ap.add_argument("--title")
    args = ap.parse_args()

    name, hidden, acc, probs, targets = read_run(args.run, args.split)
    rows = summarize(hidden, acc, probs, targets)

    by_depth = defaultdict(list)  # depth -> [(width, row)]
    for units, r in rows.items():
        if len(units) == 0 or len(set(units)) != 1:
            print(f"not drawn: model.hidden {list(units)} ({r['members']} members, mean accuracy {r['mean']:.3f}, "
                  f"ensemble {r['ensemble']:.3f})", file=sys.stderr)
            continue
        by_depth[len(units)].append((units[0], r))
    if not by_depth:
        print("no architecture with equal hidden widths to draw", file=sys.stderr)
        return 2
    widths = sorted({w for pts in by_depth.values() for w, _ in pts})
    majority = float(np.bincount(targets).max() / len(targets))

    print(f"{args.run}: {name}, {len(hidden)} members, {len(rows)} architectures, {args.split} split "
          f"({len(targets)} samples, majority class {majority:.3f})")
    print_tables(rows, by_depth, widths)

    fig, (ax_m, ax_e) = plt.subplots(1, 2, figsize=(11, 4.5), sharey=True)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, depth in enumerate(sorted(by_depth)):
        pts = sorted(by_depth[depth], key=lambda p: p[0])
        w = np.array([p[0] for p in pts], dtype=float)
        r = [p[1] for p in pts]
        c = colors[i % len(colors)]
        label = f"{depth} hidden layer{'s' if depth > 1 else ''}"
        mean = np.array([x["mean"] for x in r])
        ax_m.fill_between(w, [x["min"] for x in r], [x["max"] for x in r], color=c, alpha=0.15, linewidth=0)
        ax_m.errorbar(w, mean, yerr=[x["std"] for x in r], color=c, marker="o", capsize=3, label=label)
        ax_e.plot(w, [x["ensemble"] for x in r], color=c, marker="o", label=label)
    n_seeds = sorted({r["members"] for r in rows.values()})
    seeds = str(n_seeds[0]) if len(n_seeds) == 1 else f"{n_seeds[0]}-{n_seeds[-1]}"
    ax_m.set_title(f"members: mean ± std, band min–max ({seeds} per architecture)", fontsize=10)
    ax_e.set_title(f"each architecture's ensemble (mean probability of its {seeds})", fontsize=10)
    for ax in (ax_m, ax_e):
        ax.axhline(majority, color="gray", linestyle="--", linewidth=1, label=f"majority class ({majority:.3f})")
        ax.set_xscale("log", base=2)
        ax.set_xticks(widths)
        ax.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.set_xlabel("hidden width (units per layer)")
        ax.grid(True, alpha=0.3)
    ax_m.set_ylabel(f"{args.split} accuracy")
    fig.suptitle(args.title or f"{name}: {args.split} accuracy by hidden width and depth "
                 f"({len(hidden)} members, {os.path.basename(args.run)})")
    handles, labels = ax_e.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=9, frameon=False)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

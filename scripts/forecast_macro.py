#!/usr/bin/env python3
"""One GRU per real economic series against naive forecasts and scikit-learn, on the same split.

    forecast_macro.py TURBANET [--dir DIR] [--epochs N]

statsmodels' macrodata (US quarterly series 1959Q1-2009Q3, 203 quarters: real GDP,
consumption, investment, CPI, M1, unemployment, ...; python3-statsmodels) is written as a
long-format CSV (quarter, series, value). For each data.sequence variant (transform none, diff,
log_diff; scale series, window) turbanet trains one GRU per series (window 8 quarters, next
quarter, split 0.7/0.15/0.15 chronologically); log_diff needs positive values, so the two
series that cross zero (infl, realint) take diff in that variant. The variant is chosen on the
validation split (the median over series of MAE / persistence MAE) and reported on the test
split, per series, against persistence, drift and seasonal naive (turbanet's eval, checked
here against the same forecasts computed with NumPy) and scikit-learn's Ridge on the same
windows of changes (log changes of positive series, else differences; alpha chosen on
validation). Needs numpy, scikit-learn and statsmodels.
"""
import argparse
import csv
import json
import os
import subprocess
import sys

import numpy as np
import statsmodels.api as sm
from sklearn.linear_model import Ridge

W, H, SEASON = 8, 1, 4
SPLIT = (0.7, 0.15, 0.15)


def config(path, transform, scale, epochs):
    normalize = "  normalize: standard\n  normalize_per_member: true\n" if scale == "series" else ""
    return (f"name: macro\nseed: 0\nmodel:\n  layers:\n    - {{type: gru, units: 16}}\n    - {{type: dense, units: 1}}\n"
            f"loss: mse\noptimizer: {{type: adam, lr: 3.0e-3}}\n"
            f"data:\n  source: {{type: csv, path: {path}}}\n"
            f"  split: {{train: {SPLIT[0]}, val: {SPLIT[1]}, test: {SPLIT[2]}}}\n  per_member: {{group_by: series}}\n"
            f"{normalize}  sequence: {{window: {W}, horizon: {H}, target: value, time: quarter, transform: {transform}, "
            f"scale: {scale}, season: {SEASON}}}\n"
            f"train: {{epochs: {epochs}, batch_size: 32, early_stopping: {{metric: val_loss, patience: 30}}}}\n")


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stderr}")
    return r.stdout


def evaluate(turbanet, runs, split):
    """{series: {"model": mae, <baseline>: mae}} in original units, over the runs of a variant."""
    out = {}
    for h5 in runs:
        j = json.loads(run([turbanet, "eval", h5, "--split", split, "--json", "-q"]))
        for row in j["series"]:
            out[row["group"]] = {"model": row["mae"], **{k: v["mae"] for k, v in row["baselines"].items()}}
    return out


def ranges(L):
    n_val, n_test = int(np.floor(SPLIT[1] * L + 0.5)), int(np.floor(SPLIT[2] * L + 0.5))
    n_train = L - n_val - n_test
    return [(0, n_train), (n_train, n_train + n_val), (n_train + n_val, L)]


def windows(y, b, e, change):
    """Rule 3 of data/sequence.h with a transform: windows from point 1, inputs the one-step
    changes, target the next change; and each window's last level."""
    X, t, last, T = [], [], [], []
    for s in range(max(b, 1), e - W - H + 1):
        X.append([change(y[i - 1], y[i]) for i in range(s, s + W)])
        t.append(change(y[s + W - 1], y[s + W - 1 + H]))
        last.append(y[s + W - 1])
        T.append(s + W - 1)
    return np.array(X), np.array(t), np.array(last), np.array(T)


def naive_and_ridge(y, positive):
    """Test MAE of persistence, drift, seasonal naive (NumPy) and Ridge (alpha on validation)."""
    change = (lambda a, b: np.log(b / a)) if positive else (lambda a, b: b - a)
    back = (lambda last, c: last * np.exp(c)) if positive else (lambda last, c: last + c)
    (b0, e0), (b1, e1), (b2, e2) = ranges(len(y))
    Xtr, ttr, _, _ = windows(y, b0, e0, change)
    Xva, _, lva, Tva = windows(y, b1, e1, change)
    Xte, _, lte, Tte = windows(y, b2, e2, change)
    yva, yte = y[Tva + H], y[Tte + H]
    mae = lambda f, truth: float(np.mean(np.abs(f - truth)))
    best = min((mae(back(lva, Ridge(alpha=a).fit(Xtr, ttr).predict(Xva)), yva), a) for a in (0.01, 0.1, 1, 10, 100))
    ridge = back(lte, Ridge(alpha=best[1]).fit(Xtr, ttr).predict(Xte))
    k = SEASON * ((H + SEASON - 1) // SEASON)
    return {"persistence": mae(lte, yte), "drift": mae(lte + H * (lte - y[0]) / Tte, yte),
            "seasonal_naive": mae(y[Tte + H - k], yte), "ridge": mae(ridge, yte), "ridge_alpha": best[1]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("turbanet")
    ap.add_argument("--dir", default="/tmp/turbanet-macro")
    ap.add_argument("--epochs", type=int, default=300)
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    d = sm.datasets.macrodata.load_pandas().data
    names = [c for c in d.columns if c not in ("year", "quarter")]
    quarters = [f"{int(y)}Q{int(q)}" for y, q in zip(d["year"], d["quarter"])]
    positive = {c: bool((d[c] > 0).all()) for c in names}
    files = {}
    for part, keep in (("all", names), ("positive", [c for c in names if positive[c]]),
                       ("other", [c for c in names if not positive[c]])):
        files[part] = os.path.join(a.dir, f"macro-{part}.csv")
        with open(files[part], "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["quarter", "series", "value"])
            for c in keep:
                w.writerows((q, c, repr(float(v))) for q, v in zip(quarters, d[c]))

    variants = {}
    for transform in ("none", "diff", "log_diff"):
        for scale in ("series", "window"):
            parts = [("all", transform)] if transform != "log_diff" else [("positive", "log_diff"), ("other", "diff")]
            runs = []
            for part, t in parts:
                name = f"{transform}-{scale}-{part}"
                yaml = os.path.join(a.dir, name + ".yaml")
                with open(yaml, "w") as f:
                    f.write(config(files[part], t, scale, a.epochs))
                h5 = os.path.join(a.dir, name + ".h5")
                run([a.turbanet, "train", yaml, "--out", h5, "--force", "-q"])
                runs.append(h5)
            val = evaluate(a.turbanet, runs, "val")
            ratio = float(np.median([v["model"] / v["persistence"] for v in val.values()]))
            variants[(transform, scale)] = (ratio, runs)
            print(f"validation: transform {transform:<8} scale {scale:<6} median MAE / persistence {ratio:.4f}")
    (transform, scale), (ratio, runs) = min(variants.items(), key=lambda kv: kv[1][0])
    print(f"chosen on validation: transform {transform}, scale {scale}\n")
    test = evaluate(a.turbanet, runs, "test")
    base = ["persistence", "drift", "seasonal_naive"]
    print(f"test split, MAE in original units (22 windows per series){'':>4}checked: NumPy's naive forecasts")
    print(f"{'series':<10}{'GRU':>11}{'persistence':>13}{'drift':>11}{'seasonal':>11}{'ridge':>11}  best")
    ratios = {k: [] for k in base + ["ridge"]}
    for c in names:
        r, n = test[c], naive_and_ridge(d[c].to_numpy(dtype=float), positive[c])
        for k in base:  # turbanet's naive forecasts are the ones computed here
            assert abs(r[k] - n[k]) <= 1e-4 * max(1.0, n[k]), (c, k, r[k], n[k])
        scores = {"GRU": r["model"], **{k: r[k] for k in base}, "ridge": n["ridge"]}
        for k in ratios:
            ratios[k].append(r["model"] / scores[k])
        print(f"{c:<10}{r['model']:>11.4g}{r['persistence']:>13.4g}{r['drift']:>11.4g}{r['seasonal_naive']:>11.4g}"
              f"{n['ridge']:>11.4g}  {min(scores, key=scores.get)}")
    for k, v in ratios.items():
        print(f"GRU beats {k} on {sum(x < 1 for x in v)} of {len(names)} series (median MAE ratio {np.median(v):.3f})")
    print("\nevery variant on the test split, for reference (not used to choose):")
    for (t, sc), (_, rs) in variants.items():
        r = evaluate(a.turbanet, rs, "test")
        v = [r[c]["model"] / r[c]["persistence"] for c in names]
        print(f"  transform {t:<8} scale {sc:<6} beats persistence on {sum(x < 1 for x in v):>2} of {len(names)} "
              f"series, median MAE ratio {np.median(v):.3f}")

if __name__ == "__main__":
    main()

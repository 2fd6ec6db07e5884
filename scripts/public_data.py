#!/usr/bin/env python3
"""turbanet against scikit-learn on public tabular data the tests do not use, on the same split.

    public_data.py TURBANET [--dir DIR] [--only NAME,...] [--markdown]

Four of scikit-learn's bundled datasets (python3-sklearn; no download) are written as CSV:
wine (3 classes, 178 rows), breast_cancer (binary, 569), digits (10 classes, 1797, 8x8
images as 64 features) and diabetes (regression, 442). For each, turbanet trains one swarm of
16 bootstrapped MLPs over a learning-rate grid (config written to DIR, the command printed),
split 0.6/0.2/0.2 with a fixed seed. The baselines are fitted on the very rows turbanet
trained on (read back from the run file's /data/splits/<split>/rows with h5py), their
hyperparameter chosen on the validation rows, and scored on the test rows:
LogisticRegression / Ridge (C or alpha from a grid) and HistGradientBoosting (learning rate
from a grid). turbanet's figures are `eval --json` on the test split: the ensemble of all
members, the greedy ensemble chosen on validation (`--select greedy`) and the best member
chosen on validation. Needs numpy, scikit-learn and h5py.
"""
import argparse
import csv
import json
import os
import subprocess
import sys

import h5py
import numpy as np
from sklearn import datasets
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import accuracy_score, mean_squared_error, r2_score, roc_auc_score
from sklearn.preprocessing import StandardScaler

SETS = {
    # name: (loader, task, metric turbanet reports, layers, epochs)
    "wine": (datasets.load_wine, "multiclass", "accuracy", [32], 200),
    "breast_cancer": (datasets.load_breast_cancer, "binary", "accuracy", [32], 200),
    "digits": (datasets.load_digits, "multiclass", "accuracy", [64], 100),
    "diabetes": (datasets.load_diabetes, "regression", "rmse", [32], 300),
}
LRS = [3e-4, 1e-3, 3e-3, 1e-2]


def write_csv(path, X, y):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow([f"x{j}" for j in range(X.shape[1])] + ["target"])
        for row, t in zip(X, y):
            w.writerow([repr(float(v)) for v in row] + [int(t) if float(t).is_integer() else repr(float(t))])


def write_config(path, name, csv_path, task, n_out, layers, epochs):
    dense = "".join(f"    - {{type: dense, units: {u}, activation: relu}}\n" for u in layers)
    loss = "mse" if task == "regression" else "cross_entropy"
    lr_grid = ", ".join(repr(v) for v in LRS)
    with open(path, "w") as f:
        f.write(
            f"name: {name}\n"
            "seed: 7\n"
            "swarm: {size: 16}\n"
            "model:\n  layers:\n" + dense + f"    - {{type: dense, units: {n_out}}}\n"
            f"loss: {loss}\n"
            f"optimizer: {{type: adamw, lr: {{values: [{lr_grid}]}}, weight_decay: 1.0e-4}}\n"
            "data:\n"
            f"  source: {{type: csv, path: {csv_path}, target: target}}\n"
            "  split: {train: 0.6, val: 0.2, test: 0.2, seed: 11}\n"
            "  per_member: bootstrap\n"
            "  normalize: standard\n"
            f"train: {{epochs: {epochs}, batch_size: 32, shuffle: true, log_every: 0}}\n"
            f"output: {{path: {name}.h5}}\n")


def turbanet_eval(exe, run, extra, metric):
    out = subprocess.run([exe, "eval", run, "--split", "test", "--json"] + extra, check=True,
                         capture_output=True, text=True).stdout
    d = json.loads(out)
    return d


def baseline(task, X, y, rows):
    tr, va, te = rows["train"], rows["val"], rows["test"]
    sc = StandardScaler().fit(X[tr])
    Xs = sc.transform(X)
    results = {}
    if task == "regression":
        score = lambda m, r: mean_squared_error(y[r], m.predict(Xs[r])) ** 0.5
        cands = {"ridge": [Ridge(alpha=a) for a in (0.01, 0.1, 1, 10, 100)],
                 "hist_gradient_boosting": [HistGradientBoostingRegressor(learning_rate=lr, random_state=0)
                                            for lr in (0.03, 0.1, 0.3)]}
        better = min
    else:
        score = lambda m, r: accuracy_score(y[r], m.predict(Xs[r]))
        cands = {"logistic_regression": [LogisticRegression(C=c, max_iter=5000) for c in (0.01, 0.1, 1, 10, 100)],
                 "hist_gradient_boosting": [HistGradientBoostingClassifier(learning_rate=lr, random_state=0)
                                            for lr in (0.03, 0.1, 0.3)]}
        better = max
    for name, models in cands.items():
        fitted = [m.fit(Xs[tr], y[tr]) for m in models]
        best = better(fitted, key=lambda m: score(m, va))
        results[name] = score(best, te)
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("turbanet")
    ap.add_argument("--dir", default="public-data")
    ap.add_argument("--only", default="")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    a = ap.parse_args()
    exe = os.path.abspath(a.turbanet)
    os.makedirs(a.dir, exist_ok=True)
    os.chdir(a.dir)
    names = a.only.split(",") if a.only else list(SETS)
    rows_out = []
    for name in names:
        loader, task, metric, layers, epochs = SETS[name]
        X, y = loader(return_X_y=True)
        n_out = 1 if task == "regression" else int(y.max()) + 1
        write_csv(f"{name}.csv", X, y)
        write_config(f"{name}.yaml", name, f"{name}.csv", task, n_out, layers, epochs)
        cmd = [exe, "train", f"{name}.yaml", "--force"]
        print("$", " ".join(cmd[1:]), file=sys.stderr)
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"{name}: turbanet train exited {r.returncode}:\n{r.stderr}")
        with h5py.File(f"{name}.h5", "r") as f:
            rows = {s: f[f"data/splits/{s}/rows"][()] for s in ("train", "val", "test")}
        # the CSV rows are the loader's rows, in order
        assert len(rows["test"]) > 0
        all_members = turbanet_eval(exe, f"{name}.h5", [], metric)
        greedy = turbanet_eval(exe, f"{name}.h5", ["--select", "greedy"], metric)
        ens = all_members["ensemble"][metric]
        best_test = all_members["best_member"]["metrics"][metric]
        base = baseline(task, X, y.astype(float) if task == "regression" else y, rows)
        rows_out.append((name, task, metric, len(rows["train"]), len(rows["val"]), len(rows["test"]),
                         ens, greedy["ensemble"][metric], best_test, base))
    hdr = "| data | task | test metric | turbanet ensemble (all 16) | greedy ensemble (val) | best member (val) | " \
          "linear (val) | hist. gradient boosting (val) |"
    print(hdr)
    print("|" + "---|" * 8)
    for name, task, metric, ntr, nva, nte, ens, greedy, best, base in rows_out:
        lin = base.get("ridge", base.get("logistic_regression"))
        print(f"| {name} ({ntr}/{nva}/{nte}) | {task} | {metric} | {ens:.4f} | {greedy:.4f} | {best:.4f} | "
              f"{lin:.4f} | {base['hist_gradient_boosting']:.4f} |")


if __name__ == "__main__":
    main()

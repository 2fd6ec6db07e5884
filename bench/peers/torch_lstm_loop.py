#!/usr/bin/python3
"""Peer for W4 (stocks LSTM): PyTorch, one small LSTM per series, trained one after another,
as a typical user writes it: per series an nn.LSTM(1, 32) -> last step -> nn.Linear(32, 1),
its own torch.optim.Adam and a plain loop over shuffled mini-batches, MSE loss.

    /usr/bin/python3 bench/peers/torch_lstm_loop.py --csv stocks.csv --epochs 2 --lr 1e-3 \\
        --series 20 --threads 1 --json out.json

The CSV is long-format `date,ticker,close` (what `turbanet data generate CONFIG --out FILE.csv`
writes). Data rules, the same as turbanet's sequence data:
  - series = rows grouped by ticker, series sorted by ticker name, rows of a series in file
    order; `--series N` keeps the first N series;
  - each series of length L is split chronologically: n_val = lround(val·L),
    n_test = lround(test·L), n_train = L − n_val − n_test (lround(x) = floor(x + 0.5) for
    x ≥ 0: half away from zero, as C++, not Python's banker's round()); train [0, n_train),
    val the next n_val points, test the last n_test;
  - a window starting at t has inputs close[t .. t+W−1] and target close[t+W−1+horizon],
    inputs and target entirely inside one range; t runs from the range's start by `stride`;
  - standard normalization per series, fit on the training range's values (mean, population
    std; std < 1e-12 -> 1), applied to inputs and targets.
Training: every epoch reshuffles the series' training windows (torch.randperm) and takes
batches of `--batch` (the last one smaller), one Adam step (β 0.9/0.999, ε 1e-8) per batch.

Timing, as bench/peers/torch_loop.py: `load_seconds` is data preparation (reading the CSV,
splitting, windows, normalization), not the training time; a throw-away model first runs ten
steps (`warmup_seconds`); `train_seconds` then covers every series from model construction to
its last Adam step (evaluation excluded). `ms_per_member_step` = train_seconds / total Adam
steps. Quality: `test_mse_mean` is the mean over series of each model's test MSE in
normalized units, next to `naive_test_mse_mean`, the last-value forecast (the last input of
the window) on the same windows. Prints one JSON line (and writes it to --json).
"""
import argparse
import csv
import json
import math
import os
import platform
import sys
import time

# Debian's torch links the pthread OpenBLAS: keep its workers off the shared cores (see
# torch_loop.py). Must be set before torch loads it; the environment wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
import torch
from torch import nn

HIDDEN = 32
BETAS = (0.9, 0.999)
EPS = 1e-8


def lround(x):
    """C++ std::lround for x >= 0 (half away from zero)."""
    return int(math.floor(x + 0.5))


def read_series(path, target="close"):
    """{ticker: np.array of values in file order}, tickers sorted by name."""
    by = {}
    with open(path, newline="") as fh:
        rd = csv.reader(fh)
        header = next(rd)
        try:
            ti, vi = header.index("ticker"), header.index(target)
        except ValueError:
            raise SystemExit(f"{path}: header {header} lacks 'ticker' or '{target}'")
        for row in rd:
            if row:
                by.setdefault(row[ti], []).append(float(row[vi]))
    return [(k, np.asarray(by[k], np.float64)) for k in sorted(by)]


def split_sizes(L, val, test):
    n_val, n_test = lround(val * L), lround(test * L)
    n_train = L - n_val - n_test
    if n_train <= 0:
        raise SystemExit(f"series of length {L} leaves no training points")
    return n_train, n_val, n_test


def windows(x, lo, hi, window, horizon, stride):
    """Inputs [N, window] and targets [N] of the windows inside [lo, hi)."""
    starts = list(range(lo, hi - (window - 1 + horizon), stride))
    if not starts:
        return np.zeros((0, window)), np.zeros(0)
    idx = np.asarray(starts)[:, None] + np.arange(window)[None, :]
    return x[idx], x[np.asarray(starts) + window - 1 + horizon]


class Series:
    """One series' normalized windows, as float32 tensors [N, W, 1] and [N, 1]."""

    def __init__(self, name, x, args):
        self.name = name
        n_train, n_val, n_test = split_sizes(len(x), args.val, args.test)
        train = x[:n_train]
        mean = float(train.mean())
        std = float(train.std())  # population std
        if std < 1e-12:
            std = 1.0
        z = (x - mean) / std
        ranges = {"train": (0, n_train), "val": (n_train, n_train + n_val),
                  "test": (n_train + n_val, len(x))}
        self.data = {}
        for split, (lo, hi) in ranges.items():
            X, y = windows(z, lo, hi, args.window, args.horizon, args.stride)
            self.data[split] = (torch.from_numpy(X.astype(np.float32)).unsqueeze(-1),
                                torch.from_numpy(y.astype(np.float32)).unsqueeze(-1))


class Model(nn.Module):
    def __init__(self, hidden=HIDDEN):
        super().__init__()
        self.lstm = nn.LSTM(1, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        seq, _ = self.lstm(x)
        return self.head(seq[:, -1])


def validation_loss(model, Xv, yv, batch):
    """The epoch's validation MSE in batches of `batch` windows, as turbanet records it for
    every member and epoch (/history/val_loss): the same forward work after each epoch."""
    if len(Xv) == 0:
        return None
    with torch.no_grad():
        total = sum(float(((model(Xv[k:k + batch]) - yv[k:k + batch]) ** 2).sum()) for k in range(0, len(Xv), batch))
    return total / len(Xv)


def train_series(X, y, epochs, batch, lr, hidden=HIDDEN, max_steps=None, val=None):
    model = Model(hidden)
    opt = torch.optim.Adam(model.parameters(), lr=lr, betas=BETAS, eps=EPS)
    loss_fn = nn.MSELoss()
    n, steps = len(X), 0
    history = []
    for _ in range(epochs):
        perm = torch.randperm(n)
        for k in range(0, n, batch):
            idx = perm[k:k + batch]
            opt.zero_grad()
            loss = loss_fn(model(X[idx]), y[idx])
            loss.backward()
            opt.step()
            steps += 1
            if max_steps and steps >= max_steps:
                return model, steps
        if val is not None:
            history.append(validation_loss(model, val[0], val[1], batch))
    return model, steps


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--csv", required=True, help="long-format date,ticker,close")
    ap.add_argument("--target", default="close", help="value column (data.sequence.target)")
    ap.add_argument("--window", type=int, default=20)
    ap.add_argument("--horizon", type=int, default=1)
    ap.add_argument("--stride", type=int, default=1)
    ap.add_argument("--split", default="0.7,0.15,0.15", help="train,val,test fractions")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=HIDDEN, help="LSTM units (the config's first layer)")
    ap.add_argument("--series", type=int, default=0, help="first N series (default all)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0, help="torch.manual_seed: initial weights, shuffles")
    ap.add_argument("--json", help="also write the JSON result here")
    args = ap.parse_args()
    fr = [float(v) for v in args.split.split(",")]
    if len(fr) != 3:
        ap.error("--split needs train,val,test")
    args.val, args.test = fr[1], fr[2]
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    t0 = time.perf_counter()
    raw = read_series(args.csv, args.target)
    if args.series:
        raw = raw[:args.series]
    series = [Series(name, x, args) for name, x in raw]
    load = time.perf_counter() - t0
    if not series:
        raise SystemExit("no series")
    lengths = sorted({len(x) for _, x in raw})

    X0, y0 = series[0].data["train"]
    t0 = time.perf_counter()
    train_series(X0, y0, 1, args.batch, args.lr, args.hidden, max_steps=10)
    warmup = time.perf_counter() - t0

    t0 = time.perf_counter()
    models, steps = [], []
    for s in series:
        X, y = s.data["train"]
        m, k = train_series(X, y, args.epochs, args.batch, args.lr, args.hidden, val=s.data["val"])
        models.append(m)
        steps.append(k)
    train = time.perf_counter() - t0

    test_mse, naive_mse = [], []
    with torch.no_grad():
        for s, m in zip(series, models):
            X, y = s.data["test"]
            if len(X) == 0:
                continue
            test_mse.append(float(((m(X) - y) ** 2).mean()))
            naive_mse.append(float(((X[:, -1] - y) ** 2).mean()))
    total = int(sum(steps))
    out = dict(tool="pytorch-loop", workload="W4", S=len(series), epochs=args.epochs,
               steps=steps[0] if len(set(steps)) == 1 else float(np.mean(steps)),
               total_steps=total, batch=args.batch, lr=args.lr, window=args.window,
               horizon=args.horizon, stride=args.stride, split=args.split, hidden=args.hidden,
               series_lengths=lengths,
               train_windows=int(sum(len(s.data["train"][0]) for s in series)),
               train_seconds=train, warmup_seconds=warmup, load_seconds=load,
               ms_per_member_step=1e3 * train / total if total else None,
               gflops=None, eval_split="test",
               final_loss_mean=float(np.mean(test_mse)) if test_mse else None,
               final_accuracy_mean=None,
               test_mse_mean=float(np.mean(test_mse)) if test_mse else None,
               naive_test_mse_mean=float(np.mean(naive_mse)) if naive_mse else None,
               param_max_rel_diff_vs_turbanet=None,
               init_from="PyTorch default initialization (torch.manual_seed)",
               notes=["own initial weights and shuffles: same work as turbanet, other samples"],
               threads=torch.get_num_threads(), torch=torch.__version__,
               openblas_threads=os.environ["OPENBLAS_NUM_THREADS"],
               loadavg=os.getloadavg()[0], python=platform.python_version())
    line = json.dumps(out)
    print(line, flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            fh.write(line + "\n")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)

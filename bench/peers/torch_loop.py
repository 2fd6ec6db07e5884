#!/usr/bin/python3
"""Peer 1: PyTorch, one member after another, as a typical user writes it: one nn.Sequential
and one torch.optim.Adam per member, a plain training loop over its batches.

    /usr/bin/python3 bench/peers/torch_loop.py W1 --size 8 --epochs 64 [--run-file R.h5]

Warm-up: before the timed loop, a throw-away member runs a few steps (first-call allocations,
thread pool start); its time is reported as warmup_seconds. Timed: training every member from
its initial weights to the last step (model/optimizer construction included, evaluation not).
"""
import os
import time

# Debian's torch links the pthread OpenBLAS, whose own worker threads compete with torch's
# OpenMP team for the same cores (10x slower steps measured on the 2-core machine); GEMMs
# then run on torch's threads. Must be set before torch loads OpenBLAS; the environment wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

import common


def build(sizes, init, s):
    layers = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        lin = nn.Linear(a, b)
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(init[i][0][s].T))  # nn.Linear keeps [out, in]
            lin.bias.copy_(torch.from_numpy(init[i][1][s]))
        layers.append(lin)
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def train_member(task, s, X, y, order, steps):
    model = build(task.sizes, task.init, s)
    opt = torch.optim.Adam(model.parameters(), lr=task.lr, betas=common.BETAS, eps=common.EPS)
    for t in range(steps):
        if order is None:
            xb, yb = X, y
        else:
            idx = order[s, t]
            xb, yb = X[idx], y[idx]
        opt.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
    return model


def main():
    args = common.parse_args(__doc__)
    torch.set_num_threads(args.threads)
    task = common.Task(args)
    X, y = torch.from_numpy(task.X), torch.from_numpy(task.y)
    order = None if task.order is None else torch.from_numpy(task.order)

    t0 = time.perf_counter()
    train_member(task, 0, X, y, order, min(task.steps, 10))
    warmup = time.perf_counter() - t0

    t0 = time.perf_counter()
    models = [train_member(task, s, X, y, order, task.steps) for s in range(task.size)]
    train = time.perf_counter() - t0

    Xe = torch.from_numpy(task.X_eval)
    with torch.no_grad():
        loss, acc = common.evaluate(task, lambda s, _: models[s](Xe).numpy())
        params = []
        lins = [[m for m in model if isinstance(m, nn.Linear)] for model in models]
        for i in range(len(task.sizes) - 1):
            params.append((np.stack([l[i].weight.numpy().T for l in lins]),
                           np.stack([l[i].bias.numpy() for l in lins])))
    common.result("pytorch-loop", task, train, warmup, loss, acc, params,
                  threads=torch.get_num_threads(), torch=torch.__version__,
                  openblas_threads=os.environ["OPENBLAS_NUM_THREADS"])


if __name__ == "__main__":
    common.main_guard(main)

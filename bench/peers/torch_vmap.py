#!/usr/bin/python3
"""Peer 2: PyTorch vectorized over members: every layer's weights stacked as W [S, in, out],
b [S, out], the forward pass as batched matrix products (torch.baddbmm), one torch.optim.Adam
over the stacked tensors. Members stay independent: the loss is the sum over members of each
member's mean cross-entropy, so member s's gradient is exactly its own loss's gradient, and
Adam is elementwise. (torch.func does not exist in PyTorch 1.13; bmm is what a user writes.)

    /usr/bin/python3 bench/peers/torch_vmap.py W2 --size 32 --epochs 4 [--run-file R.h5]
    python3 bench/peers/torch_vmap.py W2 --size 128 --device cuda   # on a GPU, beside turbanet's

Warm-up: a few steps on a throw-away copy of the stacked weights, reported as warmup_seconds.
"""
import os
import time

# Debian's torch links the pthread OpenBLAS, whose own worker threads compete with torch's
# OpenMP team for the same cores (10x slower steps measured on the 2-core machine); GEMMs
# then run on torch's threads. Must be set before torch loads OpenBLAS; the environment wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import torch
import torch.nn.functional as F

import common


def make(task, device):
    params = []
    for W, b in task.init:
        params += [torch.tensor(W, device=device, requires_grad=True),
                   torch.tensor(b, device=device, requires_grad=True)]
    opt = torch.optim.Adam(params, lr=task.lr, betas=common.BETAS, eps=common.EPS)
    return params, opt


def forward(params, x):  # x [S, B, in] -> logits [S, B, K]
    n = len(params) // 2
    for i in range(n):
        x = torch.baddbmm(params[2 * i + 1].unsqueeze(1), x, params[2 * i])
        if i < n - 1:
            x = torch.relu(x)
    return x


def train(task, X, y, order, steps):
    params, opt = make(task, X.device)
    S = task.size
    if order is None:  # full batch: the same rows for every member, every step
        xb = X.unsqueeze(0).expand(S, -1, -1)
        yb = y.repeat(S)
    for t in range(steps):
        if order is not None:
            idx = order[:, t]           # [S, B]
            xb, yb = X[idx], y[idx].reshape(-1)
        opt.zero_grad()
        logits = forward(params, xb)
        B = logits.shape[1]
        loss = F.cross_entropy(logits.reshape(S * B, -1), yb, reduction="sum") / B
        loss.backward()
        opt.step()
    if X.is_cuda:
        torch.cuda.synchronize(X.device)  # the time is the work done, not the work queued
    return params


def main():
    args = common.parse_args(__doc__)
    torch.set_num_threads(args.threads)
    task = common.Task(args)
    dev = torch.device(args.device)
    X, y = torch.from_numpy(task.X).to(dev), torch.from_numpy(task.y).to(dev)
    order = None if task.order is None else torch.from_numpy(task.order).to(dev)

    t0 = time.perf_counter()
    train(task, X, y, order, min(task.steps, 10))
    warmup = time.perf_counter() - t0

    t0 = time.perf_counter()
    params = train(task, X, y, order, task.steps)
    seconds = time.perf_counter() - t0

    Xe = torch.from_numpy(task.X_eval).to(dev)
    with torch.no_grad():
        def logits(s, _):
            return forward([p[s:s + 1] for p in params], Xe.unsqueeze(0))[0].cpu().numpy()
        loss, acc = common.evaluate(task, logits)
        pairs = [(params[2 * i].detach().cpu().numpy(), params[2 * i + 1].detach().cpu().numpy())
                 for i in range(len(params) // 2)]
    common.result("pytorch-vmap", task, seconds, warmup, loss, acc, pairs,
                  threads=torch.get_num_threads(), torch=torch.__version__, device=str(dev),
                  openblas_threads=os.environ["OPENBLAS_NUM_THREADS"])


if __name__ == "__main__":
    common.main_guard(main)

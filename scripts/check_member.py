#!/usr/bin/env python3
"""Re-trains one member of a full-batch, shared-data MLP run with NumPy (float64), starting
from the run file's /init_params and the training split stored in /data/splits/train, and
compares the result with the member's /params. An independent check of the training math
(forward, softmax cross-entropy or MSE, backward, Adam or SGD) for users and reviewers.

    scripts/check_member.py runs/spirals-small.h5 --member 0
"""
import argparse
import sys

import h5py
import numpy as np
import yaml

ACT = {
    "identity": (lambda z: z, lambda z, a: np.ones_like(z)),
    "relu": (lambda z: np.maximum(z, 0), lambda z, a: (z > 0).astype(z.dtype)),
    "tanh": (np.tanh, lambda z, a: 1 - a * a),
    "sigmoid": (lambda z: 1 / (1 + np.exp(-z)), lambda z, a: a * (1 - a)),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run")
    ap.add_argument("--member", type=int, default=0, help="index within the file (0..S-1)")
    args = ap.parse_args()
    f = h5py.File(args.run, "r")
    if "architectures" in f:
        sys.exit("this check covers runs whose members share one architecture (no /architectures)")
    cfg = yaml.safe_load(f["config"][()].decode())
    layers = cfg["model"]["layers"]
    opt, loss = cfg["optimizer"], cfg["loss"]
    loss = loss if isinstance(loss, str) else loss["type"]
    n = f["data/splits/train/X"].shape[0]
    if cfg["data"]["per_member"] != "shared" or cfg["train"]["batch_size"] < n or opt["type"] not in ("adam", "sgd"):
        sys.exit("this check covers full-batch, shared-data runs with adam or sgd")
    if opt.get("grad_clip", 0) or opt.get("weight_decay", 0) or cfg["schedule"]["type"] != "constant":
        sys.exit("this check covers runs without grad_clip, weight_decay or schedules")
    X = f["data/splits/train/X"][...].astype(np.float64)
    y = f["data/splits/train/y"][...]
    k = args.member
    P = []
    for i in range(len(layers)):
        P += [f[f"init_params/layer_{i}/W"][k].astype(np.float64), f[f"init_params/layer_{i}/b"][k].astype(np.float64)]
    m = [np.zeros_like(p) for p in P]
    v = [np.zeros_like(p) for p in P]
    for t in range(1, cfg["train"]["epochs"] + 1):
        acts, zs = [X], []
        for i, layer in enumerate(layers):
            z = acts[-1] @ P[2 * i] + P[2 * i + 1]
            zs.append(z)
            acts.append(ACT[layer.get("activation", "identity")][0](z))
        out = acts[-1]
        if loss == "cross_entropy":
            e = np.exp(out - out.max(axis=1, keepdims=True))
            d = e / e.sum(axis=1, keepdims=True)
            d[np.arange(n), y.astype(int)] -= 1
            d /= n
        else:
            d = 2 * (out - y.reshape(out.shape)) / out.size
        grads = [None] * len(P)
        for i in reversed(range(len(layers))):
            d = d * ACT[layers[i].get("activation", "identity")][1](zs[i], acts[i + 1])
            grads[2 * i], grads[2 * i + 1] = acts[i].T @ d, d.sum(axis=0)
            d = d @ P[2 * i].T
        for j, g in enumerate(grads):
            if opt["type"] == "sgd":
                P[j] -= opt["lr"] * g
                continue
            b1, b2 = opt.get("beta1", 0.9), opt.get("beta2", 0.999)
            m[j] = b1 * m[j] + (1 - b1) * g
            v[j] = b2 * v[j] + (1 - b2) * g * g
            P[j] -= opt["lr"] * (m[j] / (1 - b1 ** t)) / (np.sqrt(v[j] / (1 - b2 ** t)) + opt.get("eps", 1e-8))
    worst = 0.0
    for i in range(len(layers)):
        for j, name in ((2 * i, "W"), (2 * i + 1, "b")):
            got = f[f"params/layer_{i}/{name}"][k].astype(np.float64)
            err = np.max(np.abs(got - P[j]) / (1e-3 + np.abs(P[j])))
            worst = max(worst, err)
            print(f"layer_{i}/{name}: max relative difference {err:.3g}")
    print(f"member {k}: worst relative difference {worst:.3g} after {cfg['train']['epochs']} epochs")
    return 0 if worst < 1e-2 else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""A trained turbanet member as a torch.nn module, from `turbanet export --format npz`.

    turbanet export runs/iris.h5 --member 3 --out iris3.npz
    scripts/to_torch.py iris3.npz --save iris3.pt            # torch.save of the whole module
    scripts/to_torch.py iris3.npz --predict X.npy --out Y.npy  # raw inputs in, outputs out

or from Python:

    import numpy as np, to_torch
    module = to_torch.load_member("iris3.npz")   # torch.nn.Module, eval mode
    probs = module(torch.from_numpy(x))          # x: raw (un-normalized) features [N, F]

The module does what the exported ONNX graph does (docs/export.md): the stored input
normalization, the LSTM/GRU layers (torch's gate order is ours, so the weights load as they
are, transposed), the dense head and softmax (cross_entropy), sigmoid (bce) or nothing
(regression; with data.normalize_target then turned back into the target's units). Inputs are [N, F] features, or [N, T, step_features] windows for sequence runs;
outputs [N, O] as `turbanet predict` reports each member's. From an ensemble archive
(--ensemble, the default) choose the member with --member K (its global index).
Needs numpy and torch (Debian: python3-numpy python3-torch).
"""
import argparse
import json

import numpy as np
import torch
from torch import nn


def _activation(layer):
    name = layer["activation"]
    if name == "identity":
        return nn.Identity()
    if name == "relu":
        return nn.ReLU()
    if name == "leaky_relu":
        return nn.LeakyReLU(layer["slope"])
    if name == "tanh":
        return nn.Tanh()
    if name == "sigmoid":
        return nn.Sigmoid()
    if name == "gelu":
        return nn.GELU()  # the exact (erf) form, as turbanet's
    raise ValueError(f"unknown activation '{name}'")


class TurbanetMember(nn.Module):
    """normalize → [LSTM/GRU layers, last step] → Linear + activation ... → output activation."""

    def __init__(self, model, mean, std, target=None):
        super().__init__()
        self.register_buffer("mean", torch.as_tensor(mean, dtype=torch.float32))
        self.register_buffer("std", torch.as_tensor(std, dtype=torch.float32))
        # data.normalize_target: (target_mean, target_std, method) turning outputs into original units
        self.target = None if target is None else tuple(torch.as_tensor(t, dtype=torch.float32) for t in target[:2])
        self.log1p = target is not None and target[2] == "log1p"
        self.sequence = model["seq_len"] > 0
        cells = {"lstm": nn.LSTM, "gru": nn.GRU}
        self.recurrent = nn.ModuleList(
            cells[r["cell"]](r["in"], r["units"], batch_first=True) for r in model["recurrent"])
        self.dense = nn.ModuleList(nn.Linear(l["in"], l["out"]) for l in model["dense"])
        self.acts = nn.ModuleList(_activation(l) for l in model["dense"])
        self.output = {"softmax": nn.Softmax(dim=-1), "sigmoid": nn.Sigmoid(), "identity": nn.Identity()}[model["output"]]

    def forward(self, x):
        x = (x - self.mean) / self.std
        for rnn in self.recurrent:
            x, _ = rnn(x)  # [N, T, H]
        if len(self.recurrent):
            x = x[:, -1]
        elif self.sequence:
            x = x.flatten(1)  # [N, T·F]
        for linear, act in zip(self.dense, self.acts):
            x = act(linear(x))
        y = self.output(x)
        if self.target is None:
            return y
        y = y * self.target[1] + self.target[0]
        return torch.expm1(y) if self.log1p else y


def load_member(npz_path, member=None):
    """The module of one member of an export archive (the only one, or global index `member`)."""
    z = np.load(npz_path)
    if "model" not in z.files and any(k.startswith("architectures/") for k in z.files):
        raise ValueError(f"{npz_path} holds members of several architectures (architectures/arch_<a>/); "
                         "export one member with turbanet export RUN.h5 --member K --out member.npz")
    model = json.loads(str(z["model"]))
    ids = list(z["members/member"])
    stacked = z["params/layer_0/" + ("Wx" if model["recurrent"] else "W")].ndim == 3
    if stacked:
        if member is None:
            raise ValueError(f"{npz_path} holds members {ids}; choose one with member=K (--member K)")
        at = ids.index(member)
    elif member is not None and member != ids[0]:
        raise ValueError(f"{npz_path} holds member {ids[0]} only")

    def param(layer, name):
        a = z[f"params/layer_{layer}/{name}"]
        return torch.as_tensor(a[at] if stacked else a, dtype=torch.float32)

    F = model["step_features"] if model["seq_len"] > 0 else model["inputs"]
    mean = z["data/normalization/mean"] if "data/normalization/mean" in z.files else np.zeros(F, np.float32)
    std = z["data/normalization/std"] if "data/normalization/std" in z.files else np.ones(F, np.float32)
    if mean.ndim == 2:  # per-group statistics of an ensemble archive: the member's group
        mean, std = mean[at], std[at]
    target = None  # sequence runs' target statistics are per series: their output stays in model units
    # per-member target statistics (bootstrap, subsample, shards): the member's own row
    key = next((k for k in ("member_target", "target") if f"data/normalization/{k}_mean" in z.files), None)
    if model["seq_len"] == 0 and key:
        method = str(z["data/normalization/target_method"]) if "data/normalization/target_method" in z.files else ""
        t_mean, t_std = z[f"data/normalization/{key}_mean"], z[f"data/normalization/{key}_std"]
        if key == "member_target" and t_mean.ndim == 2:
            t_mean, t_std = t_mean[at], t_std[at]
        target = (t_mean, t_std, method)
    m = TurbanetMember(model, mean, std, target)
    with torch.no_grad():
        for i, (r, spec) in enumerate(zip(m.recurrent, model["recurrent"])):
            r.weight_ih_l0.copy_(param(i, "Wx").T)  # ours [in, G·H], torch's [G·H, in]
            r.weight_hh_l0.copy_(param(i, "Wh").T)
            if spec["cell"] == "lstm":  # one bias: torch's second one is zero
                r.bias_ih_l0.copy_(param(i, "b"))
                r.bias_hh_l0.zero_()
            else:
                r.bias_ih_l0.copy_(param(i, "bx"))
                r.bias_hh_l0.copy_(param(i, "bh"))
        for j, linear in enumerate(m.dense):
            layer = len(model["recurrent"]) + j
            linear.weight.copy_(param(layer, "W").T)  # ours [in, out] (y = x·W + b)
            linear.bias.copy_(param(layer, "b"))
    return m.eval()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("npz", help="archive written by turbanet export --format npz")
    ap.add_argument("--member", type=int, help="global member index (ensemble archives)")
    ap.add_argument("--save", help="torch.save the module to this file")
    ap.add_argument("--predict", help=".npy of raw inputs [N, F] (or [N, T, F]) to run the module on")
    ap.add_argument("--out", help=".npy to write the outputs of --predict to (default: print them)")
    a = ap.parse_args()
    module = load_member(a.npz, a.member)
    if a.save:
        torch.save(module, a.save)
    if a.predict:
        with torch.no_grad():
            y = module(torch.from_numpy(np.load(a.predict).astype(np.float32))).numpy()
        if a.out:
            np.save(a.out, y)
        else:
            print(y)
    if not (a.save or a.predict):
        print(module)


if __name__ == "__main__":
    main()

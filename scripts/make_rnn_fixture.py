#!/usr/bin/python3
"""Writes tests/data/rnn_golden.txt: forward outputs, MSE loss and the gradient of every
parameter of three tiny recurrent models, computed by PyTorch in float64, laid out the way
turbanet stores its LSTM, GRU and dense layers. The C++ tests read the committed fixture;
this script is kept to regenerate it:

    /usr/bin/python3 scripts/make_rnn_fixture.py            # writes tests/data/rnn_golden.txt
    /usr/bin/python3 scripts/make_rnn_fixture.py --check    # only verifies, writes nothing

(Debian's /usr/bin/python3 with python3-torch and python3-numpy.) The output is a pure
function of the seeds below: rerunning it reproduces the committed file byte for byte on the
same PyTorch/NumPy build (the last digits can differ between builds).

Before writing, the script checks itself and stops on any failure:
  1. a NumPy implementation of turbanet's equations (`np_forward`, below), fed only the
     turbanet-layout tensors, reproduces torch's outputs and loss to 1e-12;
  2. torch.autograd.gradcheck passes on the loss as a function of every parameter;
  3. central finite differences of the NumPy loss with respect to every entry of every
     turbanet-layout tensor match the gradients written to the fixture (max abs error printed;
     this also checks that the gradients are transposed/summed into turbanet's layout).

Cases
  lstm     nn.LSTM(2, 3) -> last step's h -> nn.Linear(3, 1);              B=4, T=5, F=2
  gru      nn.GRU(2, 3)  -> last step's h -> nn.Linear(3, 1);              B=4, T=5, F=2
  stacked  nn.LSTM(2, 3) (whole sequence) -> nn.GRU(3, 4) -> last step -> nn.Linear(4, 2);
                                                                           B=3, T=4, F=2
  Loss: torch.nn.MSELoss() (mean over batch and outputs). Inputs batch-first [B, T, F].
  Weights uniform(-0.6, 0.6), inputs and targets N(0, 1), from NumPy's default_rng(seed).

turbanet's layout (all matrices row-major; a model's tensors: recurrent layers in order,
then dense layers)
  lstm   Wx [in, 4H] = weight_ih_l0.T, Wh [H, 4H] = weight_hh_l0.T,
         b [4H] = bias_ih_l0 + bias_hh_l0 (here bias_hh_l0 = 0, so grad b = grad bias_ih_l0).
         Gates i, f, g, o (PyTorch's order); h0 = c0 = 0.
  gru    Wx [in, 3H] = weight_ih_l0.T, Wh [H, 3H] = weight_hh_l0.T, bx [3H] = bias_ih_l0,
         bh [3H] = bias_hh_l0 (both nonzero). Gates r, z, n; h0 = 0.
  dense  W [in, out] = weight.T, b [out].
  The equations are `np_forward` below.

Fixture format (plain text, whitespace-separated, one block per case):
  case NAME
  dims B T F
  layer TYPE IN UNITS            one line per layer: lstm, gru or dense
  tensor NAME ROWS COLS          every parameter tensor in model order (vectors: 1 row),
  v v v ...                      followed by one line of ROWS*COLS values, %.17g
  input X B T*F                  each row is one sample's window [T, F], row-major
  input Y B OUT                  targets
  output P B OUT                 the model's outputs
  output loss 1 1                the MSE loss
  grad NAME ROWS COLS            d loss / d tensor, same order, names and shapes as `tensor`
  end
"""
import argparse
import pathlib
import sys

import numpy as np
import torch
from torch import nn

torch.set_num_threads(1)
torch.set_default_dtype(torch.float64)

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "rnn_golden.txt"

# name -> (B, T, F, [(type, in, units), ...], seed)
CASES = {
    "lstm": (4, 5, 2, [("lstm", 2, 3), ("dense", 3, 1)], 101),
    "gru": (4, 5, 2, [("gru", 2, 3), ("dense", 3, 1)], 202),
    "stacked": (3, 4, 2, [("lstm", 2, 3), ("gru", 3, 4), ("dense", 4, 2)], 303),
}
WEIGHT_RANGE = 0.6


# ---------------------------------------------------------------------------------------------
# turbanet's layout: one list of (name, array) per model, layer by layer.

def tensor_shapes(kind, n_in, H):
    if kind == "lstm":
        return [("Wx", (n_in, 4 * H)), ("Wh", (H, 4 * H)), ("b", (1, 4 * H))]
    if kind == "gru":
        return [("Wx", (n_in, 3 * H)), ("Wh", (H, 3 * H)), ("bx", (1, 3 * H)), ("bh", (1, 3 * H))]
    if kind == "dense":
        return [("W", (n_in, H)), ("b", (1, H))]
    raise ValueError(kind)


def ordered_layers(layers):
    """Recurrent layers first (in order), then dense layers: the order of the tensors."""
    return [l for l in layers if l[0] != "dense"] + [l for l in layers if l[0] == "dense"]


def random_params(layers, rng):
    """[(layer index, name, array 2-D)] in turbanet's tensor order."""
    out = []
    for k, (kind, n_in, H) in enumerate(ordered_layers(layers)):
        for name, shape in tensor_shapes(kind, n_in, H):
            out.append((k, name, rng.uniform(-WEIGHT_RANGE, WEIGHT_RANGE, size=shape)))
    return out


# ---------------------------------------------------------------------------------------------
# NumPy reference of turbanet's equations, from the turbanet-layout tensors only.

def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def np_lstm(x, Wx, Wh, b):
    """x [B, T, in] -> h for every step [B, T, H]."""
    B, T, _ = x.shape
    H = Wh.shape[0]
    h = np.zeros((B, H))
    c = np.zeros((B, H))
    hs = []
    for t in range(T):
        a = x[:, t] @ Wx + h @ Wh + b          # [B, 4H], gate blocks i, f, g, o
        i = sigmoid(a[:, 0 * H:1 * H])
        f = sigmoid(a[:, 1 * H:2 * H])
        g = np.tanh(a[:, 2 * H:3 * H])
        o = sigmoid(a[:, 3 * H:4 * H])
        c = f * c + i * g
        h = o * np.tanh(c)
        hs.append(h)
    return np.stack(hs, axis=1)


def np_gru(x, Wx, Wh, bx, bh):
    """x [B, T, in] -> h for every step [B, T, H]; PyTorch's variant (r applied after Wh)."""
    B, T, _ = x.shape
    H = Wh.shape[0]
    h = np.zeros((B, H))
    hs = []
    for t in range(T):
        ax = x[:, t] @ Wx + bx                  # [B, 3H], gate blocks r, z, n
        ah = h @ Wh + bh
        r = sigmoid(ax[:, 0 * H:1 * H] + ah[:, 0 * H:1 * H])
        z = sigmoid(ax[:, 1 * H:2 * H] + ah[:, 1 * H:2 * H])
        n = np.tanh(ax[:, 2 * H:3 * H] + r * ah[:, 2 * H:3 * H])
        h = (1.0 - z) * n + z * h
        hs.append(h)
    return np.stack(hs, axis=1)


def np_forward(layers, params, X):
    """X [B, T, F] -> outputs [B, OUT]. Recurrent layers pass their whole sequence on; the
    first dense layer reads the last step's hidden state."""
    by_layer = {}
    for k, name, a in params:
        by_layer.setdefault(k, {})[name] = a
    seq, y = X, None
    for k, (kind, _, _) in enumerate(ordered_layers(layers)):
        p = by_layer[k]
        if kind == "lstm":
            seq = np_lstm(seq, p["Wx"], p["Wh"], p["b"][0])
        elif kind == "gru":
            seq = np_gru(seq, p["Wx"], p["Wh"], p["bx"][0], p["bh"][0])
        else:
            y = (seq[:, -1] if y is None else y) @ p["W"] + p["b"][0]
    return y


def np_loss(layers, params, X, Y):
    return float(np.mean((np_forward(layers, params, X) - Y) ** 2))


# ---------------------------------------------------------------------------------------------
# The same model in PyTorch.

class Model(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.kinds = [kind for kind, _, _ in ordered_layers(layers)]
        mods = []
        for kind, n_in, H in ordered_layers(layers):
            if kind == "lstm":
                mods.append(nn.LSTM(n_in, H, batch_first=True))
            elif kind == "gru":
                mods.append(nn.GRU(n_in, H, batch_first=True))
            else:
                mods.append(nn.Linear(n_in, H))
        self.mods = nn.ModuleList(mods)

    def forward(self, x):
        seq, y = x, None
        for kind, m in zip(self.kinds, self.mods):
            if kind in ("lstm", "gru"):
                seq, _ = m(seq)                  # zero initial state
            else:
                y = m(seq[:, -1] if y is None else y)
        return y


# turbanet tensor name -> (torch parameter name, transpose?) per layer type
TORCH_NAMES = {
    "lstm": {"Wx": ("weight_ih_l0", True), "Wh": ("weight_hh_l0", True), "b": ("bias_ih_l0", False)},
    "gru": {"Wx": ("weight_ih_l0", True), "Wh": ("weight_hh_l0", True),
            "bx": ("bias_ih_l0", False), "bh": ("bias_hh_l0", False)},
    "dense": {"W": ("weight", True), "b": ("bias", False)},
}


def to_torch(a, transpose):
    return torch.tensor(a.T if transpose else a.reshape(-1))


def load_params(model, layers, params):
    """Copies turbanet-layout tensors into the torch model; the LSTM's bias_hh is zero."""
    kinds = [kind for kind, _, _ in ordered_layers(layers)]
    with torch.no_grad():
        for k, name, a in params:
            tname, tr = TORCH_NAMES[kinds[k]][name]
            getattr(model.mods[k], tname).copy_(to_torch(a, tr))
        for k, kind in enumerate(kinds):
            if kind == "lstm":
                model.mods[k].bias_hh_l0.zero_()


def torch_grads(model, layers, params):
    """Gradients in turbanet's layout, same order as params."""
    kinds = [kind for kind, _, _ in ordered_layers(layers)]
    out = []
    for k, name, a in params:
        tname, tr = TORCH_NAMES[kinds[k]][name]
        g = getattr(model.mods[k], tname).grad.detach().numpy()
        out.append(g.T.copy() if tr else g.reshape(a.shape).copy())
    return out


def gradcheck(model, layers, params, X, Y):
    """torch.autograd.gradcheck of the loss as a function of every trained torch parameter.
    The function calls the ops nn.LSTM/nn.GRU run (torch.lstm, torch.gru) with the parameters
    as arguments: torch 1.13's functional_call does not swap an RNN module's flat weights."""
    kinds = [kind for kind, _, _ in ordered_layers(layers)]
    tparams = [getattr(model.mods[k], TORCH_NAMES[kinds[k]][n][0]) for k, n, _ in params]
    layer_of = [k for k, _, _ in params]
    loss_fn = nn.MSELoss()

    def f(*flat):
        seq, y = X, None
        for k, kind in enumerate(kinds):
            w = [t for t, j in zip(flat, layer_of) if j == k]
            B, H = seq.shape[0], ordered_layers(layers)[k][2]
            h0 = torch.zeros(1, B, H)
            if kind == "lstm":
                wih, whh, bih = w
                seq, _, _ = torch.lstm(seq, (h0, h0), [wih, whh, bih, torch.zeros(4 * H)],
                                       True, 1, 0.0, True, False, True)
            elif kind == "gru":
                seq, _ = torch.gru(seq, h0, w, True, 1, 0.0, True, False, True)
            else:
                y = torch.nn.functional.linear(seq[:, -1] if y is None else y, *w)
        return loss_fn(y, Y)

    inputs = tuple(t.detach().clone().requires_grad_(True) for t in tparams)
    # f is the module's computation: same loss, same autograd gradients
    loss = f(*inputs)
    assert float(loss) == float(loss_fn(model(X), Y))
    got = torch.autograd.grad(loss, inputs)
    assert all(torch.allclose(a, t.grad, rtol=0, atol=1e-14) for a, t in zip(got, tparams))
    return torch.autograd.gradcheck(f, inputs, eps=1e-6, atol=1e-8, rtol=1e-6)


def finite_difference(layers, params, X, Y, h=1e-6):
    """Central differences of the NumPy loss w.r.t. every entry of every turbanet tensor."""
    grads = []
    for j, (_, _, a) in enumerate(params):
        g = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            old = a[idx]
            a[idx] = old + h
            up = np_loss(layers, params, X, Y)
            a[idx] = old - h
            down = np_loss(layers, params, X, Y)
            a[idx] = old
            g[idx] = (up - down) / (2 * h)
        grads.append(g)
    return grads


# ---------------------------------------------------------------------------------------------

def fmt_values(a):
    return " ".join("%.17g" % v for v in np.asarray(a, np.float64).reshape(-1))


def make_case(name, B, T, F, layers, seed, out_lines):
    rng = np.random.default_rng(seed)
    params = random_params(layers, rng)
    X = rng.standard_normal((B, T, F))
    n_out = ordered_layers(layers)[-1][2]
    Y = rng.standard_normal((B, n_out))

    model = Model(layers)
    load_params(model, layers, params)
    Xt, Yt = torch.tensor(X), torch.tensor(Y)
    model.zero_grad()
    P = model(Xt)
    loss = nn.MSELoss()(P, Yt)
    loss.backward()
    P_np, loss_v = P.detach().numpy(), float(loss)
    grads = torch_grads(model, layers, params)

    # 1. layout and equations: NumPy from turbanet-layout tensors == torch
    P_ref = np_forward(layers, params, X)
    fwd_err = float(np.max(np.abs(P_ref - P_np)))
    loss_err = abs(np_loss(layers, params, X, Y) - loss_v)
    assert fwd_err < 1e-12 and loss_err < 1e-12, (name, fwd_err, loss_err)
    # 2. torch's own gradients
    assert gradcheck(model, layers, params, Xt, Yt), name
    # 3. the written gradients, in turbanet's layout, against finite differences of NumPy
    fd = finite_difference(layers, params, X, Y)
    fd_err = max(float(np.max(np.abs(g - d))) for g, d in zip(grads, fd))
    gmax = max(float(np.max(np.abs(g))) for g in grads)
    assert fd_err < 1e-8, (name, fd_err)
    print(f"{name:8s} loss {loss_v:.6f}  |P-P_numpy| {fwd_err:.1e}  |loss-loss_numpy| {loss_err:.1e}  "
          f"gradcheck ok  max|grad-fd| {fd_err:.1e} (max|grad| {gmax:.3f}, "
          f"{sum(a.size for _, _, a in params)} parameters)")

    out_lines.append(f"case {name}")
    out_lines.append(f"dims {B} {T} {F}")
    for kind, n_in, H in ordered_layers(layers):
        out_lines.append(f"layer {kind} {n_in} {H}")
    for _, tname, a in params:
        out_lines.append(f"tensor {tname} {a.shape[0]} {a.shape[1]}")
        out_lines.append(fmt_values(a))
    out_lines.append(f"input X {B} {T * F}")
    out_lines.append(fmt_values(X))
    out_lines.append(f"input Y {B} {n_out}")
    out_lines.append(fmt_values(Y))
    out_lines.append(f"output P {B} {n_out}")
    out_lines.append(fmt_values(P_np))
    out_lines.append("output loss 1 1")
    out_lines.append("%.17g" % loss_v)
    for (_, tname, a), g in zip(params, grads):
        out_lines.append(f"grad {tname} {a.shape[0]} {a.shape[1]}")
        out_lines.append(fmt_values(g))
    out_lines.append("end")
    return fd_err


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--check", action="store_true", help="verify only, write nothing")
    args = ap.parse_args()
    lines = []
    for name, (B, T, F, layers, seed) in CASES.items():
        make_case(name, B, T, F, layers, seed, lines)
    if args.check:
        print("all checks passed (nothing written)")
        return 0
    pathlib.Path(args.out).write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out} (torch {torch.__version__}, numpy {np.__version__})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

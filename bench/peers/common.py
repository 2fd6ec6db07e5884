"""Shared pieces of the peer benchmarks: workloads, data, initial weights, FLOP counts, output.

Needs only NumPy and h5py, so it runs both under the system Python (PyTorch peers) and in
bench/.venv-peers (the JAX peer). Each peer script is runnable on its own:

    /usr/bin/python3 bench/peers/torch_loop.py W1 --size 8 --epochs 64
    bench/.venv-peers/bin/python bench/peers/jax_turbanet.py W2 --size 32 --epochs 4

and prints one JSON line (see `result()`).

Data and initial weights. The spiral workloads train on exactly the data turbanet trained on
and start from exactly its initial weights: both are read from a turbanet run file
(`/data/splits/train/{X,y}`, `/init_params/layer_<i>/{W,b}`, W laid out [S, in, out] with
y = x·W + b). Pass `--run-file` (bench/compare.py passes the run of the same workload, swarm
size and epochs it just timed, so the peers' final weights can be compared with turbanet's
`/params`); without it, the peer runs `build/turbanet` once to make such a file. Fashion-MNIST
is read from the Debian package's gzipped IDX files (pixels / 255, as turbanet); each member
gets its own NumPy bootstrap resample of the 60 000 training images, reshuffled every epoch
(turbanet's resamples come from its Philox streams, so the samples differ, the amount of work
does not). With a W3 run file the peers start from its /init_params as well.
"""
import gzip
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
TURBANET = os.path.join(REPO, "build", "turbanet")
FASHION_DIR = "/usr/share/datasets/fashion-mnist"

# Hyper-parameters mirror the configs (Adam: beta1 0.9, beta2 0.999, eps 1e-8 everywhere).
WORKLOADS = {
    "W1": dict(name="spirals-small", config="configs/spirals-small.yaml", sizes=[2, 16, 2],
               batch=128, lr=1e-3, epochs=1024, data="spirals"),
    "W2": dict(name="spirals-large", config="configs/spirals-large.yaml", sizes=[2, 256, 256, 2],
               batch=128, lr=1e-3, epochs=48, data="spirals"),
    "W3": dict(name="fashion-mnist-ensemble", config="configs/fashion-mnist-ensemble.yaml",
               sizes=[784, 64, 32, 10], batch=8, lr=5e-5, epochs=1, data="fashion"),
}
BETAS = (0.9, 0.999)
EPS = 1e-8


def flops_per_member_step(sizes, batch):
    """FLOPs of one optimizer step of one member, counted exactly as `turbanet sweep` counts
    them (docs/sweep.md, src/model/flops.h): per sample, forward Σ (2·in·out + out), backward
    Σ (2·in·out + out) + Σ over layers after the first of 2·in·out (the first layer's input
    gradient is not computed); Adam 16 per parameter. Activations, softmax and the loss are
    not counted."""
    pairs = list(zip(sizes[:-1], sizes[1:]))
    fwd = sum(2 * a * b + b for a, b in pairs)
    bwd = fwd + sum(2 * a * b for a, b in pairs[1:])
    params = sum(a * b + b for a, b in pairs)
    return batch * (fwd + bwd) + 16 * params


def lstm_flops_per_member_step(window, units, batch, inputs=1, outputs=1):
    """FLOPs of one Adam step of one LSTM(inputs, units) -> last step -> dense(outputs) member on
    windows of `window` steps, counted as `turbanet sweep` counts them (docs/sweep.md): per
    window forward 2·W·in·G + 2·(W−1)·H·G + W·G (G = 4H) plus the head, backward the same plus
    2·(W−1)·G·H through time and the head's input gradient; Adam 16 per parameter. The cell
    equations are not counted."""
    G = 4 * units
    head = 2 * units * outputs + outputs
    fwd = 2 * window * inputs * G + 2 * (window - 1) * units * G + window * G + head
    bwd = fwd + 2 * (window - 1) * G * units + 2 * units * outputs
    params = inputs * G + units * G + G + units * outputs + outputs
    return batch * (fwd + bwd) + 16 * params


def parse_args(description, default_threads=2):
    import argparse
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("workload", choices=sorted(WORKLOADS))
    ap.add_argument("--size", "-S", type=int, required=True, help="swarm size")
    ap.add_argument("--epochs", type=int, help="default: W1 1024, W2 48, W3 1")
    ap.add_argument("--run-file", help="turbanet run file with the data and initial weights "
                    "(spirals) / initial weights (W3); made with build/turbanet when missing")
    ap.add_argument("--threads", type=int, default=default_threads)
    ap.add_argument("--max-steps", type=int, default=0,
                    help="development only: stop each epoch after this many steps (W3)")
    ap.add_argument("--seed", type=int, default=0, help="bootstrap/shuffle seed (W3)")
    ap.add_argument("--turbanet", default=TURBANET)
    ap.add_argument("--device", default="cpu",
                    help="PyTorch peers: the torch device to train on (cpu, cuda, cuda:1)")
    args = ap.parse_args()
    if args.epochs is None:
        args.epochs = WORKLOADS[args.workload]["epochs"]
    return args


def make_run_file(workload, size, epochs, turbanet=TURBANET, out=None):
    """Runs turbanet once for `workload` and returns the run file's path."""
    w = WORKLOADS[workload]
    if out is None:
        out = os.path.join(tempfile.mkdtemp(prefix="tn-bench-"), f"{workload}-S{size}.h5")
    cmd = [turbanet, "train", os.path.join(REPO, w["config"]), "--force", "-q",
           "--set", f"swarm.size={size}", "--set", f"train.epochs={epochs}",
           "--set", f"output.path={out}"]
    subprocess.run(cmd, check=True, cwd=REPO)
    return out


def read_init(f, size):
    layers = []
    i = 0
    while f"init_params/layer_{i}" in f:
        W = f[f"init_params/layer_{i}/W"][:size].astype(np.float32)
        b = f[f"init_params/layer_{i}/b"][:size].astype(np.float32)
        layers.append((W, b))
        i += 1
    if not layers or layers[0][0].shape[0] != size:
        raise SystemExit(f"run file has no /init_params for {size} members")
    return layers


def read_params(f, size):
    out = []
    i = 0
    while f"params/layer_{i}" in f:
        out.append((f[f"params/layer_{i}/W"][:size], f[f"params/layer_{i}/b"][:size]))
        i += 1
    return out


def _idx(path):
    with gzip.open(path, "rb") as fh:
        raw = fh.read()
    magic = int.from_bytes(raw[:4], "big")
    ndim = magic & 0xFF
    dims = [int.from_bytes(raw[4 + 4 * k: 8 + 4 * k], "big") for k in range(ndim)]
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load_fashion():
    def images(name):
        return (_idx(os.path.join(FASHION_DIR, name)).reshape(-1, 784).astype(np.float32) / 255.0)

    def labels(name):
        return _idx(os.path.join(FASHION_DIR, name)).astype(np.int64)

    return (images("train-images-idx3-ubyte.gz"), labels("train-labels-idx1-ubyte.gz"),
            images("t10k-images-idx3-ubyte.gz"), labels("t10k-labels-idx1-ubyte.gz"))


def he_init(sizes, size, seed):
    """turbanet's initialization for relu nets (He normal weights, zero biases), from NumPy."""
    rng = np.random.default_rng(seed)
    return [((rng.standard_normal((size, a, b)) * np.sqrt(2.0 / a)).astype(np.float32),
             np.zeros((size, b), np.float32)) for a, b in zip(sizes[:-1], sizes[1:])]


class Task:
    """Everything a peer needs: training data, per-step batch indices, initial weights, and
    the evaluation split. `order[s, t]` are the B training rows of member s at step t (all
    epochs concatenated), or None for the full-batch spirals (every step sees all rows)."""

    def __init__(self, args):
        import h5py
        w = WORKLOADS[args.workload]
        self.workload, self.size, self.epochs = args.workload, args.size, args.epochs
        self.sizes, self.batch, self.lr = w["sizes"], w["batch"], w["lr"]
        self.reference = None  # turbanet's trained params, same data/init/epochs
        self.notes = []
        t0 = time.perf_counter()
        if w["data"] == "spirals":
            run = args.run_file or make_run_file(args.workload, args.size, args.epochs, args.turbanet)
            if not args.run_file:
                self.notes.append("data and initial weights from a turbanet run made for this peer")
            with h5py.File(run, "r") as f:
                self.X = f["data/splits/train/X"][()].astype(np.float32)
                self.y = f["data/splits/train/y"][()].astype(np.int64)
                self.init = read_init(f, self.size)
                if int(f["meta"].attrs["epochs"]) == self.epochs:
                    self.reference = read_params(f, self.size)
            if not args.run_file:
                shutil.rmtree(os.path.dirname(run), ignore_errors=True)
            if self.batch < len(self.X):
                raise SystemExit("spiral peers assume full batch")
            self.batch = len(self.X)
            self.steps_per_epoch = 1
            self.order = None
            self.X_eval, self.y_eval, self.eval_split = self.X, self.y, "train"
            self.init_from = "turbanet /init_params"
            self.notes.append("full batch: no shuffle (a permutation of the full batch leaves the step unchanged)")
        else:
            self.X, self.y, self.X_eval, self.y_eval = load_fashion()
            self.eval_split = "test"
            n = len(self.X)
            self.steps_per_epoch = n // self.batch  # 60000 / 8 = 7500, no partial batch
            if args.max_steps:
                self.steps_per_epoch = min(self.steps_per_epoch, args.max_steps)
                self.notes.append(f"DEVELOPMENT RUN: {self.steps_per_epoch} steps per epoch")
            rng = np.random.default_rng(args.seed)
            boot = rng.integers(0, n, size=(self.size, n))  # each member's bootstrap resample
            order = np.empty((self.size, self.epochs, self.steps_per_epoch * self.batch), np.int64)
            for s in range(self.size):
                for e in range(self.epochs):
                    order[s, e] = rng.permutation(boot[s])[: self.steps_per_epoch * self.batch]
            self.order = order.reshape(self.size, self.epochs * self.steps_per_epoch, self.batch)
            if args.run_file:
                with h5py.File(args.run_file, "r") as f:
                    self.init = read_init(f, self.size)
                self.init_from = "turbanet /init_params"
            else:
                self.init = he_init(self.sizes, self.size, args.seed)
                self.init_from = "NumPy He normal"
            self.notes.append("bootstrap resamples from NumPy, not turbanet's Philox streams")
        self.steps = self.epochs * self.steps_per_epoch
        self.load_seconds = time.perf_counter() - t0


def evaluate(task, logits_fn):
    """Mean over members of loss and accuracy on the evaluation split; logits_fn(s, X) gives
    member s's logits as a NumPy array [N, K]."""
    losses, accs = [], []
    for s in range(task.size):
        z = logits_fn(s, task.X_eval).astype(np.float64)
        z -= z.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        losses.append(-logp[np.arange(len(task.y_eval)), task.y_eval].mean())
        accs.append((z.argmax(axis=1) == task.y_eval).mean())
    return float(np.mean(losses)), float(np.mean(accs))


def param_diff(task, params):
    """Worst relative difference (Frobenius, per member and tensor) between a peer's trained
    params [(W [S,in,out], b [S,out]), ...] and turbanet's, when the run file has them."""
    if task.reference is None:
        return None
    worst = 0.0
    for (W, b), (Wr, br) in zip(params, task.reference):
        for a, r in ((W, Wr), (b, br)):
            a = np.asarray(a, np.float64).reshape(task.size, -1)
            r = np.asarray(r, np.float64).reshape(task.size, -1)
            num = np.linalg.norm(a - r, axis=1)
            den = np.maximum(np.linalg.norm(r, axis=1), 1e-12)
            worst = max(worst, float((num / den).max()))
    return worst


def result(tool, task, train_seconds, warmup_seconds, loss, acc, params=None, **extra):
    """Prints the peer's one JSON line and returns it."""
    flops = flops_per_member_step(task.sizes, task.batch) * task.size * task.steps
    out = dict(tool=tool, workload=task.workload, S=task.size, epochs=task.epochs,
               steps=task.steps, batch=task.batch, train_seconds=train_seconds,
               warmup_seconds=warmup_seconds, load_seconds=task.load_seconds,
               gflops=flops / train_seconds / 1e9 if train_seconds > 0 else None,
               eval_split=task.eval_split, final_loss_mean=loss, final_accuracy_mean=acc,
               param_max_rel_diff_vs_turbanet=param_diff(task, params) if params else None,
               init_from=task.init_from, notes=task.notes, python=platform.python_version())
    out.update(extra)
    print(json.dumps(out), flush=True)
    return out


def main_guard(fn):
    try:
        fn()
    except KeyboardInterrupt:
        sys.exit(130)

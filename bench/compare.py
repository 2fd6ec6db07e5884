#!/usr/bin/python3
"""turbanet against its peers on the same workloads, timed in one run.

    /usr/bin/python3 bench/compare.py                       # everything (long: see bench/README.md)
    /usr/bin/python3 bench/compare.py --workloads W1,W2 --sizes 1,8 --epochs-w1 64 --epochs-w2 4

Workloads: W1 spirals-small (2-16-2), W2 spirals-large (2-256-256-2), full batch of 128
points, at every swarm size of --sizes; W3 the Fashion-MNIST ensemble (784-64-32-10, S=50,
batch 8, bootstrap, --epochs-w3 epochs, default 1); on request (--workloads ...,W4) W4 stocks
LSTM (configs/stocks-lstm.yaml: one LSTM(1, 32) -> dense(1) per series of a random-walk
"stocks" CSV, which `turbanet data generate` writes and the peer reads). Tools: turbanet (build/turbanet, the
training loop's /meta/train_seconds and the whole process), and the peers in bench/peers/:
pytorch-loop, pytorch-vmap, turbanet-py (the PyPI library; needs bench/install-peers.sh), and
on request turbanet-py+jit. For every (workload, S) turbanet runs first; the peers then train
from its run file: the same data and the same initial weights (spirals), the same initial
weights (W3). Each tool runs --repeats times, one process each; medians are reported.

Output: a table on stdout (`tn/peer` = turbanet's training time / the peer's, below 1 means
turbanet is faster; `speed-up` = the inverse), and in --out-dir: compare.csv (one row per
workload, S and tool), compare.json (every raw measurement) and compare.png (training time
against swarm size, log-log, one line per tool, one panel per workload).
"""
import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SYSTEM_PYTHON = "/usr/bin/python3"  # Debian's: python3-torch, python3-h5py, python3-matplotlib
try:
    import h5py  # noqa: F401
except ImportError:  # e.g. a pyenv python3 first on PATH: use Debian's
    if os.path.realpath(sys.executable) != os.path.realpath(SYSTEM_PYTHON) and os.access(SYSTEM_PYTHON, os.X_OK):
        os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON, os.path.abspath(__file__), *sys.argv[1:]])
    sys.exit("compare.py needs h5py (bench/install-peers.sh) and Debian's /usr/bin/python3")
sys.path.insert(0, os.path.join(HERE, "peers"))
import common  # noqa: E402

PEERS = {  # tool -> (script, extra args, interpreter key)
    "pytorch-loop": ("torch_loop.py", [], "system"),
    "pytorch-vmap": ("torch_vmap.py", [], "system"),
    "turbanet-py": ("jax_turbanet.py", [], "venv"),
    "turbanet-py+jit": ("jax_turbanet.py", ["--outer-jit"], "venv"),
}
DEFAULT_PEERS = "pytorch-loop,pytorch-vmap,turbanet-py"
# W4 (stocks LSTM) is not in common.WORKLOADS (the MLP peers cannot run it); its only peer is
# the PyTorch loop over per-series LSTMs. Hyper-parameters come from its config (read_w4_config).
W4 = dict(name="stocks-lstm", config="configs/stocks-lstm.yaml")
W4_PEERS = {"pytorch-loop": "torch_lstm_loop.py"}


def workload_info(workload):
    return W4 if workload == "W4" else common.WORKLOADS[workload]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def run_turbanet(args, workload, size, epochs, out):
    """size None: the config's own swarm (W4: one member per series)."""
    w = workload_info(workload)
    config = args.config_w4 if workload == "W4" else os.path.join(common.REPO, w["config"])
    cmd = [args.turbanet, "train", config, "--force", "-q", "--set", f"train.epochs={epochs}",
           "--set", f"output.path={out}"]
    if size is not None:
        cmd += ["--set", f"swarm.size={size}"]
    if args.turbanet_threads:
        cmd += ["--threads", str(args.turbanet_threads)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=common.REPO, timeout=args.timeout, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode not in (0, 3):  # 3: saved, some members diverged
        raise RuntimeError(f"turbanet exited {proc.returncode}: {proc.stderr[-2000:]}")
    with h5py.File(out, "r") as f:
        meta = f["meta"].attrs
        split = "test" if "eval/test" in f else "train"
        mm = dict(f[f"eval/{split}/member_mean"].attrs) if f"eval/{split}/member_mean" in f else {}
        loss = mm.get("log_loss", mm.get("mse"))  # classification / regression (W4)
        acc = mm.get("accuracy")
        return dict(tool="turbanet", workload=workload, S=size, epochs=epochs,
                    steps=int(meta["steps"]), train_seconds=float(meta["train_seconds"]),
                    warmup_seconds=None, process_seconds=wall, eval_split=split,
                    final_loss_mean=None if loss is None else float(loss),
                    final_accuracy_mean=None if acc is None else float(acc),
                    param_max_rel_diff_vs_turbanet=0.0, kernel=str(meta["kernel"]),
                    threads=int(meta["threads"]), returncode=proc.returncode)


def run_peer(args, tool, workload, size, epochs, run_file):
    script, extra, interp = PEERS[tool]
    python = args.python if interp == "system" else args.venv_python
    cmd = [python, os.path.join(HERE, "peers", script), workload, "--size", str(size),
           "--epochs", str(epochs), "--run-file", run_file, "--threads", str(args.peer_threads),
           "--turbanet", args.turbanet, *extra]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, timeout=args.timeout, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"{tool} exited {proc.returncode}: {proc.stderr[-2000:]}")
    r = json.loads(lines[-1])
    r["tool"] = tool
    r["process_seconds"] = wall
    return r


def read_yaml(path):
    """The config as nested dicts: PyYAML when installed, else a minimal reader of block
    mappings whose values are scalars or one-line flow mappings (enough for the keys W4
    reads; block lists are skipped)."""
    try:
        import yaml
        with open(path) as fh:
            return yaml.safe_load(fh) or {}
    except ImportError:
        pass

    def scalar(v):
        v = v.strip().strip("'\"")
        for conv in (int, float):
            try:
                return conv(v)
            except ValueError:
                pass
        return {"true": True, "false": False}.get(v.lower(), v)

    def flow(v):
        v = v.strip()
        if not (v.startswith("{") and v.endswith("}")):
            return scalar(v)
        out, depth, key, cur = {}, 0, None, ""
        for ch in v[1:-1] + ",":
            if ch in "{[":
                depth += 1
            elif ch in "}]":
                depth -= 1
            if ch == "," and depth == 0:
                k, _, val = cur.partition(":")
                if k.strip():
                    out[k.strip()] = flow(val)
                cur = ""
            else:
                cur += ch
        return out

    root, stack = {}, [(-1, None)]
    stack[0] = (-1, root)
    with open(path) as fh:
        for line in fh:
            text = line.split(" #")[0].rstrip() if not line.lstrip().startswith("#") else ""
            if not text.strip() or text.lstrip().startswith("-"):
                continue
            indent = len(text) - len(text.lstrip())
            key, _, val = text.strip().partition(":")
            while stack[-1][0] >= indent:
                stack.pop()
            parent = stack[-1][1]
            if val.strip():
                parent[key.strip()] = flow(val)
            else:
                parent[key.strip()] = {}
                stack.append((indent, parent[key.strip()]))
    return root


def repeat_peer(args, run_once, describe):
    """Runs a peer args.repeats times (run_once() returns its result dict), logging each run with
    describe(k, result). Returns (runs, status): status "ok", "failed" or "timeout>...", and the
    runs before the first failure."""
    runs = []
    for k in range(args.repeats):
        try:
            load = os.getloadavg()[0]
            r = run_once()
            r["loadavg"] = load
        except subprocess.TimeoutExpired:
            return runs, f"timeout>{args.timeout:g}s"
        except RuntimeError as e:
            log(str(e))
            return runs, "failed"
        runs.append(r)
        log(describe(k, r))
    return runs, "ok"


def read_w4_config(path):
    """What the W4 peer needs from the config, with the peer's defaults for missing keys."""
    c = read_yaml(path)
    data = c.get("data") or {}
    src, seq, split = data.get("source") or {}, data.get("sequence") or {}, data.get("split") or {}
    opt, train = c.get("optimizer") or {}, c.get("train") or {}
    return dict(series=src.get("series"), length=src.get("length"),
                window=int(seq.get("window", 20)), horizon=int(seq.get("horizon", 1)),
                stride=int(seq.get("stride", 1)), target=str(seq.get("target", "close")),
                split=f"{float(split.get('train', 0.7))},{float(split.get('val', 0.15))},"
                      f"{float(split.get('test', 0.15))}",
                lr=float(opt.get("lr", 1e-3)), epochs=int(train.get("epochs", 1)),
                batch=int(train.get("batch_size", 32)),
                units=int(((c.get("model") or {}).get("layers") or [{}])[0].get("units", 32)))


def run_peer_w4(args, tool, cfg, epochs, csv_path, json_path):
    cmd = [args.python, os.path.join(HERE, "peers", W4_PEERS[tool]), "--csv", csv_path,
           "--target", cfg["target"], "--window", str(cfg["window"]), "--horizon", str(cfg["horizon"]),
           "--stride", str(cfg["stride"]), "--split", cfg["split"], "--epochs", str(epochs),
           "--lr", repr(cfg["lr"]), "--batch", str(cfg["batch"]), "--hidden", str(cfg["units"]),
           "--threads", str(args.peer_threads),
           "--json", json_path]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, timeout=args.timeout, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0 or not os.path.exists(json_path):
        raise RuntimeError(f"{tool} (W4) exited {proc.returncode}: {proc.stderr[-2000:]}")
    with open(json_path) as fh:
        r = json.load(fh)
    os.remove(json_path)
    r["tool"] = tool
    r["process_seconds"] = wall
    return r


def run_w4(args, peers, tmp, rows, raw):
    """W4: generate the stocks CSV from the config, time turbanet on the config, then the
    PyTorch loop peer on the same CSV with the same epochs, lr and batch."""
    cfg = read_w4_config(args.config_w4)
    epochs = args.epochs_w4 or cfg["epochs"]
    csv_path = os.path.join(tmp, "stocks.csv")
    t0 = time.perf_counter()
    proc = subprocess.run([args.turbanet, "data", "generate", args.config_w4, "--out", csv_path],
                          cwd=common.REPO, timeout=args.timeout, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"turbanet data generate exited {proc.returncode}: {proc.stderr[-2000:]}")
    log(f"W4 data: {csv_path} in {time.perf_counter() - t0:.2f} s ({cfg})")
    S = cfg["series"]
    if S is None:  # count tickers of the CSV
        with open(csv_path) as fh:
            next(fh)
            S = len({line.split(",")[1] for line in fh if line.strip()})
    run_turbanet(args, "W4", None, 1, os.path.join(tmp, "warm.h5"))  # untimed, page cache
    ref = os.path.join(tmp, "W4.h5")
    runs = []
    for k in range(args.repeats):
        r = run_turbanet(args, "W4", None, epochs, ref)
        r["S"], r["loadavg"] = S, os.getloadavg()[0]
        runs.append(r)
        log(f"W4 S={S} turbanet #{k + 1}: train {r['train_seconds']:.4f} s, process {r['process_seconds']:.3f} s")
    raw += runs
    w4_flops = common.lstm_flops_per_member_step(cfg["window"], cfg["units"], cfg["batch"])
    rows.append(summarize(runs, "W4", S, epochs, "turbanet", "ok", batch=cfg["batch"], flops_per_step=w4_flops))
    if args.keep_runs:
        os.makedirs(os.path.join(args.out_dir, "runs"), exist_ok=True)
        shutil.copy(ref, os.path.join(args.out_dir, "runs", "W4.h5"))
    for p in peers:
        if p not in W4_PEERS:
            log(f"W4: no {p} peer (only {', '.join(W4_PEERS)})")
            continue
        runs, status = repeat_peer(
            args, lambda: run_peer_w4(args, p, cfg, epochs, csv_path, os.path.join(tmp, "peer.json")),
            lambda k, r: (f"W4 S={r['S']} {p} #{k + 1}: train {r['train_seconds']:.4f} s "
                          f"({r['ms_per_member_step']:.3f} ms per member-step), data prep {r['load_seconds']:.2f} s, "
                          f"warm-up {r['warmup_seconds']:.3f} s, process {r['process_seconds']:.2f} s, "
                          f"test mse {r['test_mse_mean']:.4f} (naive {r['naive_test_mse_mean']:.4f})"))
        if status != "ok":
            log(f"W4 {p}: {status}")
        raw += runs
        rows.append(summarize(runs if status == "ok" else [], "W4", S, epochs, p, status, batch=cfg["batch"],
                              flops_per_step=w4_flops))


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def summarize(runs, workload, size, epochs, tool, status, batch=None, flops_per_step=None):
    w = workload_info(workload)
    if batch is None:
        batch = 128 if w["data"] == "spirals" else w["batch"]
    row = dict(workload=workload, name=w["name"], S=size, epochs=epochs, batch=batch, tool=tool,
               status=status, repeats=len(runs))
    if runs:
        train = [r["train_seconds"] for r in runs]
        steps = runs[0]["steps"]
        # W4 passes its LSTM's count; the spirals and MNIST workloads are dense stacks
        per_step = flops_per_step if flops_per_step else (
            common.flops_per_member_step(w["sizes"], batch) if "sizes" in w else None)
        flops = per_step * size * steps if per_step else None
        last = runs[-1]
        row.update(steps=steps, train_s=median(train), train_s_min=min(train), train_s_max=max(train),
                   warmup_s=median([r.get("warmup_seconds") for r in runs]),
                   process_s=median([r.get("process_seconds") for r in runs]),
                   gflops=flops / median(train) / 1e9 if flops else None,
                   ms_per_member_step=1e3 * median(train) / (size * steps) if size and steps else None,
                   load_s=median([r.get("load_seconds") for r in runs]),
                   eval_split=last.get("eval_split"), final_loss=last.get("final_loss_mean"),
                   final_acc=last.get("final_accuracy_mean"),
                   param_rel_diff=last.get("param_max_rel_diff_vs_turbanet"),
                   loadavg=median([r.get("loadavg") for r in runs]),
                   detail=last.get("kernel") or "; ".join(last.get("notes", [])))
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", default="W1,W2,W3",
                    help="of W1, W2, W3, W4 (W4, stocks LSTM, only on request)")
    ap.add_argument("--sizes", default="1,8,32,128", help="swarm sizes of W1 and W2 (W3 is S=50)")
    ap.add_argument("--epochs-w1", type=int, default=1024)
    ap.add_argument("--epochs-w2", type=int, default=48)
    ap.add_argument("--epochs-w3", type=int, default=1)
    ap.add_argument("--size-w3", type=int, default=50)
    ap.add_argument("--config-w4", default=os.path.join(common.REPO, W4["config"]),
                    help="W4's config (opt-in workload: --workloads ...,W4)")
    ap.add_argument("--epochs-w4", type=int, help="default: the W4 config's train.epochs")
    ap.add_argument("--repeats", type=int, default=3, help="processes per tool and point (median)")
    ap.add_argument("--peers", default=DEFAULT_PEERS,
                    help=f"comma-separated, of {', '.join(PEERS)}; 'none' for turbanet alone")
    ap.add_argument("--peer-threads", type=int, default=2, help="torch.set_num_threads of the PyTorch peers")
    ap.add_argument("--turbanet-threads", type=int, help="turbanet --threads (default: its own, all cores)")
    ap.add_argument("--timeout", type=float, default=3600,
                    help="seconds per process; a peer that times out is skipped at larger sizes")
    ap.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    ap.add_argument("--turbanet", default=common.TURBANET)
    ap.add_argument("--python", default=SYSTEM_PYTHON if os.access(SYSTEM_PYTHON, os.X_OK) else sys.executable,
                    help="interpreter of the PyTorch peers (default: Debian's, with python3-torch)")
    ap.add_argument("--venv-python", default=os.path.join(HERE, ".venv-peers", "bin", "python"),
                    help="interpreter of the JAX peer")
    ap.add_argument("--keep-runs", action="store_true", help="keep turbanet's run files in out-dir/runs")
    args = ap.parse_args()

    workloads = [w.strip().upper() for w in args.workloads.split(",") if w.strip()]
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    peers = [] if args.peers == "none" else [p.strip() for p in args.peers.split(",") if p.strip()]
    for w in workloads:
        if w not in common.WORKLOADS and w != "W4":
            ap.error(f"unknown workload {w}")
    for p in peers:
        if p not in PEERS:
            ap.error(f"unknown peer {p}")
    if not os.access(args.turbanet, os.X_OK):
        ap.error(f"{args.turbanet} not found: build turbanet first (scripts/build.sh)")
    if any(PEERS[p][2] == "venv" for p in peers) and not os.access(args.venv_python, os.X_OK):
        log(f"{args.venv_python} missing (run bench/install-peers.sh): skipping the JAX peer")
        peers = [p for p in peers if PEERS[p][2] != "venv"]
    epochs_of = {"W1": args.epochs_w1, "W2": args.epochs_w2, "W3": args.epochs_w3}

    os.makedirs(args.out_dir, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="tn-compare-")
    rows, raw = [], []
    started = time.strftime("%Y-%m-%d %H:%M:%S")
    try:
        for w in workloads:
            if w == "W4":
                run_w4(args, peers, tmp, rows, raw)
                continue
            epochs = epochs_of[w]
            wsizes = [args.size_w3] if w == "W3" else sizes
            # untimed: a one-epoch turbanet run (page cache, dynamic loader); W3's data files read once
            if w == "W3":
                for name in os.listdir(common.FASHION_DIR):
                    with open(os.path.join(common.FASHION_DIR, name), "rb") as fh:
                        fh.read()
            else:
                run_turbanet(args, w, wsizes[0], 1, os.path.join(tmp, "warm.h5"))
            dead = {}  # peer -> why it is skipped (timed out or failed at a smaller size)
            for S in wsizes:
                ref = os.path.join(tmp, f"{w}-S{S}.h5")
                runs = []
                for k in range(args.repeats):
                    r = run_turbanet(args, w, S, epochs, ref)
                    r["loadavg"] = os.getloadavg()[0]
                    runs.append(r)
                    log(f"{w} S={S} turbanet #{k + 1}: train {r['train_seconds']:.4f} s, "
                        f"process {r['process_seconds']:.3f} s")
                raw += runs
                rows.append(summarize(runs, w, S, epochs, "turbanet", "ok"))
                if args.keep_runs:
                    os.makedirs(os.path.join(args.out_dir, "runs"), exist_ok=True)
                    shutil.copy(ref, os.path.join(args.out_dir, "runs", os.path.basename(ref)))
                for p in peers:
                    if p in dead:
                        rows.append(summarize([], w, S, epochs, p, f"skipped ({dead[p]} at a smaller S)"))
                        continue
                    runs, status = repeat_peer(
                        args, lambda: run_peer(args, p, w, S, epochs, ref),
                        lambda k, r: (f"{w} S={S} {p} #{k + 1}: train {r['train_seconds']:.4f} s, "
                                      f"warm-up {r['warmup_seconds']:.3f} s, process {r['process_seconds']:.2f} s, "
                                      f"acc {r['final_accuracy_mean']:.4f}"))
                    if status != "ok":
                        log(f"{w} S={S} {p}: {status}; skipped at larger sizes")
                        dead[p] = status
                    raw += runs
                    rows.append(summarize(runs if status == "ok" else [], w, S, epochs, p, status))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    # ratios against turbanet, measured in this run
    tn = {(r["workload"], r["S"]): r.get("train_s") for r in rows if r["tool"] == "turbanet"}
    for r in rows:
        t, base = r.get("train_s"), tn.get((r["workload"], r["S"]))
        r["tn_over_tool"] = base / t if t and base else None
        r["speedup"] = t / base if t and base else None

    print_table(rows, args, started)
    write_outputs(rows, raw, args, started)
    return 0


def fmt(x, spec):
    width = int("".join(c for c in spec.split(".")[0] if c.isdigit()) or 0)
    return "-".rjust(width) if x is None else format(x, spec)


def print_table(rows, args, started):
    print(f"# turbanet vs peers, {started}, repeats {args.repeats} (median), peers' threads "
          f"{args.peer_threads}, turbanet threads {args.turbanet_threads or 'default'}")
    head = (f"{'wl':3} {'S':>4} {'epochs':>6} {'steps':>6} {'tool':16} {'train s':>9} {'min':>9} "
            f"{'max':>9} {'warm-up s':>9} {'process s':>9} {'GFLOP/s':>8} {'tn/peer':>8} "
            f"{'speed-up':>8} {'loss':>7} {'acc':>7} {'Δparams':>8}")
    print(head)
    print("-" * len(head))
    last = None
    for r in rows:
        if last and (r["workload"], r["S"]) != last:
            print()
        last = (r["workload"], r["S"])
        if r["status"] != "ok":
            print(f"{r['workload']:3} {r['S']:>4} {r['epochs']:>6} {'':>6} {r['tool']:16} {r['status']}")
            continue
        print(f"{r['workload']:3} {r['S']:>4} {r['epochs']:>6} {r['steps']:>6} {r['tool']:16} "
              f"{fmt(r['train_s'], '9.4f')} {fmt(r['train_s_min'], '9.4f')} {fmt(r['train_s_max'], '9.4f')} "
              f"{fmt(r['warmup_s'], '9.3f')} {fmt(r['process_s'], '9.3f')} {fmt(r['gflops'], '8.2f')} "
              f"{fmt(r['tn_over_tool'] if r['tool'] != 'turbanet' else None, '8.3f')} "
              f"{(fmt(r['speedup'], '7.1f') + 'x') if r['tool'] != 'turbanet' else '-'.rjust(8)} "
              f"{fmt(r['final_loss'], '7.4f')} {fmt(r['final_acc'], '7.4f')} "
              f"{fmt(r['param_rel_diff'] if r['tool'] != 'turbanet' else None, '8.1e')}")
    note = ("train s: training loop only (turbanet: /meta/train_seconds; peers: after warm-up, until "
            "the last step's weights are ready). warm-up s: peers' first steps/compilation, not in train s. "
            "process s: the whole process (turbanet: data, training, evaluation, run file; peers: imports, "
            "data, warm-up/compilation, training, evaluation). tn/peer = turbanet train s / peer train s "
            "(< 1: turbanet faster); speed-up = the inverse. GFLOP/s = FLOPs per member-step as turbanet "
            "sweep counts them (docs/sweep.md) · S · steps / train s. loss, acc: member mean on the evaluation "
            "split (spirals: train, W3: test). Δparams: worst relative difference of a peer's trained "
            "weights from turbanet's (same data and initial weights; '-' for W3, whose bootstrap "
            "resamples differ).")
    w4 = [r for r in rows if r["workload"] == "W4" and r.get("train_s")]
    if w4:
        print()
        print("W4 per member-step (train s / (S · steps)): " + ", ".join(
            f"{r['tool']} {r['ms_per_member_step']:.3f} ms" for r in w4 if r.get("ms_per_member_step")))
        note += (" W4: loss is the member mean test MSE (turbanet: /eval/test/member_mean mse; peer: "
                 "normalized units, its naive last-value MSE is in compare.json); GFLOP/s from the LSTM's count "
                 "(docs/sweep.md); no acc, no Δparams (own initial weights and shuffles).")
    print()
    print(textwrap.fill(note, 110), flush=True)


def write_outputs(rows, raw, args, started):
    fields = ["workload", "name", "S", "epochs", "steps", "batch", "tool", "status", "repeats",
              "train_s", "train_s_min", "train_s_max", "warmup_s", "process_s", "load_s", "gflops",
              "ms_per_member_step",
              "tn_over_tool", "speedup", "eval_split", "final_loss", "final_acc", "param_rel_diff",
              "loadavg", "detail"]
    csv_path = os.path.join(args.out_dir, "compare.csv")
    with open(csv_path, "w", newline="") as fh:
        wr = csv.DictWriter(fh, fieldnames=fields, extrasaction="ignore")
        wr.writeheader()
        for r in rows:
            wr.writerow(r)
    with open(os.path.join(args.out_dir, "compare.json"), "w") as fh:
        json.dump(dict(started=started, argv=sys.argv, args=vars(args), rows=rows, raw=raw), fh, indent=1)
    png = os.path.join(args.out_dir, "compare.png")
    try:
        plot(rows, png)
    except ImportError as e:
        log(f"no plot ({e}); install python3-matplotlib")
        png = None
    log(f"wrote {csv_path}" + (f", {png}" if png else ""))


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    workloads = list(dict.fromkeys(r["workload"] for r in rows))
    tools = list(dict.fromkeys(r["tool"] for r in rows))
    colors = {t: f"C{i}" for i, t in enumerate(tools)}
    fig, axes = plt.subplots(1, len(workloads), figsize=(5.2 * len(workloads), 4.2), squeeze=False)
    for ax, w in zip(axes[0], workloads):
        wr = [r for r in rows if r["workload"] == w and r.get("train_s")]
        if not wr:
            continue
        epochs, name = wr[0]["epochs"], wr[0]["name"]
        sizes = sorted({r["S"] for r in wr})
        if len(sizes) > 1:
            for t in tools:
                pts = sorted((r["S"], r["train_s"]) for r in wr if r["tool"] == t)
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=t, color=colors[t],
                            lw=2.5 if t == "turbanet" else 1.5)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("swarm size S (members)")
            ax.set_xticks(sizes)
            ax.set_xticklabels([str(s) for s in sizes])
        else:
            ts = [r for r in wr]
            ax.bar(range(len(ts)), [r["train_s"] for r in ts], color=[colors[r["tool"]] for r in ts])
            ax.set_xticks(range(len(ts)))
            ax.set_xticklabels([r["tool"] for r in ts], rotation=20, ha="right")
            for i, r in enumerate(ts):
                ax.annotate(f"{r['train_s']:.3g} s", (i, r["train_s"]), ha="center", va="bottom", fontsize=8)
            ax.set_xlabel(f"S = {sizes[0]}")
        ax.set_ylabel("training time (s, median)")
        ax.set_title(f"{w} {name}, {epochs} epoch{'s' if epochs != 1 else ''}")
        ax.grid(True, which="both", alpha=0.3)
        if len(sizes) > 1:
            ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())

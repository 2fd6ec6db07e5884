#!/usr/bin/env python3
"""Checks `turbanet export` against turbanet itself, with onnxruntime (tests/test_export.cpp).

    check_export.py TURBANET RUN.h5 [RUN.h5 ...]

For every run file it exports the ensemble and one member as ONNX and the ensemble as .npz,
checks each .onnx with onnx.checker (full_check), and compares:
  - feature-vector runs: onnxruntime on raw inputs (the stored split de-normalized, or random)
    against `turbanet predict` of the same inputs (CSV), every output of the prediction file
    (with an ensemble selection: the selected members, weighted, in both);
  - sequence runs (predict does not take them yet): each of up to three members' graph on its
    own test windows against the predictions training stored (/predictions/test), in model
    units and, with a normalized target, in original units (runs with data.sequence.transform
    or scale: window have no output_original); the ensemble graph of runs without
    group_by against /predictions/test/members;
  - the .npz arrays against the run file's, exactly;
  - with torch importable by /usr/bin/python3: scripts/to_torch.py's module on the same inputs
    against onnxruntime (all of them in one Python process, which imports torch once).
Prints one line per comparison with the largest error, absolute up to magnitude 1 and relative
above it (float32 keeps about 7 digits: a regression output of 5000 in original units differs
in the 4th decimal); exits 1 when one exceeds TOL (1e-5) or a check fails. Needs numpy, h5py, onnx and onnxruntime
(scripts/install-test-venv.sh makes .venv-test with them).
"""
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np
import onnx
import onnxruntime as ort

TOL = 1e-5
HERE = os.path.dirname(os.path.abspath(__file__))
failures = []


def compare(what, got, want, tol=TOL, scale=None):
    """`scale`: the magnitude errors are relative to above 1 (default: |want|)."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        failures.append(f"{what}: shape {got.shape} != {want.shape}")
        print(f"FAIL {what}: shape {got.shape} != {want.shape}")
        return
    scale = np.abs(want) if scale is None else scale
    err = float(np.max(np.abs(got - want) / np.maximum(1.0, scale))) if got.size else 0.0
    ok = err <= tol and np.isfinite(got).all()
    print(f"{'ok  ' if ok else 'FAIL'} {what}: max |error| {err:.3g}")
    if not ok:
        failures.append(f"{what}: max |error| {err:.3g} > {tol}")


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {r.returncode}: {r.stderr}")
    return r


def export(turbanet, run_file, out, *args):
    run([turbanet, "export", run_file, "--out", out, "--force", "-q", *args])
    if out.endswith(".onnx"):
        onnx.checker.check_model(out, full_check=True)
        print(f"ok   onnx.checker accepts {os.path.basename(out)}")
    return out


def session(path):
    return ort.InferenceSession(path, providers=["CPUExecutionProvider"])


def outputs(sess, x):
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(None, {"input": x})))


def stats(f, row=None):
    """The stored input statistics (per-group ones: row `row`), or (0, 1)."""
    if "data/normalization/mean" not in f:
        return 0.0, 1.0
    mean, std = f["data/normalization/mean"][()], f["data/normalization/std"][()]
    if mean.ndim == 2:
        mean, std = mean[row], std[row]
    return mean, std


def raw_inputs(f, rng):
    """Up to 64 raw feature vectors: a stored split de-normalized, else random in [0, 1)."""
    F = len(f["data/feature_names"])
    for split in ("test", "train", "val"):
        key = f"data/splits/{split}/X"
        if key in f and f[key].shape[0] > 0:
            mean, std = stats(f)
            return (f[key][:64] * std + mean).astype(np.float32)
    return rng.random((64, F), dtype=np.float32)


TORCH_PYTHON = "/usr/bin/python3"
torch_jobs = []  # (npz, x.npy, y.npy, want, what): run by run_torch_jobs in one process


def check_torch(npz, x, want, what):
    """scripts/to_torch.py's module on x against `want` (onnxruntime), when torch is there. The
    module runs later, with every other one, in one Python process (run_torch_jobs): importing
    torch takes seconds, once per process."""
    base = os.path.splitext(npz)[0] + f"-torch{len(torch_jobs)}"
    np.save(base + "-x.npy", x)
    torch_jobs.append((npz, base + "-x.npy", base + "-y.npy", np.array(want), what))


TORCH_RUNNER = """
import sys, numpy as np, torch
sys.path.insert(0, sys.argv[1])
import to_torch
jobs = sys.argv[2:]
for npz, x, y in zip(jobs[0::3], jobs[1::3], jobs[2::3]):
    with torch.no_grad():
        np.save(y, to_torch.load_member(npz, None)(torch.from_numpy(np.load(x).astype(np.float32))).numpy())
"""


def run_torch_jobs():
    if not torch_jobs:
        return
    if subprocess.run([TORCH_PYTHON, "-c", "import torch"], capture_output=True).returncode != 0:
        for job in torch_jobs:
            print(f"SKIPPED {job[4]}: no torch for {TORCH_PYTHON} (Debian's python3-torch)")
        return
    args = [a for npz, x, y, _, _ in torch_jobs for a in (npz, x, y)]
    run([TORCH_PYTHON, "-c", TORCH_RUNNER, HERE] + args)
    for npz, x, y, want, what in torch_jobs:
        compare(what, np.load(y), want)


def check_npz(npz, f, members):
    z = np.load(npz)
    if "architectures" in f and len(members) > 1:  # one group per architecture, as in the run file
        for a, g in f["architectures"].items():
            key = f"architectures/{a}"
            i = 0
            while f"params/layer_{i}" in g:
                for name, ds in g[f"params/layer_{i}"].items():
                    if not np.array_equal(z[f"{key}/params/layer_{i}/{name}"], ds[()]):
                        failures.append(f"{npz}: {key}/params/layer_{i}/{name} differs from the run file")
                i += 1
            assert list(z[f"{key}/members/member"]) == list(g["members"][()])
        print(f"ok   {os.path.basename(npz)}: {len(f['architectures'])} architectures equal to the run file's")
        return
    if "architectures" in f:  # one member: its architecture's row
        k = members[0]
        for a, g in f["architectures"].items():
            rows = list(g["members"][()])
            if k in rows:
                i = 0
                while f"params/layer_{i}" in g:
                    for name, ds in g[f"params/layer_{i}"].items():
                        if not np.array_equal(z[f"params/layer_{i}/{name}"], ds[()][rows.index(k)]):
                            failures.append(f"{npz}: params/layer_{i}/{name} differs from the run file's {a}")
                    i += 1
        print(f"ok   {os.path.basename(npz)}: member {k} equal to the run file's")
        return
    i = 0
    while f"params/layer_{i}" in f:
        for name, ds in f[f"params/layer_{i}"].items():
            key = f"params/layer_{i}/{name}"
            want = ds[()][members] if len(members) > 1 or z[key].ndim == ds.ndim else ds[()][members[0]]
            if not np.array_equal(z[key], want):
                failures.append(f"{npz}: {key} differs from the run file")
        i += 1
    first = int(f["meta"].attrs["first_member"])
    assert list(z["members/member"]) == [m + first for m in members] or len(members) == 1
    if "data/feature_names" in f:
        assert list(z["data/feature_names"]) == list(f["data/feature_names"].asstr()[()])
    print(f"ok   {os.path.basename(npz)}: {i} layers equal to the run file's")


def check_vectors(turbanet, path, f, d, tag):
    rng = np.random.default_rng(0)
    x = raw_inputs(f, rng)
    names = list(f["data/feature_names"].asstr()[()])
    csv = os.path.join(d, f"{tag}.csv")
    with open(csv, "w") as out:
        out.write(",".join(names) + "\n")
        for row in x:
            out.write(",".join(f"{v:.9g}" for v in row) + "\n")
    pred = os.path.join(d, f"{tag}-pred.h5")
    run([turbanet, "predict", path, "--input", csv, "--out", pred, "--force", "-q"])
    ens = session(export(turbanet, path, os.path.join(d, f"{tag}.onnx"), "--ensemble"))
    o = outputs(ens, x)
    with h5py.File(pred, "r") as p:
        members = list(p["member"][()])
        compare(f"{tag} ensemble: members", o["members"], p["members"][()])
        compare(f"{tag} ensemble: ensemble", o["ensemble"], p["ensemble"][()])
        # a spread of members of magnitude m carries their float32 rounding, relative to m
        compare(f"{tag} ensemble: ensemble_std", o["ensemble_std"], p["ensemble_std"][()],
                scale=np.max(np.abs(p["members"][()]), axis=0))
        if "label" in p:
            for k in ("entropy", "mutual_information", "disagreement"):
                compare(f"{tag} ensemble: {k}", o[k], p[k][()])
            differ = int(np.sum(o["label"] != p["label"][()]))
            print(f"{'ok  ' if differ == 0 else 'FAIL'} {tag} ensemble: label differs on {differ} of {len(x)}")
            if differ:
                failures.append(f"{tag}: {differ} labels differ")
        k = members[-1]
        one = session(export(turbanet, path, os.path.join(d, f"{tag}-m{k}.onnx"), "--member", str(k)))
        m = outputs(one, x)
        compare(f"{tag} member {k}: output", m["output"], p["members"][len(members) - 1])
    npz = export(turbanet, path, os.path.join(d, f"{tag}.npz"))
    first = int(f["meta"].attrs["first_member"])
    check_npz(npz, f, [m - first for m in members])
    with h5py.File(pred, "r") as p:
        if "selection" in p:  # an ensemble selection: its members and weights in the archive too
            compare(f"{tag} npz: members/weight", np.load(npz)["members/weight"], p["selection/weight"][()])
    npz_one = export(turbanet, path, os.path.join(d, f"{tag}-m{k}.npz"), "--member", str(k))
    check_npz(npz_one, f, [k])
    check_torch(npz_one, x, m["output"], f"{tag} member {k}: to_torch.py vs onnxruntime")


def check_sequences(turbanet, path, f, d, tag):
    pred = f["predictions/test"]
    X = f["data/splits/test/X"][()]  # [n, T, F] normalized
    first = int(f["meta"].attrs["first_member"])
    S = int(f["meta"].attrs["swarm_size"])
    if "own" in pred:  # group_by: each sample by its own member
        member = pred["member"][()]
        for k in sorted(set(member.tolist()))[:3]:
            rows = np.nonzero(member == k)[0]
            mean, std = stats(f, k - first)
            x = (X[rows] * std + mean).astype(np.float32)
            path_k = export(turbanet, path, os.path.join(d, f"{tag}-m{k}.onnx"), "--member", str(k))
            o = outputs(session(path_k), x)
            compare(f"{tag} member {k}: output vs /predictions/test/own", o["output"], pred["own"][rows])
            affine = f["data"].attrs.get("transform", b"none") in (b"none", "none") and \
                f["data"].attrs.get("scale", b"series") in (b"series", "series")
            if "own_original" in pred and affine:
                # original units are larger (prices around 100): the same relative error
                scale = max(1.0, float(np.max(np.abs(pred["own_original"][rows]))))
                compare(f"{tag} member {k}: output_original vs own_original (/{scale:.3g})",
                        o["output_original"] / scale, pred["own_original"][rows] / scale)
            elif "own_original" in pred:  # a change or a window-scaled value: needs the window's last value
                ok = "output_original" not in o
                print(f"{'ok  ' if ok else 'FAIL'} {tag} member {k}: no output_original (transform or window scaling)")
                if not ok:
                    failures.append(f"{tag}: output_original of a transformed or window-scaled run")
            npz = export(turbanet, path, os.path.join(d, f"{tag}-m{k}.npz"), "--member", str(k))
            check_npz(npz, f, [k - first])
            check_torch(npz, x, o["output"], f"{tag} member {k}: to_torch.py vs onnxruntime")
        r = subprocess.run([turbanet, "export", path, "--out", os.path.join(d, "refused.onnx")], capture_output=True)
        ok = r.returncode == 2 and not os.path.exists(os.path.join(d, "refused.onnx"))
        print(f"{'ok  ' if ok else 'FAIL'} {tag}: the ensemble of a group_by run is refused (exit {r.returncode})")
        if not ok:
            failures.append(f"{tag}: ensemble export of a group_by run not refused")
    else:
        mean, std = stats(f)
        x = (X * std + mean).astype(np.float32)
        o = outputs(session(export(turbanet, path, os.path.join(d, f"{tag}.onnx"), "--ensemble")), x)
        compare(f"{tag} ensemble: members vs /predictions/test/members", o["members"], pred["members"][()])
        compare(f"{tag} ensemble: ensemble vs ensemble_mean", o["ensemble"], pred["ensemble_mean"][()])
        k = first + S - 1
        m = outputs(session(export(turbanet, path, os.path.join(d, f"{tag}-m{k}.onnx"), "--member", str(k))), x)
        compare(f"{tag} member {k}: output", m["output"], pred["members"][S - 1])


def main():
    turbanet, runs = sys.argv[1], sys.argv[2:]
    with tempfile.TemporaryDirectory() as d:
        for path in runs:
            tag = os.path.splitext(os.path.basename(path))[0]
            try:
                with h5py.File(path, "r") as f:
                    if "seq_len" in f["data"].attrs and int(f["data"].attrs["seq_len"]) > 0:
                        check_sequences(turbanet, path, f, d, tag)
                    else:
                        check_vectors(turbanet, path, f, d, tag)
            except Exception as e:  # report and go on with the next run
                print(f"FAIL {tag}: {type(e).__name__}: {e}")
                failures.append(f"{tag}: {e}")
        try:
            run_torch_jobs()
        except Exception as e:
            print(f"FAIL to_torch.py: {type(e).__name__}: {e}")
            failures.append(f"to_torch.py: {e}")
    print(f"{len(failures)} failures" + "".join("\n  " + f for f in failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

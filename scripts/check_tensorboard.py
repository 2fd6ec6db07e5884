#!/usr/bin/env python3
"""Checks the TensorBoard logs of a turbanet run (train.tensorboard) with TensorBoard's own reader.

    check_tensorboard.py LOGDIR RUN.h5 [REFERENCE_LOGDIR]

Loads every run of LOGDIR with tensorboard's EventAccumulator and checks: each (run, tag) has
strictly increasing steps; each member run's loss, val_loss, accuracy and val_accuracy are the
run file's /history rows exactly (float32), at the epochs where those are finite; the swarm
run's min, max and mean curves are those of the histories, and each arch-<i> run's those of
its members' (architecture i: the run file's /architectures/arch_<i>, whose name each member
session's architecture hparam holds);
the hparams plugin's experiment names every session's hparams and metrics, and each member's
session holds its index and ends in success. With REFERENCE_LOGDIR (an uninterrupted run's logs), every run and tag has the same
steps and values there (the ensemble run: its last step). Prints "ok: ..." or the first
difference, and exits 1 on one. Run by tests/test_tensorboard_log.cpp in the test venv.
"""
import os
import sys

import h5py
import numpy as np
from tensorboard.backend.event_processing import event_accumulator
from tensorboard.plugins.hparams import metadata

HISTORY = {"loss": "train_loss", "val_loss": "val_loss", "accuracy": "train_accuracy",
           "val_accuracy": "val_accuracy"}


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def load(path):
    acc = event_accumulator.EventAccumulator(path, size_guidance={
        event_accumulator.SCALARS: 0, event_accumulator.TENSORS: 0})
    acc.Reload()
    return acc


def scalars(acc):
    out = {}
    for tag in acc.Tags()["scalars"]:
        events = acc.Scalars(tag)
        steps = [e.step for e in events]
        if any(b <= a for a, b in zip(steps, steps[1:])):
            fail(f"{acc.path}: tag {tag}: steps not strictly increasing: {steps}")
        out[tag] = [(e.step, np.float32(e.value)) for e in events]
    return out


def runs_of(logdir):
    return sorted(d for d in os.listdir(logdir) if os.path.isdir(os.path.join(logdir, d)))


def check_hparams(logdir, runs):
    top = load(logdir)
    content = top.PluginTagToContent(metadata.PLUGIN_NAME)
    if metadata.EXPERIMENT_TAG not in content:
        fail(f"{logdir}: no hparams experiment")
    exp = metadata.parse_experiment_plugin_data(content[metadata.EXPERIMENT_TAG])
    names = {h.name for h in exp.hparam_infos}
    archs = {}  # member -> its architecture hparam
    metrics = {m.name.tag for m in exp.metric_infos}
    if "loss" not in metrics:
        fail(f"experiment metrics {metrics} lack loss")
    for run in runs:
        if not run.startswith("member-"):
            continue
        c = load(os.path.join(logdir, run)).PluginTagToContent(metadata.PLUGIN_NAME)
        start = metadata.parse_session_start_info_plugin_data(c[metadata.SESSION_START_INFO_TAG])
        if set(start.hparams) != names:
            fail(f"{run}: session hparams {set(start.hparams)} are not the experiment's {names}")
        if int(start.hparams["member"].number_value) != int(run.split("-")[1]):
            fail(f"{run}: session hparam member is {start.hparams['member'].number_value}")
        if "architecture" in start.hparams:
            archs[int(run.split("-")[1])] = start.hparams["architecture"].string_value
        end = metadata.parse_session_end_info_plugin_data(c[metadata.SESSION_END_INFO_TAG])
        if end.status != 1:  # STATUS_SUCCESS
            fail(f"{run}: session ended with status {end.status}")
    return len(names), len(metrics), archs


def check_summary(logs, run, hist, rows):
    """run's min, max and mean curves are those of the histories' rows `rows`, at every epoch
    where one of them has a value."""
    for tag, h in hist.items():
        steps = [e + 1 for e in range(h.shape[1]) if np.isfinite(h[rows, e]).any()]
        if [step for step, _ in logs[run].get(tag + "/min", [])] != steps:
            fail(f"{run}/{tag}/min: steps {[s for s, _ in logs[run].get(tag + '/min', [])]} are not {steps}")
        for step, v in logs[run].get(tag + "/min", []):
            col = h[rows, step - 1]
            col = col[np.isfinite(col)]
            if v != col.min() or dict(logs[run][tag + "/max"])[step] != col.max():
                fail(f"{run}/{tag}: min or max at step {step} is not the histories'")
            mean = np.float32(col.astype(np.float64).mean())
            if abs(dict(logs[run][tag + "/mean"])[step] - mean) > 1e-6 * max(1.0, abs(mean)):
                fail(f"{run}/{tag}/mean at step {step} is not the histories' mean {mean}")


def main():
    logdir, run_file = sys.argv[1], sys.argv[2]
    reference = sys.argv[3] if len(sys.argv) > 3 else None
    runs = runs_of(logdir)
    with h5py.File(run_file, "r") as f:
        hist = {k: f["/history/" + v][()] for k, v in HISTORY.items() if "/history/" + v in f}
    first = 0  # the tests' swarms start at member 0: history row k is member-k
    logs = {run: scalars(load(os.path.join(logdir, run))) for run in runs}
    members = [r for r in runs if r.startswith("member-")]
    values = 0
    for run in members:
        s = int(run.split("-")[1]) - first
        for tag, h in hist.items():
            want = [(e + 1, np.float32(v)) for e, v in enumerate(h[s]) if np.isfinite(v)]
            got = logs[run].get(tag, [])
            if got != want:
                fail(f"{run}/{tag}: {got[:5]}... is not the run file's {want[:5]}...")
            values += len(got)
    if "swarm" not in logs:
        fail("no swarm run")
    check_summary(logs, "swarm", hist, slice(None))
    hparams, metrics, archs = check_hparams(logdir, runs)
    with h5py.File(run_file, "r") as f:  # architecture i: the run file's /architectures/arch_<i>
        arch = {int(k.split("_")[1]): (f["/architectures"][k].attrs["architecture"], f["/architectures"][k]["members"][()])
                for k in f.get("/architectures", {})}
    arch_runs = [r for r in runs if r.startswith("arch-")]
    if sorted(int(r.split("-")[1]) for r in arch_runs) != sorted(arch):
        fail(f"arch runs {arch_runs} are not one per architecture of the run file ({len(arch)})")
    for run in arch_runs:
        name, rows = arch[int(run.split("-")[1])]
        if any(archs.get(m, name) != name for m in rows):
            fail(f"{run}: a member session's architecture hparam is not {name}")
        check_summary(logs, run, hist, [m - first for m in rows])
    with h5py.File(run_file, "r") as f:  # the ensemble's final scores: /eval/<split>/ensemble's metrics
        for tag, got in logs["ensemble"].items():
            split, metric = tag.split("/", 1)
            if f"/eval/{split}/ensemble" in f and got[-1][1] != np.float32(f[f"/eval/{split}/ensemble"].attrs[metric]):
                fail(f"ensemble/{tag}: {got[-1][1]} is not the run file's /eval/{split}/ensemble {metric}")
        if "/history/val_loss" in f and not any(t.startswith("val/") for t in logs["ensemble"]):
            fail(f"ensemble run lacks the validation split's scores: {sorted(logs['ensemble'])}")
    if reference:
        ref_runs = runs_of(reference)
        if ref_runs != runs:
            fail(f"runs {runs} are not the reference's {ref_runs}")
        for run in ref_runs:
            ref = scalars(load(os.path.join(reference, run)))
            for tag, want in ref.items():
                got = logs[run].get(tag, [])
                if run == "ensemble":
                    got, want = got[-1:], want[-1:]
                if got != want:
                    fail(f"{run}/{tag}: {got[:6]} is not the uninterrupted run's {want[:6]}")
    print(f"ok: {len(runs)} runs, {len(members)} members, {values} member values, "
          f"{hparams} hparams, {metrics} metrics" + (f", {len(arch)} architectures" if arch else ""))


if __name__ == "__main__":
    main()

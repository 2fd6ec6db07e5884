#!/usr/bin/env python3
"""An Optuna study whose trials train as one turbanet swarm per round (ask/tell).

Each round asks Optuna for --batch trials, writes them as a trials file, trains them all at once
with `turbanet train CONFIG --trials FILE --trials-out RESULTS.json` (one member per trial), and
tells Optuna each trial's result: its objective value, PRUNED for a member successive halving
stopped, FAIL for one that diverged. With --sequential the same study runs Optuna's usual loop
instead: one trial at a time, each its own `turbanet train` of a swarm of one, so both modes spend
the same budget of trials and epochs; the summary gives the best value and the wall time of each.

    .venv-test/bin/python scripts/optuna_swarm.py configs/spirals-small.yaml \\
        --rounds 4 --batch 16 --param optimizer.lr=log:1e-4:1e-1 --objective best.val_loss

Parameters are per-member keys of turbanet (optimizer.lr, optimizer.weight_decay, ...), each
KEY=log:LO:HI (log-uniform), KEY=float:LO:HI (uniform) or KEY=choice:A,B,C (categorical numbers).
The objective is a path into a trial's results (`turbanet train --help`, run/trial_results.h):
best.val_loss (default), final.val_accuracy, eval.accuracy, ... Losses are minimized,
accuracies, precision, recall, f1 and r2 maximized unless --direction says otherwise.
Optuna comes from PyPI (scripts/install-test-venv.sh installs it into .venv-test).
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import optuna

MAXIMIZED = ("accuracy", "precision", "recall", "f1", "r2")


def parse_param(text):
    key, _, spec = text.partition("=")
    kind, _, rest = spec.partition(":")
    if kind in ("log", "float"):
        lo, hi = (float(x) for x in rest.split(":"))
        return key, (kind, lo, hi)
    if kind == "choice":
        return key, ("choice", [float(x) for x in rest.split(",")])
    raise SystemExit(f"--param {text}: expected KEY=log:LO:HI, KEY=float:LO:HI or KEY=choice:A,B,...")


def suggest(trial, key, spec):
    if spec[0] == "choice":
        return trial.suggest_categorical(key, spec[1])
    return trial.suggest_float(key, spec[1], spec[2], log=spec[0] == "log")


def objective_value(result, path):
    value = result
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def train(args, trials, work, tag):
    """Trains `trials` ([(optuna trial, params)]) as one swarm; returns turbanet's results by trial number."""
    trials_path = os.path.join(work, f"trials-{tag}.json")
    results_path = os.path.join(work, f"results-{tag}.json")
    with open(trials_path, "w") as f:
        json.dump([dict(trial=t.number, **params) for t, params in trials], f)
    cmd = [args.turbanet, "train", args.config, "--trials", trials_path, "--trials-out", results_path,
           "--out", os.path.join(work, f"run-{tag}.h5"), "--force", "-q"]
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    for s in args.set:
        cmd += ["--set", s]
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode not in (0, 3):  # 3: some members diverged, which are results too
        sys.stderr.write(done.stdout)
        raise SystemExit(f"turbanet train exited {done.returncode}: {' '.join(cmd)}")
    with open(results_path) as f:
        return {int(r["trial"]): r for r in json.load(f)["trials"]}


def tell(study, trial, result, path):
    if result["status"] == "diverged":
        study.tell(trial, state=optuna.trial.TrialState.FAIL)
        return None
    if result["status"] == "pruned":
        study.tell(trial, state=optuna.trial.TrialState.PRUNED)
        return None
    value = objective_value(result, path)
    if value is None or not math.isfinite(value):
        study.tell(trial, state=optuna.trial.TrialState.FAIL)
        return None
    study.tell(trial, value)
    return value


def run_study(args, space, sequential, work):
    sampler = optuna.samplers.TPESampler(seed=args.seed, n_startup_trials=args.startup)
    study = optuna.create_study(direction=args.direction, sampler=sampler)
    start = time.perf_counter()
    if sequential:  # Optuna's own loop: ask one trial, train it alone, tell, for the same budget
        for i in range(args.rounds * args.batch):
            t = study.ask()
            pairs = [(t, {key: suggest(t, key, spec) for key, spec in space})]
            tell(study, t, train(args, pairs, work, f"seq-{i}")[t.number], args.objective)
    else:  # a round: ask a batch, train it as one swarm, tell every result
        for r in range(args.rounds):
            asked = [study.ask() for _ in range(args.batch)]
            pairs = [(t, {key: suggest(t, key, spec) for key, spec in space}) for t in asked]
            results = train(args, pairs, work, f"swarm-{r}")
            for t, _ in pairs:
                tell(study, t, results[t.number], args.objective)
    seconds = time.perf_counter() - start
    complete = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    best = study.best_trial if complete else None
    return {
        "mode": "sequential" if sequential else "swarm",
        "trials": len(study.trials),
        "complete": len(complete),
        "pruned": sum(t.state == optuna.trial.TrialState.PRUNED for t in study.trials),
        "failed": sum(t.state == optuna.trial.TrialState.FAIL for t in study.trials),
        "best_value": best.value if best else None,
        "best_params": best.params if best else None,
        "seconds": seconds,
    }


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("config")
    p.add_argument("--rounds", type=int, default=4, help="ask/tell rounds (default 4)")
    p.add_argument("--batch", type=int, default=16, help="trials per round, trained as one swarm (default 16)")
    p.add_argument("--param", action="append", default=[], help="KEY=log:LO:HI | float:LO:HI | choice:A,B (repeatable)")
    p.add_argument("--objective", default="best.val_loss", help="path into a trial's results (default best.val_loss)")
    p.add_argument("--direction", choices=["minimize", "maximize"], help="default: from the objective's name")
    p.add_argument("--seed", type=int, default=0, help="the TPE sampler's seed")
    p.add_argument("--startup", type=int, default=None, help="random trials before TPE (default: --batch)")
    p.add_argument("--set", action="append", default=[], help="a turbanet --set override (repeatable)")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--mode", choices=["swarm", "sequential", "both"], default="swarm",
                   help="swarm: a round is one turbanet run; sequential: Optuna's one-trial loop; both: compare")
    p.add_argument("--turbanet", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "turbanet"))
    p.add_argument("--out", help="write the summary as JSON")
    args = p.parse_args()
    space = [parse_param(x) for x in (args.param or ["optimizer.lr=log:1e-4:1e-1"])]
    if args.direction is None:
        args.direction = "maximize" if any(m in args.objective.split(".")[-1] for m in MAXIMIZED) else "minimize"
    if args.startup is None:
        args.startup = args.batch
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    summaries = []
    with tempfile.TemporaryDirectory(prefix="optuna-swarm-") as work:
        for mode in (["swarm", "sequential"] if args.mode == "both" else [args.mode]):
            s = run_study(args, space, mode == "sequential", work)
            summaries.append(s)
            print(f"{s['mode']:>10}: {s['trials']} trials ({s['complete']} complete, {s['pruned']} pruned, "
                  f"{s['failed']} failed) in {s['seconds']:.2f} s; best {args.objective} = {s['best_value']} "
                  f"with {s['best_params']}", flush=True)
    if len(summaries) == 2 and summaries[0]["seconds"] > 0:
        print(f"swarm rounds took {summaries[1]['seconds'] / summaries[0]['seconds']:.1f}x less wall time than the "
              "sequential loop")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"config": args.config, "objective": args.objective, "direction": args.direction,
                       "rounds": args.rounds, "batch": args.batch, "results": summaries}, f, indent=2)


if __name__ == "__main__":
    main()

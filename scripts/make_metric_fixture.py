#!/usr/bin/env python3
"""Writes tests/data/metric_fixture.json: small random predictions and targets with the metric
values scikit-learn (and, for the swarm statistics, SciPy/NumPy) computes for them. The C++
tests (tests/test_metrics.cpp) recompute every value with turbanet's own code and compare.

Not run by CI, which only reads the committed fixture. To regenerate:

    python3 -m venv /tmp/skvenv && /tmp/skvenv/bin/pip install scikit-learn numpy scipy
    /tmp/skvenv/bin/python scripts/make_metric_fixture.py

Conventions checked (docs/commands.md, "Metrics"): macro averages run over the classes present in
the targets or the predictions (scikit-learn's default labels) with zero_division=0; the
Brier score is the multi-class sum over classes (scale_by_half=False, so twice the usual
binary score); ECE uses 15 equal-width bins (lo, hi] on the predicted class's probability.
"""
import json
import pathlib
import warnings

import numpy as np
import scipy
import sklearn
from scipy.special import softmax
from scipy.stats import entropy
from sklearn import metrics

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "metric_fixture.json"
rng = np.random.default_rng(20240501)
# Probabilities rounded to float32 sum to 1 only within ~1e-7, which scikit-learn flags.
warnings.filterwarnings("ignore", message="The y_prob values do not sum to one")


def f32(a):
    """Rounds to float32 (what turbanet stores) and back to float64, exactly."""
    return np.asarray(a, dtype=np.float32).astype(np.float64)


def random_probs(n, k, never=()):
    p = 0.9 * rng.dirichlet(np.full(k, 0.7), size=n) + 0.1 / k
    for c in never:  # a class that is never the most probable
        p[:, c] = 0.5 * np.delete(p, c, axis=1).min(axis=1)
    return f32(p / p.sum(axis=1, keepdims=True))


def ece(p, y, bins=15):
    pred = p.argmax(axis=1)
    conf = p[np.arange(len(y)), pred]
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.clip(np.searchsorted(edges, conf, side="left") - 1, 0, bins - 1)
    total = 0.0
    for b in range(bins):
        m = which == b
        if m.any():
            total += m.sum() / len(y) * abs((pred[m] == y[m]).mean() - conf[m].mean())
    return total


def classification_expected(p, y, k):
    pred = p.argmax(axis=1)
    labels = list(range(k))
    out = {"accuracy": metrics.accuracy_score(y, pred)}
    for avg in ("macro", "micro"):
        out["precision_" + avg] = metrics.precision_score(y, pred, average=avg, zero_division=0)
        out["recall_" + avg] = metrics.recall_score(y, pred, average=avg, zero_division=0)
        out["f1_" + avg] = metrics.f1_score(y, pred, average=avg, zero_division=0)
    out["log_loss"] = metrics.log_loss(y, p, labels=labels)
    out["brier"] = metrics.brier_score_loss(y, p, labels=labels, scale_by_half=False)
    if k == 2:  # the binary convention differs by the factor 2
        assert np.isclose(out["brier"], 2 * metrics.brier_score_loss(y, p[:, 1]))
    out["ece"] = ece(p, y)
    if k == 2:  # the positive class is class 1
        out["roc_auc"] = metrics.roc_auc_score(y, p[:, 1])
        out["pr_auc"] = metrics.average_precision_score(y, p[:, 1])
        out["f1_positive"] = metrics.f1_score(y, pred, pos_label=1, average="binary", zero_division=0)
    out["confusion"] = metrics.confusion_matrix(y, pred, labels=labels).tolist()
    return {key: (float(v) if not isinstance(v, list) else v) for key, v in out.items()}


def classification_case(name, n, k, never=(), absent=()):
    p = random_probs(n, k, never=tuple(never) + tuple(absent))
    choices = [c for c in range(k) if c not in absent]
    y = rng.choice(choices, size=n)
    y[: len(choices)] = choices  # every non-absent class occurs at least once
    return {"name": name, "K": k, "labels": y.tolist(), "probs": p.tolist(),
            "expected": classification_expected(p, y, k)}


def regression_case(name, n, o, constant=False):
    y = f32(np.full((n, o), 1.5) if constant else rng.normal(2.0, 3.0, size=(n, o)))
    yhat = f32(y + rng.normal(0.0, 1.0, size=(n, o)))
    mse = metrics.mean_squared_error(y, yhat)
    return {"name": name, "O": o, "y_true": y.tolist(), "y_pred": yhat.tolist(), "expected": {
        "mse": float(mse), "rmse": float(np.sqrt(mse)),
        "mae": float(metrics.mean_absolute_error(y, yhat)),
        "r2": float(metrics.r2_score(y, yhat))}}


def swarm_case(s=5, n=12, k=3, nan_member=2):
    """Members' logits and probabilities, one member diverged (NaN): ensemble statistics."""
    logits = f32(rng.normal(0.0, 1.5, size=(s, n, k)))
    probs = f32(softmax(logits, axis=2))
    logits[nan_member, 3, 1] = np.nan
    probs[nan_member, 3, :] = np.nan
    y = rng.integers(0, k, size=n)
    used = [m for m in range(s) if m != nan_member]
    lp, ll = probs[used], logits[used]
    mean = lp.mean(axis=0)
    member_class = lp.argmax(axis=2)  # [U, N]
    votes = np.stack([(member_class == c).mean(axis=0) for c in range(k)], axis=1)
    vote_label = []
    for i in range(n):  # most votes; ties to the larger mean probability
        top = np.flatnonzero(votes[i] == votes[i].max())
        vote_label.append(int(top[np.argmax(mean[i, top])]))
    combined = {"mean_prob": f32(mean), "vote": f32(votes), "mean_logit": f32(softmax(ll.mean(axis=0), axis=1))}
    labels = {"mean_prob": combined["mean_prob"].argmax(axis=1), "vote": np.array(vote_label),
              "mean_logit": combined["mean_logit"].argmax(axis=1)}
    ensembles = {}
    for how, p in combined.items():
        pred = labels[how]
        ensembles[how] = {"probs": p.tolist(), "labels": pred.tolist(),
                          "accuracy": float(metrics.accuracy_score(y, pred)),
                          "disagreement": (member_class != pred).mean(axis=0).tolist()}
    h = entropy(mean, axis=1)
    mi = h - entropy(lp, axis=2).mean(axis=0)
    member_acc = [float(metrics.accuracy_score(y, lp[u].argmax(axis=1))) for u in range(len(used))]
    return {"S": s, "N": n, "K": k, "excluded": [nan_member], "labels": y.tolist(),
            "logits": np.nan_to_num(logits, nan=1e30).tolist(), "logit_nan": [nan_member, 3, 1],
            "probs": np.nan_to_num(probs, nan=1e30).tolist(), "prob_nan_row": [nan_member, 3],
            "entropy": h.tolist(), "mutual_information": mi.tolist(), "ensembles": ensembles,
            "member_accuracy_mean": float(np.mean(member_acc)),
            "member_accuracy_std": float(np.std(member_acc))}


def f1_best_threshold(score, y):
    """The threshold among the distinct scores with the largest F1 of class 1 (ties: the
    lowest), by brute force over every candidate, scored by scikit-learn."""
    best, best_f1 = None, -1.0
    for t in sorted(set(score.tolist()), reverse=True):
        f1 = metrics.f1_score(y, (score >= t).astype(int), zero_division=0)
        if f1 >= best_f1:
            best, best_f1 = t, f1
    return best, best_f1


def binary_case(name, n, ties, threshold):
    """Two classes with informative scores (rounded to 0.1 when `ties`): ROC-AUC, average
    precision and F1 at argmax, the F1-maximizing threshold, and the metrics at `threshold`."""
    brng = np.random.default_rng(n)
    p1 = brng.uniform(size=n)
    if ties:
        p1 = np.round(0.05 + 0.9 * p1, 1)  # tenths from 0.1 to 0.9 (0 and 1 would test log loss clipping)
    y = (brng.uniform(size=n) < 0.2 + 0.6 * p1).astype(int)
    p = f32(np.stack([1.0 - p1, p1], axis=1))
    best, best_f1 = f1_best_threshold(p[:, 1], y)
    at = (p[:, 1] >= threshold).astype(int)
    return {"name": name, "labels": y.tolist(), "probs": p.tolist(),
            "expected": {**classification_expected(p, y, 2), "best_threshold": best, "best_f1": best_f1,
                         "threshold": threshold,
                         "at_threshold": {"accuracy": float(metrics.accuracy_score(y, at)),
                                          "f1_positive": float(metrics.f1_score(y, at, zero_division=0)),
                                          "confusion": metrics.confusion_matrix(y, at, labels=[0, 1]).tolist()}}}


def main():
    fixture = {
        "generator": f"scripts/make_metric_fixture.py with scikit-learn {sklearn.__version__}, "
                     f"SciPy {scipy.__version__}, NumPy {np.__version__}",
        "classification": [
            classification_case("multiclass, class 3 never predicted, class 4 absent", 40, 5,
                                never=[3], absent=[4]),
            classification_case("binary", 30, 2),
            classification_case("three classes", 60, 3),
        ],
        "regression": [
            regression_case("one output", 50, 1),
            regression_case("two outputs", 25, 2),
            regression_case("constant target", 10, 1, constant=True),
        ],
        "swarm": swarm_case(),
        # Each with its own generator, so that the cases above keep their draws.
        "binary": [binary_case("distinct scores", 41, False, 0.3),
                   binary_case("scores tied in tenths", 60, True, 0.7)],
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(fixture, indent=1) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

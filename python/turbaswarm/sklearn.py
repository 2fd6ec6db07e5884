"""scikit-learn estimators over turbaswarm.train: a swarm trained at once is one estimator, its
prediction the ensemble's (the members' mean probabilities or values).

    from turbaswarm.sklearn import SwarmClassifier
    clf = SwarmClassifier(members=16, hidden=(32, 32), epochs=100, grid={"optimizer.lr": [1e-3, 1e-2]})
    clf.fit(X, y).predict_proba(X_test)

They pass scikit-learn's estimator checks and work in Pipeline, cross_val_score, GridSearchCV,
pickle and clone (python/tests/test_sklearn.py).
"""
import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d

from . import train

__all__ = ["SwarmClassifier", "SwarmRegressor"]


class _Swarm(BaseEstimator):
    """The parameters and the config both estimators build (docs/python.md)."""

    def __init__(self, members=8, hidden=(32,), activation="relu", epochs=100, lr=1e-2, optimizer="adam",
                 batch_size=32, bootstrap=False, grid=None, normalize="standard", seed=0, threads=0, config=None):
        self.members = members
        self.hidden = hidden
        self.activation = activation
        self.epochs = epochs
        self.lr = lr
        self.optimizer = optimizer
        self.batch_size = batch_size
        self.bootstrap = bootstrap
        self.grid = grid
        self.normalize = normalize
        self.seed = seed
        self.threads = threads
        self.config = config

    def _config(self, outputs, loss, data):
        """The run's config: `config` (a dict of further keys, e.g. {"schedule": {...}}) under
        the estimator's own keys; `grid` ({key: [values]}) as per-member values and `grid:`."""
        hidden = [int(u) for u in np.atleast_1d(self.hidden if self.hidden is not None else ())]
        layers = [{"type": "dense", "units": u, "activation": self.activation} for u in hidden]
        layers.append({"type": "dense", "units": int(outputs)})
        cfg = dict(self.config or {})
        cfg.update({
            "name": type(self).__name__,
            "seed": int(self.seed),
            "swarm": {"size": int(self.members)},
            "model": dict(cfg.get("model", {}), layers=layers),
            "loss": loss,
            "optimizer": dict(cfg.get("optimizer", {}), type=self.optimizer, lr=float(self.lr)),
            "data": dict(cfg.get("data", {}), split={"train": 1.0, "val": 0.0, "test": 0.0},
                         per_member="bootstrap" if self.bootstrap else "shared", normalize=self.normalize, **data),
            "train": dict(cfg.get("train", {}), epochs=int(self.epochs), batch_size=int(self.batch_size)),
        })
        overrides = {}
        if self.grid:
            for key, values in self.grid.items():
                overrides[key] = {"values": [list(v) if isinstance(v, tuple) else v for v in values]}
            if len(self.grid) > 1:  # one key's values alone go round the members (k mod n)
                overrides["grid"] = list(self.grid)
        return cfg, overrides

    def _fit_arrays(self, X, y, outputs, loss, data=None):
        cfg, overrides = self._config(outputs, loss, data or {})
        self.run_ = train(cfg, X, y, threads=self.threads, overrides=overrides)
        self.n_features_in_ = X.shape[1]
        return self


class SwarmClassifier(ClassifierMixin, _Swarm):
    """A swarm of `members` classifiers (`hidden` units per hidden layer, `activation`), trained
    for `epochs` with `optimizer` at learning rate `lr` on batches of `batch_size`, each member
    on its own bootstrap resample when `bootstrap`; `grid` gives members different values
    ({"optimizer.lr": [...], "model.hidden": [[16], [64, 64]]}). predict_proba is the members'
    mean probability."""

    def fit(self, X, y):
        X, y = self._validate_data(X, y, dtype=np.float32)
        y = column_or_1d(y, warn=True)
        check_classification_targets(y)
        self.classes_, labels = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(f"{type(self).__name__} needs samples of at least 2 classes; got 1 class")
        return self._fit_arrays(X, labels.astype(np.float32), len(self.classes_), "cross_entropy")

    def predict_proba(self, X):
        check_is_fitted(self)
        X = self._validate_data(X, dtype=np.float32, reset=False)
        return self.run_.predict_proba(X, threads=self.threads).astype(np.float64)

    def predict(self, X):
        proba = self.predict_proba(X)  # checks that it is fitted
        return self.classes_[proba.argmax(axis=1)]


class SwarmRegressor(RegressorMixin, _Swarm):
    """A swarm of `members` regressors (parameters as SwarmClassifier's), trained on the mean
    squared error with standardized targets; predict is the members' mean."""

    def fit(self, X, y):
        X, y = self._validate_data(X, y, dtype=np.float32, y_numeric=True, multi_output=True)
        self._y_mean = self._y_scale = None
        y = np.asarray(y, dtype=np.float32)
        self._y_1d = y.ndim == 1
        if y.ndim == 1 or y.shape[1] == 1:  # the core scales one target (data.normalize_target)
            return self._fit_arrays(X, y, 1, "mse", {"normalize_target": "standard"})
        # Several targets: standardized here, each by its own mean and deviation.
        self._y_mean, self._y_scale = y.mean(axis=0), y.std(axis=0)
        self._y_scale[self._y_scale == 0] = 1
        return self._fit_arrays(X, (y - self._y_mean) / self._y_scale, y.shape[1], "mse")

    def predict(self, X):
        check_is_fitted(self)
        X = self._validate_data(X, dtype=np.float32, reset=False)
        p = self.run_.predict(X, threads=self.threads).astype(np.float64)
        if getattr(self, "_y_mean", None) is not None and p.ndim == 2:
            p = p * self._y_scale + self._y_mean
        return p.reshape(-1) if self._y_1d else p.reshape(len(X), -1)

    def _more_tags(self):
        return {"multioutput": True}

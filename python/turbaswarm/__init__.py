"""turbaswarm: turbanet's swarm training from Python, over the same C++ core (no subprocess).

    import turbaswarm as ts
    run = ts.train("configs/spirals.yaml", epochs=50)        # train.epochs via a short key
    run = ts.train({...}, X, y, optimizer__lr=1e-2)            # a dict config, numpy data
    run.predict(X_new); run.predict_proba(X_new); run.history["train_loss"]
    run.save("runs/x.h5"); ts.load("runs/x.h5")

The config schema, the errors and the run file are the command line's (docs/python.md).
"""
import os
import shutil
import tempfile
import weakref

import numpy as np

from . import _core
from ._core import BackendError, ConfigError, DataError, RunFileError, UsageError, set_log_level

__all__ = ["train", "load", "Run", "set_log_level", "ConfigError", "DataError", "UsageError", "BackendError",
           "RunFileError"]
__version__ = _core.__version__


def _override_key(name):
    """`optimizer__lr` -> `optimizer.lr` (keyword arguments cannot hold dots)."""
    return name.replace("__", ".")


def _as_float32(a, name):
    if a is None:
        return None
    arr = np.asarray(a)
    if arr.dtype.kind not in "biuf":
        raise DataError(f"{name}: numbers are needed, not dtype {arr.dtype} (encode labels as integers)")
    # No copy when it already is C-contiguous float32: the core reads it in place.
    return np.ascontiguousarray(arr, dtype=np.float32)


def train(config, X=None, y=None, *, output=None, progress=None, threads=0, force=False, resume="",
          overrides=None, **kwargs):
    """Trains a swarm as `turbanet train` does and returns its Run.

    config: a YAML file's path or a dict of the same schema (docs/config.md).
    X, y: training data as arrays (X [n, F], y [n] class labels or [n] / [n, T] values); they
      replace the config's data.source (which becomes `{type: arrays}`); data.split applies.
    output: where the run file goes (else a temporary file, removed with the Run; Run.save keeps it).
    progress: called after every epoch with a dict (epoch, epochs, loss_mean, ...).
    overrides: {"optimizer.lr": 1e-3, ...}; keyword arguments are overrides too, with `__` for
      the dots (optimizer__lr=1e-3). Both are applied like --set.
    Ctrl-C stops after the epoch in progress, writes the checkpoint and the run file (marked
    interrupted), then raises KeyboardInterrupt naming them.
    Raises ConfigError, DataError, UsageError (ValueError), BackendError, RunFileError (OSError).
    """
    if isinstance(config, os.PathLike):
        config = os.fspath(config)
    ov = [(str(k), v) for k, v in (overrides or {}).items()]
    ov += [(_override_key(k), v) for k, v in kwargs.items()]
    tmpdir = None
    if output is None:
        tmpdir = tempfile.mkdtemp(prefix="turbaswarm-")
        output = os.path.join(tmpdir, "run.h5")
    ov.append(("output.path", os.fspath(output)))
    try:
        t = _core.train(config, ov, _as_float32(X, "X"), _as_float32(y, "y"), progress, int(threads), bool(force),
                        os.fspath(resume))
    except BaseException:
        if tmpdir is not None and not os.listdir(tmpdir):
            shutil.rmtree(tmpdir, ignore_errors=True)
        raise
    run = Run(t.path, _tmpdir=tmpdir)
    run.diverged = list(t.diverged)
    return run


def load(path):
    """A run file (written by train, Run.save or `turbanet train`) as a Run."""
    return Run(os.fspath(path))


class Run:
    """A trained swarm: its run file, loaded for prediction and inspection."""

    def __init__(self, path, _tmpdir=None):
        self._swarm = _core.Swarm.load(path)
        self.path = path
        self.diverged = [self._swarm.first_member + s for s, e in enumerate(self._swarm.diverged_epoch) if e > 0]
        self._tmpdir = _tmpdir
        if _tmpdir is not None:
            weakref.finalize(self, shutil.rmtree, _tmpdir, True)

    # --- what the run is ---------------------------------------------------------------------
    @property
    def size(self):
        return self._swarm.size

    @property
    def classification(self):
        return self._swarm.classification

    @property
    def classes(self):
        """The class names (str) of a classification run, label k being classes[k]."""
        return list(self._swarm.class_names)

    @property
    def interrupted(self):
        return self._swarm.interrupted

    @property
    def config(self):
        """The resolved configuration as YAML text (the run file's /config)."""
        return self._swarm.config_yaml

    @property
    def members(self):
        """One dict per member: its global index and its per-member hyperparameters."""
        hp = self._swarm.hparams()
        first = self._swarm.first_member
        return [dict({"member": first + s}, **{k: v[s] for k, v in hp.items()}) for s in range(self.size)]

    @property
    def history(self):
        """train_loss [S, epochs] and, when recorded, val_loss, train_accuracy, val_accuracy."""
        return self._swarm.history()

    def params(self, member):
        """Member `member`'s (global index) parameters: a list of {"W": ..., "b": ...} per layer."""
        return self._swarm.params(int(member))

    # --- prediction --------------------------------------------------------------------------
    def _members(self, members):
        first = self._swarm.first_member
        if members is None:
            chosen = list(self._swarm.ensemble_members)
            if chosen:
                return [m - first for m in chosen], np.asarray(self._swarm.ensemble_weights)
            ok = [s for s, e in enumerate(self._swarm.diverged_epoch) if e <= 0]
            return ok, None
        idx = [int(m) - first for m in np.atleast_1d(members)]
        bad = [i + first for i in idx if not 0 <= i < self.size]
        if bad:
            raise UsageError(f"members {bad}: the run has members {first} to {first + self.size - 1}")
        return idx, None

    def predict_members(self, X, members=None, threads=0):
        """Every chosen member's outputs on X: [members, n, outputs] (probabilities or values)."""
        out = self._swarm.predict(_as_float32(X, "X"), int(threads))
        idx, _ = self._members(members if members is not None else range(self._swarm.first_member,
                                                                             self._swarm.first_member + self.size))
        return out[idx]

    def _combined(self, X, members, threads):
        out = self._swarm.predict(_as_float32(X, "X"), int(threads))
        idx, w = self._members(members)
        return np.average(out[idx], axis=0, weights=w)

    def predict_proba(self, X, members=None, threads=0):
        """The ensemble's class probabilities [n, K]: the members' mean (the run's /ensemble
        selection and weights when it has one, else every member that did not diverge)."""
        if not self.classification:
            raise UsageError("predict_proba: the run is a regression; use predict")
        p = self._combined(X, members, threads)
        return np.concatenate([1 - p, p], axis=1) if p.shape[1] == 1 else p

    def predict(self, X, members=None, threads=0):
        """Classification: the ensemble's class labels (indices into classes) [n]; regression:
        the members' mean [n] (one target) or [n, T]."""
        if self.classification:
            return self.predict_proba(X, members, threads).argmax(axis=1)
        p = self._combined(X, members, threads)
        return p[:, 0] if p.shape[1] == 1 else p

    # --- the file ----------------------------------------------------------------------------
    def save(self, path):
        """Writes the run file to `path` (its directory created, as output.path's is): the same
        bytes train wrote (the CLI's HDF5 layout), replacing the file there whole."""
        path = os.fspath(path)
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        tmp = path + ".tmp-turbaswarm"
        shutil.copyfile(self.path, tmp)
        os.replace(tmp, path)

    def __getstate__(self):
        with open(self.path, "rb") as f:
            return {"bytes": f.read()}

    def __setstate__(self, state):
        tmpdir = tempfile.mkdtemp(prefix="turbaswarm-")
        path = os.path.join(tmpdir, "run.h5")
        with open(path, "wb") as f:
            f.write(state["bytes"])
        self.__init__(path, _tmpdir=tmpdir)

    def __repr__(self):
        kind = "classification" if self.classification else "regression"
        return f"<turbaswarm.Run {self.size} members, {kind}, {self.path}>"

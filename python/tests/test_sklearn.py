# SwarmClassifier and SwarmRegressor: scikit-learn's estimator checks, and use in Pipeline,
# cross_val_score, GridSearchCV, pickle and clone.
import pickle

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from turbaswarm.sklearn import SwarmClassifier, SwarmRegressor


@parametrize_with_checks([SwarmClassifier(members=4, epochs=60), SwarmRegressor(members=4, epochs=60)])
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


def test_classifier_in_a_pipeline_scores_in_cross_validation():
    X, y = make_classification(n_samples=150, n_features=5, random_state=0)
    scores = cross_val_score(make_pipeline(StandardScaler(), SwarmClassifier(members=4, epochs=40)), X, y, cv=3)
    assert scores.mean() > 0.8


def test_grid_search_chooses_among_swarm_parameters():
    X, y = make_regression(n_samples=120, n_features=3, noise=1.0, random_state=0)
    search = GridSearchCV(SwarmRegressor(members=2, epochs=30), {"hidden": [(8,), (32,)], "lr": [1e-3, 1e-2]}, cv=2)
    search.fit(X, y)
    assert set(search.best_params_) == {"hidden", "lr"}
    assert search.predict(X).shape == (120,)


def test_a_fitted_classifier_pickles_and_clones():
    X, y = make_classification(n_samples=80, n_features=4, random_state=1)
    y = np.array(["no", "yes"])[y]
    clf = SwarmClassifier(members=4, epochs=20, bootstrap=True).fit(X, y)
    back = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(back.predict_proba(X), clf.predict_proba(X))
    assert set(back.predict(X)) <= {"no", "yes"}
    fresh = clone(clf)
    assert fresh.get_params() == clf.get_params() and not hasattr(fresh, "run_")


def test_a_grid_gives_members_their_own_values():
    X, y = make_classification(n_samples=80, n_features=4, random_state=2)
    clf = SwarmClassifier(members=4, epochs=5, grid={"optimizer.lr": [1e-3, 1e-2], "model.hidden": [[8], [16, 16]]}).fit(X, y)
    lrs = [m["optimizer.lr"] for m in clf.run_.members]
    assert lrs == pytest.approx([1e-3, 1e-3, 1e-2, 1e-2])


def test_a_grid_of_one_key_gives_member_k_value_k_mod_n():
    X, y = make_classification(n_samples=60, n_features=4, random_state=3)
    clf = SwarmClassifier(members=4, epochs=3, grid={"optimizer.lr": [1e-3, 1e-2]}).fit(X, y)
    assert [m["optimizer.lr"] for m in clf.run_.members] == pytest.approx([1e-3, 1e-2, 1e-3, 1e-2])

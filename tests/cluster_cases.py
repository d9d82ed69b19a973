"""What the tests of the cluster front ends (tests/test_dask.py, tests/test_spark.py) fit: one
data set and the settings whose cluster fit must release the in-memory model."""

import numpy as np

from dpboost import DPGBClassifier, DPGBRegressor, PrivacyAccountant
from dpboost._parameters import DPBOOST_PAPER


def data(n=3000, regression=False, seed=0):
    """``(X, y)``: 4 standard-normal features (every 11th cell of the third missing) and three
    classes (or, ``regression``, a target) of the first two, with noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X[::11, 2] = np.nan
    score = X[:, 0] + 0.5 * np.nan_to_num(X[:, 1]) + 0.5 * rng.normal(size=n)
    return X, (2 * score if regression else np.digitize(score, [-0.5, 0.5]))


#: name -> (in-memory estimator, parameters): the default preset, the DPBoost paper's, private
#: bounds and row count of a regressor, the individual Renyi filter, a private choice of
#: interactions, and a regressor with the private initial score and early stopping.
SETTINGS = {
    # the default estimator with 40 boosting stages, not its 200: each stage releases and
    # sends the same things, and costs the cluster a round of tasks per level of its 3 trees
    "default": (DPGBClassifier, {"classes": [0, 1, 2], "feature_bounds": (-4, 4),
                                 "n_estimators": 40}),
    "dpboost_paper": (DPGBClassifier, {**DPBOOST_PAPER, "classes": [0, 1, 2],
                                       "feature_bounds": (-4, 4), "n_estimators": 12}),
    # and the private row count first, whose regime chooses the initial score
    "regressor-private-bounds": (DPGBRegressor, {"target_bounds": "private",
                                                 "feature_bounds": "private",
                                                 "n_samples_hint": "private", "init": "auto",
                                                 "n_estimators": 20}),
    "default-renyi-filter": (DPGBClassifier, {"classes": [0, 1], "feature_bounds": (-4, 4),
                                              "renyi_filter": 0.25, "n_estimators": 40}),
    # a private choice of interactions (the test's epsilon 2 and the hint: 6,000 per feature):
    # two plans on parts A and B, the statistic of part V summed over partitions, T's trees
    "default-interaction-choice": (DPGBClassifier, {"classes": [0, 1], "feature_bounds": (-4, 4),
                                                    "n_samples_hint": 12_000,
                                                    "n_estimators": 20}),
    # the releases made outside the trees: the initial score first, the held-out records''
    # validation losses every 10 stages (and a stop read from them)
    "regressor-initial-score-early-stopping": (
        DPGBRegressor, {"target_bounds": (-8, 8), "feature_bounds": (-4, 4), "init": "private",
                        "early_stopping": True, "n_iter_no_change": 10, "n_estimators": 60}),
}


#: The fit that the tests of a lost worker or task interrupt: the same model must come out.
RECOVERY_PARAMS = {"classes": [0, 1, 2], "feature_bounds": (-4, 4), "random_state": 7,
                   "epsilon": 2.0, "n_estimators": 10}


def recovery_case(n):
    """``(X, y, expected, spent)``: ``n`` records of :func:`data`, the in-memory fit of
    :data:`RECOVERY_PARAMS` on them, and the epsilon that fit registered with an accountant of
    epsilon 10 and delta 1e-3 (the accountant a recovered cluster fit must spend the same from)."""
    X, y = data(n)
    reference = PrivacyAccountant(epsilon=10.0, delta=1e-3)
    expected = DPGBClassifier(accountant=reference, **RECOVERY_PARAMS).fit(X, y)
    return X, y, expected, reference.spent()

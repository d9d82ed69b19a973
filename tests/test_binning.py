"""The private quantile sketch: fine histograms, thresholds from released counts, binning on them.

(The equal-width grid's kernel is tested in test_kernels.py.)
"""

import numpy as np
import pytest

from dpboost import DPGBClassifier, DPGBRegressor
from dpboost._binning import (
    SKETCH_UNIFORM_SHARE,
    BoundsBinner,
    fine_histograms,
    sketch_thresholds,
)
from dpboost._budget import SKETCH_SHARE, plan_budget


def test_fine_histograms_match_numpy_and_one_record_moves_one_bin_per_feature():
    rng = np.random.default_rng(0)
    X = rng.normal(0.0, 2.0, size=(1000, 3))
    X[::7, 1] = np.nan
    lower, upper = np.array([-3.0, -1.0, 0.0]), np.array([3.0, 4.0, 1.0])
    counts = fine_histograms(X, lower, upper, 40)
    for f in range(3):
        column = X[:, f][~np.isnan(X[:, f])]
        # values outside the bounds are clipped into the end bins; NaN is not counted
        clipped = np.clip(column, lower[f], np.nextafter(upper[f], -np.inf))
        expected, _ = np.histogram(clipped, bins=40, range=(lower[f], upper[f]))
        np.testing.assert_array_equal(counts[f], expected)
    # add/remove one record: every feature's histogram moves by 1 in one bin (L1 = n_features)
    added = fine_histograms(np.vstack([X, [[0.5, 10.0, -np.inf]]]), lower, upper, 40)
    assert np.abs(added - counts).sum() == 3
    assert (np.abs(added - counts).sum(axis=1) == 1).all()


def test_sketch_thresholds_follow_the_quantiles_of_the_released_counts():
    n_fine, max_bins = 256, 16
    # counts of an exponential distribution on [0, 8]
    edges = np.linspace(0, 8, n_fine + 1)
    mass = np.diff(-np.exp(-edges))
    counts = np.vstack([mass / mass.sum() * 1e6, np.full(n_fine, 10.0)])
    lower, upper = np.zeros(2), np.array([8.0, 1.0])
    t = sketch_thresholds(counts, lower, upper, max_bins)
    assert t.shape == (2, max_bins - 1)
    assert (np.diff(t, axis=1) > 0).all() and (t > lower[:, None]).all()
    assert (t < upper[:, None]).all()
    # the CDF of the mixture (1 - s) Exp + s Uniform at each threshold is (b + 1) / max_bins
    s = SKETCH_UNIFORM_SHARE
    cdf = (1 - s) * (1 - np.exp(-t[0])) / mass.sum() + s * t[0] / 8.0
    np.testing.assert_allclose(cdf, np.arange(1, max_bins) / max_bins, atol=2e-3)
    # uniform counts give the equal-width grid
    np.testing.assert_allclose(t[1], BoundsBinner([[0.0, 1.0]], max_bins).thresholds()[0])


def test_sketch_of_only_negative_noise_is_the_grid():
    t = sketch_thresholds(-np.ones((1, 64)), np.array([2.0]), np.array([6.0]), 8)
    np.testing.assert_allclose(t, BoundsBinner([[2.0, 6.0]], 8).thresholds())


def test_binning_on_thresholds_counts_thresholds_at_or_below():
    rng = np.random.default_rng(1)
    thresholds = np.sort(rng.uniform(0, 1, size=(2, 7)), axis=1)
    X = rng.uniform(-0.5, 1.5, size=(500, 2))
    X[:5, 0] = thresholds[0, :5]  # values on a threshold go right
    X[5], X[6], X[7] = np.nan, -np.inf, np.inf
    binner = BoundsBinner([[0, 1], [0, 1]], 8, thresholds)
    binned = binner.transform(X)
    for f in range(2):
        expected = np.searchsorted(thresholds[f], X[:, f], side="right")
        expected[np.isnan(X[:, f])] = 8
        np.testing.assert_array_equal(binned[:, f], expected)
    np.testing.assert_array_equal(binned[6], 0)
    np.testing.assert_array_equal(binned[7], 7)
    np.testing.assert_array_equal(binner.thresholds(), thresholds)


@pytest.mark.parametrize("delta", [0.0, 1e-5])
def test_plan_with_sketch(delta):
    common = {"n_estimators": 6, "max_depth": 3, "learning_rate": 0.1, "l2_regularization": 0.1,
              "budget_allocation": "sequential", "trees_per_ensemble": 6, "leaf_clipping": True,
              "delta": delta, "leaf_noise": "gaussian" if delta else "laplace"}
    plan = plan_budget(epsilon=2.0, sketch_features=5, **common)
    sketch = plan.entries[0]
    assert (sketch.mechanism, sketch.epsilon, sketch.sensitivity) == (
        "laplace", SKETCH_SHARE * 2.0, 5.0)
    assert (sketch.group, sketch.tree) == (-1, -1)
    assert 2.0 - 1e-3 <= plan.epsilon <= 2.0
    without = plan_budget(epsilon=2.0, **common)
    assert len(without.entries) == len(plan.entries) - 1
    # the trees share what the sketch leaves
    assert plan.trees[0].epsilon_level < without.trees[0].epsilon_level
    if not delta:
        assert plan.trees[0].epsilon_leaf * 6 * 2 == pytest.approx(2.0 * (1 - SKETCH_SHARE))
    assert plan_budget(epsilon=np.inf, sketch_features=5, **common).entries[0].mechanism == "exact"


@pytest.mark.parametrize("estimator", ["classifier", "regressor"])
@pytest.mark.parametrize("delta", [0.0, 1e-5])
def test_fitted_ledger_equals_plan_with_sketch(estimator, delta):
    rng = np.random.default_rng(2)
    X = rng.exponential(1.0, size=(400, 3))
    params = {"epsilon": 1.0, "delta": delta, "n_estimators": 4, "max_depth": 2,
              "split_candidates": "sketch", "feature_bounds": (0, 20), "random_state": 0,
              "categorical_features": [2], "categories": {2: [0.0, 1.0]}}
    X[:, 2] = rng.integers(0, 2, size=400)
    if estimator == "classifier":
        est = DPGBClassifier(classes=[0, 1], **params).fit(X, (X[:, 0] > 1).astype(int))
    else:
        est = DPGBRegressor(target_bounds=(0, 20), **params).fit(X, X[:, 0])
    plan = plan_budget(epsilon=1.0, n_estimators=4, max_depth=2, learning_rate=0.1,
                       l2_regularization=0.1, budget_allocation="eoe", trees_per_ensemble=50,
                       leaf_clipping=True, delta=delta, sketch_features=2)  # the categorical column is not sketched
    assert est.privacy_ledger_ == plan.entries
    assert est.privacy_spent_ == plan.epsilon <= 1.0


def test_sketch_puts_candidates_where_the_data_is():
    # Amounts packed near 0 inside generous public bounds: the grid wastes almost every
    # candidate; the sketch at epsilon 1 (0.1 of it on the sketch) finds the signal at x = 0.3
    # (seeds 0-2: 0.993-0.997 with the sketch, the majority rate 0.627 on the grid).
    rng = np.random.default_rng(3)
    X = rng.exponential(0.3, size=(20_000, 2))
    y = (X[:, 0] > 0.3).astype(int)
    # the exponential mechanism picks the split, so the candidates' placement is what matters
    params = {"epsilon": 1.0, "feature_bounds": (0, 100), "classes": [0, 1], "n_estimators": 20,
              "max_depth": 2, "split_selection": "exponential", "random_state": 0}
    grid = DPGBClassifier.recommended(**params).fit(X, y)
    sketch = DPGBClassifier.recommended(split_candidates="sketch", **params).fit(X, y)
    assert sketch.score(X, y) > 0.95 > 0.7 > grid.score(X, y)
    thresholds = sketch._binner.thresholds()
    assert (thresholds[:, :16] < 2.0).all()  # half of the candidates below 2 % of the range


def test_sketched_model_round_trips_through_json_and_reports_the_sketch():
    rng = np.random.default_rng(4)
    X = rng.exponential(1.0, size=(500, 3))
    clf = DPGBClassifier(epsilon=2.0, split_candidates="sketch", feature_bounds=(0, 30),
                         classes=[0, 1], n_estimators=5, max_depth=3, random_state=0)
    clf.fit(X, (X[:, 0] > 1).astype(int))
    loaded = DPGBClassifier.from_json(clf.to_json())
    np.testing.assert_array_equal(loaded._binner.thresholds(), clf._binner.thresholds())
    # rows on and next to the released thresholds bin the same way after loading
    probe = np.repeat(clf._binner.thresholds()[:, :8].T, 2, axis=0)
    probe[1::2] = np.nextafter(probe[1::2], -np.inf)
    np.testing.assert_array_equal(loaded.predict_proba(probe), clf.predict_proba(probe))
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    report = clf.privacy_report()
    assert "over 5 trees in 1 sequentially composed groups, and the split-candidate sketch" in report

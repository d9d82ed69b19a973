"""Public inputs released privately: feature_bounds="private" (docs/privacy.md, Private feature
bounds)."""

import math
import warnings

import numpy as np
import pytest

from dpboost import (
    DPGBClassifier,
    DPGBRegressor,
    PrivacyAccountant,
    PrivacyLeakWarning,
    ReproducibleNoiseWarning,
)
from dpboost._budget import BOUNDS_SHARE, plan_budget
from dpboost._candidates import BOUNDS_EDGES, bounds_histograms

pytestmark = pytest.mark.filterwarnings("ignore::dpboost.ReproducibleNoiseWarning")


@pytest.fixture(scope="module")
def skewed():
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.lognormal(10, 1, 20_000), rng.normal(40, 10, 20_000),
                         rng.uniform(-1, 1, 20_000)])
    X[::50, 1] = np.nan
    return X, (X[:, 1] > 40).astype(int)


COMMON = dict(n_estimators=5, max_depth=2, learning_rate=0.3, l2_regularization=1.0,
              budget_allocation="sequential", trees_per_ensemble=1, leaf_clipping=True)


@pytest.mark.parametrize("delta, leaf_noise", [(0.0, "laplace"), (1e-5, "gaussian")])
def test_plan_releases_the_bounds_first_within_the_budget(delta, leaf_noise):
    plan = plan_budget(epsilon=2.0, delta=delta, leaf_noise=leaf_noise, bounds_features=3,
                       **COMMON)
    first = plan.entries[0]
    assert (first.mechanism, first.epsilon, first.sensitivity) == ("laplace",
                                                                   BOUNDS_SHARE * 2.0, 3.0)
    assert plan.bounds == first and sum(e.level == -1 for e in plan.entries) == 1
    rest = plan_budget(epsilon=(1 - BOUNDS_SHARE) * 2.0, delta=delta, leaf_noise=leaf_noise,
                       **COMMON)
    assert plan.entries[1:] == rest.entries  # the rest is planned with what remains
    assert plan.epsilon <= 2.0
    if delta == 0:
        assert plan.epsilon == pytest.approx(2.0)
    assert plan_budget(epsilon=math.inf, bounds_features=3, **COMMON).bounds.mechanism == "exact"


def test_bounds_histograms_count_every_value_once_on_the_grid():
    X = np.array([[0.0, -1e300], [1.5e-7, np.inf], [-3.0, np.nan], [1e13, 5.0]])
    counts = bounds_histograms(X)
    assert counts.shape == (2, BOUNDS_EDGES.size - 1)
    np.testing.assert_array_equal(counts.sum(axis=1), [4, 3])  # NaN not counted
    # Each value lands in the bin whose edges hold it; beyond the grid, in the end bins.
    for f, row in enumerate(X.T):
        for value in row[~np.isnan(row)]:
            b = min(max(np.searchsorted(BOUNDS_EDGES, value, side="right") - 1, 0),
                    BOUNDS_EDGES.size - 2)
            assert counts[f, b] >= 1
    assert counts[0, -1] == 1 and counts[1, 0] == 1 and counts[1, -1] == 1


def test_released_bounds_hold_the_bulk_of_each_feature(skewed):
    X, y = skewed
    with warnings.catch_warnings():
        warnings.simplefilter("error", category=PrivacyLeakWarning)  # bounds are not read
        warnings.simplefilter("ignore", category=ReproducibleNoiseWarning)
        clf = DPGBClassifier(epsilon=4.0, feature_bounds="private", classes=[0, 1],
                             n_estimators=10, random_state=0).fit(X, y)
    bounds = clf.feature_bounds_
    inner = np.nanquantile(X, [0.1, 0.9], axis=0)
    assert (bounds[:, 0] <= inner[0]).all() and (bounds[:, 1] >= inner[1]).all()
    # ... and nowhere near the grid's ends: a factor of 100 of the data's range at most.
    assert (np.abs(bounds) <= 100 * np.nanmax(np.abs(X), axis=0)[:, None]).all()
    assert np.isin(bounds, BOUNDS_EDGES).all()
    assert clf.privacy_ledger_[0].level == -1 and clf.privacy_spent_ <= 4.0
    assert clf.score(X, y) > 0.9


def test_a_column_without_released_mass_gets_the_whole_grid():
    X = np.column_stack([np.full(50, np.nan), np.linspace(0, 1, 50)])
    reg = DPGBRegressor(epsilon=0.5, feature_bounds="private", target_bounds=(0, 1),
                        n_estimators=2, random_state=0).fit(X, X[:, 1])
    np.testing.assert_array_equal(reg.feature_bounds_[0], [BOUNDS_EDGES[0], BOUNDS_EDGES[-1]])


def test_categorical_columns_keep_their_public_codes():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"x": np.linspace(1, 100, 300),
                          "c": np.array(["a", "b", "c"] * 100, dtype=object)})
    clf = DPGBClassifier(epsilon=2.0, feature_bounds="private", categorical_features=["c"],
                         categories={"c": ["a", "b", "c"]}, classes=[0, 1], n_estimators=3,
                         random_state=0).fit(frame, (frame["x"] > 50).astype(int))
    np.testing.assert_array_equal(clf.feature_bounds_[1], [-0.5, 2.5])
    assert clf.privacy_ledger_[0].sensitivity == 1.0  # one numeric column released


def test_an_accountant_reserves_the_bounds_release_too(skewed):
    X, y = skewed
    accountant = PrivacyAccountant(epsilon=1.0)
    clf = DPGBClassifier.dpboost_paper(epsilon=1.0, feature_bounds="private", classes=[0, 1],
                                       n_estimators=3, random_state=0, accountant=accountant)
    clf.fit(X, y)
    assert accountant.spent() == pytest.approx(1.0)
    assert clf.privacy_ledger_[0].epsilon == pytest.approx(BOUNDS_SHARE)


def test_private_target_bounds_are_released_with_the_feature_bounds():
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(5000, 3))
    y = 1000 + 300 * X[:, 0] + 50 * rng.normal(size=5000)
    y[:3] = [np.inf, np.nan, -1e300]  # clipped, left out, clipped
    reg = DPGBRegressor(epsilon=2.0, feature_bounds="private", target_bounds="private",
                        n_estimators=20, random_state=0).fit(X, y)
    lower, upper = reg.target_bounds_
    assert lower <= np.quantile(y[3:], 0.1) and upper >= np.quantile(y[3:], 0.9)
    assert lower in BOUNDS_EDGES and upper in BOUNDS_EDGES
    # One release for the 3 features and the target (sensitivity 4), then the trees.
    assert [e.level for e in reg.privacy_ledger_].count(-1) == 1
    assert reg.privacy_ledger_[0].sensitivity == 4.0
    prediction = reg.predict(X)
    assert ((prediction >= lower) & (prediction <= upper)).all()
    assert np.sqrt(np.mean((prediction[3:] - y[3:]) ** 2)) < 150  # the target's std is 180
    public = DPGBRegressor(epsilon=2.0, feature_bounds=(-1, 1), target_bounds="private",
                           n_estimators=2, random_state=0).fit(X, y)
    assert public.privacy_ledger_[0].sensitivity == 1.0  # the target alone

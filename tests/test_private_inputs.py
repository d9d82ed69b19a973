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


def test_plan_releases_the_bounds_first_within_the_budget():
    # Pure DP: one Laplace release of BOUNDS_SHARE of epsilon, the rest planned with the rest.
    plan = plan_budget(epsilon=2.0, delta=0.0, leaf_noise="laplace", bounds_features=3,
                       **COMMON)
    first = plan.entries[0]
    assert (first.mechanism, first.epsilon, first.sensitivity) == ("laplace",
                                                                   BOUNDS_SHARE * 2.0, 3.0)
    assert plan.bounds == first and sum(e.level == -1 for e in plan.entries) == 1
    rest = plan_budget(epsilon=(1 - BOUNDS_SHARE) * 2.0, delta=0.0, leaf_noise="laplace",
                       **COMMON)
    assert plan.entries[1:] == rest.entries  # the rest is planned with what remains
    assert plan.epsilon == pytest.approx(2.0) and plan.epsilon <= 2.0
    assert plan_budget(epsilon=math.inf, bounds_features=3, **COMMON).bounds.mechanism == "exact"


def test_with_delta_the_bounds_are_gaussian_counts_composed_with_the_trees():
    from dpboost._thresholds import category_noise_multiplier

    plan = plan_budget(epsilon=2.0, delta=1e-5, leaf_noise="gaussian", bounds_features=3,
                       bounds_target=True, **COMMON)
    entry = plan.bounds
    assert entry.mechanism == "gaussian" and entry.level == -1
    # Weights 1, 1, 1 and sqrt(3) for the target: L2 sensitivity sqrt(3 + 3).
    assert entry.sensitivity == pytest.approx(math.sqrt(6.0))
    assert entry.noise_multiplier == pytest.approx(category_noise_multiplier(0.2, 1e-5))
    assert plan.epsilon <= 2.0 and plan.epsilon == pytest.approx(2.0, abs=2e-3)


def test_located_bounds_take_the_outermost_significant_bins_at_any_resolution():
    from dpboost._accounting import LedgerEntry
    from dpboost._candidates import located_bounds, sum_threshold

    entry = LedgerEntry(mechanism="gaussian", epsilon=math.inf, sensitivity=1.0,
                        noise_multiplier=10.0, n_nodes=1, group=-1, tree=-1, level=-1)
    released = np.zeros((3, BOUNDS_EDGES.size - 1))
    one = np.searchsorted(BOUNDS_EDGES, 1.0)  # the bin [1, 1.33)
    released[0, one] = 1e4  # one dense bin
    released[1, one:one + 8] = 0.6 * sum_threshold(entry, 8, 1e-9)  # a decade, thin per bin
    released[2, 5] = 0.5 * sum_threshold(entry, 1, 1e-9)  # nothing significant
    bounds, located = located_bounds(released, entry)
    assert located.tolist() == [True, True, False]
    np.testing.assert_allclose(bounds[0], [1.0, 10 ** 0.125])
    np.testing.assert_allclose(bounds[1], [1.0, 10.0])
    # A decade (of either sign), not the whole grid.
    assert max(bounds[2, 1] / bounds[2, 0], bounds[2, 0] / bounds[2, 1]) == pytest.approx(10.0)


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
    # the row count first (level -4), then the bounds (level -1)
    assert [e.level for e in clf.privacy_ledger_[:2]] == [-4, -1] and clf.privacy_spent_ <= 4.0
    assert clf.score(X, y) > 0.9


def test_a_column_the_budget_cannot_locate_warns_naming_it():
    X = np.column_stack([np.full(50, np.nan), np.linspace(0, 1, 50)])
    with pytest.warns(UserWarning, match=r"could not locate the bounds of column 0 ") as caught:
        reg = DPGBRegressor(epsilon=0.5, feature_bounds="private", target_bounds=(0, 1),
                            n_estimators=2, random_state=0).fit(X, X[:, 1])
    # 50 records locate neither column at epsilon 0.5: each is named.
    assert sorted(str(w.message)[:60] for w in caught if "could not locate" in str(w.message)) \
        == [f"private bounds: the budget could not locate the bounds of {c}"[:60]
            for c in ("column 0", "column 1")]
    lower, upper = reg.feature_bounds_[0]
    assert max(upper / lower, lower / upper) == pytest.approx(10.0)  # one decade


def test_a_small_budget_says_how_many_records_locating_a_column_takes():
    # From the plan alone, before the release: the same on any data of this schema.
    X = np.random.default_rng(0).uniform(0, 1, size=(100, 8))
    messages = []
    for y in (X[:, 0], X[:, 0][::-1]):
        with pytest.warns(UserWarning, match=r"this budget locates a column only where about "
                                             r"\d+ of its records \(the target: \d+\)") as caught:
            DPGBRegressor(epsilon=0.1, feature_bounds="private", target_bounds="private",
                          n_estimators=2, random_state=0).fit(X, y)
        messages.append([str(w.message) for w in caught if "this budget" in str(w.message)])
    assert messages[0] == messages[1]


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
                        n_estimators=20, n_samples_hint=None, random_state=0).fit(X, y)
    lower, upper = reg.target_bounds_
    assert lower <= np.quantile(y[3:], 0.1) and upper >= np.quantile(y[3:], 0.9)
    assert lower in BOUNDS_EDGES and upper in BOUNDS_EDGES
    # One release for the 3 features and the target (weights 1, 1, 1, sqrt(3)), then the trees.
    assert [e.level for e in reg.privacy_ledger_].count(-1) == 1
    assert reg.privacy_ledger_[0].sensitivity == pytest.approx(math.sqrt(6.0))
    prediction = reg.predict(X)
    assert ((prediction >= lower) & (prediction <= upper)).all()
    assert np.sqrt(np.mean((prediction[3:] - y[3:]) ** 2)) < 150  # the target's std is 180
    public = DPGBRegressor(epsilon=2.0, feature_bounds=(-1, 1), target_bounds="private",
                           n_estimators=2, random_state=0).fit(X, y)
    assert public.privacy_ledger_[0].sensitivity == 1.0  # the target alone


def test_groups_do_not_reach_across_zero():
    # The groups of 2 to 8 bins stop at the two bins around 0: a column of zeros (and no
    # negative value) keeps 0 as its lower bound.
    from dpboost._accounting import LedgerEntry
    from dpboost._candidates import bounds_groups, located_bounds

    for k in (1, 2, 4, 8):
        starts, stops = bounds_groups(k)
        assert (stops > starts).all() and (starts[1:] >= stops[:-1]).all()
        assert not ((starts < 145) & (stops > 145)).any()  # no group holds 0's bin and another
    entry = LedgerEntry(mechanism="gaussian", epsilon=math.inf, sensitivity=1.0,
                        noise_multiplier=10.0, n_nodes=1, group=-1, tree=-1, level=-1)
    released = np.zeros((1, BOUNDS_EDGES.size - 1))
    released[0, 145] = 1e5  # [0, 1e-6): the zeros
    released[0, np.searchsorted(BOUNDS_EDGES, 100.0)] = 1e4
    bounds, located = located_bounds(released, entry)
    assert located[0] and bounds[0, 0] == 0.0

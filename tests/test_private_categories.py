"""Category lists released privately: categories="private" (docs/privacy.md, Private category
lists). The arithmetic against independent computations (scipy, dp-accounting), the fit's
behaviour, the accounting within a fit and across fits, and the refusals."""

import math
import pickle
import warnings
from decimal import Decimal

import dp_accounting
import numpy as np
import pytest
from dp_accounting.rdp import RdpAccountant
from scipy.stats import norm

import dpboost._estimators as estimators_module
from dpboost import DPGBClassifier, DPGBRegressor, PrivacyAccountant, PrivacyLeakWarning
from dpboost._accounting import compose_rdp, threshold_delta
from dpboost._budget import plan_budget
from dpboost._thresholds import (
    CATEGORIES_DELTA_SHARE,
    CATEGORIES_SHARE,
    categories_release,
    category_threshold,
    new_value_probability,
)

pd = pytest.importorskip("pandas")
pytestmark = pytest.mark.filterwarnings("ignore::dpboost.ReproducibleNoiseWarning")

EXCESS_BITS = 24  # SecureNoise.GAUSSIAN_BITS, restated: the lattice's relative step


def _gaussian_epsilon(sigma, delta):
    accountant = RdpAccountant()
    accountant.compose(dp_accounting.GaussianDpEvent(sigma))
    return accountant.get_epsilon(delta)


@pytest.mark.parametrize("n_columns", [1, 3, 8])
@pytest.mark.parametrize("epsilon, delta", [(0.5, 1e-5), (1.0, 1e-6), (4.0, 1e-3)])
def test_noise_threshold_and_delta_match_an_independent_computation(n_columns, epsilon, delta):
    entry = categories_release(n_columns, epsilon, delta)
    assert (entry.mechanism, entry.level, entry.tree, entry.n_nodes) == ("threshold", -2, -1,
                                                                         n_columns)
    assert entry.sensitivity == pytest.approx(math.sqrt(n_columns), rel=1e-15)
    # The counts' noise alone costs CATEGORIES_SHARE of epsilon at the Renyi delta.
    renyi_delta = (1 - CATEGORIES_DELTA_SHARE) * delta
    assert _gaussian_epsilon(entry.noise_multiplier, renyi_delta) == pytest.approx(
        CATEGORIES_SHARE * epsilon, rel=1e-6)
    # The threshold: a count of 1 plus noise clears it with probability delta share / c, by
    # scipy's Gaussian tail at the planned std inflated by the secure lattice's excess.
    s = entry.noise_multiplier * entry.sensitivity
    excess, step = (entry.noise_multiplier + 2) * 2.0**-EXCESS_BITS, 2.0**-EXCESS_BITS
    value_delta = CATEGORIES_DELTA_SHARE * delta / n_columns
    tail = norm.sf((entry.threshold - 1 - step * s) / (s * (1 + excess)))
    assert tail == pytest.approx(value_delta, rel=1e-6) and tail <= value_delta
    # ... which is within a hair of the textbook threshold 1 + s Phi^-1(1 - delta / c).
    assert entry.threshold == pytest.approx(1 + s * norm.isf(value_delta), rel=1e-4)
    assert entry.threshold > 1 + s * norm.isf(value_delta)
    assert entry.delta == pytest.approx(n_columns * tail, rel=1e-6)
    assert entry.delta <= CATEGORIES_DELTA_SHARE * delta * (1 + 1e-12)


def test_the_threshold_is_the_smallest_within_its_delta():
    s, sigma, target = 40.0, 40.0, 1e-7
    threshold = category_threshold(s, sigma, target)
    assert new_value_probability(threshold, s, sigma) <= target
    assert new_value_probability(threshold * (1 - 1e-9), s, sigma) > target
    # Without the lattice's slack the tail is numpy's Gaussian: a little smaller.
    assert norm.sf((threshold - 1) / s) < target


def test_the_plan_composes_everything_at_delta_minus_the_thresholds():
    delta = 1e-5
    plan = plan_budget(epsilon=1.0, n_estimators=20, max_depth=3, learning_rate=0.2,
                       l2_regularization=10.0, budget_allocation="sequential",
                       trees_per_ensemble=1, leaf_clipping=True, delta=delta,
                       leaf_noise="gaussian", hessian_bound=0.25, split_selection="random",
                       subsample=0.3, categories_features=4, bounds_features=2)
    first, second = plan.entries[:2]
    assert first == plan.categories and first.mechanism == "threshold"
    assert second == plan.bounds and second.mechanism == "gaussian"
    # Independent: dp-accounting on every release, converted at delta - the threshold's delta.
    events = [dp_accounting.GaussianDpEvent(first.noise_multiplier),
              dp_accounting.GaussianDpEvent(second.noise_multiplier)]
    for e in plan.entries[2:]:
        if e.mechanism == "gaussian":
            events.append(dp_accounting.PoissonSampledDpEvent(
                e.sampling_rate, dp_accounting.GaussianDpEvent(e.noise_multiplier)))
        else:
            assert e.mechanism == "uniform"
    accountant = RdpAccountant()
    accountant.compose(dp_accounting.ComposedDpEvent(events))
    expected = accountant.get_epsilon(delta - first.delta)
    assert plan.epsilon == pytest.approx(expected, rel=1e-9)
    assert plan.epsilon <= 1.0
    assert threshold_delta(plan.entries) == first.delta
    # Converted at the whole delta (the threshold's delta forgotten) it would look cheaper.
    accountant_full = RdpAccountant()
    accountant_full.compose(dp_accounting.ComposedDpEvent(events))
    assert accountant_full.get_epsilon(delta) < plan.epsilon


def test_a_threshold_delta_that_uses_all_of_delta_composes_to_inf():
    entry = categories_release(2, 1.0, 1e-5)
    assert compose_rdp([entry], entry.delta) == math.inf
    assert compose_rdp([entry], 1e-5) < 1.0


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(0)
    n = 20_000
    X = pd.DataFrame({"x": rng.uniform(-1, 1, n),
                      "city": rng.choice(["Zurich", "Bern", "Geneva", "Basel"],
                                         p=[0.4, 0.3, 0.2, 0.1], size=n).astype(object),
                      "job": rng.choice(["a", "b", None], p=[0.5, 0.4, 0.1],
                                        size=n).astype(object)})
    X.loc[:2, "city"] = "Vaduz"  # three records: far below any threshold
    X.loc[3, "job"] = np.nan
    y = (X["x"] + 1.5 * (X["city"] == "Bern") > 0.5).astype(int)
    return X, y


def _private(**params):
    return DPGBClassifier(**{"epsilon": 1.0, "feature_bounds": {"x": (-1, 1)},
                             "categorical_features": ["city", "job"],
                             "categories": "private", "classes": [0, 1],
                             "n_estimators": 20, "n_samples_hint": None, **params})


def test_released_lists_hold_the_common_values_sorted_as_text(frame, seeded_os_words):
    # Seeded bytes for the default path's secure noise: Vaduz (3 records) clears the threshold
    # (232 records, noise of standard deviation 51) with probability 3e-6, and the accuracy
    # below depends on the noise.
    X, y = frame
    with warnings.catch_warnings():
        warnings.simplefilter("error", category=PrivacyLeakWarning)  # no list is read
        clf = _private().fit(X, y)
    assert list(clf.categories_[1]) == ["Basel", "Bern", "Geneva", "Zurich"]
    assert list(clf.categories_[2]) == ["a", "b"]
    np.testing.assert_array_equal(clf.feature_bounds_[1], [-0.5, 3.5])
    entry = clf.privacy_ledger_[0]
    assert (entry.mechanism, entry.n_nodes, entry.sensitivity) == ("threshold", 2, math.sqrt(2))
    assert clf.privacy_spent_ <= 1.0
    assert "category lists of 2 columns" in clf.privacy_report()
    # A value that did not clear the threshold is unknown, as a value outside a public list.
    probe = X.iloc[:8].copy()
    unknown = probe.assign(city=np.nan)
    np.testing.assert_array_equal(clf.predict_proba(probe.iloc[:3]),
                                  clf.predict_proba(unknown.iloc[:3]))
    loaded = DPGBClassifier.from_json(clf.to_json())
    np.testing.assert_array_equal(loaded.predict_proba(X.iloc[:50]), clf.predict_proba(X.iloc[:50]))
    assert loaded.privacy_ledger_[0] == entry  # threshold and delta survive the JSON
    # Bern's effect is learnt through the released list: a threshold on x alone gets 0.772 at best.
    assert clf.score(X, y) > 0.85


def test_a_dict_mixes_public_and_private_lists(frame, seeded_os_words):
    X, y = frame
    clf = _private(categories={"city": "private", "job": ["b", "a", "c"]}).fit(X, y)
    assert list(clf.categories_[2]) == ["b", "a", "c"]  # public: as given
    assert list(clf.categories_[1]) == ["Basel", "Bern", "Geneva", "Zurich"]
    assert clf.privacy_ledger_[0].n_nodes == 1


def test_a_column_with_no_released_value_is_all_missing():
    X = pd.DataFrame({"x": np.linspace(-1, 1, 60), "c": ["rare"] * 2 + [None] * 58})
    reg = DPGBRegressor(epsilon=1.0, feature_bounds={"x": (-1, 1)}, target_bounds=(-1, 1),
                        categorical_features=["c"], categories="private", n_estimators=3,
                        random_state=0).fit(X, X["x"])
    assert reg.categories_[1].size == 0
    np.testing.assert_array_equal(reg.feature_bounds_[1], [-0.5, 0.5])
    assert "rare" not in reg.export_text(0) + reg.to_json()


class _NoText:
    """A hashable cell whose text cannot be made."""

    def __str__(self):
        raise RuntimeError("no text")

    __repr__ = __str__


@pytest.mark.parametrize("added", [1, 1.0, _NoText()])
def test_one_record_decides_neither_a_name_nor_an_exception(added):
    # 600 records hold True; the added record holds a value equal to it of another type (its
    # own value, with its own count: merged, the name shown would be whichever a record held
    # first), or a cell whose str() raises (sorting the list by text would raise; the record is
    # added first).
    X = pd.DataFrame({"x": np.linspace(-1, 1, 601), "c": [added] + [True] * 600})
    y = (X["x"] > 0).astype(int)
    fits = [DPGBClassifier(epsilon=4.0, feature_bounds={"x": (-1, 1)}, classes=[0, 1],
                           categorical_features=["c"], categories="private", n_estimators=2,
                           random_state=0).fit(X.iloc[i:], y.iloc[i:]) for i in (1, 0)]
    for clf in fits:
        assert [(type(v), v) for v in clf.categories_[1]] == [(bool, True)]


def test_delta_zero_is_refused_before_any_record_is_read(frame, monkeypatch):
    X, y = frame
    reads = []
    real = estimators_module.fit_inputs
    monkeypatch.setattr(estimators_module, "fit_inputs",
                        lambda *args: reads.append(1) or real(*args))
    accountant = PrivacyAccountant(epsilon=5.0, delta=1e-3)
    with pytest.raises(ValueError, match="categories='private' needs delta > 0"):
        _private(delta=0.0, leaf_noise="laplace", accountant=accountant).fit(X, y)
    assert reads == [] and accountant.spent() == 0.0


def test_an_unknown_categories_string_is_refused(frame):
    X, y = frame
    with pytest.raises(ValueError, match="'categories' parameter"):
        _private(categories="public").fit(X, y)


def test_private_search_refuses_private_category_lists():
    from dpboost import PrivateSearchCV

    search = PrivateSearchCV(_private(), {"max_depth": [2, 3]}, epsilon=2.0)
    with pytest.raises(ValueError, match="no 'private' categories"):
        search.fit(np.zeros((4, 3)), np.array([0, 1, 0, 1]))


def test_two_fits_compose_with_their_thresholds_delta_summed(frame):
    X, y = frame
    accountant = PrivacyAccountant(epsilon=3.0, delta=1e-4)
    a = _private(n_estimators=5, accountant=accountant, random_state=0).fit(X, y)
    b = _private(n_estimators=5, delta=1e-6, accountant=accountant,
                 random_state=1).fit(X, y)
    # Independent: every release of both fits in one dp-accounting RDP accountant, converted at
    # the accountant's delta minus both thresholds' deltas.
    events, p = [], 0.0
    for ledger in (a.privacy_ledger_, b.privacy_ledger_):
        for e in ledger:
            if e.mechanism == "threshold":
                events.append(dp_accounting.GaussianDpEvent(e.noise_multiplier))
                p += e.delta
            elif e.mechanism == "gaussian":
                events.append(dp_accounting.PoissonSampledDpEvent(
                    e.sampling_rate, dp_accounting.GaussianDpEvent(e.noise_multiplier)))
            else:
                assert e.mechanism == "uniform"
    assert p == pytest.approx(CATEGORIES_DELTA_SHARE * (1e-5 + 1e-6), rel=1e-6)
    rdp = RdpAccountant()
    rdp.compose(dp_accounting.ComposedDpEvent(events))
    assert accountant.spent() == pytest.approx(rdp.get_epsilon(1e-4 - p), rel=1e-9)
    assert "2 fits" in accountant.report()


def test_an_accountant_whose_delta_the_thresholds_exhaust_refuses_the_fit(frame):
    X, y = frame
    from dpboost import BudgetExceededError

    accountant = PrivacyAccountant(epsilon=5.0, delta=4e-6)  # below the threshold's 5e-6
    with pytest.raises(BudgetExceededError):
        _private(accountant=accountant).fit(X, y)
    assert accountant.spent() == 0.0


def test_secure_noise_by_default_and_nothing_unreleased_in_the_pickle(frame, seeded_os_words):
    # The default path (SecureNoise on os.urandom) on seeded bytes: with fresh ones Vaduz would
    # clear the threshold with probability 3e-6.
    X, y = frame
    clf = _private(n_estimators=3).fit(X, y)
    assert b"Vaduz" not in pickle.dumps(clf)
    assert "Vaduz" not in clf.to_json() + clf.privacy_report()


# ------------------------------------------------------------------------------------------------
# A value is its type and its exact text
# ------------------------------------------------------------------------------------------------

#: Equal values of one type that print differently: the common spelling (held by 300 records)
#: and the added record's.
SPELLINGS = {
    "signed_zero": (0.0, -0.0),
    "decimal": (Decimal("1.0"), Decimal("1.00")),
    "instant": (pd.Timestamp("2020-01-01 12:00", tz="UTC"),
                pd.Timestamp("2020-01-01 13:00", tz="Europe/Zurich")),
    "numpy_scalar": (1.5, np.float64(1.5)),  # one value: numpy's scalar is Python's float
}


def _spelled_data(common, n=600):
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"x": rng.uniform(-1, 1, n),
                      "c": pd.Series([common] * (n // 2) + ["other"] * (n - n // 2),
                                     dtype=object)})
    return X, (X["x"] > 0).astype(int).to_numpy()


def _spelled_estimator(noise):
    return DPGBClassifier(epsilon=50.0, feature_bounds={"x": (-1, 1)}, classes=[0, 1],
                          categorical_features=["c"], categories="private", n_estimators=3,
                          max_depth=2, n_jobs=1, random_state=noise)


@pytest.mark.parametrize("name", list(SPELLINGS))
def test_an_equal_value_spelled_differently_replays(name):
    # D' = D + one record whose value equals the common one but prints differently. Keyed by
    # equality (the old code), the released name was the last record's spelling: '-0.0' instead
    # of '0.0' on D', a difference the replay reports. Keyed by type and text, the new spelling
    # is a value of its own, with a count of 1 that must clear the threshold.
    from replay_harness import append_record, replay

    common, added = SPELLINGS[name]
    D = _spelled_data(common)
    D_prime = append_record(D, [0.5, added], 1)
    result = replay(_spelled_estimator, D, D_prime, probe=D[0].iloc[:20])
    released = list(result.estimator_dp.categories_[1])
    assert released == sorted([str(common) if isinstance(common, (Decimal, pd.Timestamp))
                               else float(common), "other"], key=str)
    DPGBClassifier.from_json(result.estimator_dp.to_json())  # a Decimal's text is JSON


def test_values_equal_across_types_keep_their_own_codes_at_predict_and_warm_start():
    # A released list [1, 1.0, '1', True]: four values, each coded by its own type and text at
    # fit, predict and warm start (coded by equality, every cell of 1, 1.0 and True took the
    # code of the last of them, and predictions ignored the column).
    n = 4000
    values = [1, 1.0, "1", True]
    X = pd.DataFrame({"x": np.zeros(n),
                      "c": pd.Series([values[i % 4] for i in range(n)], dtype=object)})
    y = np.array([(0, 1, 0, 1)[i % 4] for i in range(n)])
    clf = DPGBClassifier(epsilon=50.0, feature_bounds={"x": (-1, 1)}, classes=[0, 1],
                         categorical_features=["c"], categories="private", n_estimators=10,
                         max_depth=2, learning_rate=0.5, n_jobs=1, warm_start=True,
                         random_state=0).fit(X, y)
    assert sorted(map(repr, clf.categories_[1])) == ["'1'", "1", "1.0", "True"]
    probe = X.iloc[:4]
    first = clf.predict_proba(probe)[:, 1]
    assert (first[[1, 3]] > 0.6).all() and (first[[0, 2]] < 0.4).all()
    loaded = DPGBClassifier.from_json(clf.to_json())
    np.testing.assert_array_equal(loaded.predict_proba(probe), clf.predict_proba(probe))
    # A warm start codes the cells by the released list: the new trees learn the same classes.
    clf.set_params(n_estimators=20).fit(X, y)
    second = clf.predict_proba(probe)[:, 1]
    assert (second[[1, 3]] > first[[1, 3]]).all() and (second[[0, 2]] < first[[0, 2]]).all()


@pytest.mark.parametrize("missing", [None, pd.NA, np.nan, float("nan")])
def test_a_missing_cell_is_not_the_text_of_a_missing_value(missing):
    # The text of None is 'None': a released 'None' string must not code a missing cell.
    n = 800
    X = pd.DataFrame({"x": np.zeros(n), "c": pd.Series(["None", "<NA>", "nan", "a"] * (n // 4),
                                                       dtype=object)})
    clf = DPGBRegressor(epsilon=50.0, feature_bounds={"x": (-1, 1)}, target_bounds=(0, 1),
                        categorical_features=["c"], categories="private", n_estimators=2,
                        n_jobs=1, random_state=0).fit(X, np.zeros(n))
    assert list(clf.categories_[1]) == ["<NA>", "None", "a", "nan"]
    from dpboost._categories import encode_categorical, released_category_columns

    typed = released_category_columns(clf.categories, clf.categories_, lambda: ["x", "c"])
    codes = encode_categorical(pd.DataFrame({"x": [0.0], "c": [missing]}, dtype=object),
                               clf.categories_, typed)
    assert np.isnan(codes.iloc[0, 1])

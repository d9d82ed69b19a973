"""Sample and class weights: the public bound, the per-record clipping, the scaled
sensitivities and the parameters' errors. Privacy on neighbouring datasets is replayed in
tests/test_replay.py (``test_replay_weighted*``, ``test_replay_class_weight``) and audited in
tests/test_privacy_audit.py (``test_audit_weighted_laplace_leaves`` and its broken variant)."""

import math
import warnings
from dataclasses import replace

import numpy as np
import pytest

from dpboost import DPGBClassifier, DPGBRegressor, PrivacyAccountant
from dpboost._budget import plan_budget
from dpboost._cells import record_weights
from dpboost._public_inputs import resolve_weight_bound
from dpboost._sensitivities import leaf_sensitivity, weighted_leaf_sensitivity

PLAN = dict(epsilon=1.0, n_estimators=4, max_depth=3, learning_rate=0.3, l2_regularization=1.0,
            budget_allocation="sequential", trees_per_ensemble=4, leaf_clipping=False)


def _leaf_change(S, w, lam, g=1.0):
    """Largest |V' - V| when a record (w, -g) joins a leaf of weight sum S whose gradients are
    all +g (the worst case of the bound's proof): V = -g S / (S + lam)."""
    v = -g * S / (S + lam) if S + lam > 0 else 0.0
    v2 = -(g * S - w * g) / (S + lam + w)
    return abs(v2 - v)


@pytest.mark.parametrize("lam, W", [(1.0, 1.0), (1.0, 4.0), (0.1, 2.5), (10.0, 0.3), (3.0, 50)])
def test_weighted_leaf_sensitivity_is_the_supremum_over_weight_sums(lam, W):
    bound = weighted_leaf_sensitivity(lam, weight_bound=W)
    S = np.concatenate([np.linspace(0, 10 * (lam + W), 20001), [1e6]])
    changes = np.array([_leaf_change(s, w, lam) for s in S for w in (W, W / 2)])
    assert changes.max() <= bound * (1 + 1e-12)
    assert changes.max() >= bound * (1 - 1e-6)  # attained: the bound is tight


def test_weighted_leaf_sensitivity_limits():
    # lambda = 0: a leaf of tiny weight is any mean gradient, so the trivial 2 g*
    assert weighted_leaf_sensitivity(0.0, weight_bound=1.0, gradient_bound=0.5) == 1.0
    # fractional weights break Lemma 2 even at W = 1 ...
    assert weighted_leaf_sensitivity(1.0) > leaf_sensitivity(1.0)
    assert weighted_leaf_sensitivity(1.0) == pytest.approx(0.5359, abs=1e-4)
    # ... GLC's 2c still caps it
    assert weighted_leaf_sensitivity(1.0, clip_bound=0.1) == 0.2


@pytest.mark.parametrize("setting", [
    dict(split_selection="exponential", delta=0.0, leaf_noise="laplace", sketch_features=3),
    dict(split_selection="exponential", delta=1e-5, leaf_noise="gaussian", hessian_bound=0.25,
         hessian_sketch_features=3, hessian_sketch_rounds=2),
    dict(split_selection="cyclical", delta=0.0, leaf_noise="average", hessian_sketch_features=2),
])
def test_every_sensitivity_scales_with_the_weight_bound(setting):
    W = 2.5
    unweighted = plan_budget(**PLAN, **setting)
    assert plan_budget(**PLAN, **setting, sample_weight_bound=None) == unweighted
    weighted = plan_budget(**PLAN, **setting, sample_weight_bound=W)
    laplace_leaf = weighted_leaf_sensitivity(1.0, weight_bound=W)
    for a, b in zip(unweighted.entries, weighted.entries):
        assert replace(a, sensitivity=b.sensitivity) == b  # the same releases and budgets
        if setting["leaf_noise"] == "laplace" and b.level == 3:
            assert b.sensitivity == laplace_leaf
        else:
            assert b.sensitivity == pytest.approx(W * a.sensitivity, rel=1e-15)


def test_private_bounds_are_not_weighted():
    plan = plan_budget(**PLAN, bounds_features=3, sample_weight_bound=7.0)
    assert plan.bounds.sensitivity == 3.0


def test_weights_are_clipped_per_record():
    w = record_weights(np.array([0.5, -1.0, np.nan, np.inf, 1e9, 2.0], dtype=object), 2.0,
                       None, None, None, 2.0)
    np.testing.assert_array_equal(w, np.array([0.5, 0.0, 0.0, 2.0, 2.0, 2.0], dtype=np.float32))
    cells = record_weights(np.array(["abc", None, "1.5"], dtype=object), 2.0, None, None, None,
                           2.0)
    np.testing.assert_array_equal(cells, np.array([0.0, 0.0, 1.5], dtype=np.float32))
    # a bound that float32 rounds up: every weight stays <= it
    w = record_weights(np.array([0.3, 5.0]), 0.3, None, None, None, 0.3)
    assert float(w.max()) <= 0.3 and w.dtype == np.float32
    # class weights multiply in; the bound is sample_weight_bound x the largest class weight
    w = record_weights(np.array([1.0, 1.0, 3.0]), 2.0, {"b": 4.0}, np.array([0, 1, 1]),
                       np.array(["a", "b"], dtype=object), 8.0)
    np.testing.assert_array_equal(w, [1.0, 4.0, 8.0])


@pytest.mark.parametrize("classes, expected", [(["a", "b"], 8.0), (["a", "b", "c"], 8.0),
                                               (None, 8.0)])
def test_weight_bound(classes, expected):
    assert resolve_weight_bound(None, None) is None
    assert resolve_weight_bound(np.ones(3), 2.0) == 2.0
    assert resolve_weight_bound(None, 5.0, {"a": 0.5, "b": 4.0}, classes) == expected / 2
    assert resolve_weight_bound(np.ones(3), 2.0, {"a": 0.5, "b": 4.0}, classes) == expected
    # a class left out weighs 1
    assert resolve_weight_bound(None, None, {"a": 0.5}, ["a", "b"]) == 1.0


def _data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3))
    return X, (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(int)


def _clf(**params):
    base = dict(feature_bounds=(-1, 1), classes=[0, 1], n_estimators=5, max_depth=3,
                subsample=1.0, random_state=0, n_jobs=1)
    return DPGBClassifier(**{**base, **params})


SETTINGS = [dict(split_selection="exponential", split_candidates="hessian", loss="logistic"),
            dict(split_selection="random", leaf_noise="average", split_candidates="sketch",
                 delta=0.0),
            dict(split_selection="cyclical", loss="square")]


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _same_model(a, b, X):
    assert np.array_equal(a._forest.leaf_value, b._forest.leaf_value)
    assert np.array_equal(a._forest.split_feature, b._forest.split_feature)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


@pytest.mark.parametrize("setting", SETTINGS[:2])
def test_unit_weights_at_bound_one_are_the_unweighted_fit(setting):
    # Gaussian and average leaves, gains and sketches: at W = 1 every sensitivity is the
    # unweighted one and weighted counts of 1 are counts, bit for bit.
    X, y = _data()
    plain = _clf(**setting).fit(X, y)
    weighted = _clf(sample_weight_bound=1.0, **setting).fit(X, y, sample_weight=np.ones(len(y)))
    _same_model(plain, weighted, X)
    assert plain.privacy_ledger_ == weighted.privacy_ledger_


@pytest.mark.parametrize("setting", SETTINGS)
def test_records_of_weight_zero_are_absent(setting):
    # Appended (so that no other record's coins move), with weight 0, NaN or negative: the
    # model is the one fitted without them.
    X, y = _data()
    w = np.random.default_rng(1).uniform(0, 3, len(y))
    junk = np.random.default_rng(2).uniform(-1, 1, size=(5, 3))
    fit = lambda X_, y_, w_: _clf(sample_weight_bound=3.0, **setting).fit(  # noqa: E731
        X_, y_, sample_weight=w_)
    _same_model(fit(X, y, w),
                fit(np.vstack([X, junk]), np.append(y, [0, 1, 0, 1, 1]),
                    np.append(w, [0.0, np.nan, -2.0, -np.inf, 0.0])), X)


def test_weights_above_the_bound_are_the_bound():
    X, y = _data()
    w = np.random.default_rng(1).uniform(0, 3, len(y))
    w[:50] = 2.0
    over = w.copy()
    over[:25], over[25:50] = 1e9, np.inf
    a = _clf(sample_weight_bound=2.0, **SETTINGS[0]).fit(X, y, sample_weight=np.minimum(w, 2))
    b = _clf(sample_weight_bound=2.0, **SETTINGS[0]).fit(X, y, sample_weight=np.minimum(over, 9))
    _same_model(a, b, X)


def test_weights_change_the_model_as_repetitions_would():
    # Without noise a weight of 3 on the positive records raises their predicted share: the
    # weighted fit follows the class weight, a sample weight does the same.
    X, y = _data()
    plain = _clf(epsilon=math.inf).fit(X, y).predict_proba(X)[:, 1].mean()
    by_class = _clf(epsilon=math.inf, class_weight={1: 3.0}).fit(X, y)
    by_sample = _clf(epsilon=math.inf, sample_weight_bound=3.0).fit(
        X, y, sample_weight=np.where(y == 1, 3.0, 1.0))
    assert by_class.predict_proba(X)[:, 1].mean() > plain + 0.05
    np.testing.assert_allclose(by_class.predict_proba(X), by_sample.predict_proba(X))


def test_class_weight_sets_the_bound_of_the_plan():
    X, y = _data()
    clf = _clf(split_selection="exponential", class_weight={0: 0.5, 1: 2.0},
               sample_weight_bound=1.5).fit(X, y, sample_weight=np.ones(len(y)))
    gains = {e.sensitivity for e in clf.privacy_ledger_ if e.mechanism == "exponential"}
    assert gains == {3.0 * 0.25 * 1.5 * 2.0}  # 3 g*^2 W, g* = 0.5, W = 1.5 x 2
    assert clf._configs(np.ones(3))[0].min_child_weight == 0.0
    auto = _clf(min_child_weight="auto", sample_weight_bound=4.0)
    assert (auto._configs(np.ones(3))[0].min_child_weight
            == 4.0 * auto._configs()[0].min_child_weight)


@pytest.mark.parametrize("make, fit_kwargs, match", [
    (lambda: _clf(), {"sample_weight": np.ones(600)},
     r"sample_weight needs a public sample_weight_bound"),
    (lambda: _clf(class_weight="balanced"), {},
     r"class_weight='balanced' reads the class frequencies from the training data"),
    (lambda: _clf(class_weight={2: 1.0}), {}, r"class_weight names 2, which is not one of"),
    (lambda: _clf(class_weight={1: -1.0}), {}, r"class_weight\[1\] = -1.0 must be a finite"),
    (lambda: _clf(sample_weight_bound=0.0), {"sample_weight": np.ones(600)},
     r"sample_weight_bound.*must be a float in the range \(0.0, inf\)"),
    (lambda: _clf(sample_weight_bound=1.0), {"sample_weight": np.ones(3)},
     r"sample_weight must be 1-d with one weight per row of X"),
    (lambda: DPGBRegressor(target_bounds=(0, 1), feature_bounds=(-1, 1)),
     {"sample_weight": np.ones(600)}, r"sample_weight needs a public sample_weight_bound"),
])
def test_bad_weights_are_refused_before_any_budget(make, fit_kwargs, match):
    X, y = _data()
    accountant = PrivacyAccountant(epsilon=10.0, delta=1e-5)
    with pytest.raises(ValueError, match=match):
        make().set_params(accountant=accountant).fit(X, y, **fit_kwargs)
    assert accountant.spent() == 0.0

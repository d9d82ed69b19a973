"""``warm_start=True``: raising ``n_estimators`` and fitting again adds trees with the
new call's own budget, composed with the first fit's in the ledger and the accountant, on the
first fit's released grid and public inputs. Neighbouring datasets: tests/test_replay.py
(``test_replay_warm_start``)."""

import warnings
from dataclasses import replace

import numpy as np
import pytest

from dpboost import DPGBClassifier, DPGBRegressor, PrivacyAccountant, PrivacyLeakWarning
from dpboost._accountant import Alternatives, compose_fits, fit_epsilon
from dpboost._accounting import compose
from dpboost._boosting import plan_fit
from dpboost._loss import make_loss


def _data(n=800, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3))
    return X, (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)


def _clf(**params):
    base = dict(feature_bounds=(-1, 1), classes=[0, 1], n_estimators=6, max_depth=2,
                random_state=0, n_jobs=1, warm_start=True)
    return DPGBClassifier(**{**base, **params})


_SEEDED = ("random_state is set: the noise is reproducible by anyone who knows the seed, so "
           "the model is not differentially private as released. Use random_state=None for "
           "releases; filter ReproducibleNoiseWarning to opt in for experiments.")


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="random_state is set")
        yield


def test_added_trees_have_their_own_budget_composed_with_the_first():
    X, y = _data()
    accountant = PrivacyAccountant(epsilon=5.0, delta=1e-5)
    clf = _clf(epsilon=1.0, accountant=accountant).fit(X, y)
    first = (clf._forest.split_feature.copy(), clf._forest.leaf_value.copy(),
             list(clf.privacy_ledger_), clf.predict_proba(X))
    clf.set_params(n_estimators=10, epsilon=0.5).fit(X, y)
    # the fitted trees are kept, 4 stages added
    assert clf._forest.n_stages == 10
    np.testing.assert_array_equal(clf._forest.split_feature[:6], first[0])
    np.testing.assert_array_equal(clf._forest.leaf_value[:6], first[1])
    np.testing.assert_array_equal(clf.predict_proba(X, iteration_range=(0, 6)), first[3])
    # the new trees' ledger is the plan of 4 trees at epsilon 0.5, after the first fit's
    # (its configuration: the regime of the count the first fit released, no second count)
    [config] = clf._configs(previous=clf._forest)
    second = plan_fit(replace(config, n_estimators=4), make_loss("softmax", 1), 1, 3)
    assert clf.privacy_ledger_[:len(first[2])] == first[2]
    assert clf.privacy_ledger_[len(first[2]):] == second.entries
    fits = [e.fit for e in clf.privacy_ledger_]
    assert len(set(fits[:len(first[2])])) == len(set(fits[len(first[2]):])) == 1
    assert fits[0] != fits[-1]
    # composed sequentially: more than either, at most their sum; registered as two fits
    # (the first fit's choice of plan by its row count: every plan it could take)
    spent = clf.privacy_spent_
    assert spent == compose_fits([(Alternatives(clf._privacy_choices), None),
                                  (clf.privacy_ledger_[len(first[2]):], None)], 1e-5, scale=0.5)
    assert compose(clf.privacy_ledger_, 1e-5) <= spent
    # (the accountant's PLD is discretised for its budget of 5, the model's for its epsilon)
    assert 1.0 < spent <= 1.5 and accountant.spent() == pytest.approx(spent, rel=1e-5)
    # and it survives the JSON round trip (one identifier per entry; the choices the first's)
    loaded = DPGBClassifier.from_json(clf.to_json())
    assert loaded.privacy_spent_ == spent
    assert fit_epsilon(loaded.privacy_ledger_, loaded._privacy_choices, 1e-5, 0.5) == spent


def test_the_second_fit_reads_no_public_input_from_the_data():
    # First fit: bounds and categories read from the data (warned); the second, on data with
    # a wider range and a new category, keeps the first fit's grid and lists, and warns of
    # nothing read.
    import pandas as pd

    X, y = _data()
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    frame["colour"] = np.where(X[:, 2] > 0, "red", "blue")
    clf = _clf(feature_bounds=None, categorical_features=["colour"])
    with pytest.warns(PrivacyLeakWarning, match="feature_bounds"):
        clf.fit(frame, y)
    bounds, categories = clf.feature_bounds_.copy(), dict(clf.categories_)
    wider = frame.assign(a=frame["a"] * 10, colour=np.where(X[:, 1] > 0, "green", "red"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf.set_params(n_estimators=8).fit(wider, y)
    assert [str(w.message) for w in caught
            if issubclass(w.category, PrivacyLeakWarning)] == [_SEEDED]
    np.testing.assert_array_equal(clf.feature_bounds_, bounds)
    assert {j: list(v) for j, v in clf.categories_.items()} == {
        j: list(v) for j, v in categories.items()}


def test_released_bounds_are_not_released_again():
    X, y = _data()
    reg = DPGBRegressor(feature_bounds="private", target_bounds="private", n_estimators=4,
                        max_depth=2, random_state=0, warm_start=True,
                        split_candidates="sketch").fit(X, X[:, 0] * 3)
    bounds, target = reg.feature_bounds_.copy(), reg.target_bounds_
    n_first = len(reg.privacy_ledger_)
    reg.set_params(n_estimators=6).fit(X * 5, X[:, 0] * 30)
    added = reg.privacy_ledger_[n_first:]
    assert all(e.tree >= 0 for e in added)  # no bounds or quantile sketch release again
    np.testing.assert_array_equal(reg.feature_bounds_, bounds)
    assert reg.target_bounds_ == target


def test_cyclical_trees_continue_the_cycle():
    X, y = _data()
    clf = _clf(split_selection="random", interaction_cst="no_interactions", n_estimators=4)
    clf.fit(X, y).set_params(n_estimators=8).fit(X, y)
    assert (clf._forest.split_feature == np.arange(8)[:, None] % 3).all()


def test_equal_n_estimators_adds_nothing_and_spends_nothing():
    X, y = _data()
    accountant = PrivacyAccountant(epsilon=5.0, delta=1e-5)
    clf = _clf(accountant=accountant).fit(X, y)
    ledger, spent = list(clf.privacy_ledger_), accountant.spent()
    clf.fit(X, y)
    assert clf.privacy_ledger_ == ledger and accountant.spent() == spent


def test_without_warm_start_fit_starts_again():
    X, y = _data()
    clf = _clf(warm_start=False).fit(X, y)
    clf.set_params(n_estimators=8).fit(X, y)
    assert clf._forest.n_stages == 8 and len({e.fit for e in clf.privacy_ledger_}) == 1


@pytest.mark.parametrize("change, match", [
    ({"n_estimators": 4}, r"n_estimators=4 must be >= the 6 trees per output fitted so far"),
    ({"n_estimators": 8, "max_depth": 3}, r"max_depth changed from 2 to 3 since the fit"),
    ({"n_estimators": 8, "feature_bounds": (-2, 2)}, r"feature_bounds changed from"),
    ({"n_estimators": 8, "delta": 0.0, "leaf_noise": "laplace"}, r"delta changed from"),
])
def test_a_warm_start_that_cannot_add_trees_is_refused_before_any_budget(change, match):
    X, y = _data()
    accountant = PrivacyAccountant(epsilon=5.0, delta=1e-5)
    clf = _clf(accountant=accountant).fit(X, y)
    spent = accountant.spent()
    with pytest.raises(ValueError, match=match):
        clf.set_params(**change).fit(X, y)
    assert accountant.spent() == spent and clf._forest.n_stages == 6


@pytest.mark.parametrize("hint, auto", [(100, 200), (10_000, 400)])
def test_auto_trees_of_a_warm_start_read_the_row_count_of_the_fit(hint, auto):
    # The classifier's "auto" is 400 additive trees from a row count times epsilon of 7,000:
    # a warm start resolves it as the fit does, from the same (here public) count.
    X, y = _data(200)
    clf = _clf(n_estimators=auto + 1, n_samples_hint=hint, max_depth=1).fit(X, y)
    with pytest.raises(ValueError, match=rf"n_estimators='auto' \({auto}\) must be >= the "
                                         rf"{auto + 1} trees"):
        clf.set_params(n_estimators="auto").fit(X, y)


def test_a_model_without_its_fitted_parameters_cannot_be_warm_started():
    X, y = _data()
    clf = _clf().fit(X, y)
    del clf._warm_start_params  # as a model written before warm_start existed
    with pytest.raises(ValueError, match="does not record the parameters it was fitted with"):
        clf.set_params(n_estimators=8).fit(X, y)

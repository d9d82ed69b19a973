"""Hostile and odd input: either a clear ValueError before any noise, or finite predictions."""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from dpboost import DPGBClassifier, DPGBRegressor, PrivacyLeakWarning

_FINITE = st.floats(min_value=-1e300, max_value=1e300, allow_nan=False, allow_infinity=False)


@st.composite
def _datasets(draw):
    n = draw(st.integers(1, 25))
    d = draw(st.integers(1, 4))
    dtype = draw(st.sampled_from([np.float64, np.float32, np.int64, np.bool_]))
    if dtype == np.bool_:
        X = draw(arrays(dtype, (n, d)))
    elif dtype == np.int64:
        X = draw(arrays(dtype, (n, d), elements=st.integers(-10**12, 10**12)))
    else:
        with np.errstate(over="ignore"):  # float32 overflow to inf is a hostile input too
            X = draw(arrays(np.float64, (n, d), elements=_FINITE)).astype(dtype)
    if draw(st.booleans()):
        X = np.vstack([X, X[:1]])  # a duplicate row
    return X


def _fit_or_value_error(estimator, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        warnings.simplefilter("ignore", RuntimeWarning)  # float32 overflow in the inputs themselves
        try:
            estimator.fit(X, y)
        except ValueError:
            return None
    return estimator


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(X=_datasets(), seed=st.integers(0, 2**16), epsilon=st.sampled_from([0.1, 1.0, np.inf]))
def test_classifier_fits_or_refuses_and_predicts_finite(X, seed, epsilon):
    y = np.arange(X.shape[0]) % 2
    clf = DPGBClassifier.dpboost_paper(epsilon=epsilon, n_estimators=3, max_depth=2, classes=[0, 1],
                                       random_state=seed)
    fitted = _fit_or_value_error(clf, X, y)
    if fitted is not None:
        proba = fitted.predict_proba(X)
        assert np.isfinite(proba).all() and proba.shape == (X.shape[0], 2)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(X=_datasets(), y_scale=st.sampled_from([1.0, 1e-300, 1e300]), seed=st.integers(0, 2**16))
def test_regressor_fits_or_refuses_and_predicts_finite(X, y_scale, seed):
    y = np.linspace(-1, 1, X.shape[0]) * y_scale
    reg = DPGBRegressor.dpboost_paper(epsilon=1.0, n_estimators=3, max_depth=2, random_state=seed)
    fitted = _fit_or_value_error(reg, X, y)
    if fitted is not None:
        pred = fitted.predict(X)
        assert np.isfinite(pred).all()


@pytest.mark.parametrize("bounds", [[(-1e308, 1e308)] * 2, [(0.0, 5e-324)] * 2])
def test_bound_widths_that_overflow_or_underflow_are_refused(bounds):
    # The grid divides by the width: an infinite or subnormal width would give undefined codes.
    X = np.array([[-1e308, 0.0], [0.0, 1e308], [1e308, -1e308]])
    clf = DPGBClassifier.dpboost_paper(feature_bounds=bounds, classes=[0, 1], n_estimators=2,
                                       max_depth=1,
                                       random_state=0)
    with pytest.raises(ValueError, match=r"feature_bounds\[0\].*finite, normal positive"):
        clf.fit(X, [0, 1, 0])


def test_empty_and_non_numeric_input_fit_noise_only():
    # An empty training set is a dataset like any other (its neighbour holds one record), and a
    # cell that is not a number is missing: neither may raise (the exception would depend on the
    # private data). Both fits release noise only and spend the planned budget.
    kw = dict(classes=[0, 1], feature_bounds=(0, 1), n_estimators=3, max_depth=2)
    empty = DPGBClassifier(**kw).fit(np.empty((0, 3)), [])
    words = DPGBClassifier(**kw).fit([["a", "b"], ["c", "d"]], [0, 1])
    for clf in (empty, words):
        assert clf.privacy_spent_ <= 1.0
        assert clf.predict_proba(np.zeros((2, clf.n_features_in_))).shape == (2, 2)
    with pytest.raises(ValueError, match="0 feature"):
        DPGBClassifier(**kw).fit(np.empty((3, 0)), [0, 1, 0])  # the schema: no column at all


def test_cells_that_break_conversion_are_missing_not_errors():
    # A Python int too large for a float (OverflowError) and an unhashable cell in a categorical
    # column (TypeError in a dict lookup) raised from fit: whether fit raised depended on one
    # record's value. Both are now "not a number" / "not in the list": missing.
    kw = dict(classes=[0, 1], feature_bounds=(0, 3), n_estimators=2, max_depth=2,
              categorical_features=[1], categories={1: ["a", "b"]}, random_state=0)
    X = np.array([[1.0, "a"], [1.0, "b"], [2.0, "b"]], dtype=object)
    hostile = X.copy()
    hostile[0, 0], hostile[1, 1] = 10**400, ["b"]
    missing = X.copy()
    missing[0, 0], missing[1, 1] = np.nan, None
    assert (DPGBClassifier(**kw).fit(hostile, [0, 1, 0]).to_json()
            == DPGBClassifier(**kw).fit(missing, [0, 1, 0]).to_json())

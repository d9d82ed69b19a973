"""Binning, ``_binning``: the equal-width grid inside public bounds (against a naive reference),
binning on given thresholds, and codes that do not depend on the data."""

import warnings

import numpy as np
import pytest

from dpboost import DPGBClassifier, PrivacyLeakWarning, _binning
from dpboost._binning import BoundsBinner, finite_ranges


def _naive_bins(X, bounds, max_bins):
    lower, upper = bounds[:, 0], bounds[:, 1]
    t = (X - lower) * (max_bins / (upper - lower))
    codes = np.clip(np.floor(np.nan_to_num(t, nan=0.0)), 0, max_bins - 1)
    return np.where(np.isnan(X), max_bins, codes).astype(np.uint8)


@pytest.fixture
def bounded_data():
    """Normal features at four scales; the bounds clip some values of each."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 4)) * [1, 10, 0.1, 3]
    bounds = np.array([[-2, 2], [-15, 25], [-0.3, 0.1], [0, 1]], dtype=float)
    return X, bounds


@pytest.mark.parametrize("max_bins", [2, 7, 32, 255])
def test_binning_matches_naive_and_clips(bounded_data, max_bins):
    X, bounds = bounded_data
    X = np.vstack([X, np.full(4, np.nan), [-np.inf, np.inf, np.nan, 0.5],
                   bounds[:, 0] - 5, bounds[:, 1] + 5, bounds[:, 0], bounds[:, 1]])
    binner = BoundsBinner(bounds, max_bins)
    for order in "FC":
        got = binner.transform(X, order=order)
        assert got.dtype == np.uint8
        assert got.flags[f"{order}_CONTIGUOUS"]
        np.testing.assert_array_equal(got, _naive_bins(X, bounds, max_bins))
    got = binner.transform(X)
    # Out-of-bounds values (infinities too) are clipped into the first and the last bin; NaN gets
    # the missing code max_bins.
    assert (got[-4] == 0).all() and (got[-3] == max_bins - 1).all()
    assert (got[-6] == max_bins).all() and list(got[-5, :3]) == [0, max_bins - 1, max_bins]
    assert (got[-2] == 0).all() and (got[-1] == max_bins - 1).all()


def test_thresholds_are_bin_edges(bounded_data):
    _, bounds = bounded_data
    binner = BoundsBinner(bounds, 8)
    t = binner.thresholds()
    assert t.shape == (4, 7)
    # A value just below threshold b is in bin b (goes left of candidate b), just above it in
    # bin b + 1; "just" is a relative 1e-9 because codes and thresholds round differently.
    for f in range(4):
        for b in range(7):
            x = np.zeros((2, 4))
            eps = 1e-9 * (1 + abs(t[f, b]))
            x[:, f] = [t[f, b] - eps, t[f, b] + eps]
            codes = binner.transform(x)[:, f]
            assert codes[0] <= b < codes[1]


def test_bin_edges_do_not_depend_on_data():
    # docs/privacy.md, rule 1: the grid is a function of public bounds only; D and D' bin identically.
    rng = np.random.default_rng(1)
    D = rng.uniform(-1, 1, size=(100, 3))
    D_prime = np.vstack([D, [[0.99, -0.99, 1e6]]])
    binner = BoundsBinner(np.tile([-1.0, 1.0], (3, 1)), 16)
    np.testing.assert_array_equal(binner.transform(D), binner.transform(D_prime)[:100])


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


@pytest.mark.parametrize("thresholds", [False, True])
def test_codes_do_not_depend_on_layout_or_size(thresholds):
    # More than one chunk of rows (the parallel path), and every input layout the binner takes:
    # C and Fortran order, a strided view, a read-only array; C and Fortran output. One compiled
    # kernel serves them all (flat arrays); the codes are the naive ones everywhere.
    rng = np.random.default_rng(2)
    X = rng.normal(size=(5000, 3)) * 2
    X[rng.random(X.shape) < 0.05] = np.nan
    bounds = np.array([[-2.0, 2.0]] * 3)
    edges = np.sort(rng.uniform(-2, 2, size=(3, 15)), axis=1)
    binner = BoundsBinner(bounds, 16, edges if thresholds else None)
    expected = (np.where(np.isnan(X), 16, np.array(
        [np.searchsorted(edges[f], np.nan_to_num(X[:, f]), side="right") for f in range(3)]).T)
                if thresholds else _naive_bins(X, bounds, 16))
    read_only = X.copy()
    read_only.setflags(write=False)
    for data in (X, np.asfortranarray(X), np.repeat(X, 2, axis=1)[:, ::2],
                 np.hstack([X, X])[:, :3], read_only):
        for order in "FC":
            np.testing.assert_array_equal(binner.transform(data, order=order), expected)
    # Any thread count: 3 chunks on 1, 2, 3 threads, and 16 threads of which most get no rows.
    for threads in (1, 2, 3, 16):
        np.testing.assert_array_equal(binner.transform(X, n_threads=threads), expected)
    np.testing.assert_array_equal(binner.transform(X[:1000], n_threads=2), expected[:1000])


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("n_threads", [1, 3])
def test_binning_some_columns_in_place_gives_their_codes(order, n_threads):
    # Columns 3 and 1 of X, in that order, binned where they lie: the codes of a copy of them.
    rng = np.random.default_rng(3)
    X = np.asarray(rng.normal(size=(5000, 4)) * 2, order=order)
    X[rng.random(X.shape) < 0.05] = np.nan
    columns = np.array([3, 1])
    bounds = np.array([[-1.0, 3.0], [-2.0, 2.0]])
    scale = 16 / (bounds[:, 1] - bounds[:, 0])
    out = np.empty((X.shape[0], 2), dtype=np.uint8, order="F")
    _binning.bin_columns(X, np.ascontiguousarray(bounds[:, 0]), scale, 16, out, n_threads,
                         columns)
    np.testing.assert_array_equal(out, _naive_bins(X[:, columns], bounds, 16))


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("n", [5, 10_001])
@pytest.mark.parametrize("n_threads", [1, 3])
def test_finite_ranges_are_the_least_and_greatest_finite_values(order, n, n_threads):
    # The data-derived bounds' one pass: what NumPy's nanmin / nanmax give over the finite
    # cells, NaN for a column with none (all missing or infinite), over chunks of any size.
    rng = np.random.default_rng(n)
    X = rng.normal(size=(n, 4)) * 10.0 ** rng.integers(-3, 4, size=4)
    X[rng.random(X.shape) < 0.2] = np.nan
    X[0, 0], X[-1, 1] = np.inf, -np.inf
    X[:, 3] = rng.choice([np.nan, np.inf, -np.inf], size=n)
    lower, upper = finite_ranges(np.asarray(X, order=order), n_threads)
    finite = np.where(np.isfinite(X[:, :3]), X[:, :3], np.nan)
    np.testing.assert_array_equal(lower[:3], np.nanmin(finite, axis=0))
    np.testing.assert_array_equal(upper[:3], np.nanmax(finite, axis=0))
    assert np.isnan(lower[3]) and np.isnan(upper[3])
    strided = finite_ranges(X[::2, ::2])  # neither layout: copied
    np.testing.assert_array_equal(strided[0], np.nanmin(np.where(np.isfinite(X[::2, ::2]),
                                                                 X[::2, ::2], np.nan), axis=0))


@pytest.mark.parametrize("feature_bounds", [None, "public"])
def test_one_job_bins_on_the_calling_thread(monkeypatch, feature_bounds):
    # n_jobs=1 is one thread (a joblib-parallel search runs one fit per core): no parallel
    # binning kernel runs in fit or predict, on more rows than one chunk, whether the bounds are
    # read from X (a PrivacyLeakWarning) or public, the grid equal-width or the quantile sketch's.
    def parallel(*args):
        raise AssertionError("a parallel binning kernel ran with n_jobs=1")

    for name in ("_bin_chunks", "_bin_chunks_by_thresholds", "_range_chunks"):
        monkeypatch.setattr(_binning, name, parallel)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5000, 3))
    y = (X[:, 0] > 0).astype(int)
    bounds = None if feature_bounds is None else [(-4.0, 4.0)] * 3
    for hint in (None, 10**6):  # the grid, then the sketch (n x epsilon past its threshold)
        model = DPGBClassifier(n_estimators=2, n_jobs=1, feature_bounds=bounds, classes=[0, 1],
                               n_samples_hint=hint, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            model.fit(X, y)
        model.predict_proba(X)

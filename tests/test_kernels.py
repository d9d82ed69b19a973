"""Numba kernels against naive NumPy references, and their invariants."""

import numpy as np
import pytest

from dpboost._binning import BoundsBinner
from dpboost._histogram import build_histograms
from dpboost._predictor import predict_binned
from dpboost._splitting import children_on_side, compute_gains, split_samples


def _naive_bins(X, bounds, max_bins):
    lower, upper = bounds[:, 0], bounds[:, 1]
    t = (X - lower) * (max_bins / (upper - lower))
    codes = np.clip(np.floor(np.nan_to_num(t, nan=0.0)), 0, max_bins - 1)
    return np.where(np.isnan(X), max_bins, codes).astype(np.uint8)


def _naive_histograms(X_binned, idx, node, g, n_nodes, n_codes):
    hist = np.zeros((X_binned.shape[1], n_nodes, n_codes, 2))
    for k, i in enumerate(idx):
        for f in range(X_binned.shape[1]):
            hist[f, node[k], X_binned[i, f]] += [g[k], 1.0]
    return hist


def _naive_gain(g_left, n_left, g_right, n_right, lam):
    # Eq. 3 of Li et al. 2020, term by term; an empty child contributes nothing.
    gain = 0.0
    if n_left:
        gain += g_left**2 / (n_left + lam)
    if n_right:
        gain += g_right**2 / (n_right + lam)
    return gain


def _naive_go_right(code, threshold, missing_left, missing_code):
    return (not missing_left) if code == missing_code else code > threshold


def _naive_predict(X_binned, feat, thr, miss, missing_code, leaves):
    n_internal = feat.shape[1]
    out = np.zeros(X_binned.shape[0])
    for i in range(X_binned.shape[0]):
        for t in range(feat.shape[0]):
            k = 0
            while k < n_internal:
                right = _naive_go_right(X_binned[i, feat[t, k]], thr[t, k], miss[t, k],
                                        missing_code)
                k = 2 * k + (2 if right else 1)
            out[i] += leaves[t, k - n_internal]
    return out


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 4)) * [1, 10, 0.1, 3]
    bounds = np.array([[-2, 2], [-15, 25], [-0.3, 0.1], [0, 1]], dtype=float)
    return X, bounds


@pytest.mark.parametrize("max_bins", [2, 7, 32, 255])
def test_binning_matches_naive_and_clips(data, max_bins):
    X, bounds = data
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


def test_thresholds_are_bin_edges(data):
    _, bounds = data
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
    # PRIVACY.md rule 1: the grid is a function of public bounds only; D and D' bin identically.
    rng = np.random.default_rng(1)
    D = rng.uniform(-1, 1, size=(100, 3))
    D_prime = np.vstack([D, [[0.99, -0.99, 1e6]]])
    binner = BoundsBinner(np.tile([-1.0, 1.0], (3, 1)), 16)
    np.testing.assert_array_equal(binner.transform(D), binner.transform(D_prime)[:100])


def _level_inputs(seed, n=400, d=3, n_nodes=4, n_bins=16):
    """Random codes in [0, n_bins], n_bins being the missing-value code."""
    rng = np.random.default_rng(seed)
    X_binned = np.asfortranarray(rng.integers(0, n_bins + 1, size=(n, d), dtype=np.uint8))
    idx = np.sort(rng.choice(n, size=n // 2, replace=False)).astype(np.int64)
    node = rng.integers(0, n_nodes, size=idx.size).astype(np.int32)
    g = rng.uniform(-1, 1, size=idx.size).astype(np.float32)
    return X_binned, idx, node, g, n_nodes, n_bins


def test_histograms_match_naive_and_invariants():
    X_binned, idx, node, g, n_nodes, n_bins = _level_inputs(0)
    hist = np.full((3, n_nodes, n_bins + 1, 2), np.nan)
    build_histograms(X_binned, idx, node, g, hist)
    ref = _naive_histograms(X_binned, idx, node, g, n_nodes, n_bins + 1)
    np.testing.assert_allclose(hist[..., 0], ref[..., 0], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(hist[..., 1], ref[..., 1])
    # Every feature's histogram sums to the node total.
    node_sum = np.bincount(node, weights=g, minlength=n_nodes)
    node_count = np.bincount(node, minlength=n_nodes)
    for f in range(3):
        np.testing.assert_allclose(hist[f, :, :, 0].sum(axis=1), node_sum, atol=1e-9)
        np.testing.assert_array_equal(hist[f, :, :, 1].sum(axis=1), node_count)


def test_histograms_parent_equals_children_and_order_invariance():
    X_binned, idx, node, g, _, n_bins = _level_inputs(1, n_nodes=1)
    parent = np.empty((3, 1, n_bins + 1, 2))
    build_histograms(X_binned, idx, np.zeros_like(node), g, parent)
    children = (X_binned[idx, 0] > 7).astype(np.int32)
    child = np.empty((3, 2, n_bins + 1, 2))
    build_histograms(X_binned, idx, children, g, child)
    np.testing.assert_allclose(child.sum(axis=1), parent[:, 0], atol=1e-12)
    # The grower's sibling subtraction: parent - left child = right child.
    np.testing.assert_allclose(parent[:, 0] - child[:, 0], child[:, 1], atol=1e-12)
    perm = np.random.default_rng(2).permutation(idx.size)
    shuffled = np.empty_like(parent)
    build_histograms(X_binned, idx[perm], np.zeros_like(node), g[perm], shuffled)
    np.testing.assert_allclose(shuffled, parent, atol=1e-9)


@pytest.mark.parametrize("lam", [0.0, 0.1, 5.0])
def test_gains_match_naive(lam):
    X_binned, idx, node, g, n_nodes, n_bins = _level_inputs(3)
    hist = _naive_histograms(X_binned, idx, node, g, n_nodes, n_bins + 1)
    hist[:, 0] = 0.0  # an empty node: every candidate has gain 0 (and no 0/0 when lambda = 0)
    gains = np.empty((n_nodes, 3, n_bins - 1, 2))
    compute_gains(hist, lam, gains)
    s, c = hist[..., 0].transpose(1, 0, 2), hist[..., 1].transpose(1, 0, 2)
    for j in range(n_nodes):
        for f in range(3):
            miss_g, miss_n = s[j, f, n_bins], c[j, f, n_bins]
            for b in range(n_bins - 1):
                left_g, left_n = s[j, f, :b + 1].sum(), c[j, f, :b + 1].sum()
                right_g, right_n = s[j, f, b + 1:n_bins].sum(), c[j, f, b + 1:n_bins].sum()
                missing_left = _naive_gain(left_g + miss_g, left_n + miss_n, right_g, right_n,
                                           lam)
                missing_right = _naive_gain(left_g, left_n, right_g + miss_g, right_n + miss_n,
                                            lam)
                assert gains[j, f, b, 0] == pytest.approx(missing_left, rel=1e-10, abs=1e-12)
                assert gains[j, f, b, 1] == pytest.approx(missing_right, rel=1e-10, abs=1e-12)
    assert np.isfinite(gains).all() and (gains[0] == 0).all()
    assert (c[:, :, n_bins] > 0).any()  # the data did exercise the missing bin


def test_split_samples_matches_naive():
    X_binned, idx, node, _, n_nodes, n_bins = _level_inputs(4)
    feat = np.array([0, 2, 1, 2], dtype=np.int32)
    thr = np.array([3, 0, 15, 8], dtype=np.uint8)
    miss = np.array([True, False, True, False])
    expected = [2 * j + _naive_go_right(X_binned[i, feat[j]], thr[j], miss[j], n_bins)
                for i, j in zip(idx, node)]
    got = node.copy()
    split_samples(X_binned, idx, got, feat, thr, miss, n_bins)
    np.testing.assert_array_equal(got, expected)
    # A boundary at the last bin with missing left sends everything left: empty children are legal.
    assert (got[node == 2] % 2 == 0).all()


def test_children_on_side_matches_naive():
    _, idx, node, g, _, _ = _level_inputs(6, n_nodes=8)
    side = np.array([0, 1, 1, 0], dtype=np.uint8)
    got_idx, got_slot, got_g = children_on_side(idx, node, g, side)
    keep = node % 2 == side[node // 2]
    np.testing.assert_array_equal(got_idx, idx[keep])
    np.testing.assert_array_equal(got_slot, node[keep] // 2)
    np.testing.assert_array_equal(got_g, g[keep])
    assert got_idx.dtype == idx.dtype and got_slot.dtype == node.dtype and got_g.dtype == g.dtype


def test_level_histograms_by_subtraction_equal_direct_histograms():
    from dpboost._grower import _level_histograms

    X_binned, idx, node, g, n_nodes, n_bins = _level_inputs(7, n_nodes=8)
    parent_node = (node // 2).astype(node.dtype)
    parent = _level_histograms(X_binned, idx, np.zeros_like(node), g, None, n_bins)
    parents = np.zeros((X_binned.shape[1], 4, n_bins + 1, 2))
    build_histograms(X_binned, idx, parent_node, g, parents)
    direct = np.zeros((X_binned.shape[1], 8, n_bins + 1, 2))
    build_histograms(X_binned, idx, node, g, direct)
    assert parent.shape[1] == 1
    np.testing.assert_allclose(_level_histograms(X_binned, idx, node, g, parents, n_bins), direct,
                               atol=1e-9)


@pytest.mark.parametrize("depth", [1, 3])
def test_predict_binned_matches_naive(depth):
    rng = np.random.default_rng(5)
    X_binned = rng.integers(0, 11, size=(300, 4), dtype=np.uint8)  # 10 = missing code
    n_trees = 3
    feat = rng.integers(0, 4, size=(n_trees, 2**depth - 1)).astype(np.int32)
    thr = rng.integers(0, 9, size=(n_trees, 2**depth - 1)).astype(np.uint8)
    miss = rng.random((n_trees, 2**depth - 1)) < 0.5
    leaves = rng.normal(size=(n_trees, 2**depth))
    out = np.full(300, 0.5)
    predict_binned(X_binned, feat, thr, miss, 10, leaves, out)
    np.testing.assert_allclose(out, 0.5 + _naive_predict(X_binned, feat, thr, miss, 10, leaves))
    # Fortran-ordered input (the training layout) gives the same predictions.
    out_f = np.full(300, 0.5)
    predict_binned(np.asfortranarray(X_binned), feat, thr, miss, 10, leaves, out_f)
    np.testing.assert_array_equal(out_f, out)

"""Numba kernels of ``_histogram``, ``_splitting``, ``_predictor``, ``_coins``, ``_loss`` and
``_selection`` against naive references, and their invariants (the binning kernels are in
test_binning.py)."""

import math

import numpy as np
import pytest

from dpboost._boosting import compute_gradients, select_records
from dpboost._coins import MAX_ROWS, chacha20_block, uniforms
from dpboost._common import float32_at_most
from dpboost._histogram import (
    FIXED_POINT_BITS,
    PACKED_ROWS,
    all_rows_histograms,
    build_level_histograms,
    fixed_point_scale,
    row_blocks,
)
from dpboost._loss import (
    logistic_loss_gradients,
    make_loss,
    sigmoid,
    softmax_loss_gradients,
    square_loss_gradients,
)
from dpboost._predictor import _SCATTER_BLOCK, add_tree_scores, partition_leaves, predict_binned
from dpboost._records import Partition, RecordCoins
from dpboost._selection import select_rows
from dpboost._splitting import (
    child_sums,
    compute_gains,
    label_by_range,
    partition_level,
    range_sums,
    scatter_rows,
)


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


def _level_inputs(seed, n=400, d=3, n_nodes=4, n_bins=16):
    """Random codes in [0, n_bins], n_bins being the missing-value code; the selected samples are
    grouped by node (ascending rows within a node), as the grower keeps them."""
    rng = np.random.default_rng(seed)
    X_binned = np.asfortranarray(rng.integers(0, n_bins + 1, size=(n, d), dtype=np.uint8))
    idx = np.sort(rng.choice(n, size=n // 2, replace=False)).astype(np.int32)
    node = np.sort(rng.integers(0, n_nodes, size=idx.size)).astype(np.int32)
    g = rng.uniform(-1, 1, size=idx.size).astype(np.float32)
    return X_binned, idx, node, g, n_nodes, n_bins


def _node_start(node, n_nodes):
    return np.concatenate([[0], np.cumsum(np.bincount(node, minlength=n_nodes))]).astype(np.int64)


def _build(X_binned, idx, node, g, n_nodes, n_bins, parent=None, side=None, n_threads=2,
           scale=None):
    """build_level_histograms on samples grouped by node (parent=None: the root mode); int64
    histograms of fixed-point gradients with a ``scale``."""
    d = X_binned.shape[1]
    dtype = np.float64 if scale is None else np.int64
    if parent is None:
        parent, side = np.empty((d, 0, n_bins + 1, 2), dtype), np.empty(0, dtype=np.uint8)
    out = np.full((d, n_nodes, n_bins + 1, 2), -(2**62)).astype(dtype)
    build_level_histograms(X_binned, idx, g, _node_start(node, n_nodes), parent, side,
                           n_threads, out, 1.0 if scale is None else scale)
    return out


def _fixed_point_terms(g, scale, n_threads):
    """Each gradient's term in an int64 histogram: one feature, one record per node."""
    n = g.size
    X_binned = np.zeros((n, 1), dtype=np.uint8, order="F")
    return _build(X_binned, np.arange(n, dtype=np.int32), np.arange(n, dtype=np.int32), g, n, 1,
                  n_threads=n_threads, scale=scale)[0, :, 0, 0]


# 3 threads: more than the pairs of 1 to 4 features, so the tasks are single features
@pytest.mark.parametrize("n_threads", [1, 2, 3])
@pytest.mark.parametrize("d", [1, 3, 4])  # features go in pairs: an odd one out, or none
def test_histograms_match_naive_and_invariants(n_threads, d):
    X_binned, idx, node, g, n_nodes, n_bins = _level_inputs(0, d=d)
    hist = _build(X_binned, idx, node, g, n_nodes, n_bins, n_threads=n_threads)
    ref = _naive_histograms(X_binned, idx, node, g, n_nodes, n_bins + 1)
    # Each cell is summed in row order by one task: the same bits on any number of threads.
    np.testing.assert_array_equal(hist, _build(X_binned, idx, node, g, n_nodes, n_bins,
                                               n_threads=1))
    np.testing.assert_allclose(hist[..., 0], ref[..., 0], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(hist[..., 1], ref[..., 1])
    # Every feature's histogram sums to the node total.
    node_sum = np.bincount(node, weights=g, minlength=n_nodes)
    node_count = np.bincount(node, minlength=n_nodes)
    for f in range(d):
        np.testing.assert_allclose(hist[f, :, :, 0].sum(axis=1), node_sum, atol=1e-9)
        np.testing.assert_array_equal(hist[f, :, :, 1].sum(axis=1), node_count)


def test_histograms_of_a_root_with_every_row():
    X_binned, _, _, _, _, n_bins = _level_inputs(8)
    idx = np.arange(X_binned.shape[0], dtype=np.int32)
    g = np.random.default_rng(8).uniform(-1, 1, idx.size).astype(np.float32)
    node = np.zeros(idx.size, dtype=np.int32)
    np.testing.assert_array_equal(_build(X_binned, idx, node, g, 1, n_bins),
                                  _naive_histograms(X_binned, idx, node, g, 1, n_bins + 1))


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("d", [1, 3, 4])
def test_all_rows_histograms_equal_the_root_level(n_threads, d):
    # The Hessian sketch's kernel: the level kernel's root over every row, to the last bit.
    X_binned, _, _, _, _, n_bins = _level_inputs(9, d=d)
    g = np.random.default_rng(9).uniform(-1, 1, X_binned.shape[0]).astype(np.float32)
    out = np.full((d, n_bins + 1, 2), np.nan)
    all_rows_histograms(X_binned, g, n_threads, out)
    idx = np.arange(X_binned.shape[0], dtype=np.int32)
    node = np.zeros(idx.size, dtype=np.int32)
    np.testing.assert_array_equal(out, _build(X_binned, idx, node, g, 1, n_bins)[:, 0])
    np.testing.assert_allclose(out, _naive_histograms(X_binned, idx, node, g, 1, n_bins + 1)[:, 0],
                               rtol=1e-12, atol=1e-12)


def test_histograms_empty_nodes_and_order_invariance():
    X_binned, idx, node, g, _, n_bins = _level_inputs(1, n_nodes=1)
    # Nodes 0 and 2 of four are empty: their histograms are zero, not stale.
    node4 = np.where(X_binned[idx, 0] > 7, 3, 1).astype(np.int32)
    order = np.argsort(node4, kind="stable")
    hist = _build(X_binned, idx[order], node4[order], g[order], 4, n_bins)
    assert (hist[:, [0, 2]] == 0).all()
    parent = _build(X_binned, idx, node, g, 1, n_bins)
    np.testing.assert_allclose(hist.sum(axis=1), parent[:, 0], atol=1e-12)
    perm = np.random.default_rng(2).permutation(idx.size)
    shuffled = _build(X_binned, idx[perm], node, g[perm], 1, n_bins)
    np.testing.assert_allclose(shuffled, parent, atol=1e-9)


@pytest.mark.parametrize("n_threads", [1, 2, 3])
@pytest.mark.parametrize("side", [[0, 1, 1, 0], [1, 1, 1, 1]])
@pytest.mark.parametrize("d", [3, 4])
def test_histograms_by_subtraction_equal_direct_histograms(side, n_threads, d):
    # Below the root the kernel builds child 2p + side[p] and subtracts it from parent p.
    X_binned, idx, node, g, n_nodes, n_bins = _level_inputs(7, n_nodes=8, d=d)
    parents = _build(X_binned, idx, node // 2, g, 4, n_bins)
    direct = _naive_histograms(X_binned, idx, node, g, n_nodes, n_bins + 1)
    got = _build(X_binned, idx, node, g, n_nodes, n_bins, parents, np.array(side, np.uint8),
                 n_threads)
    np.testing.assert_allclose(got, direct, atol=1e-9)


@pytest.mark.parametrize("n_threads", [3, 16])
@pytest.mark.parametrize("d", [1, 3, 20])
def test_fixed_point_histograms_in_row_blocks_have_the_one_thread_bits(n_threads, d):
    # Where a level has few (feature pair, node) tasks per thread, integer sums are cut by row
    # blocks and the blocks added: exact, so the same bits as one task per cell, in every mode
    # (a root over every row, nodes from their samples, children by subtraction).
    X_binned, idx, node, g, n_nodes, n_bins = _level_inputs(14, n=3000, n_nodes=4, d=d)
    scale = fixed_point_scale(1.0)
    n_pairs = (d + 1) // 2
    assert row_blocks(np.int64, n_pairs, n_threads) > 1
    assert row_blocks(np.float64, n_pairs, n_threads) == 1
    every = np.arange(X_binned.shape[0], dtype=np.int32)
    root = np.zeros(every.size, dtype=np.int32)
    g_all = np.random.default_rng(14).uniform(-1, 1, every.size).astype(np.float32)
    np.testing.assert_array_equal(
        _build(X_binned, every, root, g_all, 1, n_bins, n_threads=n_threads, scale=scale),
        _build(X_binned, every, root, g_all, 1, n_bins, n_threads=1, scale=scale))
    parents = _build(X_binned, idx, node // 2, g, 2, n_bins, n_threads=n_threads, scale=scale)
    np.testing.assert_array_equal(
        parents, _build(X_binned, idx, node // 2, g, 2, n_bins, n_threads=1, scale=scale))
    side = np.array([1, 0], np.uint8)
    np.testing.assert_array_equal(
        _build(X_binned, idx, node, g, n_nodes, n_bins, parents, side, n_threads, scale),
        _build(X_binned, idx, node, g, n_nodes, n_bins, parents, side, 1, scale))
    np.testing.assert_array_equal(
        _build(X_binned, idx, node, g, n_nodes, n_bins, parents, side, n_threads, scale),
        _build(X_binned, idx, node, g, n_nodes, n_bins, n_threads=1, scale=scale))


def test_a_fixed_point_scale_is_finite_for_any_bound():
    for bound in (5e-324, 1e-300, 2.0**-970, 1e300, 1.7976931348623157e308):
        scale = fixed_point_scale(bound)
        assert math.isfinite(scale) and scale > 0 and math.frexp(scale)[0] == 0.5
        assert bound * scale <= 2.0**FIXED_POINT_BITS


@pytest.mark.parametrize("bound", [1.0, 0.75, 0.5, 0.3, 2.0**-20, 6.0])
def test_fixed_point_gradients_truncate_within_the_bound(bound):
    # A power of two; |q| <= 2^FIXED_POINT_BITS; |q| / s <= |g| (truncation: the bound the
    # sensitivities assume holds), within one step 1 / s of g, with g's sign or 0.
    scale = fixed_point_scale(bound)
    assert math.frexp(scale)[0] == 0.5 and bound * scale <= 2.0**FIXED_POINT_BITS
    assert bound * scale > 2.0 ** (FIXED_POINT_BITS - 1)  # the smallest exponent: no bit wasted
    rng = np.random.default_rng(12)
    top = float32_at_most(bound)
    g = np.concatenate([rng.uniform(-1, 1, 20_000) * top,
                        [top, -top, 0.0, -0.0, 1e-30, -1e-30, 1.5 / scale, -1.5 / scale]])
    g = g.astype(np.float32)
    q = _fixed_point_terms(g, scale, 2)
    np.testing.assert_array_equal(q, _fixed_point_terms(g, scale, 1))
    unscaled = q / scale
    assert (np.abs(q) <= 2**FIXED_POINT_BITS).all()
    assert (np.abs(unscaled) <= np.abs(g.astype(np.float64))).all()
    assert (np.abs(g - unscaled) < 1 / scale).all()
    assert (np.sign(q) * np.sign(g) >= 0).all()
    np.testing.assert_array_equal(q[-6:], [0, 0, 0, 0, 1, -1])


@pytest.mark.parametrize("n_threads", [1, 2, 3])
@pytest.mark.parametrize("side", [[0, 1, 1, 0], [1, 1, 1, 1]])
def test_fixed_point_histograms_by_subtraction_have_the_direct_bits(side, n_threads):
    # A private tree's sibling by subtraction must be its direct sum to the last bit, or a
    # record would move the gains of a node it is not in (docs/privacy.md, Split selection).
    X_binned, idx, node, g, n_nodes, n_bins = _level_inputs(13, n=4000, n_nodes=8, d=4)
    # Gradients over many binades, as logistic gradients near 0 and 1 are.
    g = (np.sign(g) * np.exp(np.random.default_rng(13).uniform(-30, 0, g.size))).astype(
        np.float32)
    scale = fixed_point_scale(1.0)
    parents = _build(X_binned, idx, node // 2, g, 4, n_bins, scale=scale)
    got = _build(X_binned, idx, node, g, n_nodes, n_bins, parents, np.array(side, np.uint8),
                 n_threads, scale)
    direct = _build(X_binned, idx, node, g, n_nodes, n_bins, n_threads=n_threads, scale=scale)
    q = _fixed_point_terms(g, scale, 1)
    np.testing.assert_array_equal(got, direct)
    # The exact sums, in Python integers.
    naive = np.zeros(direct.shape, dtype=object)
    for k, i in enumerate(idx):
        for f in range(X_binned.shape[1]):
            naive[f, node[k], X_binned[i, f]] += np.array([int(q[k]), 1], dtype=object)
    np.testing.assert_array_equal(direct, naive.astype(np.int64))
    # The control: the same subtraction in float64 does not have the direct bits.
    float_parents = _build(X_binned, idx, node // 2, g, 4, n_bins)
    float_got = _build(X_binned, idx, node, g, n_nodes, n_bins, float_parents,
                       np.array(side, np.uint8), n_threads)
    float_direct = _build(X_binned, idx, node, g, n_nodes, n_bins, n_threads=n_threads)
    assert (float_got != float_direct).any()


@pytest.mark.parametrize("n_threads", [1, 2, 16])
def test_fixed_point_histograms_past_a_packed_block_are_exact(n_threads):
    # Integer sums go through packed (sum, count) accumulators unpacked every PACKED_ROWS rows:
    # nodes of several blocks, gradients at the bound (the largest terms), few bins (the
    # largest sums in a cell) must still give the exact sums, in every mode.
    rng = np.random.default_rng(15)
    n, n_bins = 3 * PACKED_ROWS + 123, 2
    X_binned = np.asfortranarray(rng.choice([0, 0, 0, 1, 2], size=(n, 3)).astype(np.uint8))
    scale = fixed_point_scale(1.0)
    top = float32_at_most(1.0)
    g = np.where(rng.random(n) < 0.9, top, -top).astype(np.float32)
    q = _fixed_point_terms(g[:50], scale, 1)
    assert (np.abs(q) == 2**FIXED_POINT_BITS).all()  # the largest term there is

    def exact(idx, node, n_nodes):
        out = np.zeros((3, n_nodes, n_bins + 1, 2), dtype=np.int64)
        terms = np.where(g[: idx.size] > 0, 2**FIXED_POINT_BITS, -(2**FIXED_POINT_BITS))
        for f in range(3):
            np.add.at(out[f, :, :, 0], (node, X_binned[idx, f]), terms)
            np.add.at(out[f, :, :, 1], (node, X_binned[idx, f]), 1)
        return out

    every = np.arange(n, dtype=np.int32)
    root = np.zeros(n, dtype=np.int32)
    np.testing.assert_array_equal(
        _build(X_binned, every, root, g, 1, n_bins, n_threads=n_threads, scale=scale),
        exact(every, root, 1))
    idx = every[: n - 1000]
    sizes = [PACKED_ROWS + 7, 2, idx.size - PACKED_ROWS - 14, 5]
    node = np.repeat(np.arange(4, dtype=np.int32), sizes)
    parents = _build(X_binned, idx, node // 2, g[: idx.size], 2, n_bins, n_threads=n_threads,
                     scale=scale)
    np.testing.assert_array_equal(parents, exact(idx, node // 2, 2))
    got = _build(X_binned, idx, node, g[: idx.size], 4, n_bins, parents,
                 np.array([0, 1], np.uint8), n_threads, scale)
    np.testing.assert_array_equal(got, exact(idx, node, 4))


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("lam", [0.0, 0.1, 5.0])
def test_gains_match_naive(lam, n_threads):
    X_binned, idx, node, g, n_nodes, n_bins = _level_inputs(3)
    hist = _naive_histograms(X_binned, idx, node, g, n_nodes, n_bins + 1)
    hist[:, 0] = 0.0  # an empty node: every candidate has gain 0 (and no 0/0 when lambda = 0)
    gains = np.empty((n_nodes, 3, n_bins - 1, 2))
    compute_gains(hist, lam, n_threads, gains)
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


def _naive_partition(X_binned, idx, node, g, feat, thr, miss, missing_code):
    child = np.array([2 * j + _naive_go_right(X_binned[i, feat[j]], thr[j], miss[j], missing_code)
                      for i, j in zip(idx, node)], dtype=np.int64)
    order = np.argsort(child, kind="stable")
    start = np.concatenate([[0], np.cumsum(np.bincount(child, minlength=2 * feat.size))])
    return idx[order], g[order], start


@pytest.mark.parametrize("n_chunks", [1, 2, 3, 7])
def test_partition_level_matches_naive(n_chunks):
    X_binned, idx, node, g, n_nodes, n_bins = _level_inputs(4, n_nodes=5)
    node[node == 3] = 4  # an empty node in the middle
    feat = np.array([0, 2, 1, 2, 0], dtype=np.int32)
    thr = np.array([3, 0, 15, 8, 14], dtype=np.uint8)
    miss = np.array([True, False, True, False, True])
    start = _node_start(node, n_nodes)
    out_idx, out_g = np.empty_like(idx), np.empty_like(g)
    child_start = np.empty(2 * n_nodes + 1, dtype=np.int64)
    partition_level(X_binned, idx, g, start, feat, thr, miss, n_bins, n_chunks,
                    np.empty(idx.size, dtype=np.uint8), out_idx, out_g, child_start)
    ref_idx, ref_g, ref_start = _naive_partition(X_binned, idx, node, g, feat, thr, miss, n_bins)
    np.testing.assert_array_equal(child_start, ref_start)
    np.testing.assert_array_equal(out_idx, ref_idx)
    np.testing.assert_array_equal(out_g, ref_g)
    # A boundary at the last bin with missing left sends everything left: empty children are legal.
    assert child_start[5] == child_start[6]
    # Missing codes followed their node's side: node 0 (feature 0, missing left) sends them to
    # child 0, node 1 (feature 2, missing right) to child 3.
    for j, child in ((0, 0), (1, 3)):
        missing = idx[(node == j) & (X_binned[idx, feat[j]] == n_bins)]
        assert missing.size > 0  # the inputs exercise the missing code
        assert np.isin(missing, out_idx[child_start[child]:child_start[child + 1]]).all()


@pytest.mark.parametrize("n_chunks", [1, 3])
@pytest.mark.parametrize("with_hessians", [False, True])
@pytest.mark.parametrize("depth, features", [(0, "one"), (1, "one"), (4, "mixed"), (4, "one")])
def test_partition_leaves_is_every_level_partitioned(n_chunks, with_hessians, depth, features):
    # One walk (a lookup by code for a tree of one feature) and one scatter give the leaves the
    # level-by-level stable partition gives (the grower's routing of splits that read records),
    # bit for bit, empty leaves included.
    rng = np.random.default_rng(depth)
    # Samples for each of 3 chunks to scatter two whole blocks and part of a third.
    n_selected = 3 * (2 * _SCATTER_BLOCK + 77)
    X_binned, idx, _, g, _, n_bins = _level_inputs(9, n=2 * n_selected, d=4)
    n_internal = 2**depth - 1
    feat = (rng.integers(0, 4, n_internal) if features == "mixed"
            else np.full(n_internal, 2)).astype(np.int32)
    thr = rng.integers(0, n_bins, n_internal).astype(np.uint8)
    miss = rng.random(n_internal) < 0.5
    thr[:1], miss[:1] = n_bins - 1, True  # all left at the root: half the leaves are empty
    # Hessians travel with their gradients: distinct values (the samples' rows) show the pairing.
    h = idx.astype(np.float32) if with_hessians else np.empty(0, np.float32)
    ref_idx, ref_g = idx, g
    ref_start = np.array([0, idx.size], dtype=np.int64)
    for level in range(depth):
        nodes = slice(2**level - 1, 2**(level + 1) - 1)
        out_idx, out_g = np.empty_like(idx), np.empty_like(g)
        child_start = np.empty(2**(level + 1) + 1, dtype=np.int64)
        partition_level(X_binned, ref_idx, ref_g, ref_start, feat[nodes], thr[nodes],
                        miss[nodes], n_bins, 1, np.empty(idx.size, np.uint8), out_idx, out_g,
                        child_start)
        ref_idx, ref_g, ref_start = out_idx, out_g, child_start
    ref_h = ref_idx.astype(np.float32) if with_hessians else h
    out_idx, out_g, out_h, leaf_start = partition_leaves(X_binned, idx, g, h, feat, thr, miss,
                                                         n_bins, n_chunks)
    np.testing.assert_array_equal(leaf_start, ref_start)
    np.testing.assert_array_equal(out_idx, ref_idx)
    assert out_g.tobytes() == ref_g.tobytes() and out_h.tobytes() == ref_h.tobytes()
    assert depth == 0 or (np.diff(leaf_start) == 0).any()
    assert depth < 2 or (np.diff(leaf_start) > 0).sum() > 1


@pytest.mark.parametrize("n_threads", [1, 2])
def test_leaf_sums_count_past_float32(n_threads):
    # 2**24 + 3 records of weight 1 in one leaf: a float32 accumulator stops at 2**24 (the next
    # integers are not float32 values); the float64 sums count every record, as do the int64
    # leaf ranges of the one-pass routing and the last level's sums.
    n = 2**24 + 3
    ones = np.ones(n, dtype=np.float32)
    assert range_sums(ones, np.array([0, 1, n], dtype=np.int64), n_threads)[1] == n - 1
    X_binned = np.zeros((n, 1), dtype=np.uint8, order="F")
    _, _, _, leaf_start = partition_leaves(
        X_binned, np.arange(n, dtype=np.int32), ones, np.empty(0, np.float32),
        np.zeros(1, np.int32), np.zeros(1, np.uint8), np.zeros(1, bool), 32, n_threads)
    assert leaf_start.tolist() == [0, n, n]
    # The last level's one-pass sums count in int64 and sum in float64 as well.
    leaf = np.empty(n, dtype=np.int16)
    sums = child_sums(X_binned, np.arange(n, dtype=np.int32), ones, ones,
                      np.array([0, n], dtype=np.int64), np.zeros(1, np.int32), np.zeros(1, np.uint8),
                      np.zeros(1, bool), 32, n_threads, leaf)
    assert sums[:, 2].tolist() == sums[:, 0].tolist() == sums[:, 1].tolist() == [n, 0]


def test_partition_of_nothing():
    X_binned, _, _, _, _, n_bins = _level_inputs(5)
    idx, g = np.empty(0, dtype=np.int32), np.empty(0, dtype=np.float32)
    child_start = np.full(5, -1, dtype=np.int64)
    partition_level(X_binned, idx, g, np.zeros(3, dtype=np.int64), np.zeros(2, np.int32),
                    np.zeros(2, np.uint8), np.zeros(2, bool), n_bins, 2,
                    np.empty(0, np.uint8), idx.copy(), g.copy(), child_start)
    assert (child_start == 0).all()


@pytest.mark.parametrize("with_hessians", [False, True])
@pytest.mark.parametrize("n, n_threads", [(400, 1), (200_000, 1), (200_000, 3)])
def test_child_sums_are_the_partitions_range_sums(n, n_threads, with_hessians):
    # The last level's leaves without moving a record: the children's gradient sums, Hessian
    # sums (read by row) and counts of the stable partition's ranges, to the last bit, and each
    # row's child as labelled from those ranges; empty nodes, empty children and missing codes
    # included, on one thread and in parallel chunks of nodes.
    X_binned, idx, node, g, n_nodes, n_bins = _level_inputs(12, n=n, n_nodes=6)
    node[node == 2] = 3  # an empty node
    feat = np.array([0, 2, 1, 2, 0, 1], dtype=np.int32)
    thr = np.array([3, 0, 15, 8, n_bins - 1, 7], dtype=np.uint8)
    miss = np.array([True, False, True, False, True, False])  # node 4: everything left
    start = _node_start(node, n_nodes)
    h = (np.random.default_rng(0).uniform(0, 0.25, idx.size).astype(np.float32)
         if with_hessians else np.empty(0, np.float32))
    h_of_row = scatter_rows(h, idx, n, n_threads) if with_hessians else h
    out_idx, out_g = np.empty_like(idx), np.empty_like(g)
    child_start = np.empty(2 * n_nodes + 1, dtype=np.int64)
    partition_level(X_binned, idx, g, start, feat, thr, miss, n_bins, 1,
                    np.empty(idx.size, dtype=np.uint8), out_idx, out_g, child_start)
    expected_leaf = np.full(n, -1, dtype=np.int16)
    label_by_range(child_start, out_idx, 0, idx.size, expected_leaf)
    leaf = np.full(n, -1, dtype=np.int16)
    sums = child_sums(X_binned, idx, g, h_of_row, start, feat, thr, miss, n_bins, n_threads,
                      leaf)
    assert sums[:, 0].tobytes() == range_sums(out_g, child_start).tobytes()
    # The Hessians a partition would have moved with their rows.
    moved_h = h_of_row[out_idx] if with_hessians else h
    assert sums[:, 1].tobytes() == (range_sums(moved_h, child_start).tobytes() if with_hessians
                                    else np.zeros(2 * n_nodes).tobytes())
    np.testing.assert_array_equal(sums[:, 2], np.diff(child_start))
    np.testing.assert_array_equal(leaf, expected_leaf)
    assert (sums[[4, 5, 9], 2] == 0).all() and (sums[:, 2] > 0).sum() >= 8


@pytest.mark.parametrize("n_threads", [1, 3])
def test_scatter_rows_writes_each_value_at_its_row(n_threads):
    _, idx, _, g, _, _ = _level_inputs(16, n=300_000)
    out = scatter_rows(g, idx, 300_000, n_threads)
    assert out.dtype == g.dtype and out.shape == (300_000,)
    assert out[idx].tobytes() == g.tobytes()


@pytest.mark.parametrize("n, n_threads", [(400, 1), (400, 3), (200_000, 3), (200_000, 7)])
def test_range_sums_match_bincount(n, n_threads):
    _, _, node, g, n_nodes, _ = _level_inputs(6, n=n, n_nodes=8)
    node[node == 5] = 6
    node[node == 0] = 1  # empty ranges first and in the middle
    # Summed in order, as bincount does, whatever the threads: equal to the last bit.
    np.testing.assert_array_equal(range_sums(g, _node_start(node, n_nodes), n_threads),
                                  np.bincount(node, weights=g, minlength=n_nodes))


def test_label_by_range_matches_naive():
    _, idx, node, _, n_nodes, _ = _level_inputs(7, n_nodes=8)
    node[node == 3] = 4  # an empty range
    out = np.full(400, -1, dtype=np.int16)
    start = _node_start(node, n_nodes)
    # In pieces of positions that split ranges and begin at empty ones (parallel chunks).
    cuts = [0, 17, start[3], start[6] + 1, idx.size]
    for first, stop in zip(cuts[:-1], cuts[1:]):
        label_by_range(start, idx, first, stop, out)
    expected = np.full(400, -1, dtype=np.int16)
    expected[idx] = node
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize(("depth", "n_rows"), [(1, 300), (3, 303), (3, 2), (6, 1001),
                                             (6, 40_003)])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_predict_binned_matches_naive(depth, n_rows, n_threads):
    # Row counts that are not multiples of 4 exercise the kernel's tail.
    rng = np.random.default_rng(5)
    X_binned = rng.integers(0, 11, size=(n_rows, 12), dtype=np.uint8)  # 10 = missing code
    n_trees = 3
    feat = rng.integers(0, 12, size=(n_trees, 2**depth - 1)).astype(np.int32)
    thr = rng.integers(0, 9, size=(n_trees, 2**depth - 1)).astype(np.uint8)
    miss = rng.random((n_trees, 2**depth - 1)) < 0.5
    leaves = rng.normal(size=(n_trees, 2**depth))
    out = np.full(n_rows, 0.5)
    predict_binned(X_binned, feat, thr, miss, 10, leaves, n_threads, out)
    np.testing.assert_allclose(out, 0.5 + _naive_predict(X_binned, feat, thr, miss, 10, leaves))
    # Fortran-ordered input (the training layout) and a strided view give the same predictions.
    for layout in (np.asfortranarray(X_binned), np.repeat(X_binned, 2, axis=1)[:, ::2]):
        out_f = np.full(n_rows, 0.5)
        predict_binned(layout, feat, thr, miss, 10, leaves, n_threads, out_f)
        np.testing.assert_array_equal(out_f, out)


def _naive_leaf(X_binned, feat, thr, miss, missing_code):
    """Each row's leaf in one tree."""
    leaf = np.empty(X_binned.shape[0], dtype=np.int64)
    for i in range(X_binned.shape[0]):
        k = 0
        while k < feat.shape[0]:
            right = _naive_go_right(X_binned[i, feat[k]], thr[k], miss[k], missing_code)
            k = 2 * k + (2 if right else 1)
        leaf[i] = k - feat.shape[0]
    return leaf


@pytest.mark.parametrize("n_rows", [1001, 40_003])
@pytest.mark.parametrize("share", [0.0, 0.4, 1.0])
@pytest.mark.parametrize("n_threads", [1, 2, 3])
@pytest.mark.parametrize("features, order", [("mixed", "F"), ("one", "F"), ("one", "C")])
def test_add_tree_scores_equals_prediction_bit_for_bit(n_rows, share, n_threads, features,
                                                       order):
    # The sample's rows by their leaf's range, the others by prediction (a tree of one
    # feature: every row by its code's value): every score of the output equals, bit for bit,
    # the tree's prediction added to it (a -0.0 leaf and the missing code included); the other
    # outputs are copied and the input scores are left as they were.
    rng = np.random.default_rng(11)
    depth = 4
    X_binned = np.asarray(rng.integers(0, 11, size=(n_rows, 6), dtype=np.uint8), order=order)
    feat = (rng.integers(0, 6, size=2**depth - 1) if features == "mixed"
            else np.full(2**depth - 1, 4)).astype(np.int32)
    thr = rng.integers(0, 9, size=2**depth - 1).astype(np.uint8)
    miss = rng.random(2**depth - 1) < 0.5
    leaves = rng.normal(size=2**depth)
    leaves[3] = -0.0
    selected = np.flatnonzero(rng.random(n_rows) < share).astype(np.int32)
    leaf = _naive_leaf(X_binned[selected], feat, thr, miss, 10)
    indices = selected[np.argsort(leaf, kind="stable")]  # grouped by leaf, as the grower does
    leaf_start = np.concatenate([[0], np.cumsum(np.bincount(leaf, minlength=2**depth))])
    raw = rng.normal(size=(3, n_rows))
    raw[1, ::5] = 0.0
    before = raw.copy()
    new = add_tree_scores(raw, 1, X_binned, selected, indices, leaf_start, feat, thr, miss, 10,
                          leaves, n_threads)
    expected = raw.copy()
    predict_binned(X_binned, feat[None], thr[None], miss[None], 10, leaves[None], 1,
                   expected[1])
    assert new.tobytes() == expected.tobytes()
    assert raw.tobytes() == before.tobytes()


# ------------------------------------------------------------------------------------------------
# Per-record kernels of a tree: the coins' keystream, the loss statistics, the record selection
# ------------------------------------------------------------------------------------------------

def test_chacha20_block_matches_rfc8439():
    # RFC 8439, Section 2.3.2: key 00..1f, nonce 00:00:00:09:00:00:00:4a:00:00:00:00, counter 1.
    key = np.frombuffer(bytes(range(32)), dtype="<u4")
    nonce = np.frombuffer(bytes.fromhex("000000090000004a00000000"), dtype="<u4")
    out = np.empty(16, dtype=np.uint32)
    chacha20_block(key, 1, nonce, out)
    assert out.astype("<u4").tobytes().hex() == (
        "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
        "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e")


@pytest.mark.parametrize(("start", "stop"), [(0, 1), (37, 70_003), (2**33 + 5, 2**33 + 100)])
@pytest.mark.parametrize("n_threads", [1, 3])
def test_coins_are_the_chacha20_keystream(start, stop, n_threads):
    # The coins of rows beyond 2**31 and 2**32 (a billion-record training set and more) are the
    # keystream's words there: no row number wraps on 32 bits.
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms

    rng = np.random.default_rng(1)
    key, nonce = rng.bytes(32), rng.bytes(12)
    first = start // 16
    stream = Cipher(algorithms.ChaCha20(key, first.to_bytes(4, "little") + nonce),
                    None).encryptor().update(bytes(4 * (stop - 16 * first)))
    expected = np.frombuffer(stream, dtype="<u4")[start - 16 * first:] * 2.0**-32
    got = uniforms(np.frombuffer(key, dtype="<u4"), np.frombuffer(nonce, dtype="<u4"), start,
                   stop, n_threads)
    np.testing.assert_array_equal(got, expected)


def test_coins_refuse_rows_beyond_the_counter():
    key, nonce = np.zeros(8, dtype=np.uint32), np.zeros(3, dtype=np.uint32)
    assert uniforms(key, nonce, MAX_ROWS - 16, MAX_ROWS, 1).size == 16
    with pytest.raises(ValueError, match="2\\*\\*36"):
        uniforms(key, nonce, MAX_ROWS - 16, MAX_ROWS + 1, 1)


@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_loss_kernels_match_numpy(n_threads):
    rng = np.random.default_rng(2)
    n = 70_001  # above the kernels' parallel threshold
    raw = rng.normal(scale=4, size=n)
    raw[:4] = [0.0, -0.0, 800.0, -800.0]
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    g, h = np.empty(n, np.float32), np.empty(n, np.float32)
    logistic_loss_gradients(raw, y, g, h, n_threads)
    p = sigmoid(raw)
    # float64 to float64 rounding (exp and tanh forms of sigma), then one rounding to float32.
    np.testing.assert_allclose(g, p - (y + 1) / 2, rtol=0, atol=2e-7)
    np.testing.assert_allclose(h, p * (1 - p), rtol=0, atol=2e-7)
    assert np.mean(g == (p - (y + 1) / 2).astype(np.float32)) > 0.999
    square_loss_gradients(raw, y, g, n_threads)
    np.testing.assert_array_equal(g, (raw - y).astype(np.float32))


@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_softmax_kernel_matches_numpy(n_threads):
    rng = np.random.default_rng(3)
    n = 70_001  # above the kernel's parallel threshold
    raw = rng.normal(scale=20, size=(4, n))  # large scores: no overflow
    raw[:, :2] = [[0.0, 800.0], [-0.0, -800.0], [0.0, 800.0], [0.0, 0.0]]
    y = np.where(np.arange(4)[:, None] == rng.integers(0, 4, n)[None, :], 1.0, -1.0)
    g, h = np.empty((4, n), np.float32), np.empty((4, n), np.float32)
    softmax_loss_gradients(raw, y, g, h, n_threads)
    shifted = np.exp(raw - raw.max(axis=0))
    p = shifted / shifted.sum(axis=0)
    # The same float64 operations in the same order, but libm's exp against NumPy's (which
    # may use SIMD code): p a few float64 ulps apart, then one rounding to float32, so at most
    # one float32 step apart (2**-24 below 1 in magnitude, and the values are in [-1, 1]).
    np.testing.assert_allclose(g, p - (y + 1) / 2, rtol=0, atol=2.0**-24 + 1e-15)
    np.testing.assert_allclose(h, p * (1 - p), rtol=0, atol=2.0**-24 + 1e-15)
    assert np.mean(g == (p - (y + 1) / 2).astype(np.float32)) > 0.999
    assert np.mean(h == (p * (1 - p)).astype(np.float32)) > 0.999
    one = np.empty_like(g), np.empty_like(h)
    softmax_loss_gradients(raw, y, *one, 1)
    assert g.tobytes() == one[0].tobytes() and h.tobytes() == one[1].tobytes()


def _naive_selection(g, h, positions, position, within, coins, threshold, bound, filtering):
    at = np.ones(g.size, bool) if positions is None else positions == position
    sampled = at & (coins < threshold)
    kept = sampled.copy()
    if filtering:
        kept &= np.abs(g) <= bound
    if within is not None:
        kept &= within
    rows = np.flatnonzero(kept)
    grads = g[rows] if filtering else np.clip(g[rows], -bound, bound)
    return int(sampled.sum()), rows, grads, h[rows]


@pytest.mark.parametrize("n_threads", [1, 2, 5])
@pytest.mark.parametrize("filtering", [False, True])
@pytest.mark.parametrize("extras", [False, True])
def test_select_rows_matches_naive(n_threads, filtering, extras):
    rng = np.random.default_rng(3)
    n = 70_003
    g = rng.uniform(-1, 1, n).astype(np.float32)
    h = rng.uniform(0, 0.25, n).astype(np.float32)
    coins = np.floor(rng.random(n) * 2**32) * 2.0**-32
    threshold = np.floor(0.3 * 2**32) * 2.0**-32
    coins[:2] = [threshold, threshold - 2.0**-32]  # the edge: kept below, never at
    positions = rng.integers(0, 3, n) if extras else None
    within = rng.random(n) < 0.8 if extras else None
    bound = np.float32(0.5)
    n_sampled, rows, grads, hess = select_rows(
        g, h, np.empty(0, np.int64) if positions is None else positions, 1,
        np.empty(0, bool) if within is None else within, coins, threshold, bound, filtering,
        n_threads)
    ref = _naive_selection(g, h, positions, 1, within, coins, threshold, bound, filtering)
    assert n_sampled == ref[0]
    assert rows.dtype == np.int32 and grads.dtype == hess.dtype == np.float32
    np.testing.assert_array_equal(rows, ref[1])
    assert grads.tobytes() == ref[2].tobytes() and hess.tobytes() == ref[3].tobytes()
    assert 0 not in rows  # a coin at the threshold is never kept


@pytest.mark.parametrize("loss_name, n_outputs", [("logistic", 1), ("square", 1),
                                                   ("logistic", 3)])
@pytest.mark.parametrize("bound", [np.float32(0.25), None])
def test_selection_computes_the_selected_gradients_as_every_gradient(loss_name, n_outputs,
                                                                     bound):
    # With a loss, the selection computes the gradients (and Hessians) of its rows only: the
    # same rows, bit for bit the same clipped statistics as from every record's gradients.
    rng = np.random.default_rng(5)
    n = 70_001
    loss = make_loss(loss_name, n_outputs)
    y = rng.choice([-1.0, 1.0], size=(n_outputs, n))
    has_hessians = loss_name == "logistic"
    partition = Partition(None, y, raw=rng.normal(size=(n_outputs, n)) * 3, positions={},
                          gradients=np.zeros((n_outputs, n), np.float32),
                          hessians=np.zeros((n_outputs, n), np.float32) if has_hessians
                          else None, n_threads=2)
    coins = RecordCoins(bytes(32))
    output = n_outputs - 1
    eager = select_records(compute_gradients(partition, loss, output), coins, output, 3, None,
                           0.3, bound, False).tree
    lazy = select_records(partition, coins, output, 3, None, 0.3, bound, False,
                          loss=loss).tree
    assert 0.25 * n < lazy.selected.size < 0.35 * n
    np.testing.assert_array_equal(lazy.selected, eager.selected)
    assert lazy.gradients.tobytes() == eager.gradients.tobytes()
    assert (lazy.hessians is None) == (not has_hessians)
    if has_hessians:
        assert lazy.hessians.tobytes() == eager.hessians.tobytes()


def test_selection_refuses_to_skip_gradients_it_reads():
    partition = Partition(None, np.ones((2, 5)), raw=np.zeros((2, 5)), positions={},
                          gradients=np.zeros((2, 5), np.float32),
                          hessians=np.zeros((2, 5), np.float32))
    with pytest.raises(ValueError, match="reads every record's gradient"):
        select_records(partition, RecordCoins(bytes(32)), 0, 0, None, 1.0, np.float32(0.5),
                       True, loss=make_loss("logistic", 2))
    with pytest.raises(ValueError, match="reads every record's gradient"):
        select_records(partition, RecordCoins(bytes(32)), 0, 0, None, 1.0, np.float32(0.5),
                       False, loss=make_loss("softmax", 2))


def test_select_rows_without_coins_hessians_or_bound():
    g = np.array([-3.0, 0.5, 2.0], np.float32)
    n_sampled, rows, grads, hess = select_rows(
        g, np.empty(0, np.float32), np.empty(0, np.int64), -1, np.empty(0, bool),
        np.empty(0), 1.0, np.float32(np.inf), False, 2)
    assert n_sampled == 3 and rows.tolist() == [0, 1, 2] and hess.size == 0
    assert grads.tobytes() == g.tobytes()

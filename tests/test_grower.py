"""One tree, ``_grower.grow_tree``: against a naive reference grower, and its leaf rules.

The naive grower is the documented algorithm written out node by node for tiny data, with
neither kernels nor subtraction: at every level each node scores every candidate (feature f,
boundary b, missing side m) by Eq. 3 of Li et al. 2020, ``G_L^2 / (n_L + lambda) + G_R^2 /
(n_R + lambda)`` (an empty side adds 0), and takes the first maximiser in the order of the
candidate code ``(f * (n_bins - 1) + b) * 2 + m`` (m = 0 sends missing values left): at
epsilon = inf the exponential mechanism is ``np.argmax``, which returns the first maximum.
Leaves: ``-G / (n + lambda)`` (Laplace), ``-G / max(H + lambda, lambda)`` (Gaussian, Newton),
``-G / max(n + lambda, 1 + lambda)`` (noisy average), 0 below ``min_child_weight``.

Gradients are float32 values summed in float64; sums of 40 of them are exact, so the grower's
gains (built by histogram subtraction at epsilon = inf) are bit for bit the naive ones and ties
are ties in both.
"""

import math

import numpy as np
import pytest

from dpboost import DPGBClassifier, DPGBRegressor
from dpboost._accounting import PrivacyLedger
from dpboost._budget import plan_budget
from dpboost._grower import grow_tree
from dpboost._noise import make_noise
from dpboost._predictor import Tree
from dpboost._records import InMemoryRecords


def _gain(g_left, g_right, lam):
    """Eq. 3, left side first (as ``_splitting._gain``); an empty side adds 0."""
    gain = 0.0
    for g in (g_left, g_right):
        if g.size:
            total = g.sum()
            gain += total * total / (g.size + lam)
    return gain


def _leaf(g, h, lam, leaf_noise, min_child_weight):
    if leaf_noise == "laplace":
        return -g.sum() / (g.size + lam) if g.size + lam > 0 else 0.0
    weight = h.sum() if leaf_noise == "gaussian" else float(g.size)
    if weight < min_child_weight:
        return 0.0
    floor = lam if leaf_noise == "gaussian" else 1.0 + lam
    return -g.sum() / max(weight + lam, floor)


def naive_grow_tree(codes, gradients, *, n_bins, max_depth, lam, hessians=None,
                    leaf_noise="laplace", min_child_weight=0.0, boundaries=None):
    """The tree ``grow_tree`` grows at epsilon = inf, by the definition.

    Parameters
    ----------
    codes : ndarray of shape (n, n_features), dtype=int
        Bin codes, ``n_bins`` for a missing value.
    gradients, hessians : ndarray of shape (n,), dtype=float64
        ``hessians=None``: all 1.
    boundaries : list of (feature, bin), default=None
        The candidates in ascending order; None: every one.

    Returns
    -------
    split_feature, split_bin, missing_left : list of length 2**max_depth - 1, heap order
    leaf_value : ndarray of shape (2**max_depth,)
    """
    n, n_features = codes.shape
    hessians = np.ones(n) if hessians is None else hessians
    if boundaries is None:
        boundaries = [(f, b) for f in range(n_features) for b in range(n_bins - 1)]
    nodes = [np.arange(n)]
    split_feature, split_bin, missing_left = [], [], []
    for _ in range(max_depth):
        children = []
        for rows in nodes:
            g = gradients[rows]
            best_gain, best = -math.inf, None
            for f, b in boundaries:
                code = codes[rows, f]
                for goes_left in (True, False):  # m = 0, then m = 1
                    left = np.where(code == n_bins, goes_left, code <= b)
                    gain = _gain(g[left], g[~left], lam)
                    if gain > best_gain:  # strict: the first maximiser stays
                        best_gain, best = gain, (f, b, goes_left, left)
            f, b, goes_left, left = best
            split_feature.append(f)
            split_bin.append(b)
            missing_left.append(goes_left)
            children += [rows[left], rows[~left]]
        nodes = children
    leaf_value = np.array([_leaf(gradients[rows], hessians[rows], lam, leaf_noise,
                                 min_child_weight) for rows in nodes])
    return split_feature, split_bin, missing_left, leaf_value


def _tiny_problem(seed, n_rows=40, n_features=3, n_bins=4):
    """Codes with (for odd seeds) missing values, a sorted sample of about 30 of the rows, and
    float32 gradients: uniform in [-1, 1] for seeds not divisible by 3, else -1 / +1 (many ties
    between different splits); Hessians p (1 - p) of a logistic loss."""
    rng = np.random.default_rng(seed)
    top = n_bins + 1 if seed % 2 else n_bins
    codes = rng.integers(0, top, size=(n_rows, n_features))
    rows = np.sort(rng.choice(n_rows, size=30, replace=False)).astype(np.int32)
    g = (rng.uniform(-1, 1, rows.size) if seed % 3 else rng.choice([-1.0, 1.0], rows.size))
    p = rng.uniform(0, 1, rows.size)
    return codes, rows, g.astype(np.float32), (p * (1 - p)).astype(np.float32)


def _budget(leaf_noise):
    return plan_budget(epsilon=math.inf, n_estimators=1, max_depth=1, learning_rate=1.0,
                       l2_regularization=1.0, budget_allocation="sequential",
                       trees_per_ensemble=1, leaf_clipping=True, leaf_noise=leaf_noise,
                       delta=1e-5 if leaf_noise == "gaussian" else 0.0).trees[0]


def _assert_same_tree(got, expected):
    f, b, m, v = ((got.split_feature, got.split_bin, got.missing_left, got.leaf_value)
                  if isinstance(got, Tree) else got)
    assert f.tolist() == expected[0], "split features"
    assert b.tolist() == expected[1], "split bins"
    assert m.tolist() == expected[2], "missing sides"
    np.testing.assert_allclose(v, expected[3], rtol=0, atol=1e-12)


@pytest.mark.parametrize("leaf_noise", ["laplace", "gaussian", "average"])
@pytest.mark.parametrize("seed", range(9))
def test_grow_tree_is_the_naive_tree(seed, leaf_noise):
    # Every depth 1 to 3 with every lambda in {0, 0.1, 1} (Gaussian leaves need lambda > 0);
    # deep trees on 30 rows have empty nodes (their split: candidate 0, missing left).
    codes, rows, g, h = _tiny_problem(seed)
    depth, lam = 1 + seed % 3, [0.0, 0.1, 1.0][seed // 3]
    lam = max(lam, 0.1) if leaf_noise == "gaussian" else lam
    min_child_weight = 1.0 if leaf_noise != "laplace" and seed % 4 == 1 else 0.0
    hessians = h if leaf_noise == "gaussian" else None
    got = grow_tree(InMemoryRecords.of_tree(np.asfortranarray(codes.astype(np.uint8)), rows, g,
                                            hessians),
                    budget=_budget(leaf_noise), n_features=3, max_depth=depth, n_bins=4,
                    l2_regularization=lam, noise=make_noise(0), ledger=PrivacyLedger(),
                    n_threads=1, min_child_weight=min_child_weight)
    expected = naive_grow_tree(
        codes[rows], g.astype(np.float64), n_bins=4, max_depth=depth, lam=lam,
        hessians=None if hessians is None else h.astype(np.float64), leaf_noise=leaf_noise,
        min_child_weight=min_child_weight)
    _assert_same_tree(got, expected)


@pytest.mark.parametrize("restriction", ["candidates", "feature", "both"])
@pytest.mark.parametrize("seed", range(4))
def test_grow_tree_on_restricted_candidates_is_the_naive_tree(seed, restriction):
    # A released or categorical candidate set (ascending boundary indices f * (n_bins - 1) + b),
    # a cyclical tree's single feature, or both.
    codes, rows, g, _ = _tiny_problem(seed)
    rng = np.random.default_rng(100 + seed)
    candidates = np.sort(rng.choice(9, size=5, replace=False)).astype(np.int64)
    feature = int(candidates[0] // 3) if restriction == "both" else seed % 3
    allowed = [(int(c // 3), int(c % 3)) for c in candidates]
    if restriction == "feature":
        allowed = [(feature, b) for b in range(3)]
    elif restriction == "both":
        allowed = [(f, b) for f, b in allowed if f == feature]
    got = grow_tree(InMemoryRecords.of_tree(np.asfortranarray(codes.astype(np.uint8)), rows, g),
                    budget=_budget("laplace"), n_features=3, max_depth=2, n_bins=4,
                    l2_regularization=0.1,
                    noise=make_noise(0), ledger=PrivacyLedger(), n_threads=1,
                    feature=None if restriction == "candidates" else feature,
                    candidates=None if restriction == "feature" else candidates)
    expected = naive_grow_tree(codes[rows], g.astype(np.float64), n_bins=4, max_depth=2,
                               lam=0.1, boundaries=allowed)
    _assert_same_tree(got, expected)


def test_a_non_private_fit_grows_the_naive_tree():
    # The estimator's first tree at epsilon=inf and learning rate 1: X binned on the public
    # grid (codes floor(8 x), NaN missing), F0 = 0 so g = -y with labels -1 / +1, and the tree
    # of the naive grower on them.
    rng = np.random.default_rng(2)
    X = rng.uniform(0, 1, size=(40, 2))
    X[::7, 0] = np.nan
    y = np.where(X[:, 1] > 0.6, 1, 0)
    lam, bins = 0.1, 8
    clf = DPGBClassifier.dpboost_paper(epsilon=np.inf, n_estimators=1, max_depth=2,
                                       learning_rate=1.0, l2_regularization=lam, max_bins=bins,
                                       feature_bounds=(0, 1), classes=[0, 1],
                                       random_state=0).fit(X, y)
    codes = np.where(np.isnan(X), bins, np.clip(np.floor(np.nan_to_num(X) * bins), 0, bins - 1))
    expected = naive_grow_tree(codes.astype(int), -np.where(y == 1, 1.0, -1.0), n_bins=bins,
                               max_depth=2, lam=lam)
    forest = clf._forest
    _assert_same_tree((forest.split_feature[0], forest.split_bin[0], forest.missing_left[0],
                       forest.leaf_value[0]), expected)
    assert forest.split_feature[0, 0] == 1  # the informative feature at the root


# Leaves on released weights through fit: noisy averages, min_child_weight.
def test_average_leaves_without_noise_are_the_regularised_mean():
    # One depth-1 tree, learning rate 1, F0 = 0: g = -y, so each leaf is
    # sum(y) / max(n + l, 1 + l).
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(50, 1))
    y = rng.uniform(-1, 1, size=50)
    lam = 0.5
    reg = DPGBRegressor.dpboost_paper(epsilon=np.inf, leaf_noise="average", n_estimators=1,
                                      max_depth=1, learning_rate=1.0, l2_regularization=lam,
                                      feature_bounds=(-1, 1), target_bounds=(-1, 1),
                                      random_state=0).fit(X, y)
    prediction = reg.predict(X)
    leaves = np.unique(prediction)
    assert leaves.size == 2  # the argmax split separates the records
    for value in leaves:
        side = prediction == value
        # gradients are float32 (_common), hence the tolerance
        np.testing.assert_allclose(value, y[side].sum() / max(side.sum() + lam, 1 + lam),
                                   rtol=1e-6)


def test_min_child_weight_above_every_released_weight_zeroes_the_model(binary):
    X, y = binary
    common = {"epsilon": 1.0, "leaf_noise": "average", "n_estimators": 5, "max_depth": 3,
              "feature_bounds": (-1, 1), "target_bounds": (0, 1), "random_state": 0}
    reg = DPGBRegressor.dpboost_paper(min_child_weight=1e9, **common).fit(X, y)
    np.testing.assert_array_equal(reg.predict(X), 0.5)  # the target range's midpoint: score 0
    unfiltered = DPGBRegressor.dpboost_paper(min_child_weight=0.0, **common).fit(X, y)
    assert unfiltered.predict(X).std() > 0
    # the cost is that of the released statistics alone: min_child_weight adds no ledger entry
    assert reg.privacy_ledger_ == DPGBRegressor.dpboost_paper(**common).fit(X, y).privacy_ledger_
# Random splits: uniform over the candidates, independent of the data, epsilon 0.
def test_random_splits_do_not_depend_on_the_data(binary, make_clf):
    X, y = binary
    # sequential: no record partition, so both fits draw the same random stream
    kw = {"split_selection": "random", "random_state": 7, "budget_allocation": "sequential",
          "n_estimators": 12}
    a = make_clf(**kw).fit(X, y)
    b = make_clf(**kw).fit(X[: len(X) // 2], 1 - y[: len(y) // 2])
    np.testing.assert_array_equal(a._forest.split_feature, b._forest.split_feature)
    np.testing.assert_array_equal(a._forest.split_bin, b._forest.split_bin)
    np.testing.assert_array_equal(a._forest.missing_left, b._forest.missing_left)
    uniform = [e for e in a.privacy_ledger_ if e.mechanism == "uniform"]
    assert len(uniform) == 12 * 3 and all(e.epsilon == 0 for e in uniform)
    assert a.privacy_spent_ == pytest.approx(1.0)

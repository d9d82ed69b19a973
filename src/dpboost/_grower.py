"""Grow one differentially private tree (DPBoost, Li et al. 2020, Algorithm 1).

Depth-wise to ``max_depth``: every node of every level splits by the exponential mechanism over
every (feature, bin boundary) candidate; then every leaf releases its clipped value with Laplace
noise. Kernels compute, ``_mechanisms`` draws, the ledger records.
"""

import numpy as np

from ._common import NODE_DTYPE, SUM_DTYPE, X_BINNED_DTYPE
from ._histogram import build_histograms
from ._mechanisms import (
    exponential_mechanism,
    gaussian_mechanism,
    laplace_mechanism,
    uniform_choice,
)
from ._splitting import children_on_side, compute_gains, split_samples


def _level_histograms(X_binned, sample_indices, node_of_sample, gradients, parent, n_bins):
    """Histograms of every node of a level, shape (n_features, n_nodes, n_bins + 1, 2).

    Below the root only the smaller child of each parent is built from its samples; its sibling
    is the parent minus it, which at most halves the kernel's work. The child sizes only steer
    this computation: they are never released and change no result.
    """
    n_features = X_binned.shape[1]
    if parent is None:
        hist = np.empty((n_features, 1, n_bins + 1, 2), dtype=SUM_DTYPE)
        build_histograms(X_binned, sample_indices, node_of_sample, gradients, hist)
        return hist
    n_parents = parent.shape[1]
    sizes = np.bincount(node_of_sample, minlength=2 * n_parents).reshape(n_parents, 2)
    side = (sizes[:, 1] < sizes[:, 0]).astype(np.uint8)
    small = np.empty_like(parent)
    build_histograms(X_binned, *children_on_side(sample_indices, node_of_sample, gradients, side),
                     small)
    large = parent - small
    right = side.astype(bool)
    hist = np.empty((n_features, 2 * n_parents, n_bins + 1, 2), dtype=SUM_DTYPE)
    hist[:, 0::2] = np.where(right[None, :, None, None], large, small)
    hist[:, 1::2] = np.where(right[None, :, None, None], small, large)
    return hist


def grow_tree(X_binned, sample_indices, gradients, *, budget, max_depth, n_bins,
              l2_regularization, noise, ledger, hessians=None, feature=None,
              min_child_weight=0.0):
    """Grow one complete tree of depth ``max_depth`` on the selected samples.

    Parameters
    ----------
    X_binned : ndarray of shape (n_samples, n_features), dtype=uint8, Fortran order
        Codes in ``[0, n_bins)``, ``n_bins`` for missing values.
    sample_indices : ndarray of shape (n_selected,), dtype=int32
        Rows this tree sees, ascending. May be empty: every split and leaf is then released from
        zero statistics, with the same noise.
    gradients : ndarray of shape (n_selected,), dtype=float32
        Gradients of the selected rows, ``|g| <= g*``.
    budget : TreeBudget
        Epsilons and sensitivities from the planner.
    max_depth : int
    n_bins : int
    l2_regularization : float
    noise : NumpyNoise or SecureNoise
    ledger : PrivacyLedger
    hessians : ndarray of shape (n_selected,), dtype=float32, default=None
        Hessians of the selected rows for Gaussian leaves; None means 1 (square loss).
    feature : int, default=None
        ``budget.split_selection == "cyclical"``: the only feature this tree splits on.
    min_child_weight : float, default=0.0
        Leaves whose *released* weight (noisy Hessian sum or noisy count) is below it get the
        value 0; decided on released values only (post-processing, no extra budget). Not used by
        ``budget.leaf_noise == "laplace"``, which releases no weight.

    Returns
    -------
    split_feature : ndarray of shape (2**max_depth - 1,), dtype=int32
    split_bin : ndarray of shape (2**max_depth - 1,), dtype=uint8
    missing_left : ndarray of shape (2**max_depth - 1,), dtype=bool
        Whether missing values (code ``n_bins``) go to the left child.
    leaf_value : ndarray of shape (2**max_depth,), dtype=float64
        Released leaf values before shrinkage.
    """
    n_features = X_binned.shape[1]
    n_internal = 2**max_depth - 1
    split_feature = np.empty(n_internal, dtype=np.int32)
    split_bin = np.empty(n_internal, dtype=X_BINNED_DTYPE)
    missing_left = np.empty(n_internal, dtype=np.bool_)
    node_of_sample = np.zeros(sample_indices.shape[0], dtype=NODE_DTYPE)
    scope = {"group": budget.group, "tree": budget.tree, "sampling_rate": budget.sampling_rate}

    hist = None
    n_candidates = n_features * (n_bins - 1) * 2
    # Cyclical trees score only their feature's candidates, so only its histograms are built;
    # the candidate offset maps the choice back to the global candidate index.
    candidate_columns, offset = ((X_binned, 0) if feature is None else
                                 (np.asfortranarray(X_binned[:, feature:feature + 1]),
                                  feature * (n_bins - 1) * 2))
    for level in range(max_depth):
        n_nodes = 2**level
        level_scope = {**scope, "level": level}
        if budget.split_selection == "random":
            choice = uniform_choice(n_nodes, n_candidates, noise=noise, ledger=ledger,
                                    scope=level_scope)
        else:
            hist = _level_histograms(candidate_columns, sample_indices, node_of_sample,
                                     gradients, hist, n_bins)
            gains = np.empty((n_nodes, candidate_columns.shape[1], n_bins - 1, 2),
                             dtype=SUM_DTYPE)
            compute_gains(hist, l2_regularization, gains)
            choice = offset + exponential_mechanism(
                gains.reshape(n_nodes, -1), epsilon=budget.epsilon_level,
                sensitivity=budget.gain_sensitivity, noise=noise, ledger=ledger,
                scope=level_scope)
        # Candidate index = (feature * (n_bins - 1) + bin) * 2 + (0: missing left, 1: right).
        level_feature = (choice // (2 * (n_bins - 1))).astype(np.int32)
        level_bin = (choice // 2 % (n_bins - 1)).astype(X_BINNED_DTYPE)
        level_missing_left = choice % 2 == 0
        nodes = slice(n_nodes - 1, 2 * n_nodes - 1)
        split_feature[nodes], split_bin[nodes] = level_feature, level_bin
        missing_left[nodes] = level_missing_left
        split_samples(X_binned, sample_indices, node_of_sample, level_feature, level_bin,
                      level_missing_left, n_bins)

    n_leaves = 2**max_depth
    leaf_sum = np.bincount(node_of_sample, weights=gradients, minlength=n_leaves)
    leaf_count = np.bincount(node_of_sample, minlength=n_leaves)
    leaf_scope = {**scope, "level": max_depth}
    if budget.leaf_noise == "laplace":
        denominator = leaf_count + l2_regularization
        # Eq. 4, V = -sum g / (n + lambda); an empty leaf with lambda = 0 has value 0, not 0/0.
        value = np.divide(-leaf_sum, denominator, out=np.zeros(n_leaves), where=denominator > 0)
        value = np.clip(value, -budget.leaf_clip, budget.leaf_clip)
        leaf_value = laplace_mechanism(value, epsilon=budget.epsilon_leaf,
                                       sensitivity=budget.leaf_sensitivity, noise=noise,
                                       ledger=ledger, scope=leaf_scope)
        return split_feature, split_bin, missing_left, leaf_value
    # Sufficient statistics: (G, H) for "gaussian" (DP-XGB), (G, n) for "average"; the leaf is a
    # function of the released pair only.
    newton = budget.leaf_noise == "gaussian"
    weight = (np.bincount(node_of_sample, weights=hessians, minlength=n_leaves)
              if newton and hessians is not None else leaf_count.astype(np.float64))
    statistics = np.column_stack([leaf_sum, weight])
    if budget.leaf_noise_multiplier > 0:
        released = gaussian_mechanism(
            statistics, noise_multiplier=budget.leaf_noise_multiplier,
            sensitivity=budget.leaf_sensitivity, noise=noise, ledger=ledger, scope=leaf_scope)
    else:
        released = laplace_mechanism(statistics, epsilon=budget.epsilon_leaf,
                                     sensitivity=budget.leaf_sensitivity, noise=noise,
                                     ledger=ledger, scope=leaf_scope)
    # DP-XGB's -G~ / max(H~ + lambda, lambda); a non-empty leaf's count is at least 1, so the
    # noisy average's denominator is floored at 1 + lambda.
    floor = l2_regularization if newton else 1.0 + l2_regularization
    value = -released[:, 0] / np.maximum(released[:, 1] + l2_regularization, floor)
    value[released[:, 1] < min_child_weight] = 0.0
    # The public clip bound applies to the released value: post-processing.
    leaf_value = np.clip(value, -budget.leaf_clip, budget.leaf_clip)
    return split_feature, split_bin, missing_left, leaf_value

"""Grow one differentially private tree (DPBoost, Li et al. 2020, Algorithm 1).

Depth-wise to ``max_depth``: every node of every level splits by the exponential mechanism over
every (feature, bin boundary) candidate; then every leaf releases its clipped value with Laplace
noise. Kernels compute, ``_mechanisms`` draws, the ledger records.
"""

import math

import numpy as np

from ._common import (
    NODE_DTYPE,
    SUM_DTYPE,
    X_BINNED_DTYPE,
    boundary_feature,
    boundary_index,
    decode_candidates,
    n_internal_nodes,
    threads_for,
)
from ._histogram import build_level_histograms
from ._mechanisms import (
    exponential_mechanism,
    gaussian_mechanism,
    laplace_mechanism,
    uniform_choice,
)
from ._splitting import compute_gains, partition_level, range_sums


def grow_tree(X_binned, sample_indices, gradients, *, budget, max_depth, n_bins,
              l2_regularization, noise, ledger, n_threads, hessians=None, feature=None,
              min_child_weight=0.0, candidates=None):
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
    noise : NoiseSource
    ledger : PrivacyLedger
    n_threads : int
        Threads of the kernels (>= 1); the tree does not depend on it.
    hessians : ndarray of shape (n_selected,), dtype=float32, default=None
        Hessians of the selected rows for Gaussian leaves; None means 1 (square loss).
    feature : int, default=None
        ``budget.split_selection == "cyclical"``: the only feature this tree splits on.
    min_child_weight : float, default=0.0
        Leaves whose *released* weight (noisy Hessian sum or noisy count) is below it get the
        value 0; decided on released values only (post-processing, no extra budget). Not used by
        ``budget.leaf_noise == "laplace"``, which releases no weight.
    candidates : ndarray of dtype=int64, default=None
        The split boundaries the nodes may choose from, as ascending ``feature * (n_bins - 1) +
        bin`` indices, each with both missing-value sides; None means all of them. Public or
        released (categories' boundaries, the Hessian sketch): the mechanisms' sensitivities do
        not depend on the set.

    Returns
    -------
    split_feature : ndarray of shape (2**max_depth - 1,), dtype=int32
    split_bin : ndarray of shape (2**max_depth - 1,), dtype=uint8
    missing_left : ndarray of shape (2**max_depth - 1,), dtype=bool
        Whether missing values (code ``n_bins``) go to the left child.
    leaf_value : ndarray of shape (2**max_depth,), dtype=float64
        Released leaf values before shrinkage.
    """
    n_internal = n_internal_nodes(max_depth)
    split_feature = np.empty(n_internal, dtype=np.int32)
    split_bin = np.empty(n_internal, dtype=X_BINNED_DTYPE)
    missing_left = np.empty(n_internal, dtype=np.bool_)
    scope = {"group": budget.group, "tree": budget.tree, "sampling_rate": budget.sampling_rate}

    # The samples of node j of the current level are positions node_start[j]:node_start[j + 1]
    # of (indices, grads); every level partitions them stably into the next level's nodes, from
    # one pair of buffers into the other. Within a node the rows stay ascending.
    n_selected = sample_indices.shape[0]
    indices, grads = sample_indices, gradients
    spare = (np.empty_like(sample_indices), np.empty_like(gradients))
    right = np.empty(n_selected, dtype=np.uint8)
    # Partition chunks of at least 16k samples (one per thread at most).
    n_chunks = max(1, min(n_threads, n_selected // 16384))
    node_start = np.array([0, n_selected], dtype=np.int64)

    n_boundaries = n_bins - 1
    # Cyclical trees score only their feature's candidates, so only its histograms are built;
    # ``first`` is the global index of the first boundary whose gains are computed.
    candidate_columns, first = ((X_binned, 0) if feature is None else
                                (np.asfortranarray(X_binned[:, feature:feature + 1]),
                                 boundary_index(feature, 0, n_bins)))
    n_columns = candidate_columns.shape[1]
    if feature is not None:
        own = np.arange(first, first + n_boundaries)
        candidates = (own if candidates is None
                      else candidates[boundary_feature(candidates, n_bins) == feature])
    n_choices = 2 * (n_columns * n_boundaries if candidates is None else candidates.size)
    feature_weights = None
    if candidates is not None and budget.split_selection == "random":
        # Random splits pick a feature uniformly, then one of its candidates: a feature's share
        # does not depend on how many candidates it has (categories, sketch).
        of_feature = boundary_feature(candidates, n_bins)
        feature_weights = np.repeat(1.0 / np.bincount(of_feature)[of_feature], 2)
    parent = no_parent = np.empty((n_columns, 0, n_bins + 1, 2), dtype=SUM_DTYPE)
    no_side = np.empty(0, dtype=np.uint8)
    private = math.isfinite(budget.epsilon_level)
    for level in range(max_depth):
        n_nodes = 2**level
        level_scope = {**scope, "level": level}
        if budget.split_selection == "random":
            choice = uniform_choice(n_nodes, n_choices, noise=noise, ledger=ledger,
                                    scope=level_scope, weights=feature_weights)
        else:
            hist = np.empty((n_columns, n_nodes, n_bins + 1, 2), dtype=SUM_DTYPE)
            if private:
                # Every node from its own samples (in row order), never by subtraction: a
                # sibling computed as parent - child rounds differently from its direct sum, so
                # a record could move the gains of a node it is not in (found by
                # tests/test_replay.py; docs/privacy.md, rule 8).
                side, from_parent, n_built = no_side, no_parent, n_selected
            else:
                # Without noise, only the smaller child of each parent is built from its samples,
                # the sibling by subtraction (at most half the work).
                sizes = np.diff(node_start)
                side = (sizes[1::2] < sizes[0::2]).astype(np.uint8)
                from_parent = parent
                n_built = (n_selected if level == 0
                           else int(np.minimum(sizes[0::2], sizes[1::2]).sum()))
            build_level_histograms(candidate_columns, indices, grads, node_start, from_parent,
                                   side, threads_for(n_built * n_columns, n_threads), hist)
            gains = np.empty((n_nodes, n_columns, n_boundaries, 2), dtype=SUM_DTYPE)
            compute_gains(hist, l2_regularization, threads_for(gains.size, n_threads), gains)
            utilities = (gains.reshape(n_nodes, -1) if candidates is None else
                         gains.reshape(n_nodes, -1, 2)[:, candidates - first].reshape(n_nodes, -1))
            choice = exponential_mechanism(
                utilities, epsilon=budget.epsilon_level, sensitivity=budget.gain_sensitivity,
                noise=noise, ledger=ledger, scope=level_scope)
            parent = hist
        if candidates is not None:
            choice = 2 * candidates[choice // 2] + choice % 2
        level_feature, level_bin, level_missing_left = decode_candidates(choice, n_bins)
        nodes = slice(n_nodes - 1, 2 * n_nodes - 1)
        split_feature[nodes], split_bin[nodes] = level_feature, level_bin
        missing_left[nodes] = level_missing_left
        child_start = np.empty(2 * n_nodes + 1, dtype=np.int64)
        partition_level(X_binned, indices, grads, node_start, level_feature, level_bin,
                        level_missing_left, n_bins, n_chunks, right, *spare, child_start)
        (indices, grads), spare = spare, ((np.empty_like(indices), np.empty_like(grads))
                                          if level == 0 else (indices, grads))
        node_start = child_start

    n_leaves = 2**max_depth
    # In order within each leaf, so the sums equal a pass over the samples in row order.
    leaf_sum = range_sums(grads, node_start)
    leaf_count = np.diff(node_start)
    leaf_scope = {**scope, "level": max_depth}
    if budget.leaf_noise == "laplace":
        denominator = leaf_count + l2_regularization
        # Eq. 4, V = -sum g / (n + lambda); an empty leaf with lambda = 0 has value 0, not 0/0.
        value = np.divide(-leaf_sum, denominator, out=np.zeros(n_leaves), where=denominator > 0)
        # A bound of 0 makes the leaf the constant 0 (sensitivity 0): clip(v, -0.0, 0.0) would
        # keep the sign of the exact sum, so the mechanism gets zeros (docs/privacy.md, rule 9).
        value = (np.zeros(n_leaves) if budget.leaf_clip == 0
                 else np.clip(value, -budget.leaf_clip, budget.leaf_clip))
        leaf_value = laplace_mechanism(value, epsilon=budget.epsilon_leaf,
                                       sensitivity=budget.leaf_sensitivity, noise=noise,
                                       ledger=ledger, scope=leaf_scope)
        return split_feature, split_bin, missing_left, leaf_value
    # Sufficient statistics: (G, H) for "gaussian" (DP-XGB), (G, n) for "average"; the leaf is a
    # function of the released pair only.
    newton = budget.leaf_noise == "gaussian"
    if newton and hessians is not None:
        # hessians[k] belongs to sample_indices[k]: find each sample's leaf by its row.
        leaf_of_row = np.empty(X_binned.shape[0], dtype=NODE_DTYPE)
        leaf_of_row[indices] = np.repeat(np.arange(n_leaves, dtype=NODE_DTYPE), leaf_count)
        weight = np.bincount(leaf_of_row[sample_indices], weights=hessians, minlength=n_leaves)
    else:
        weight = leaf_count.astype(np.float64)
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
    # The public clip bound applies to the released value: post-processing. Adding 0.0 turns a
    # -0.0 (a bound of 0 keeps the sign of what it clips) into 0.0.
    leaf_value = np.clip(value, -budget.leaf_clip, budget.leaf_clip) + 0.0
    return split_feature, split_bin, missing_left, leaf_value

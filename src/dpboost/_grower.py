"""Grow one differentially private tree, depth-wise to ``max_depth`` (DPBoost, Li et al. 2020,
Algorithm 1; DP-XGB's building blocks).

Every level's nodes split by the tree's split selection (``budget.split_selection``): a
data-independent draw among the candidates on the public grid (``"random"``, the default
estimators' choice, and ``"cyclical"``: one feature per tree), or the exponential mechanism over
every candidate's gain (``"exponential"``, DPBoost). Then the leaves are released by the tree's
leaf mechanism (``budget.leaf_noise``): Gaussian noise on each leaf's (gradient sum, Hessian sum)
and a Newton step on the released pair (``"gaussian"``, the default), Gaussian or Laplace noise
on (gradient sum, count) (``"average"``), or Laplace noise on the clipped leaf value
(``"laplace"``, DPBoost's GLC). Kernels compute, ``_mechanisms`` draws, the ledger records; the
grower returns a :class:`~dpboost._predictor.Tree`.
"""

import math

import numpy as np

from ._common import (
    FIXED_SUM_DTYPE,
    G_H_DTYPE,
    NODE_DTYPE,
    SUM_DTYPE,
    X_BINNED_DTYPE,
    boundary_feature,
    boundary_index,
    decode_candidates,
    n_internal_nodes,
    sample_chunks,
    threads_for,
)
from ._histogram import build_level_histograms, fixed_point_scale
from ._mechanisms import (
    exponential_mechanism,
    gaussian_mechanism,
    laplace_mechanism,
    uniform_choice,
)
from ._predictor import Tree, partition_leaves
from ._splitting import child_sums, compute_gains, partition_level, range_sums, scatter_rows
from ._tree_mechanisms import LEAF_RELEASES, SPLIT_SELECTIONS


def grow_tree(records, *, budget, n_features, max_depth, n_bins, l2_regularization, noise,
              ledger, n_threads, feature=None, min_child_weight=0.0, candidates=None,
              monotonic_cst=None):
    """Grow one complete tree of depth ``max_depth`` on the records selected for it.

    Each level's split choice is made once from the sum of the partitions' histograms (or at
    random) and sent back to route the records; the leaves are released once from the sum of the
    partitions' leaf statistics.

    Parameters
    ----------
    records : record set (``_records``)
        Its partitions hold the tree's selected records (``_boosting.select_records``), whose
        gradients are bounded by ``g*``. May select none: every split and leaf is then released
        from zero statistics, with the same noise.
    budget : TreeBudget
        Epsilons and sensitivities from the planner.
    n_features : int
        Columns of the binned records (the schema's).
    max_depth : int
    n_bins : int
    l2_regularization : float
    noise : NoiseSource
    ledger : PrivacyLedger
    n_threads : int
        Threads of the kernels run on the sums (the gains); the tree does not depend on it.
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
    monotonic_cst : ndarray of shape (n_features,), dtype=int8, default=None
        -1 / 0 / +1 per feature: the released leaf values are made monotone in it
        (:func:`monotone_leaves`, post-processing); None: unconstrained.

    Returns
    -------
    tree : Tree
        The released splits, leaf values (before shrinkage) and leaf statistics (NaN for
        Laplace leaves, which release only their value): the forest keeps the statistics for
        importances and covers.
    """
    n_internal = n_internal_nodes(max_depth)
    split_feature = np.empty(n_internal, dtype=np.int32)
    split_bin = np.empty(n_internal, dtype=X_BINNED_DTYPE)
    missing_left = np.empty(n_internal, dtype=np.bool_)
    scope = {"group": budget.group, "tree": budget.tree, "sampling_rate": budget.sampling_rate}

    n_boundaries = n_bins - 1
    # Cyclical trees score only their feature's candidates, so only its histograms are built;
    # ``first`` is the global index of the first boundary whose gains are computed.
    first = 0 if feature is None else boundary_index(feature, 0, n_bins)
    if feature is not None:
        own = np.arange(first, first + n_boundaries)
        candidates = (own if candidates is None
                      else candidates[boundary_feature(candidates, n_bins) == feature])
    feature_weights = None
    selection = SPLIT_SELECTIONS[budget.split_selection]
    if candidates is not None and selection.reads_records:
        # The candidates' gain columns (both missing-value sides of each) in a node's row of
        # the gains, so that every level takes them in one gather.
        columns = ((2 * (candidates - first))[:, None] + np.arange(2)).ravel()
    if candidates is not None and not selection.reads_records:
        # Random splits pick a feature uniformly, then one of its candidates: a feature's share
        # does not depend on how many candidates it has (categories, sketch).
        of_feature = boundary_feature(candidates, n_bins)
        feature_weights = np.repeat(1.0 / np.bincount(of_feature)[of_feature], 2)
    # A private tree's histograms add fixed-point gradients (exact) on its public g*.
    scale = (fixed_point_scale(budget.gradient_bound) if math.isfinite(budget.epsilon_level)
             else None)
    for level in range(max_depth):
        n_nodes = 2**level
        level_scope = {**scope, "level": level}
        if not selection.reads_records:
            n_choices = 2 * (n_features * n_boundaries if candidates is None
                             else candidates.size)
            choice = uniform_choice(n_nodes, n_choices, noise=noise, ledger=ledger,
                                    scope=level_scope, weights=feature_weights)
        else:
            records.update(level_histograms, feature, scale, n_bins)
            hist = records.reduce(tree_histograms, scale)
            n_columns = hist.shape[0]
            gains = np.empty((n_nodes, n_columns, n_boundaries, 2), dtype=SUM_DTYPE)
            compute_gains(hist, l2_regularization, threads_for(gains.size, n_threads), gains)
            utilities = gains.reshape(n_nodes, -1)
            if candidates is not None:
                utilities = utilities[:, columns]
            choice = exponential_mechanism(
                utilities, epsilon=budget.epsilon_level, sensitivity=budget.gain_sensitivity,
                noise=noise, ledger=ledger, scope=level_scope)
        if candidates is not None:
            choice = 2 * candidates[choice // 2] + choice % 2
        level_feature, level_bin, level_missing_left = decode_candidates(choice, n_bins)
        nodes = slice(n_nodes - 1, 2 * n_nodes - 1)
        split_feature[nodes], split_bin[nodes] = level_feature, level_bin
        missing_left[nodes] = level_missing_left
        if selection.reads_records:
            # The next level's histograms need the children; after the last level, only the
            # leaves' sums and each record's leaf are read (nothing is moved).
            records.update(split_level if level + 1 < max_depth else split_leaves,
                           level_feature, level_bin, level_missing_left, n_bins)
    if not selection.reads_records:
        # Splits drawn without the records: every level's routing in one pass.
        records.update(route_to_leaves, split_feature, split_bin, missing_left, n_bins)

    n_leaves = 2**max_depth
    leaf_scope = {**scope, "level": max_depth, "filtered": budget.filtered}
    leaves = LEAF_RELEASES[budget.leaf_noise]
    # (gradient sum, weight) per leaf: the count, or the Hessian sum of Newton leaves.
    leaf_sum, weight = records.reduce(leaf_statistics, leaves.newton).T
    if not leaves.releases_weight:
        denominator = weight + l2_regularization
        # Eq. 4, V = -sum g / (n + lambda); an empty leaf with lambda = 0 has value 0, not 0/0.
        value = np.divide(-leaf_sum, denominator, out=np.zeros(n_leaves), where=denominator > 0)
        # A bound of 0 makes the leaf the constant 0 (sensitivity 0): clip(v, -0.0, 0.0) would
        # keep the sign of the exact sum, so the mechanism gets zeros (docs/privacy.md, rule 9).
        value = (np.zeros(n_leaves) if budget.leaf_clip == 0
                 else np.clip(value, -budget.leaf_clip, budget.leaf_clip))
        leaf_value = laplace_mechanism(value, epsilon=budget.epsilon_leaf,
                                       sensitivity=budget.leaf_sensitivity, noise=noise,
                                       ledger=ledger, scope=leaf_scope)
        leaf_value = monotone_leaves(split_feature, leaf_value, monotonic_cst)
        return Tree(split_feature, split_bin, missing_left, leaf_value,
                    np.full((n_leaves, 2), np.nan))
    # Sufficient statistics: (G, H) for "gaussian" (DP-XGB), (G, n) for "average"; the leaf is a
    # function of the released pair only.
    # The weight goes out as c H (c public: the gradient sum's share of the budget, S-BDT) and
    # is divided by c after the release (post-processing).
    scale = budget.leaf_hessian_scale
    statistics = np.column_stack([leaf_sum, scale * weight])
    if budget.leaf_noise_multiplier > 0:
        released = gaussian_mechanism(
            statistics, noise_multiplier=budget.leaf_noise_multiplier,
            sensitivity=budget.leaf_sensitivity, noise=noise, ledger=ledger, scope=leaf_scope)
    else:
        released = laplace_mechanism(statistics, epsilon=budget.epsilon_leaf,
                                     sensitivity=budget.leaf_sensitivity, noise=noise,
                                     ledger=ledger, scope=leaf_scope)
    released[:, 1] /= scale
    value = -released[:, 0] / np.maximum(released[:, 1] + l2_regularization,
                                         leaves.denominator_floor(l2_regularization))
    value[released[:, 1] < min_child_weight] = 0.0
    # The public clip bound applies to the released value: post-processing. Adding 0.0 turns a
    # -0.0 (a bound of 0 keeps the sign of what it clips) into 0.0.
    leaf_value = np.clip(value, -budget.leaf_clip, budget.leaf_clip) + 0.0
    leaf_value = monotone_leaves(split_feature, leaf_value, monotonic_cst)
    return Tree(split_feature, split_bin, missing_left, leaf_value, released)


def monotone_leaves(split_feature, leaf_value, monotonic_cst):
    """The released leaf values of one complete tree made monotone in the constrained features
    (LightGBM's "basic" monotone constraints, applied as post-processing of released values).

    Top-down, node k gets an interval ``[lo, hi]`` (the root: the real line) and a middle value,
    the mean of its leaves' values clipped into the interval. A split on a feature constrained
    increasing (+1) gives its left child ``[lo, mid]`` and its right child ``[mid, hi]``
    (decreasing, -1: the reverse); any other split passes ``[lo, hi]`` to both. Each leaf is
    clipped into its interval. Two inputs that differ only in a constrained feature part at the
    first node splitting on it, and every leaf on the one side lies below ``mid``, every leaf on
    the other above: the tree, hence the sum of trees, is monotone in that feature (NaN, the
    missing value, is not ordered).

    Parameters
    ----------
    split_feature : ndarray of shape (2**max_depth - 1,), dtype=int32
    leaf_value : ndarray of shape (2**max_depth,), dtype=float64
    monotonic_cst : ndarray of shape (n_features,), dtype=int8, or None

    Returns
    -------
    leaf_value : ndarray of shape (2**max_depth,), dtype=float64
        ``leaf_value`` itself without constraints.
    """
    if monotonic_cst is None:
        return leaf_value
    n_internal = split_feature.size
    # mean of the leaves below every node, leaves after the internal nodes (heap order)
    total = np.concatenate([np.empty(n_internal), leaf_value])
    count = np.concatenate([np.empty(n_internal), np.ones(n_internal + 1)])
    for k in range(n_internal - 1, -1, -1):
        total[k] = total[2 * k + 1] + total[2 * k + 2]
        count[k] = count[2 * k + 1] + count[2 * k + 2]
    lo = np.full(2 * n_internal + 1, -np.inf)
    hi = np.full(2 * n_internal + 1, np.inf)
    for k in range(n_internal):
        left, right = 2 * k + 1, 2 * k + 2
        lo[left], hi[left], lo[right], hi[right] = lo[k], hi[k], lo[k], hi[k]
        direction = monotonic_cst[split_feature[k]]
        if direction != 0:
            mid = min(max(total[k] / count[k], lo[k]), hi[k])
            below, above = (left, right) if direction > 0 else (right, left)
            hi[below], lo[above] = mid, mid
    return np.clip(leaf_value, lo[n_internal:], hi[n_internal:])

# The partition side of the grower (``_records``): each function reads one partition's records
# of the tree and returns a new partition or its statistics.

def level_histograms(partition, feature, scale, n_bins):
    """The partition with its histograms of the current level's nodes
    (``TreeState.histograms``, shape (n_columns, n_nodes, n_bins + 1, 2)): of every feature, or
    of ``feature`` alone (cyclical trees). ``scale``: a private tree's fixed-point scale
    (``_histogram.fixed_point_scale`` of its g*; int64 sums), or None (float64 sums)."""
    tree = partition.tree
    columns = (partition.X_binned if feature is None
               else np.asfortranarray(partition.X_binned[:, feature:feature + 1]))
    node_start = tree.node_start
    n_columns, n_nodes = columns.shape[1], node_start.size - 1
    parent = tree.histograms
    weights = partition.weights
    dtype = SUM_DTYPE if scale is None or weights is not None else FIXED_SUM_DTYPE
    if parent is None or weights is not None:
        # Every node from its own samples (in row order). Weighted counts are float sums,
        # whose subtraction rounds differently from their direct sums.
        side = np.empty(0, dtype=np.uint8)
        parent = np.empty((n_columns, 0, n_bins + 1, 2), dtype=dtype)
        n_built = tree.indices.size
    else:
        # Only the smaller child of each parent is built from its samples, the sibling by
        # subtraction (at most half the work). A private tree's sums are exact integers, so the
        # sibling has the bits of its direct sum: a float64 subtraction would round differently,
        # and a record could move the gains of a node it is not in (found by
        # tests/test_replay.py; docs/privacy.md, rule 8).
        sizes = np.diff(node_start)
        side = (sizes[1::2] < sizes[0::2]).astype(np.uint8)
        n_built = int(np.minimum(sizes[0::2], sizes[1::2]).sum())
    hist = np.empty((n_columns, n_nodes, n_bins + 1, 2), dtype=dtype)
    n_threads = threads_for(n_built * n_columns, partition.n_threads)
    build_level_histograms(columns, tree.indices, tree.grads, node_start, parent, side,
                           n_threads, hist, 1.0 if scale is None else scale)
    if weights is not None:
        # Weighted counts (sum of the records' weights, the gain's denominators): the same
        # kernel summing the weights in place of the gradients; the unweighted kernel is kept
        # as it is (its counts add exactly 1).
        counts = np.empty_like(hist)
        build_level_histograms(columns, tree.indices, weights[tree.indices], node_start, parent,
                               side, n_threads, counts)
        hist[..., 1] = counts[..., 0]
    return partition.with_tree(histograms=hist)


def tree_histograms(partition, scale):
    """The partition's histograms of the current level (:func:`level_histograms`) in float64:
    fixed-point sums unscaled (exact while below ``2**53``)."""
    hist = partition.tree.histograms
    if hist.dtype == SUM_DTYPE:
        return hist
    out = hist.astype(SUM_DTYPE)
    out[..., 0] /= scale
    return out


def _hessians(tree):
    """The tree's Hessians as the kernels take them: an empty array without (the square loss)."""
    return np.empty(0, dtype=G_H_DTYPE) if tree.hess is None else tree.hess


def split_level(partition, level_feature, level_bin, level_missing_left, n_bins):
    """The partition with its tree's records routed to the children of their nodes by the
    level's released splits (a stable partition, ``_splitting.partition_level``)."""
    tree = partition.tree
    n_selected = tree.indices.size
    n_chunks = sample_chunks(partition.tree.indices.size, partition.n_threads)
    indices, grads = np.empty_like(tree.indices), np.empty_like(tree.grads)
    child_start = np.empty(2 * (tree.node_start.size - 1) + 1, dtype=np.int64)
    partition_level(partition.X_binned, tree.indices, tree.grads, tree.node_start,
                    level_feature, level_bin, level_missing_left, n_bins, n_chunks,
                    np.empty(n_selected, dtype=np.uint8), indices, grads, child_start)
    # The Hessians stay in the selection's order (``hess`` is ``hessians``): only the last
    # level's sums read them, by row (split_leaves).
    return partition.with_tree(indices=indices, grads=grads, node_start=child_start)


def split_leaves(partition, level_feature, level_bin, level_missing_left, n_bins):
    """The partition with its tree's leaf sums and each selected row's leaf, by the last
    level's released splits (``_splitting.child_sums``: what :func:`split_level` and
    :func:`leaf_statistics` would give, without moving the records)."""
    tree = partition.tree
    n_rows = partition.X_binned.shape[0]
    # The selection's Hessians by row (split_level did not move them).
    hess = (np.empty(0, dtype=G_H_DTYPE) if tree.hessians is None
            else scatter_rows(tree.hessians, tree.selected, n_rows, partition.n_threads))
    # int16 as the labels add_tree_scores makes (at most 2**15 leaves).
    leaf = np.empty(n_rows, dtype=np.int16)
    sums = child_sums(partition.X_binned, tree.indices, tree.grads, hess, tree.node_start,
                      level_feature, level_bin, level_missing_left, n_bins, partition.n_threads,
                      leaf)
    return partition.with_tree(leaf=leaf, leaf_sums=sums)


def route_to_leaves(partition, split_feature, split_bin, missing_left, n_bins):
    """The partition with its tree's records routed to the leaves of a whole tree at once
    (``_predictor.partition_leaves``): the grouping :func:`split_level` gives level by level."""
    tree = partition.tree
    hess = _hessians(tree)
    indices, grads, out_hess, leaf_start = partition_leaves(
        partition.X_binned, tree.indices, tree.grads, hess, split_feature, split_bin,
        missing_left, n_bins, sample_chunks(partition.tree.indices.size, partition.n_threads))
    return partition.with_tree(indices=indices, grads=grads,
                               hess=None if tree.hess is None else out_hess,
                               node_start=leaf_start)


def leaf_statistics(partition, newton):
    """Per leaf of the partition's tree: (gradient sum, weight), the weight the Hessian sum
    with ``newton`` and Hessians, else the count (the sum of the records' weights with sample
    weights; gradients and Hessians are weighted already, ``_boosting.select_records``).

    Returns
    -------
    statistics : ndarray of shape (n_leaves, 2), dtype=float64
    """
    tree = partition.tree
    if tree.leaf_sums is not None:  # split_leaves: summed already, each row's leaf labelled
        leaf_sum, hess_sum, leaf_count = tree.leaf_sums.T
        leaf_of_row = tree.leaf
    else:
        # In order within each leaf, so the sums equal a pass over the samples in row order.
        leaf_sum = range_sums(tree.grads, tree.node_start, partition.n_threads)
        hess_sum = (None if tree.hess is None or not newton
                    else range_sums(tree.hess, tree.node_start, partition.n_threads))
        leaf_count = np.diff(tree.node_start)
        leaf_of_row = None
    n_leaves = leaf_count.size
    if newton and tree.hess is not None:
        weight = hess_sum
    elif partition.weights is not None:
        # weights[selected[k]] belongs to row selected[k]: find each sample's leaf by its row.
        if leaf_of_row is None:
            leaf_of_row = np.empty(partition.X_binned.shape[0], dtype=NODE_DTYPE)
            leaf_of_row[tree.indices] = np.repeat(np.arange(n_leaves, dtype=NODE_DTYPE),
                                                  leaf_count)
        weight = np.bincount(leaf_of_row[tree.selected], minlength=n_leaves,
                             weights=partition.weights[tree.selected])
    else:
        weight = leaf_count.astype(np.float64)
    return np.column_stack([leaf_sum, weight])

"""Gain of every (feature, bin boundary) split candidate, and the partition of samples."""

import numpy as np
from numba import njit, prange


@njit(cache=True)
def compute_gains(hist, l2_regularization, out):
    """DPBoost split gain of every candidate of every node (Li et al. 2020, Eq. 3).

    ``G = (sum_L g)^2 / (n_L + lambda) + (sum_R g)^2 / (n_R + lambda)``. Candidate ``(b, m)`` of
    feature ``f`` sends bins ``<= b`` left, and the missing-value bin left (``m = 0``) or right
    (``m = 1``), XGBoost's default direction chosen by the mechanism. Without missing values both
    variants have the same gain, so the duplication leaves the mechanism's distribution over
    ``(f, b)`` unchanged. The parent term is not subtracted: it is the same for every candidate of
    a node, so the distribution does not change, and the sensitivity stays 3 g*^2 (Lemma 1).

    Parameters
    ----------
    hist : ndarray of shape (n_features, n_nodes, max_bins + 1, 2), dtype=float64
        Gradient sums (``[..., 0]``) and counts (``[..., 1]``) per bin; the last bin is missing.
    l2_regularization : float
        lambda >= 0 (an empty child contributes 0, also when lambda = 0).
    out : ndarray of shape (n_nodes, n_features, max_bins - 1, 2), dtype=float64
        Overwritten with the gains.
    """
    n_features, n_nodes, n_codes, _ = hist.shape
    n_bins = n_codes - 1
    for j in range(n_nodes):
        for f in range(n_features):
            total_g = 0.0
            total_n = 0.0
            for b in range(n_codes):
                total_g += hist[f, j, b, 0]
                total_n += hist[f, j, b, 1]
            missing_g = hist[f, j, n_bins, 0]
            missing_n = hist[f, j, n_bins, 1]
            left_g = 0.0
            left_n = 0.0
            for b in range(n_bins - 1):
                left_g += hist[f, j, b, 0]
                left_n += hist[f, j, b, 1]
                out[j, f, b, 0] = _gain(left_g + missing_g, left_n + missing_n, total_g,
                                        total_n, l2_regularization)
                out[j, f, b, 1] = _gain(left_g, left_n, total_g, total_n, l2_regularization)


@njit(cache=True, inline="always")
def _gain(left_g, left_n, total_g, total_n, l2_regularization):
    right_g = total_g - left_g
    right_n = total_n - left_n
    gain = 0.0
    if left_n > 0.0:
        gain += left_g * left_g / (left_n + l2_regularization)
    if right_n > 0.0:
        gain += right_g * right_g / (right_n + l2_regularization)
    return gain


@njit(parallel=True, cache=True)
def split_samples(X_binned, sample_indices, node_of_sample, split_feature, split_bin,
                  missing_left, missing_code):
    """Move every sample to its child: node ``j`` of a level has children ``2j`` (left) and ``2j+1``.

    Parameters
    ----------
    X_binned : ndarray of shape (n_samples, n_features), dtype=uint8
    sample_indices : ndarray of shape (n_selected,), dtype=int32
    node_of_sample : ndarray of shape (n_selected,), dtype=int32
        Updated in place from the node at this level to the node at the next level.
    split_feature, split_bin : ndarray of shape (n_nodes,)
        Chosen feature and bin boundary of each node of the level; bins ``<= split_bin`` go left.
    missing_left : ndarray of shape (n_nodes,), dtype=bool
        Whether the missing-value code goes left.
    missing_code : int
        The missing-value code (``max_bins``).
    """
    for k in prange(sample_indices.shape[0]):
        j = node_of_sample[k]
        code = X_binned[sample_indices[k], split_feature[j]]
        go_right = (not missing_left[j]) if code == missing_code else code > split_bin[j]
        node_of_sample[k] = 2 * j + (1 if go_right else 0)


@njit(cache=True)
def children_on_side(sample_indices, node_of_sample, gradients, side):
    """The samples of one child of every node of a level: child ``2i + side[i]``, with slot ``i``.

    The grower builds the histogram of the smaller child and subtracts it from the parent for the
    other (scikit-learn's HistGradientBoosting does the same).

    Parameters
    ----------
    sample_indices, node_of_sample : ndarray of shape (n_selected,), dtype=int32
    gradients : ndarray of shape (n_selected,), dtype=float32
    side : ndarray of shape (n_parents,), dtype=uint8
        0 for the left child, 1 for the right child of parent ``i``.

    Returns
    -------
    sample_indices, slot, gradients : ndarrays of shape (n_kept,)
        Same dtypes as the inputs; order preserved.
    """
    n_kept = 0
    for k in range(node_of_sample.shape[0]):
        j = node_of_sample[k]
        n_kept += (j & 1) == side[j >> 1]
    out_indices = np.empty(n_kept, dtype=sample_indices.dtype)
    out_slot = np.empty(n_kept, dtype=node_of_sample.dtype)
    out_gradients = np.empty(n_kept, dtype=gradients.dtype)
    m = 0
    for k in range(node_of_sample.shape[0]):
        j = node_of_sample[k]
        if (j & 1) == side[j >> 1]:
            out_indices[m] = sample_indices[k]
            out_slot[m] = j >> 1
            out_gradients[m] = gradients[k]
            m += 1
    return out_indices, out_slot, out_gradients

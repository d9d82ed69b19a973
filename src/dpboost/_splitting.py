"""Gain of every (feature, bin boundary) split candidate, the partition of samples, and sums and
values by range of the partitioned samples."""

import numpy as np
from numba import njit, prange

from ._common import sample_chunks


def compute_gains(hist, l2_regularization, n_threads, out):
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
    n_threads : int
        1 runs on the calling thread (no parallel region); otherwise the (node, feature) pairs
        in ``n_threads`` strided parallel chunks, each pair writing its own ``out[j, f]``. The
        result does not depend on it.
    out : ndarray of shape (n_nodes, n_features, max_bins - 1, 2), dtype=float64
        Overwritten with the gains.
    """
    if n_threads == 1:
        _strided_gains(hist, l2_regularization, 0, 1, out)
    else:
        _parallel_gains(hist, l2_regularization, n_threads, out)


# Each kernel is a serial worker and a parallel loop whose body is one call of it (see _binning).


@njit(parallel=True, cache=True)
def _parallel_gains(hist, l2_regularization, n_threads, out):
    for c in prange(n_threads):
        _strided_gains(hist, l2_regularization, np.int64(c), n_threads, out)


@njit(cache=True)
def _strided_gains(hist, l2_regularization, first, step, out):
    """The (node, feature) pairs ``first, first + step, ...`` of compute_gains."""
    n_features, n_nodes = hist.shape[0], hist.shape[1]
    for jf in range(first, n_nodes * n_features, step):
        _node_feature_gains(hist[jf % n_features, jf // n_features], l2_regularization,
                            out[jf // n_features, jf % n_features])


@njit(cache=True)
def _node_feature_gains(hist, l2_regularization, out):
    """Gains of one (node, feature): ``hist`` of shape (n_codes, 2), ``out`` (n_bins - 1, 2)."""
    n_bins = hist.shape[0] - 1
    total_g = 0.0
    total_n = 0.0
    for b in range(n_bins + 1):
        total_g += hist[b, 0]
        total_n += hist[b, 1]
    missing_g = hist[n_bins, 0]
    missing_n = hist[n_bins, 1]
    left_g = 0.0
    left_n = 0.0
    if missing_n == 0.0:
        # No missing value here: both variants have the same gain (x + 0.0 == x), computed once.
        for b in range(n_bins - 1):
            left_g += hist[b, 0]
            left_n += hist[b, 1]
            gain = _gain(left_g, left_n, total_g, total_n, l2_regularization)
            out[b, 0] = gain
            out[b, 1] = gain
        return
    for b in range(n_bins - 1):
        left_g += hist[b, 0]
        left_n += hist[b, 1]
        out[b, 0] = _gain(left_g + missing_g, left_n + missing_n, total_g, total_n,
                          l2_regularization)
        out[b, 1] = _gain(left_g, left_n, total_g, total_n, l2_regularization)


@njit(cache=True)
def _gain(left_g, left_n, total_g, total_n, l2_regularization):
    right_g = total_g - left_g
    right_n = total_n - left_n
    gain = 0.0
    if left_n > 0.0:
        gain += left_g * left_g / (left_n + l2_regularization)
    if right_n > 0.0:
        gain += right_g * right_g / (right_n + l2_regularization)
    return gain


def partition_level(X_binned, sample_indices, gradients, node_start, split_feature, split_bin,
                    missing_left, missing_code, n_chunks, right, out_indices, out_gradients,
                    child_start):
    """Stable partition of a level's samples into the children of their nodes.

    Node ``j`` of a level has children ``2j`` (left) and ``2j + 1``; its samples are the range
    ``node_start[j]:node_start[j + 1]``. Child ``c`` receives the range
    ``child_start[c]:child_start[c + 1]`` of ``out_indices`` / ``out_gradients``, in the order
    the samples had (a stable counting sort by child). Two parallel passes over ``n_chunks``
    contiguous chunks: mark and count the samples that go right per (chunk, node), then scatter
    at the chunk's offsets; no two chunks write the same position. The direction is computed
    without branches (thresholds are data-dependent, so branches mispredict).

    Parameters
    ----------
    X_binned : ndarray of shape (n_samples, n_features), dtype=uint8
    sample_indices : ndarray of shape (n_selected,), dtype=int32
    gradients : ndarray of shape (n_selected,), dtype=float32
        Moved with the rows. Hessians are not moved: only the last level's sums read them
        (:func:`child_sums`, by row), and moving them took 30 % of each partition's time
        (1M x 20, 1 and 2 threads).
    node_start : ndarray of shape (n_nodes + 1,), dtype=int64
    split_feature, split_bin : ndarray of shape (n_nodes,)
        Chosen feature and bin boundary of each node of the level; bins ``<= split_bin`` go left.
    missing_left : ndarray of shape (n_nodes,), dtype=bool
        Whether the missing-value code goes left.
    missing_code : int
        The missing-value code (``max_bins``, larger than every ``split_bin``).
    n_chunks : int
        Number of chunks, >= 1: the thread count (a kernel that asks Numba for it is not
        cacheable), or 1 to run on the calling thread with no parallel region (a small level).
        The result does not depend on it.
    right : ndarray of shape (n_selected,), dtype=uint8
        Scratch, overwritten with 1 for the samples that go right.
    out_indices : ndarray of shape (n_selected,), dtype=int32
    out_gradients : ndarray of shape (n_selected,), dtype=float32
        Overwritten with the partitioned samples.
    child_start : ndarray of shape (2 * n_nodes + 1,), dtype=int64
        Overwritten with the children's ranges.
    """
    # The codes as one flat feature-major array (as in _histogram), a view of X_binned.
    codes = X_binned.ravel(order="F")
    if n_chunks == 1:  # on the calling thread: no parallel region
        _partition_serial(codes, X_binned.shape[0], sample_indices, gradients, node_start,
                          split_feature, split_bin, missing_left, missing_code, right,
                          out_indices, out_gradients, child_start)
    else:
        _partition_parallel(codes, X_binned.shape[0], sample_indices, gradients, node_start,
                            split_feature, split_bin, missing_left, missing_code, n_chunks,
                            right, out_indices, out_gradients, child_start)


# As in _binning, each pass is a serial worker over a range of positions, called once on the
# calling thread or as the body of a parallel loop. The workers get int64 positions: a bare
# ``prange`` index is unsigned, and a constant argument is typed as a literal; either would
# compile a specialization of its own.


@njit(cache=True)
def _partition_serial(codes, n_samples, sample_indices, gradients, node_start, split_feature,
                      split_bin, missing_left, missing_code, right, out_indices, out_gradients,
                      child_start):
    """partition_level in one chunk."""
    # Per (chunk, node): the number of samples that go right, then the position of the first.
    right_offset = np.zeros((1, node_start.shape[0] - 1), dtype=np.int64)
    start, stop = np.int64(0), sample_indices.shape[0]
    _mark_right(codes, n_samples, sample_indices, node_start, split_feature, split_bin,
                missing_left, missing_code, start, stop, right, right_offset[0])
    _child_ranges(node_start, right_offset, child_start)
    _scatter(sample_indices, gradients, node_start, child_start, right, start, stop,
             right_offset[0], out_indices, out_gradients)


@njit(parallel=True, cache=True)
def _partition_parallel(codes, n_samples, sample_indices, gradients, node_start, split_feature,
                        split_bin, missing_left, missing_code, n_chunks, right, out_indices,
                        out_gradients, child_start):
    """partition_level in ``n_chunks`` contiguous chunks of positions."""
    n = sample_indices.shape[0]
    # Not np.zeros, which would become a parallel loop of its own (Numba's parfors).
    right_offset = np.empty((n_chunks, node_start.shape[0] - 1), dtype=np.int64)
    for chunk in range(n_chunks):
        for j in range(right_offset.shape[1]):
            right_offset[chunk, j] = 0
    for c in prange(n_chunks):
        chunk = np.int64(c)
        _mark_right(codes, n_samples, sample_indices, node_start, split_feature, split_bin,
                    missing_left, missing_code, chunk * n // n_chunks,
                    (chunk + 1) * n // n_chunks, right, right_offset[chunk])
    _child_ranges(node_start, right_offset, child_start)
    for c in prange(n_chunks):
        chunk = np.int64(c)
        _scatter(sample_indices, gradients, node_start, child_start, right,
                 chunk * n // n_chunks, (chunk + 1) * n // n_chunks, right_offset[chunk],
                 out_indices, out_gradients)


@njit(cache=True)
def _child_ranges(node_start, right_offset, child_start):
    """The children's ranges from the right-going counts per (chunk, node), which become the
    positions of each chunk's first right-going sample of the node; the left ones follow."""
    n_nodes = node_start.shape[0] - 1
    n_chunks = right_offset.shape[0]
    for j in range(n_nodes):
        start = node_start[j]
        n_left = node_start[j + 1] - start
        for chunk in range(n_chunks):
            n_left -= right_offset[chunk, j]
        child_start[2 * j] = start
        child_start[2 * j + 1] = start + n_left
        position = start + n_left
        for chunk in range(n_chunks):
            here = right_offset[chunk, j]
            right_offset[chunk, j] = position
            position += here
    child_start[2 * n_nodes] = node_start[n_nodes]


@njit(cache=True, inline="always")
def goes_right_of(code, threshold, missing_goes_left, missing_code):
    """Whether a record of bin ``code`` goes to the right child of a split at ``threshold``:
    codes above it do, and the missing code (above every threshold) goes right unless missing
    goes left. The one direction rule of the partitions, the last level's sums and the
    predictor."""
    return (code > threshold) != (missing_goes_left & (code == missing_code))


@njit(cache=True)
def _mark_right(codes, n_samples, sample_indices, node_start, split_feature, split_bin,
                missing_left, missing_code, lo, hi, right, n_right):
    """Pass 1 of partition_level on positions ``lo:hi``: ``right`` flags, counts per node.
    Feature ``f``'s codes are ``codes[f * n_samples:(f + 1) * n_samples]``."""
    first, stop_node = _nodes_within(node_start, lo, hi)
    for j in range(first, stop_node):
        start, stop = max(lo, node_start[j]), min(hi, node_start[j + 1])
        f = split_feature[j]
        column = codes[f * n_samples:(f + 1) * n_samples]
        threshold = split_bin[j]
        missing_goes_left = missing_left[j]
        # Slices from 0 and unsigned rows spare Numba's negative-index wraparound.
        rows = sample_indices[start:stop]
        goes_right = right[start:stop]
        total = 0
        for k in range(rows.shape[0]):
            code = column[np.uint32(rows[k])]
            goes = goes_right_of(code, threshold, missing_goes_left, missing_code)
            goes_right[k] = goes
            total += goes
        n_right[j] = total


@njit(cache=True)
def _scatter(sample_indices, gradients, node_start, child_start, right, lo, hi, right_offset,
             out_indices, out_gradients):
    """Pass 2 of partition_level on positions ``lo:hi``, whose right samples of node ``j`` start
    at ``right_offset[j]``."""
    first, stop_node = _nodes_within(node_start, lo, hi)
    for j in range(first, stop_node):
        start, stop = max(lo, node_start[j]), min(hi, node_start[j + 1])
        right_position = right_offset[j]
        # Left samples before ``start``: the node's left range start plus the left samples of
        # the earlier chunks, which precede ``start`` in the node.
        left_position = child_start[2 * j] + (start - node_start[j]) - (
            right_position - child_start[2 * j + 1])
        rows = sample_indices[start:stop]
        values = gradients[start:stop]
        goes_right = right[start:stop]
        for k in range(rows.shape[0]):
            goes = goes_right[k]
            destination = right_position if goes else left_position
            out_indices[destination] = rows[k]
            out_gradients[destination] = values[k]
            right_position += goes
            left_position += 1 - goes


@njit(cache=True)
def _nodes_within(node_start, lo, hi):
    """The nodes whose ranges meet the chunk of positions ``lo:hi``, as ``first, stop``: from
    the node holding ``lo`` to the one holding ``hi - 1``, the empty nodes between them included
    (``_mark_right`` gives each its count of 0). An empty chunk (``lo == hi``) may get one node,
    whose part ``max(lo, start):min(hi, stop)`` is then empty."""
    return _node_of(node_start, lo), _node_of(node_start, hi - 1) + 1


@njit(cache=True)
def _node_of(node_start, k):
    """The node whose range holds position ``k``: the last ``j`` with ``node_start[j] <= k``."""
    lo = 0
    hi = node_start.shape[0] - 2
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if node_start[mid] <= k:
            lo = mid
        else:
            hi = mid - 1
    return lo


def range_sums(values, start, n_threads=1):
    """``out[j] = sum(values[start[j]:start[j + 1]])`` in float64, summed in order.

    Parameters
    ----------
    values : ndarray of shape (n,), dtype=float32
    start : ndarray of shape (n_ranges + 1,), dtype=int64
    n_threads : int, default=1
        The ranges in contiguous parallel chunks of about equal positions
        (``_common.sample_chunks``). Each range is summed by one thread in order: the sums do
        not depend on it.

    Returns
    -------
    out : ndarray of shape (n_ranges,), dtype=float64
    """
    out = np.zeros(start.shape[0] - 1)
    first = _range_chunks(start, values.shape[0], n_threads)
    if first.size == 2:
        _range_sums(values, start, first[0], first[1], out)
    else:
        _range_sum_chunks(values, start, first, out)
    return out


def _range_chunks(start, n, n_threads):
    """Contiguous chunks of the ranges ``start[j]:start[j + 1]`` of ``n`` positions, one per
    thread (``_common.sample_chunks``), each range in one chunk: chunk ``c`` is the ranges
    ``first[c]:first[c + 1]``, from the first range that starts at or after ``c / n_chunks``
    of the positions.

    Returns
    -------
    first : ndarray of shape (n_chunks + 1,), dtype=int64
    """
    n_chunks = sample_chunks(n, n_threads)
    first = np.searchsorted(start[:-1], np.arange(n_chunks + 1) * n // n_chunks)
    first[-1] = start.shape[0] - 1
    return first.astype(np.int64)


@njit(cache=True)
def _range_sums(values, start, lo, hi, out):
    """Ranges ``lo:hi`` of :func:`range_sums`."""
    for j in range(lo, hi):
        total = 0.0
        for k in range(start[j], start[j + 1]):
            total += values[k]
        out[j] = total


@njit(parallel=True, cache=True)
def _range_sum_chunks(values, start, first, out):
    for c in prange(first.shape[0] - 1):
        _range_sums(values, start, first[c], first[c + 1], out)


def child_sums(X_binned, sample_indices, gradients, hessians, node_start, split_feature,
               split_bin, missing_left, missing_code, n_threads, leaf):
    """The children's sums of a level's released splits, and each sample's child by its row,
    without moving the samples: to the last bit what :func:`partition_level` followed by
    :func:`range_sums` over the children's ranges gives (the last level of a tree: its
    leaves).

    A child's samples are its node's in position order less those of its sibling, so one pass
    over each node, adding each sample to its side's sums, adds the same values in the same
    order as a pass over the child's range of a stable partition.

    Parameters
    ----------
    X_binned, sample_indices, gradients, node_start, split_feature, split_bin, missing_left,
    missing_code
        As :func:`partition_level`'s.
    hessians : ndarray of shape (n_samples,) or (0,), dtype=float32
        By row (:func:`scatter_rows`), read at the rows of ``sample_indices`` only; none:
        shape (0,). Each child adds its samples' Hessians in its position order, as their
        range sum after a partition that moved them would.
    n_threads : int
        The nodes in contiguous parallel chunks of about equal positions
        (``_common.sample_chunks``), each node by one thread in order: the result does not
        depend on it.
    leaf : ndarray of shape (n_samples,), dtype=int16
        Written at the rows of ``sample_indices`` only: the row's child, ``2 j`` (left) or
        ``2 j + 1`` of its node ``j``.

    Returns
    -------
    sums : ndarray of shape (2 * n_nodes, 3), dtype=float64
        Per child: its gradient sum, Hessian sum (0 without Hessians) and number of samples.
    """
    codes = X_binned.ravel(order="F")
    sums = np.zeros((2 * (node_start.shape[0] - 1), 3))
    first = _range_chunks(node_start, sample_indices.shape[0], n_threads)
    arguments = (codes, X_binned.shape[0], sample_indices, gradients, hessians, node_start,
                 split_feature, split_bin, missing_left, missing_code)
    if first.size == 2:
        _child_sums(*arguments, first[0], first[1], leaf, sums)
    else:
        _child_sum_chunks(*arguments, first, leaf, sums)
    return sums


@njit(cache=True)
def _child_sums(codes, n_samples, sample_indices, gradients, hessians, node_start,
                split_feature, split_bin, missing_left, missing_code, lo, hi, leaf, sums):
    """Nodes ``lo:hi`` of :func:`child_sums`."""
    with_hessians = hessians.shape[0] > 0
    for j in range(lo, hi):
        start, stop = node_start[j], node_start[j + 1]
        column = codes[split_feature[j] * n_samples:(split_feature[j] + 1) * n_samples]
        threshold = split_bin[j]
        missing_goes_left = missing_left[j]
        # Each side's sums in registers, every sample adding to both: its value to its own
        # side's, +0.0 to the other's, which leaves a sum unchanged (a sum from +0.0 is never
        # -0.0), so each side adds its own samples' values in order. Independent chains:
        # measured 1.2x (1 thread) to 1.6x (2) faster than sums indexed by the side.
        g_left = g_right = h_left = h_right = 0.0
        n_right = 0
        # Slices from 0 and unsigned rows spare Numba's negative-index wraparound.
        rows = sample_indices[start:stop]
        values = gradients[start:stop]
        for k in range(rows.shape[0]):
            row = np.uint32(rows[k])
            code = column[row]
            right = goes_right_of(code, threshold, missing_goes_left, missing_code)
            leaf[row] = 2 * j + right
            value = np.float64(values[k])
            g_left += 0.0 if right else value
            g_right += value if right else 0.0
            if with_hessians:
                value = np.float64(hessians[row])
                h_left += 0.0 if right else value
                h_right += value if right else 0.0
            n_right += right
        sums[2 * j, 0], sums[2 * j + 1, 0] = g_left, g_right
        sums[2 * j, 1], sums[2 * j + 1, 1] = h_left, h_right
        sums[2 * j, 2], sums[2 * j + 1, 2] = rows.shape[0] - n_right, n_right


@njit(parallel=True, cache=True)
def _child_sum_chunks(codes, n_samples, sample_indices, gradients, hessians, node_start,
                      split_feature, split_bin, missing_left, missing_code, first, leaf, sums):
    for c in prange(first.shape[0] - 1):
        _child_sums(codes, n_samples, sample_indices, gradients, hessians, node_start,
                    split_feature, split_bin, missing_left, missing_code, first[c],
                    first[c + 1], leaf, sums)


def scatter_rows(values, rows, n_rows, n_threads):
    """``values`` by row: ``out[rows[k]] = values[k]``, the other rows unwritten.

    Parameters
    ----------
    values : ndarray of shape (n,), dtype=float32
    rows : ndarray of shape (n,), dtype=int32
        Distinct rows below ``n_rows``.
    n_rows : int
    n_threads : int
        Contiguous parallel chunks of positions (``_common.sample_chunks``); the rows are
        distinct, so no two chunks write one row.

    Returns
    -------
    out : ndarray of shape (n_rows,), dtype=float32
    """
    out = np.empty(n_rows, dtype=values.dtype)
    n_chunks = sample_chunks(values.shape[0], n_threads)
    if n_chunks == 1:
        _scatter_rows(values, rows, np.int64(0), np.int64(values.shape[0]), out)
    else:
        _scatter_row_chunks(values, rows, n_chunks, out)
    return out


@njit(cache=True)
def _scatter_rows(values, rows, lo, hi, out):
    """Positions ``lo:hi`` of :func:`scatter_rows`."""
    for k in range(lo, hi):
        # Unsigned rows spare Numba's negative-index wraparound.
        out[np.uint32(rows[k])] = values[k]


@njit(parallel=True, cache=True)
def _scatter_row_chunks(values, rows, n_chunks, out):
    n = values.shape[0]
    for c in prange(n_chunks):
        chunk = np.int64(c)
        _scatter_rows(values, rows, chunk * n // n_chunks, (chunk + 1) * n // n_chunks, out)


@njit(cache=True)
def label_by_range(start, sample_indices, first, stop, out):
    """``out[sample_indices[k]] = j`` for every position ``first <= k < stop``, ``j`` the range
    of ``k`` (``start[j] <= k < start[j + 1]``): each sample's node, by its row.

    The score update of a grown tree (``_predictor.add_tree_scores``, in parallel over chunks
    of positions: the rows are distinct): after the last level, leaf ``j``'s samples are the
    range ``j`` of the partitioned indices (:func:`partition_level` routes a sample exactly as
    ``_predictor.predict_binned`` does), so their rows get their leaf without walking the tree
    again (800k rows: about 1 ms against 25 ms for prediction, one thread). A 2-byte label a
    row: the update then reads and writes the scores in row order.

    Parameters
    ----------
    start : ndarray of shape (n_ranges + 1,), dtype=int64
        Range ``j`` is positions ``start[j]:start[j + 1]``, ``start[0] = 0``; ``n_ranges``
        at most ``2**15``.
    sample_indices : ndarray of shape (start[-1],), dtype=int32
        Distinct rows of ``out``.
    first, stop : int
        The positions to label, ``0 <= first <= stop <= start[-1]``.
    out : ndarray of shape (n_rows,), dtype=int16
        Written at the rows of positions ``first:stop`` only.
    """
    # The last range starting at or before ``first`` (empty ranges before it skipped).
    j = np.searchsorted(start, first, side="right") - 1
    k = first
    while k < stop:
        end = min(start[j + 1], stop)
        # Unsigned rows spare Numba's negative-index wraparound.
        for p in range(k, end):
            out[np.uint32(sample_indices[p])] = j
        k = end
        j += 1

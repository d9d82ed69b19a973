"""Gradient histograms of the nodes of one tree level.

Kernels write into caller-allocated arrays; they hold no privacy parameters and draw no noise.
A private tree's histograms are int64 sums of fixed-point gradients (:func:`fixed_point_scale`):
exact, so a sibling's histogram obtained by subtraction has the same bits as its direct sum.
"""

import math

import numpy as np
from numba import njit, prange, types
from numba.extending import overload

#: A fixed-point gradient's magnitude is at most ``2**FIXED_POINT_BITS``, so an int64 sum of
#: fewer than ``2**31`` of them (the most rows a training set holds) never overflows.
FIXED_POINT_BITS = 30


def fixed_point_scale(gradient_bound):
    """The scale ``s = 2**(FIXED_POINT_BITS - e)`` of fixed-point gradients bounded by
    ``gradient_bound <= 2**e`` (the smallest such ``e``): a power of two, so that scaling and
    unscaling are exact.

    A private tree's histograms add each gradient ``g`` as ``trunc(g * s)`` in int64
    (:func:`build_level_histograms`). Truncation, not rounding: ``|trunc(g s)| / s <= |g|``, so
    the fixed-point gradients keep every bound the sensitivities assume of ``g``, and each
    record's term depends on its own gradient alone. Integer sums are exact whatever the order
    or the grouping (docs/privacy.md, Split selection).

    Parameters
    ----------
    gradient_bound : float
        g*, positive and finite: a public bound on the gradients' magnitudes.

    Returns
    -------
    scale : float
    """
    mantissa, exponent = math.frexp(gradient_bound)  # m 2**e with 0.5 <= m < 1
    if mantissa == 0.5:  # a power of two, 2**(e - 1)
        exponent -= 1
    # At most 2**1000, a float64 (a bound below 2**-970: its gradients stay below 2**30 anyway).
    return math.ldexp(1.0, min(FIXED_POINT_BITS - exponent, 1000))


def build_level_histograms(X_binned, sample_indices, gradients, node_start, parent, side,
                           n_threads, out, scale=1.0):
    """Sum gradients and count samples per (feature, node, bin) for every node of a level.

    One call per level, parallel over features: each thread owns whole ``out[f]`` blocks, so there
    are no races and no per-thread buffers to merge. The samples of node ``j`` are the contiguous
    range ``node_start[j]:node_start[j + 1]`` of ``sample_indices`` and ``gradients`` (the grower
    partitions them in place, see ``_splitting.partition_level``), so a node's loop reads only
    its own samples. Below the root only the child ``2p + side[p]`` of every parent ``p`` is built
    from its samples; its sibling is the parent's histogram minus it (scikit-learn's
    HistGradientBoosting does the same), which at most halves the work. The layout keeps one
    feature's histograms of all nodes (sum and count side by side) contiguous: measured 1.7x faster
    than separate sum and count arrays.

    Parameters
    ----------
    X_binned : ndarray of shape (n_samples, n_features), dtype=uint8, Fortran order
        Bin codes of the whole training set.
    sample_indices : ndarray of shape (n_selected,), dtype=int32
        Distinct rows of ``X_binned``, grouped by node, ascending within a node (for cache
        locality, and a summation order that does not depend on the partition's history).
    gradients : ndarray of shape (n_selected,), dtype=float32
        Gradient of the sample at the same position of ``sample_indices``.
    node_start : ndarray of shape (n_nodes + 1,), dtype=int64
        Node ``j`` holds positions ``node_start[j]:node_start[j + 1]``.
    parent : ndarray of shape (n_features, n_nodes // 2, n_codes, 2), dtype of ``out``
        Histograms of the previous level; shape ``(n_features, 0, n_codes, 2)`` at the root, where
        every node is built from its samples.
    side : ndarray of shape (n_nodes // 2,), dtype=uint8
        0 to build the left child of parent ``p`` from its samples, 1 the right one (the grower
        picks the smaller). In float64 a subtracted sibling rounds differently from its direct
        sum, so a private tree subtracts only int64 sums of fixed-point gradients (exact).
    n_threads : int
        1 runs on the calling thread: a parallel region costs microseconds on a quiet machine
        and milliseconds on a busy one, more than a small level's work. Any other value runs
        the tasks in ``n_threads`` strided parallel chunks (at most that many threads busy,
        whatever Numba's global setting). A task is one feature pair (one feature where there
        are fewer pairs than threads) of one node (of one parent with subtraction), so that a
        level of many nodes keeps every thread busy whatever the number of features. Where a
        level has fewer than :data:`TASKS_PER_THREAD` such tasks per thread, integer sums are
        cut further, by row blocks of each node (:func:`row_blocks`), and the blocks' sums
        added; float64 sums never are. Each float64 cell is summed in row order by one task, and
        integer sums are exact: the result does not depend on ``n_threads``.
    out : ndarray of shape (n_features, n_nodes, n_codes, 2), dtype=float64 or int64
        Overwritten: ``out[f, j, b, 0]`` gradient sum, ``out[f, j, b, 1]`` sample count. In
        int64, each gradient ``g`` adds ``trunc(g * scale)`` (fixed point, exact sums).
    scale : float, default=1.0
        With an int64 ``out``: :func:`fixed_point_scale` of a bound on the gradients; not read
        with a float64 ``out``.
    """
    # The codes as one flat feature-major array: a view of X_binned (see _binning.flat_layout;
    # a single feature's (n, 1) array would otherwise count as C order, another kernel type).
    codes = X_binned.ravel(order="F")
    # The sums by block: out itself where a node is summed whole.
    whole = out[np.newaxis]
    if n_threads == 1:
        _strided_tasks(codes, X_binned.shape[0], sample_indices, gradients, scale, node_start,
                       parent, side, 0, 1, 2, whole)
        return
    n_items = parent.shape[1] if parent.shape[1] > 0 else out.shape[1]
    n_pairs = (out.shape[0] + 1) // 2
    n_blocks = row_blocks(out.dtype, n_pairs * n_items, n_threads)
    if n_blocks > 1:
        _parallel_tasks(codes, X_binned.shape[0], sample_indices, gradients, scale, node_start,
                        parent, side, n_threads, 2,
                        np.empty((n_blocks,) + out.shape, dtype=out.dtype), out)
    else:
        # Pairs halve the reads of a node's (row, gradient) stream; single features double the
        # tasks where the pairs are fewer than the threads (a public choice: the result is the
        # same).
        width = 1 if n_pairs < n_threads else 2
        _parallel_tasks(codes, X_binned.shape[0], sample_indices, gradients, scale, node_start,
                        parent, side, n_threads, width, whole, out)


#: Tasks per thread, at least, that a level of integer sums is cut into (by row blocks of its
#: nodes) where its (feature pair, node) tasks are fewer: a level of 20 features has 10 pairs, so
#: without blocks its root would keep 10 of 16 threads busy.
TASKS_PER_THREAD = 4


def row_blocks(dtype, n_tasks, n_threads):
    """The number of row blocks each built node of a level is cut into: 1 (whole nodes) for
    float64 sums, whose rounding would depend on the blocks, and where the ``n_tasks`` (feature
    pair, node) tasks are :data:`TASKS_PER_THREAD` per thread or more; otherwise enough blocks
    for that many tasks. Integer sums are exact, so the result does not depend on the blocks."""
    if not np.issubdtype(dtype, np.integer) or n_tasks >= TASKS_PER_THREAD * n_threads:
        return 1
    return -(-TASKS_PER_THREAD * n_threads // n_tasks)


def all_rows_histograms(X_binned, gradients, n_threads, out):
    """Sum gradients and count rows per (feature, bin) over every row of ``X_binned``.

    The histograms :func:`build_level_histograms` builds for a root that holds every row, read
    without indices; a kernel of its own so that a fit that needs only these (the Hessian
    sketch of random splits) does not compile the level kernel.

    Parameters
    ----------
    X_binned : ndarray of shape (n_samples, n_features), dtype=uint8, Fortran order
    gradients : ndarray of shape (n_samples,), dtype=float32
        The weight of every row.
    n_threads : int
        1 runs on the calling thread; otherwise the features in ``n_threads`` strided parallel
        chunks. The result does not depend on it.
    out : ndarray of shape (n_features, n_codes, 2), dtype=float64
        Overwritten: ``out[f, b, 0]`` gradient sum, ``out[f, b, 1]`` row count.
    """
    codes = X_binned.ravel(order="F")
    if n_threads == 1:
        _strided_all_rows(codes, X_binned.shape[0], gradients, 0, 1, out)
    else:
        _parallel_all_rows(codes, X_binned.shape[0], gradients, n_threads, out)


# The serial worker and the parallel loop whose body is one call of it (see _binning). The
# helpers are called, not inlined by Numba (measured: 13.5 s to compile this kernel with them
# inlined into a parallel loop); LLVM inlines them still. Every level of calls costs compile
# time (a function's machine code is optimised again inside each caller), so the worker holds
# the node loops itself and calls only the innermost loops.


@njit(parallel=True, cache=True)
def _parallel_tasks(codes, n_samples, sample_indices, gradients, scale, node_start, parent,
                    side, n_threads, width, blocks, out):
    for c in prange(n_threads):
        _strided_tasks(codes, n_samples, sample_indices, gradients, scale, node_start, parent,
                       side, np.int64(c), n_threads, width, blocks)
    if blocks.shape[0] > 1:
        for c in prange(n_threads):
            _strided_merge(parent, side, np.int64(c), n_threads, blocks, out)


@njit(cache=True)
def _strided_tasks(codes, n_samples, sample_indices, gradients, scale, node_start, parent, side,
                   first, step, width, blocks):
    """Tasks ``first, first + step, ...`` of build_level_histograms. Task ``t`` is feature unit
    ``t % n_units`` (features ``width u`` and, with ``width`` 2, ``width u + 1`` if there is
    one) of row block ``(t // n_units) % n_blocks`` of item ``t // (n_units n_blocks)``: a
    node, or a parent whose smaller child is built (and, in one block, the other subtracted).
    Block ``k`` of a node's range is summed into ``blocks[k]``. Feature ``f``'s codes are
    ``codes[f * n_samples:(f + 1) * n_samples]``."""
    n_blocks, n_features, n_nodes = blocks.shape[0], blocks.shape[1], blocks.shape[2]
    n_parents = parent.shape[1]
    # A root holding every row: the (strictly ascending) indices are 0..n-1, so the codes are
    # read directly, one feature at a time (measured 1.7x faster than through the indices).
    root_of_all = n_nodes == 1 and sample_indices.shape[0] == n_samples
    n_units = (n_features + width - 1) // width
    n_items = n_parents if n_parents > 0 else n_nodes
    # This chunk's packed accumulators of two features (see _add; unused by float64 sums).
    packed = np.zeros((2, blocks.shape[3]), dtype=np.int64)
    for t in range(first, n_units * n_blocks * n_items, step):
        f = width * (t % n_units)
        k = (t // n_units) % n_blocks
        item = t // (n_units * n_blocks)
        out = blocks[k]
        a = codes[f * n_samples:(f + 1) * n_samples]
        # Features go in pairs: one pass over a node's (index, gradient) stream fills two
        # features' histograms, which halves the reads of that stream (measured on 500k x 20).
        pair = width == 2 and f + 1 < n_features
        b = codes[(f + 1) * n_samples:(f + 2) * n_samples] if pair else a
        j = _built_node(item, n_parents, side)
        start, stop = node_start[j], node_start[j + 1]
        lo = start + (stop - start) * k // n_blocks
        hi = start + (stop - start) * (k + 1) // n_blocks
        if root_of_all:
            _accumulate_all(a[lo:hi], gradients[lo:hi], scale, out[f, 0], packed[0])
            if pair:
                _accumulate_all(b[lo:hi], gradients[lo:hi], scale, out[f + 1, 0], packed[1])
            continue
        if pair:
            _accumulate_pair(a, b, sample_indices, gradients, scale, lo, hi, out[f, j],
                             out[f + 1, j], packed[0], packed[1])
        else:
            _accumulate(a, sample_indices, gradients, scale, lo, hi, out[f, j], packed[0])
        if n_parents > 0 and n_blocks == 1:
            _subtract(parent[f, item], out[f, j], out[f, j ^ 1])
            if pair:
                _subtract(parent[f + 1, item], out[f + 1, j], out[f + 1, j ^ 1])


@njit(cache=True)
def _strided_merge(parent, side, first, step, blocks, out):
    """(feature, item) tasks ``first, first + step, ...``: a built node's histogram as the sum
    of its blocks' (exact integers), and its sibling by subtraction."""
    n_blocks, n_features, n_nodes = blocks.shape[0], blocks.shape[1], blocks.shape[2]
    n_parents = parent.shape[1]
    n_items = n_parents if n_parents > 0 else n_nodes
    for t in range(first, n_features * n_items, step):
        f = t % n_features
        item = t // n_features
        j = _built_node(item, n_parents, side)
        built = out[f, j]
        for b in range(built.shape[0]):
            built[b, 0] = blocks[0, f, j, b, 0]
            built[b, 1] = blocks[0, f, j, b, 1]
        for k in range(1, n_blocks):
            for b in range(built.shape[0]):
                built[b, 0] += blocks[k, f, j, b, 0]
                built[b, 1] += blocks[k, f, j, b, 1]
        if n_parents > 0:
            _subtract(parent[f, item], built, out[f, j ^ 1])


@njit(parallel=True, cache=True)
def _parallel_all_rows(codes, n_samples, gradients, n_threads, out):
    for c in prange(n_threads):
        _strided_all_rows(codes, n_samples, gradients, np.int64(c), n_threads, out)


@njit(cache=True)
def _strided_all_rows(codes, n_samples, gradients, first, step, out):
    """Features ``first, first + step, ...`` of all_rows_histograms."""
    packed = np.zeros(out.shape[1], dtype=np.int64)
    for f in range(first, out.shape[0], step):
        _accumulate_all(codes[f * n_samples:(f + 1) * n_samples], gradients, 1.0, out[f],
                        packed)


#: Integer sums go through a packed accumulator: each row adds ``q * 2**COUNT_BITS + 1`` (its
#: fixed-point gradient ``q`` and its count) to one int64 per bin, one read-modify-write where
#: there were two, and every :data:`PACKED_ROWS` rows the accumulator is unpacked into the
#: histogram's (sum, count) and cleared. Exact: a block's count is below ``2**COUNT_BITS``, and
#: its packed sum stays within int64 even for terms twice :data:`FIXED_POINT_BITS`'s bound
#: (:func:`fixed_point_scale`). Measured (benchmarks/README.md, "Thread scaling"): 0.72x the
#: time of the (sum, count) updates on uniform codes (1M x 20, 32 bins, one thread); the default
#: classifier's level histograms at 1M x 20, 0.83x on 2 threads (no change resolved on one).
COUNT_BITS = 16
PACKED_ROWS = 1 << 15
assert (PACKED_ROWS < 2**COUNT_BITS
        and PACKED_ROWS * (2 ** (FIXED_POINT_BITS + 1) * 2**COUNT_BITS + 1) < 2**63)


def _term(value, scale, hist):
    """``value`` as a row's term of ``hist``'s sums: as it is (float64 sums; ``scale`` unused),
    or (int64 sums) times ``scale`` truncated toward zero (fixed point), packed with the row's
    count for :func:`_add`."""


@overload(_term, inline="always")
def _term_of(value, scale, hist):
    if isinstance(hist.dtype, types.Integer):
        return lambda value, scale, hist: (np.int64(np.float64(value) * scale)
                                           * np.int64(1 << COUNT_BITS) + np.int64(1))
    return lambda value, scale, hist: value


def _add(packed, hist, b, term):
    """One row's :func:`_term` into bin ``b``: float64 sums add it to ``hist``'s sum and 1 to
    its count; int64 sums add it to the packed accumulator ``packed`` (:func:`_unpack`)."""


@overload(_add, inline="always")
def _add_of(packed, hist, b, term):
    if isinstance(hist.dtype, types.Integer):
        def add(packed, hist, b, term):
            packed[b] += term
        return add

    def add(packed, hist, b, term):
        hist[b, 0] += term
        hist[b, 1] += 1
    return add


def _unpack(packed, hist):
    """Int64 sums: the packed accumulator's (sum, count) added to ``hist``, the accumulator
    cleared; float64 sums: nothing (they are added to ``hist`` directly)."""


@overload(_unpack, inline="always")
def _unpack_of(packed, hist):
    if isinstance(hist.dtype, types.Integer):
        def unpack(packed, hist):
            for b in range(hist.shape[0]):
                count = packed[b] & np.int64((1 << COUNT_BITS) - 1)
                hist[b, 0] += (packed[b] - count) >> np.int64(COUNT_BITS)
                hist[b, 1] += count
                packed[b] = 0
        return unpack
    return lambda packed, hist: None


@njit(cache=True)
def _built_node(item, n_parents, side):
    """The node of task item ``item`` summed from its samples: the node itself where there are
    no parents (the root's level), else the child ``side[item]`` of parent ``item``, whose
    sibling is ``j ^ 1``."""
    return item if n_parents == 0 else 2 * item + side[item]


@njit(cache=True)
def _subtract(whole, built, rest):
    """The sibling's histogram: the parent's minus the built child's."""
    for b in range(built.shape[0]):
        rest[b, 0] = whole[b, 0] - built[b, 0]
        rest[b, 1] = whole[b, 1] - built[b, 1]


@njit(cache=True)
def _block(first, second, lo, stop):
    """Positions ``lo:min(lo + PACKED_ROWS, stop)`` of two per-position arrays, as slices
    indexed from 0: they spare Numba's negative-index wraparound (measured 1.8x)."""
    hi = min(lo + PACKED_ROWS, stop)
    return first[lo:hi], second[lo:hi]


@njit(cache=True)
def _accumulate(column, sample_indices, gradients, scale, start, stop, hist, packed):
    _zero(hist)
    for lo in range(start, stop, PACKED_ROWS):
        rows, values = _block(sample_indices, gradients, lo, stop)
        # Unsigned row numbers spare Numba's negative-index wraparound; four codes are loaded
        # before their four updates so the loads overlap.
        k = 0
        while k + 4 <= rows.shape[0]:
            b0 = column[np.uint32(rows[k])]
            b1 = column[np.uint32(rows[k + 1])]
            b2 = column[np.uint32(rows[k + 2])]
            b3 = column[np.uint32(rows[k + 3])]
            _add(packed, hist, b0, _term(values[k], scale, hist))
            _add(packed, hist, b1, _term(values[k + 1], scale, hist))
            _add(packed, hist, b2, _term(values[k + 2], scale, hist))
            _add(packed, hist, b3, _term(values[k + 3], scale, hist))
            k += 4
        for k in range(k, rows.shape[0]):
            _add(packed, hist, column[np.uint32(rows[k])], _term(values[k], scale, hist))
        _unpack(packed, hist)


@njit(cache=True)
def _accumulate_pair(a, b, sample_indices, gradients, scale, start, stop, hist_a, hist_b,
                     packed_a, packed_b):
    # As _accumulate, for two columns from one read of each (row, gradient). Written out rather
    # than through a shared inline loop, which measured 15 % slower on one thread. The two
    # stay apart (measured on 500k rows, best of 60): two _accumulate calls instead of this take
    # 9 % longer (0.85 vs 0.78 ms), and the odd last feature through this kernel with a scratch
    # second column 1.87x as long as through _accumulate (0.79 vs 0.42 ms).
    _zero(hist_a)
    _zero(hist_b)
    for lo in range(start, stop, PACKED_ROWS):
        rows, values = _block(sample_indices, gradients, lo, stop)
        k = 0
        while k + 2 <= rows.shape[0]:
            r0 = np.uint32(rows[k])
            r1 = np.uint32(rows[k + 1])
            a0 = a[r0]
            b0 = b[r0]
            a1 = a[r1]
            b1 = b[r1]
            v0 = _term(values[k], scale, hist_a)
            v1 = _term(values[k + 1], scale, hist_a)
            _add(packed_a, hist_a, a0, v0)
            _add(packed_b, hist_b, b0, v0)
            _add(packed_a, hist_a, a1, v1)
            _add(packed_b, hist_b, b1, v1)
            k += 2
        for k in range(k, rows.shape[0]):
            r = np.uint32(rows[k])
            v = _term(values[k], scale, hist_a)
            _add(packed_a, hist_a, a[r], v)
            _add(packed_b, hist_b, b[r], v)
        _unpack(packed_a, hist_a)
        _unpack(packed_b, hist_b)


@njit(cache=True)
def _accumulate_all(column, gradients, scale, hist, packed):
    _zero(hist)
    for lo in range(0, column.shape[0], PACKED_ROWS):
        codes, values = _block(column, gradients, lo, column.shape[0])
        for i in range(codes.shape[0]):
            _add(packed, hist, codes[i], _term(values[i], scale, hist))
        _unpack(packed, hist)


@njit(cache=True, inline="always")
def _zero(hist):
    for b in range(hist.shape[0]):
        hist[b, 0] = 0
        hist[b, 1] = 0

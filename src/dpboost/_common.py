"""Dtypes shared by every kernel, with the reason for each, and the identity of a category value.

Kernels and the Python layer agree on these so that no array is copied or cast on the hot path.
"""

import numpy as np

#: Binned feature codes. ``max_bins <= 255`` so one byte per value suffices; the layout is
#: feature-major (Fortran order) because histogram kernels stream one feature column at a time.
X_BINNED_DTYPE = np.uint8

#: Raw gradients. Square-loss gradients lie in [-1, 1] after filtering or clipping, so float32
#: halves memory traffic without losing anything that the noise does not swamp.
G_H_DTYPE = np.float32

#: Histogram sums and counts. Sums of many float32 values lose precision in float32, so every
#: accumulator is float64 (the same choice as scikit-learn's HistGradientBoosting).
SUM_DTYPE = np.float64

#: A private tree's histogram sums of fixed-point gradients (``_histogram.fixed_point_scale``):
#: integers add exactly, in any order (a histogram by subtraction is its direct sum).
FIXED_SUM_DTYPE = np.int64

#: Row indices of the samples a tree sees: 32 bits halve the bytes the histogram kernel reads per
#: sample (training sets hold fewer than 2**31 rows).
SAMPLE_INDEX_DTYPE = np.int32

#: Node identifiers of samples within one tree level (a level has at most 2**max_depth nodes).
NODE_DTYPE = np.int32

#: Element operations below which a kernel call runs on the calling thread (:func:`threads_for`).
PARALLEL_MIN_WORK = 65536

#: The largest number of bins per feature that a uint8 code can hold.
MAX_BINS = 255

#: The default bound on the absolute gradient, g* in DPBoost (Li et al. 2020, Sec. 3.1): the
#: ``gradient_bound`` parameter, and each tree's bound in the plan (``TreeBudget.gradient_bound``,
#: GLC lowers it tree by tree). Labels are scaled into [-1, 1] and every gradient is filtered
#: (GDF) or clipped to its tree's bound, which is what every sensitivity relies on.
GRADIENT_BOUND = 1.0


def float32_at_most(bound):
    """The largest float32 ``<= bound``: a float32 array clipped to it never exceeds the float64
    bound a sensitivity assumes (``np.float32(0.4) > 0.4``; found by tests/test_replay.py).

    Parameters
    ----------
    bound : float
        Positive.

    Returns
    -------
    bound32 : numpy.float32
    """
    bound32 = np.float32(bound)
    if float(bound32) > bound:  # a float32 comparison would call them equal
        bound32 = np.nextafter(bound32, np.float32(0))
    return bound32


# The model's layout, written once (docs/architecture.md). Every tree is complete (docs/privacy.md,
# rule 3) and stored in heap order: internal node k has children 2k + 1 and 2k + 2, and the
# 2**max_depth leaves follow the 2**max_depth - 1 internal nodes. A split candidate is a boundary
# ``feature * (n_bins - 1) + bin`` (bins <= bin go left) with a side for the missing-value code:
# candidate code ``boundary * 2 + m``, m = 0 missing left, 1 missing right.


def n_internal_nodes(max_depth):
    """Internal nodes of a complete tree of depth ``max_depth``: ``2**max_depth - 1``."""
    return 2**max_depth - 1


def boundary_index(feature, bin_, n_bins):
    """Boundary ``feature * (n_bins - 1) + bin_`` of a grid of ``n_bins`` bins per feature."""
    return feature * (n_bins - 1) + bin_


def boundary_feature(boundary, n_bins):
    """The feature of a boundary index (inverse of :func:`boundary_index`)."""
    return boundary // (n_bins - 1)


def decode_candidates(code, n_bins):
    """(feature int32, bin uint8, missing_left bool) arrays of candidate codes."""
    boundary = code // 2
    return (boundary_feature(boundary, n_bins).astype(np.int32),
            (boundary % (n_bins - 1)).astype(X_BINNED_DTYPE), code % 2 == 0)


def threads_for(work, n_threads):
    """Threads for a kernel call of ``work`` element operations: 1 (on the calling thread, no
    parallel region) below :data:`PARALLEL_MIN_WORK`, where a region's start-up (microseconds,
    milliseconds on a busy machine) would cost more than it saves, and where the kernel's
    parallel loop, slow to compile, is not needed at all. Never changes a result."""
    return n_threads if work >= PARALLEL_MIN_WORK else 1


#: Samples per chunk, at least, of a tree's per-sample kernels (the partition and routing of
#: its samples, their range sums): a chunk per thread, fewer where a chunk would be smaller.
SAMPLE_CHUNK = 1 << 14


def sample_chunks(n_samples, n_threads):
    """Contiguous chunks, one per thread, of a kernel over ``n_samples`` of a tree's samples:
    at most ``n_threads``, each of at least :data:`SAMPLE_CHUNK` samples (1: on the calling
    thread). Never changes a result."""
    return max(1, min(n_threads, n_samples // SAMPLE_CHUNK))


def read_only(array):
    """``array``, no longer writeable: a memoised plan is shared by every fit of its setting."""
    array.flags.writeable = False
    return array


#: The types a released category keeps; a cell of any other type (a Decimal, a timestamp, a
#: date, ...) stands in a private list for its text.
_KEPT_TYPES = (str, bool, int, float)


def category_value(cell):
    """The value a cell of a private categorical column stands for: a ``str``, ``bool``,
    ``int`` or ``float`` (a numpy scalar as its Python value, any other object as its text).

    Two cells of equal :func:`category_key` give identical values (same type, same bits), so a
    released list shows nothing of which record held a value: ``Decimal('1.0')`` and
    ``Decimal('1.00')``, ``0.0`` and ``-0.0``, or one instant in two time zones are different
    values, each with its own count.
    """
    if isinstance(cell, np.generic):
        cell = cell.item()
    return cell if type(cell) in _KEPT_TYPES else str(cell)


def category_key(cell):
    """The identity of a private category: the type and the exact text of
    :func:`category_value` (``1``, ``1.0``, ``True`` and ``"1"`` are four values). The same key
    codes the cells at ``fit``, at ``predict`` and at a ``warm_start`` fit."""
    value = category_value(cell)
    return type(value).__name__, str(value)

"""Per-record kernels of a tree's record selection (``_boosting.select_records``): one parallel
pass marks the records a tree sees, a second gathers their rows, clipped gradients and Hessians.

Each pass is a serial worker over a range of rows, run on the calling thread or as the body of a
parallel loop over ``n_threads`` contiguous chunks (as in ``_binning``); the chunks' kept rows are
written at offsets from a prefix sum, so the output is in row order and does not depend on the
thread count. Every decision reads the record's own values only.
"""

import numpy as np
from numba import njit, prange

from ._common import G_H_DTYPE, SAMPLE_INDEX_DTYPE

#: Rows below which a selection runs on the calling thread.
PARALLEL_ROWS = 1 << 16


def select_rows(gradients, hessians, positions, position, within, coins, threshold, bound,
                filtering, n_threads, n_rows=None):
    """The rows a tree sees and their statistics, in row order.

    Row ``i`` is kept when ``positions[i] == position`` (no ``positions``: every row), its coin
    ``coins[i] < threshold`` (no ``coins``: every row), with ``filtering`` ``|g_i| <= bound``
    (GDF) and ``within[i]`` (no ``within``: every row). Without ``filtering`` the kept
    gradients are clipped to ``[-bound, bound]`` (``bound = inf``: not at all).

    Parameters
    ----------
    gradients : ndarray of shape (n,) or (0,), dtype=float32
        Shape (0,) (with ``filtering`` False): the rows only, no statistics gathered (the
        caller computes them for the kept rows, ``_boosting.select_records``).
    hessians : ndarray of shape (n,) or (0,), dtype=float32
    positions : ndarray of shape (n,) or (0,), dtype=int64
    position : int
    within : ndarray of shape (n,) or (0,), dtype=bool
    coins : ndarray of shape (n,) or (0,), dtype=float64
        The records' Poisson coins (``RecordCoins.uniforms``).
    threshold : float
        ``_mechanisms.poisson_threshold(rate)``.
    bound : numpy.float32
    filtering : bool
    n_threads : int
        Rows in ``n_threads`` contiguous parallel chunks (1, or fewer than
        :data:`PARALLEL_ROWS` rows: on the calling thread). The result does not depend on it.
    n_rows : int or None, default=None
        n (None: ``gradients.shape[0]``).

    Returns
    -------
    n_sampled : int
        Rows at their position whose coin is below the threshold (before GDF and ``within``).
    indices : ndarray of shape (n_kept,), dtype=int32
    grads, hess : ndarray of shape (n_kept,) (``hess``: (0,) without Hessians; both (0,)
        without ``gradients``), dtype=float32
    """
    n = gradients.shape[0] if n_rows is None else n_rows
    chunks = 1 if n < PARALLEL_ROWS else n_threads
    counts = np.zeros((chunks + 1, 2), dtype=np.int64)
    keep = np.empty(n, dtype=np.bool_)
    args = (gradients, positions, np.int64(position), within, coins, np.float64(threshold),
            G_H_DTYPE(bound), np.bool_(filtering))
    if chunks == 1:
        _mark(*args, np.int64(0), np.int64(n), keep, counts[1])
    else:
        _mark_chunks(*args, keep, counts)
    offsets = np.cumsum(counts[:, 1])
    indices = np.empty(offsets[-1], dtype=SAMPLE_INDEX_DTYPE)
    grads = np.empty(offsets[-1] if gradients.size else 0, dtype=G_H_DTYPE)
    hess = np.empty(offsets[-1] if hessians.size else 0, dtype=G_H_DTYPE)
    clip = G_H_DTYPE(np.inf) if filtering else G_H_DTYPE(bound)
    if chunks == 1:
        _gather(gradients, hessians, keep, clip, np.int64(0), np.int64(n), np.int64(0), indices,
                grads, hess)
    else:
        _gather_chunks(gradients, hessians, keep, clip, offsets, indices, grads, hess)
    return int(counts[:, 0].sum()), indices, grads, hess


@njit(cache=True)
def _mark(gradients, positions, position, within, coins, threshold, bound, filtering, lo, hi,
          keep, count):
    """Rows ``lo:hi``: ``keep`` flags; ``count`` += (sampled at their position, kept)."""
    sampled_total = 0
    kept_total = 0
    # Bitwise & (no short-circuit): a random sample makes branches mispredict.
    with_positions, with_coins, with_within = (positions.shape[0] > 0, coins.shape[0] > 0,
                                               within.shape[0] > 0)
    for i in range(lo, hi):
        sampled = True
        if with_positions:
            sampled = positions[i] == position
        if with_coins:
            sampled = sampled & (coins[i] < threshold)
        kept = sampled
        if filtering:
            kept = kept & (abs(gradients[i]) <= bound)
        if with_within:
            kept = kept & within[i]
        keep[i] = kept
        sampled_total += sampled
        kept_total += kept
    count[0] += sampled_total
    count[1] += kept_total


@njit(parallel=True, cache=True)
def _mark_chunks(gradients, positions, position, within, coins, threshold, bound, filtering,
                 keep, counts):
    n_chunks = counts.shape[0] - 1
    n = keep.shape[0]
    for c in prange(n_chunks):
        chunk = np.int64(c)
        _mark(gradients, positions, position, within, coins, threshold, bound, filtering,
              chunk * n // n_chunks, (chunk + 1) * n // n_chunks, keep, counts[chunk + 1])


@njit(cache=True)
def _gather(gradients, hessians, keep, clip, lo, hi, offset, indices, grads, hess):
    """Rows ``lo:hi``'s kept rows from position ``offset`` on, gradients clipped to ``clip``
    (``np.clip``'s comparisons: a NaN stays NaN); no ``grads``: the rows only."""
    k = offset
    for i in range(lo, hi):
        if keep[i]:
            indices[k] = i
            if grads.shape[0]:
                g = gradients[i]
                if g > clip:
                    g = clip
                elif g < -clip:
                    g = -clip
                grads[k] = g
            if hess.shape[0]:
                hess[k] = hessians[i]
            k += 1


@njit(parallel=True, cache=True)
def _gather_chunks(gradients, hessians, keep, clip, offsets, indices, grads, hess):
    n_chunks = offsets.shape[0] - 1
    n = keep.shape[0]
    for c in prange(n_chunks):
        chunk = np.int64(c)
        _gather(gradients, hessians, keep, clip, chunk * n // n_chunks,
                (chunk + 1) * n // n_chunks, offsets[chunk], indices, grads, hess)

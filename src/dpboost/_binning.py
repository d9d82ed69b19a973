"""Binning inside public feature bounds: an equal-width grid, or given thresholds.

The grid depends only on ``feature_bounds`` and ``max_bins``; thresholds are public or
post-processing of a released sketch (``_candidates``; docs/privacy.md, rule 1: bin edges and
split candidates never come from exact data quantiles). This module never sees ``y`` and draws
no randomness.
"""

import numpy as np
from numba import njit, prange

from ._common import X_BINNED_DTYPE

#: Rows per chunk of the binning kernels: the chunk's rows of ``X`` (2048 x 8 bytes per feature)
#: stay in cache while every feature is binned, so ``X`` is read from memory once whatever its
#: layout (measured 2-3x faster than one pass per feature on a C-order 1M x 20). A job of one
#: chunk, or of one thread, runs on the calling thread; a larger one in ``n_threads``
#: contiguous ranges of rows, one per thread (``n_jobs``: never more threads than asked for).
_BIN_CHUNK = 2048


def flat_layout(a):
    """A C- or Fortran-contiguous 2-D array as ``(flat, row_stride, column_stride)``.

    ``a[i, j]`` is ``flat[i * row_stride + j * column_stride]``; ``flat`` is a view (no copy).
    Kernels take this form so that one compiled kernel serves both layouts: Numba compiles a
    kernel once per argument type, and the layout is part of an array's type.
    """
    if a.flags.c_contiguous:
        return a.ravel(order="C"), a.shape[1], 1
    if a.flags.f_contiguous:
        return a.ravel(order="F"), 1, a.shape[0]
    raise ValueError("a C- or Fortran-contiguous array is needed")


def finite_ranges(X, n_threads=1):
    """Per column, the least and the greatest finite value of ``X``: one pass over chunks of
    :data:`_BIN_CHUNK` rows, in parallel (the data-derived bounds, ``feature_bounds=None``).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), dtype=float64
    n_threads : int, default=1
        Threads (:data:`_BIN_CHUNK`). The result does not depend on it.

    Returns
    -------
    lower, upper : ndarray of shape (n_features,), dtype=float64
        NaN for a column without a finite value.
    """
    if not (X.flags.c_contiguous or X.flags.f_contiguous):
        X = np.ascontiguousarray(X)
    x, x_row, x_column = flat_layout(X)
    n_samples, n_features = X.shape
    n_chunks = max(1, (n_samples + _BIN_CHUNK - 1) // _BIN_CHUNK)
    lower = np.full((n_chunks, n_features), np.inf)
    upper = np.full((n_chunks, n_features), -np.inf)
    if n_threads == 1 or n_chunks == 1:
        _range_of_chunks(x, x_row, x_column, n_samples, 0, n_chunks, lower, upper)
    else:
        _range_chunks(x, x_row, x_column, n_samples, min(n_threads, n_chunks), lower, upper)
    lower, upper = lower.min(axis=0), upper.max(axis=0)
    none = lower > upper  # still (inf, -inf): no finite value
    lower[none], upper[none] = np.nan, np.nan
    return lower, upper


@njit(parallel=True, cache=True)
def _range_chunks(x, x_row, x_column, n_samples, n_threads, lower, upper):
    """:func:`_range_of_chunks` of every chunk, thread t taking :func:`_thread_chunks`."""
    for t in prange(n_threads):
        first, stop = _thread_chunks(np.int64(t), n_threads, lower.shape[0])
        _range_of_chunks(x, x_row, x_column, n_samples, first, stop, lower, upper)


@njit(cache=True)
def _range_of_chunks(x, x_row, x_column, n_samples, first, stop, lower, upper):
    """Chunk c's least and greatest finite value per feature into ``lower[c]``, ``upper[c]``,
    for the chunks ``first:stop``."""
    for c in range(first, stop):
        start = c * _BIN_CHUNK
        for f in range(lower.shape[1]):
            lo, hi = lower[c, f], upper[c, f]
            for i in range(start, min(start + _BIN_CHUNK, n_samples)):
                value = x[i * x_row + f * x_column]
                if abs(value) < np.inf:  # finite: NaN and +-inf compare False
                    lo = min(lo, value)
                    hi = max(hi, value)
            lower[c, f], upper[c, f] = lo, hi


def bin_columns(X, lower, scale, max_bins, out, n_threads=1, columns=None):
    """Equal-width codes: ``out[i, j] = int((X[i, f] - lower[j]) * scale[j])``, clipped, for
    the ``j``-th column ``f`` of ``columns``.

    Clipping happens here, by construction of the code: a value below the lower bound (-inf
    included) lands in bin 0 and one above the upper bound (+inf included) in the last bin. NaN
    gets the missing-value code ``max_bins``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), dtype=float64
        C or Fortran order, writeable.
    lower, scale : ndarray of shape (n_binned,), dtype=float64, C order, writeable
        Lower bounds and bins per unit of the binned columns.
    max_bins : int
        Number of bins (at most 255 into uint8 codes, 65535 into uint16).
    out : ndarray of shape (n_samples, n_binned), dtype=uint8 or uint16
        C or Fortran order; overwritten with the codes.
    n_threads : int, default=1
        Threads (:data:`_BIN_CHUNK`). The codes do not depend on it.
    columns : ndarray of int or None, default=None
        The columns of ``X`` binned, in this order (read in place, not copied); None: all.
    """
    columns = (np.arange(X.shape[1], dtype=np.int64) if columns is None
               else np.ascontiguousarray(columns, dtype=np.int64))
    x, out_flat = flat_layout(X), flat_layout(out)
    if n_threads == 1 or X.shape[0] <= _BIN_CHUNK:
        _bin_rows(*x, columns, lower, scale, max_bins, 0, X.shape[0], *out_flat)
    else:
        _bin_chunks(*x, X.shape[0], columns, lower, scale, max_bins, n_threads, *out_flat)


def bin_by_thresholds(X, thresholds, max_bins, out, n_threads=1):
    """Codes on given thresholds: ``out[i, f]`` is the number of ``thresholds[f]`` ``<= X[i, f]``.

    Bin ``b`` holds ``thresholds[f, b - 1] <= x < thresholds[f, b]``; infinities land in the
    first or last bin (clipping); NaN gets the missing-value code ``max_bins``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), dtype=float64
        C or Fortran order, writeable.
    thresholds : ndarray of shape (n_features, max_bins - 1), dtype=float64, C order, writeable
        Non-decreasing per feature.
    max_bins : int
    out : ndarray of shape (n_samples, n_features), dtype=uint8
        C or Fortran order; overwritten with the codes.
    n_threads : int, default=1
        As :func:`bin_columns`.
    """
    x, out_flat = flat_layout(X), flat_layout(out)
    if n_threads == 1 or X.shape[0] <= _BIN_CHUNK:
        _bin_rows_by_thresholds(*x, thresholds, max_bins, 0, X.shape[0], *out_flat)
    else:
        _bin_chunks_by_thresholds(*x, X.shape[0], thresholds, max_bins, n_threads, *out_flat)


# Each kernel is a serial worker over a range of rows and a parallel loop whose body is one call
# of it. A small job calls the worker alone, so that a small fit never compiles a parallel loop:
# Numba compiles a ``prange`` body through its parfor passes, slow to compile, and once more for
# every function it inlines into it. The parallel loop passes the worker int64 row numbers (a
# bare ``prange`` index is unsigned, and would compile a second specialization of the worker).


@njit(cache=True)
def _bin_rows(x, x_row, x_column, columns, lower, scale, max_bins, start, stop, out, out_row,
              out_column):
    """Rows ``start:stop`` of :func:`bin_columns` (flat arrays, see :func:`flat_layout`), a
    chunk of rows at a time."""
    for chunk in range(start, stop, _BIN_CHUNK):
        chunk_stop = min(chunk + _BIN_CHUNK, stop)
        for j in range(columns.shape[0]):
            f = columns[j]
            lo = lower[j]
            sc = scale[j]
            for i in range(chunk, chunk_stop):
                t = (x[i * x_row + f * x_column] - lo) * sc
                k = i * out_row + j * out_column
                if t != t:
                    out[k] = max_bins
                elif t < 0.0:
                    out[k] = 0
                elif t >= max_bins:
                    out[k] = max_bins - 1
                else:
                    out[k] = int(t)


@njit(cache=True)
def _thread_chunks(t, n_threads, n_chunks):
    """Thread ``t``'s chunks ``first, stop`` of ``n_chunks``: a contiguous range, as many for
    every thread as can be."""
    return t * n_chunks // n_threads, (t + 1) * n_chunks // n_threads


@njit(cache=True)
def _thread_rows(t, n_threads, n_samples):
    """Thread ``t``'s rows ``start, stop`` of ``n_samples``: its :func:`_thread_chunks` of
    :data:`_BIN_CHUNK` rows."""
    first, stop = _thread_chunks(t, n_threads, (n_samples + _BIN_CHUNK - 1) // _BIN_CHUNK)
    return first * _BIN_CHUNK, min(stop * _BIN_CHUNK, n_samples)


@njit(parallel=True, cache=True)
def _bin_chunks(x, x_row, x_column, n_samples, columns, lower, scale, max_bins, n_threads,
                out, out_row, out_column):
    for t in prange(n_threads):
        start, stop = _thread_rows(np.int64(t), n_threads, n_samples)
        _bin_rows(x, x_row, x_column, columns, lower, scale, max_bins, start, stop, out,
                  out_row, out_column)


@njit(cache=True)
def _bin_rows_by_thresholds(x, x_row, x_column, thresholds, max_bins, start, stop, out, out_row,
                            out_column):
    """Rows ``start:stop`` of :func:`bin_by_thresholds` (flat arrays), a chunk at a time."""
    for chunk in range(start, stop, _BIN_CHUNK):
        chunk_stop = min(chunk + _BIN_CHUNK, stop)
        for f in range(thresholds.shape[0]):
            t = thresholds[f]
            for i in range(chunk, chunk_stop):
                value = x[i * x_row + f * x_column]
                k = i * out_row + f * out_column
                if value != value:
                    out[k] = max_bins
                else:
                    out[k] = np.searchsorted(t, value, side="right")


@njit(parallel=True, cache=True)
def _bin_chunks_by_thresholds(x, x_row, x_column, n_samples, thresholds, max_bins, n_threads,
                              out, out_row, out_column):
    for t in prange(n_threads):
        start, stop = _thread_rows(np.int64(t), n_threads, n_samples)
        _bin_rows_by_thresholds(x, x_row, x_column, thresholds, max_bins, start, stop, out,
                                out_row, out_column)


class BoundsBinner:
    """Map real feature values to uint8 bin codes inside public bounds.

    By default feature ``f`` with bounds ``(lower_f, upper_f)`` is cut into ``max_bins`` bins of
    equal width; bin ``b`` holds ``lower_f + b * w <= x < lower_f + (b + 1) * w`` with
    ``w = (upper_f - lower_f) / max_bins``. With ``thresholds``, bin ``b`` holds
    ``t[f, b - 1] <= x < t[f, b]``. Values outside the bounds (infinities included) are clipped
    into the first or last bin; NaN gets its own code, ``max_bins`` (the missing-value bin).

    Parameters
    ----------
    feature_bounds : ndarray of shape (n_features, 2), dtype=float64
        Public lower and upper bound of each feature; ``lower < upper``, both finite.
    max_bins : int
        Number of bins per feature, in [2, 255].
    thresholds : ndarray of shape (n_features, max_bins - 1), dtype=float64, default=None
        Public or released (``_candidates.sketch_thresholds``) thresholds, non-decreasing per feature and
        inside the bounds; None means the equal-width grid.
    """

    def __init__(self, feature_bounds, max_bins, thresholds=None):
        bounds = np.asarray(feature_bounds, dtype=np.float64)
        # Copies, C order and writeable: the kernels' one signature (read-only arrays, from a
        # caller or a loaded model, would compile kernels of their own).
        self.lower = bounds[:, 0].copy()
        self.upper = bounds[:, 1].copy()
        self.max_bins = int(max_bins)
        self.scale = self.max_bins / (self.upper - self.lower)
        self.custom_thresholds = (None if thresholds is None
                                  else np.array(thresholds, dtype=np.float64, order="C"))

    def transform(self, X, order="F", n_threads=1):
        """Bin ``X``.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features), dtype=float64
            Feature values; NaN means missing.
        order : {"F", "C"}, default="F"
            Memory layout of the result: feature-major ``"F"`` for histogram building, row-major
            ``"C"`` for prediction.
        n_threads : int, default=1
            Threads (``n_jobs``). The codes do not depend on it.

        Returns
        -------
        X_binned : ndarray of shape (n_samples, n_features), dtype=uint8
            Codes in ``[0, max_bins)``, or ``max_bins`` for NaN.
        """
        # Read as it is if C- or Fortran-contiguous and writeable (no copy), else copied.
        X = np.require(X, dtype=np.float64, requirements="W")
        if not (X.flags.c_contiguous or X.flags.f_contiguous):
            X = np.ascontiguousarray(X)
        out = np.empty(X.shape, dtype=X_BINNED_DTYPE, order=order)
        if self.custom_thresholds is None:
            bin_columns(X, self.lower, self.scale, self.max_bins, out, n_threads)
        else:
            bin_by_thresholds(X, self.custom_thresholds, self.max_bins, out, n_threads)
        return out

    def thresholds(self):
        """Real-valued split thresholds: candidate ``b`` of feature ``f`` sends ``x < t[f, b]`` left.

        For display: the bin codes decide, and a value within rounding error of a threshold may
        fall on either side of it.

        Returns
        -------
        thresholds : ndarray of shape (n_features, max_bins - 1), dtype=float64
            ``t[f, b] = lower_f + (b + 1) * (upper_f - lower_f) / max_bins`` on the grid.
        """
        if self.custom_thresholds is not None:
            return self.custom_thresholds.copy()
        steps = np.arange(1, self.max_bins) / self.max_bins
        return self.lower[:, None] + steps[None, :] * (self.upper - self.lower)[:, None]

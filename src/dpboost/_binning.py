"""Binning inside public feature bounds: an equal-width grid, or a private quantile sketch.

The grid depends only on ``feature_bounds`` and ``max_bins``; the sketch's thresholds are
post-processing of a Laplace-noised histogram released (and accounted) by the estimator
(docs/privacy.md, rule 1: bin edges and split candidates never come from exact data quantiles). This
module never sees ``y`` and draws no randomness.
"""

import numpy as np
from numba import njit, prange

from ._common import X_BINNED_DTYPE

#: Rows per parallel chunk of the binning kernels: the chunk's rows of ``X`` (2048 x 8 bytes per
#: feature) stay in cache while every feature is binned, so ``X`` is read from memory once
#: whatever its layout (measured 2-3x faster than one pass per feature on a C-order 1M x 20).
_BIN_CHUNK = 2048


@njit(parallel=True, cache=True)
def _bin_columns(X, lower, scale, max_bins, out):
    # Clipping happens here, by construction of the code: a value below the lower bound (-inf
    # included) lands in bin 0 and one above the upper bound (+inf included) in the last bin.
    # NaN gets the missing-value code max_bins.
    n_samples, n_features = X.shape
    for c in prange((n_samples + _BIN_CHUNK - 1) // _BIN_CHUNK):
        stop = min((c + 1) * _BIN_CHUNK, n_samples)
        for f in range(n_features):
            lo = lower[f]
            sc = scale[f]
            for i in range(c * _BIN_CHUNK, stop):
                t = (X[i, f] - lo) * sc
                if t != t:
                    out[i, f] = max_bins
                elif t < 0.0:
                    out[i, f] = 0
                elif t >= max_bins:
                    out[i, f] = max_bins - 1
                else:
                    out[i, f] = int(t)


@njit(parallel=True, cache=True)
def _bin_by_thresholds(X, thresholds, max_bins, out):
    # Bin b holds thresholds[b - 1] <= x < thresholds[b]: the number of thresholds <= x. Infinities
    # land in the first or last bin (clipping); NaN gets the missing-value code max_bins.
    n_samples, n_features = X.shape
    for c in prange((n_samples + _BIN_CHUNK - 1) // _BIN_CHUNK):
        stop = min((c + 1) * _BIN_CHUNK, n_samples)
        for f in range(n_features):
            t = thresholds[f]
            for i in range(c * _BIN_CHUNK, stop):
                x = X[i, f]
                if x != x:
                    out[i, f] = max_bins
                else:
                    out[i, f] = np.searchsorted(t, x, side="right")


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
        Public or released (:func:`sketch_thresholds`) thresholds, non-decreasing per feature and
        inside the bounds; None means the equal-width grid.
    """

    def __init__(self, feature_bounds, max_bins, thresholds=None):
        bounds = np.asarray(feature_bounds, dtype=np.float64)
        self.lower = np.ascontiguousarray(bounds[:, 0])
        self.upper = np.ascontiguousarray(bounds[:, 1])
        self.max_bins = int(max_bins)
        self.scale = self.max_bins / (self.upper - self.lower)
        self.custom_thresholds = (None if thresholds is None
                                  else np.ascontiguousarray(thresholds, dtype=np.float64))

    def transform(self, X, order="F"):
        """Bin ``X``.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features), dtype=float64
            Feature values; NaN means missing.
        order : {"F", "C"}, default="F"
            Memory layout of the result: feature-major ``"F"`` for histogram building, row-major
            ``"C"`` for prediction.

        Returns
        -------
        X_binned : ndarray of shape (n_samples, n_features), dtype=uint8
            Codes in ``[0, max_bins)``, or ``max_bins`` for NaN.
        """
        X = np.asarray(X, dtype=np.float64)
        out = np.empty(X.shape, dtype=X_BINNED_DTYPE, order=order)
        if self.custom_thresholds is None:
            _bin_columns(X, self.lower, self.scale, self.max_bins, out)
        else:
            _bin_by_thresholds(X, self.custom_thresholds, self.max_bins, out)
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


#: Fine grid of the sketch, in fine bins per final bin: a quantile lands within 1/8 of a grid
#: bin, while the Laplace noise summed into one quantile's cumulative count stays small.
SKETCH_RESOLUTION = 8
#: Fine equal-width grid of the adaptive Hessian sketch: every bin code of a uint8 but the
#: missing-value code; each tree chooses ``max_bins - 1`` of its boundaries.
HESSIAN_SKETCH_BINS = 255
#: Share of the uniform density mixed into the sketch's density: every fine bin keeps a positive
#: weight, so the thresholds are strictly increasing (no duplicate candidates) and no region of
#: the bounds is left without a candidate when the noise wipes out its counts.
SKETCH_UNIFORM_SHARE = 0.1


def fine_histograms(X, lower, upper, n_fine):
    """Exact counts of every feature on a fine equal-width grid: the sketch's input.

    Sensitive: the estimator releases them only through the Laplace mechanism. One record adds 1
    to one bin of each feature (none for a missing value), so the L1 sensitivity of the whole
    matrix is ``n_features`` under add/remove.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), dtype=float64
        NaN is not counted; values outside the bounds are clipped into the end bins.
    lower, upper : ndarray of shape (n_features,), dtype=float64
        Public bounds.
    n_fine : int
        Bins per feature, at most 65535.

    Returns
    -------
    counts : ndarray of shape (n_features, n_fine), dtype=float64
    """
    X = np.asarray(X, dtype=np.float64)
    codes = np.empty(X.shape, dtype=np.uint16, order="F")
    _bin_columns(X, np.ascontiguousarray(lower), n_fine / (upper - lower), n_fine, codes)
    return np.array([np.bincount(codes[:, f], minlength=n_fine + 1)[:n_fine]
                     for f in range(X.shape[1])], dtype=np.float64).reshape(X.shape[1], n_fine)


def _quantile_positions(weights, n_quantiles):
    """Positions, in fine-bin units in ``[0, n_fine]``, of the ``k / (n_quantiles + 1)``
    quantiles (k = 1 .. n_quantiles) of each row of released fine-grid ``weights``.

    Negative released weights are set to 0, each row is normalised to a density and mixed with the
    uniform density (share :data:`SKETCH_UNIFORM_SHARE`), so every fine bin keeps a positive
    weight; a row whose weights are all non-positive is uniform. Post-processing only.
    """
    n_features, n_fine = weights.shape
    weights = np.maximum(weights, 0.0)
    total = weights.sum(axis=1, keepdims=True)
    density = np.divide(weights, total, out=np.full_like(weights, 1.0 / n_fine), where=total > 0)
    density = (1.0 - SKETCH_UNIFORM_SHARE) * density + SKETCH_UNIFORM_SHARE / n_fine
    cdf = np.zeros((n_features, n_fine + 1))
    np.cumsum(density, axis=1, out=cdf[:, 1:])
    cdf[:, -1] = 1.0  # rounding: the last boundary is the upper bound
    quantiles = np.arange(1, n_quantiles + 1) / (n_quantiles + 1)
    return np.array([np.interp(quantiles, cdf[f], np.arange(n_fine + 1.0))
                     for f in range(n_features)]).reshape(n_features, n_quantiles)


def sketch_thresholds(noisy_counts, lower, upper, max_bins):
    """Quantile thresholds from released fine histograms (DP-XGBoost's sketch; post-processing).

    Grislain & Gonzalvez (2021) feed a Laplace-noised histogram to a quantile sketch
    (docs/privacy.md, Split-candidate sketches). Threshold ``b`` is the ``(b + 1) / max_bins`` quantile of the
    released counts mixed with :data:`SKETCH_UNIFORM_SHARE` of uniform mass (piecewise uniform
    inside each fine bin). A feature whose released counts are all non-positive gets the
    equal-width grid.

    Parameters
    ----------
    noisy_counts : ndarray of shape (n_features, n_fine), dtype=float64
        Released counts on the equal-width fine grid inside the bounds.
    lower, upper : ndarray of shape (n_features,), dtype=float64
    max_bins : int

    Returns
    -------
    thresholds : ndarray of shape (n_features, max_bins - 1), dtype=float64
        Strictly increasing per feature, strictly inside the bounds.
    """
    position = _quantile_positions(noisy_counts, max_bins - 1)
    return lower[:, None] + position / noisy_counts.shape[1] * (upper - lower)[:, None]


def hessian_sketch_boundaries(noisy_weights, n_candidates, noise_std=0.0):
    """Split candidates of each feature from its released Hessian histogram on the fine grid:
    DP-TR's adaptive Hessian sketch (Maddock et al. 2022; docs/privacy.md, Split-candidate sketches). Post-processing.

    Candidate ``k`` is the fine-bin boundary nearest to the ``k / (n_candidates + 1)`` quantile of
    the Hessian weight (mixed with :data:`SKETCH_UNIFORM_SHARE` of uniform mass): regions of
    large Hessian weight get many candidates, regions of small weight few, so every bin of the
    sketch carries about the same curvature.

    Parameters
    ----------
    noisy_weights : ndarray of shape (n_features, n_fine), dtype=float64
        Released Hessian sums per fine bin (missing values excluded).
    n_candidates : int
        Candidates per feature before duplicates are merged, at most ``n_fine - 1``.
    noise_std : float, default=0.0
        Standard deviation of the noise of each released weight (public, from the plan).
        Weights below twice it are set to 0: without this, the positive noise of the many
        empty fine bins would draw candidates to regions without records.

    Returns
    -------
    boundaries : list of ndarray of dtype=int64, one per feature
        Ascending distinct boundary indices ``b`` in ``[0, n_fine - 1)``: candidate ``b`` sends
        fine bins ``<= b`` left. Fewer than ``n_candidates`` where a fine bin holds more than one
        quantile's weight.
    """
    n_fine = noisy_weights.shape[1]
    weights = np.where(noisy_weights >= 2.0 * noise_std, noisy_weights, 0.0)
    position = _quantile_positions(weights, n_candidates)
    boundary = np.clip(np.rint(position).astype(np.int64), 1, n_fine - 1) - 1
    return [np.unique(row) for row in boundary]


def category_boundaries(binner, feature, n_categories):
    """The bin boundaries of a categorical feature that separate two categories.

    Category ``i`` has the code ``i`` inside the bounds ``(-0.5, n - 0.5)``; with fewer
    categories than bins, one category spans several bins, and only the boundaries between two
    categories are real splits (the others would duplicate one). Public: depends on the number of
    categories and the grid only.

    Returns
    -------
    boundaries : ndarray of shape (n_categories - 1,) or less, dtype=int64
        Ascending distinct boundary indices; candidate ``b`` sends bins ``<= b`` left.
    """
    codes = np.full((n_categories, binner.lower.size), np.nan)
    codes[:, feature] = np.arange(n_categories)
    bins = binner.transform(codes, order="C")[:, feature].astype(np.int64)
    # Categories sharing a bin (more categories than bins) have no boundary between them.
    return bins[1:][bins[1:] > bins[:-1]] - 1


def resolve_categorical(X, categorical_features, categories):
    """Indices of the categorical columns and their category lists.

    Parameters
    ----------
    X : array-like or pandas.DataFrame of shape (n_samples, n_features)
    categorical_features : None, "from_dtype", array-like of int, str or bool
        As scikit-learn's HistGradientBoosting: indices, column names, a boolean mask, or
        ``"from_dtype"`` (the DataFrame's ``category`` columns, and its string columns).
    categories : None or dict
        Public category list per column (key: column name or index). A ``category`` column
        without an entry takes its dtype's categories, but is reported in ``from_data``: pandas
        reads them off the values unless they were declared, which the code cannot tell.

    Returns
    -------
    lists : dict of int -> ndarray of shape (n_categories,), dtype=object
        Column index -> category list, in the order that defines the codes.
    from_data : list of str
        Columns whose list had to be read from the data (the caller warns).

    Raises
    ------
    ValueError
        An unknown column name or index, or a mask of the wrong length.
    """
    if categorical_features is None:
        return {}, []
    columns = list(getattr(X, "columns", range(np.shape(X)[1])))
    dtypes = getattr(X, "dtypes", None)

    def index_of(key):
        if isinstance(key, str):
            if key not in columns:
                raise ValueError(f"categorical_features names {key!r}, which is not a column of X.")
            return columns.index(key)
        if not 0 <= int(key) < len(columns):
            raise ValueError(f"categorical_features index {key} is outside [0, {len(columns)}).")
        return int(key)

    if isinstance(categorical_features, str) and categorical_features == "from_dtype":
        if dtypes is None:
            return {}, []
        indices = [j for j, t in enumerate(dtypes)
                   if str(t) == "category" or str(t) == "object" or str(t).startswith("str")]
    else:
        keys = np.asarray(categorical_features)
        if keys.dtype == bool:
            if keys.shape != (len(columns),):
                raise ValueError(f"categorical_features mask has shape {keys.shape}; X has "
                                 f"{len(columns)} columns.")
            indices = list(np.flatnonzero(keys))
        else:
            indices = [index_of(k) for k in keys.tolist()]
    given = {index_of(k): v for k, v in (categories or {}).items()}
    lists, from_data = {}, []
    for j in indices:
        column = X.iloc[:, j] if hasattr(X, "iloc") else np.asarray(X, dtype=object)[:, j]
        if j in given:
            values = list(given[j])
        elif str(getattr(column, "dtype", "")) == "category":
            # pandas builds a category dtype's list from the values unless the user declared
            # it, and the code cannot tell which: only ``categories`` counts as public.
            values = list(column.cat.categories)
            from_data.append(str(columns[j]))
        else:
            values = sorted({v for v in column if v == v and v is not None}, key=str)
            from_data.append(str(columns[j]))
        lists[j] = np.array(values, dtype=object)
    return lists, from_data


def encode_categorical(X, lists):
    """``X`` as float64 with each categorical column replaced by the position of its value in the
    public list; values not in the list and missing values become NaN (the missing-value bin).

    Parameters
    ----------
    X : array-like or pandas.DataFrame of shape (n_samples, n_features)
    lists : dict of int -> ndarray, dtype=object
        From :func:`resolve_categorical`.

    Returns
    -------
    X_encoded : same container as X (a DataFrame stays a DataFrame, with its column names)
    """
    if not lists:
        return X
    frame = hasattr(X, "iloc")
    X = X.copy() if frame else np.array(X, dtype=object)
    for j, values in lists.items():
        lookup = {v: float(i) for i, v in enumerate(values)}

        def code(v):
            try:
                return lookup.get(v, np.nan)
            except TypeError:  # an unhashable cell is in no list: missing, like any unknown
                return np.nan

        cells = X.iloc[:, j].to_numpy(dtype=object) if frame else X[:, j]
        codes = np.fromiter((code(v) for v in cells), dtype=np.float64, count=len(cells))
        if frame:
            X.isetitem(j, codes)
        else:
            X[:, j] = codes
    return X

"""Equal-width binning inside public feature bounds.

The grid depends only on ``feature_bounds`` and ``max_bins`` (PRIVACY.md, rule 1: bin edges and split
candidates never come from data quantiles). This module never sees ``y`` and draws no randomness.
"""

import numpy as np
from numba import njit, prange

from ._common import X_BINNED_DTYPE


@njit(parallel=True, cache=True)
def _bin_columns(X, lower, scale, max_bins, out):
    # Clipping happens here, by construction of the code: a value below the lower bound (-inf
    # included) lands in bin 0 and one above the upper bound (+inf included) in the last bin.
    # NaN gets the missing-value code max_bins.
    n_samples, n_features = X.shape
    for f in prange(n_features):
        lo = lower[f]
        sc = scale[f]
        for i in range(n_samples):
            t = (X[i, f] - lo) * sc
            if t != t:
                out[i, f] = max_bins
            elif t < 0.0:
                out[i, f] = 0
            elif t >= max_bins:
                out[i, f] = max_bins - 1
            else:
                out[i, f] = np.uint8(t)


class BoundsBinner:
    """Map real feature values to uint8 bin codes on a uniform grid inside public bounds.

    Feature ``f`` with bounds ``(lower_f, upper_f)`` is cut into ``max_bins`` bins of equal width;
    bin ``b`` holds ``lower_f + b * w <= x < lower_f + (b + 1) * w`` with ``w = (upper_f - lower_f) /
    max_bins``. Values outside the bounds (infinities included) are clipped into the first or last
    bin; NaN gets its own code, ``max_bins`` (the missing-value bin).

    Parameters
    ----------
    feature_bounds : ndarray of shape (n_features, 2), dtype=float64
        Public lower and upper bound of each feature; ``lower < upper``, both finite.
    max_bins : int
        Number of bins per feature, in [2, 255].
    """

    def __init__(self, feature_bounds, max_bins):
        bounds = np.asarray(feature_bounds, dtype=np.float64)
        self.lower = np.ascontiguousarray(bounds[:, 0])
        self.upper = np.ascontiguousarray(bounds[:, 1])
        self.max_bins = int(max_bins)
        self.scale = self.max_bins / (self.upper - self.lower)

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
        _bin_columns(X, self.lower, self.scale, self.max_bins, out)
        return out

    def thresholds(self):
        """Real-valued split thresholds: candidate ``b`` of feature ``f`` sends ``x < t[f, b]`` left.

        For display: the bin codes decide, and a value within rounding error of a threshold may
        fall on either side of it.

        Returns
        -------
        thresholds : ndarray of shape (n_features, max_bins - 1), dtype=float64
            ``t[f, b] = lower_f + (b + 1) * (upper_f - lower_f) / max_bins``.
        """
        steps = np.arange(1, self.max_bins) / self.max_bins
        return self.lower[:, None] + steps[None, :] * (self.upper - self.lower)[:, None]


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
        without an entry takes its dtype's declared categories (public by declaration).

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
            values = list(column.cat.categories)
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
    if hasattr(X, "iloc"):
        X = X.copy()
        for j, values in lists.items():
            lookup = {v: float(i) for i, v in enumerate(values)}
            X.isetitem(j, X.iloc[:, j].astype(object).map(lookup).astype(np.float64).to_numpy())
        return X
    X = np.array(X, dtype=object)
    for j, values in lists.items():
        lookup = {v: float(i) for i, v in enumerate(values)}
        X[:, j] = [lookup.get(v, np.nan) for v in X[:, j]]
    return X

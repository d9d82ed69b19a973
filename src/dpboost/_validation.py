"""Parameter constraints, the public inputs of a fit, and the data domain.

Every check of a parameter or public input, and every ``PrivacyLeakWarning``, lives here;
:func:`public_inputs` returns them as one :class:`PublicInputs` record (bounds, category lists,
classes or target bounds, and which of them were read from the data).

The data domain (what one record may hold) and the per-record treatment of everything outside
it live here too: a cell that is not a number is missing, a label outside the public classes or
a missing target removes its record. Each decision reads one record only, so it is DP-safe under
add/remove of a record; no check here reads the data and raises (but for bounds that were read
from the data, already announced by a warning), and no message quotes a value.
"""

import math
import warnings
from dataclasses import dataclass, field
from numbers import Integral, Real

import numba
import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import column_or_1d, validate_data

from ._accountant import PrivacyAccountant
from ._common import MAX_BINS, category_key, category_value, float32_at_most
from ._loss import scale_target
from ._mechanisms import NoiseSource


class PrivacyLeakWarning(UserWarning):
    """A value was computed from the private data, or a non-private diagnostic was requested.

    Raised, for instance, when ``feature_bounds`` are not given and are read from the training data:
    the fitted model is then not differentially private with respect to those bounds.
    """


class ReproducibleNoiseWarning(PrivacyLeakWarning):
    """An integer or Generator ``random_state`` makes the noise reproducible, hence predictable.

    Whoever knows the seed can subtract the noise from a released model. Fine for experiments,
    never for a release. Opt in explicitly by filtering this warning::

        warnings.filterwarnings("ignore", category=dpboost.ReproducibleNoiseWarning)
    """


#: Deepest tree allowed: histograms of the last level hold ``2**(max_depth - 1)`` nodes.
MAX_DEPTH = 10

PARAMETER_CONSTRAINTS = {
    "epsilon": [Interval(Real, 0, None, closed="right")],
    "delta": [Interval(Real, 0, 1, closed="left")],
    "leaf_noise": [StrOptions({"laplace", "gaussian", "average"})],
    "min_child_weight": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
    "subsample": [Interval(Real, 0, 1, closed="right"), StrOptions({"auto"})],
    "split_selection": [StrOptions({"exponential", "cyclical", "random"})],
    "interaction_cst": [None, StrOptions({"no_interactions"})],
    "monotonic_cst": ["array-like", dict, None],
    "gradient_bound": [Interval(Real, 0, None, closed="neither")],
    "split_candidates": [StrOptions({"uniform", "sketch", "hessian"})],
    "n_estimators": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
    "max_depth": [Interval(Integral, 1, MAX_DEPTH, closed="both")],
    "learning_rate": [Interval(Real, 0, 1, closed="right"), StrOptions({"auto"})],
    "l2_regularization": [Interval(Real, 0, None, closed="left")],
    "max_bins": [Interval(Integral, 2, MAX_BINS, closed="both")],
    "trees_per_ensemble": [Interval(Integral, 1, None, closed="left")],
    "budget_allocation": [StrOptions({"eoe", "sequential", "parallel"})],
    "gradient_filtering": ["boolean"],
    "renyi_filter": [Interval(Real, 0, 1, closed="right"), None],
    "leaf_clipping": ["boolean"],
    "feature_bounds": ["array-like", dict, StrOptions({"private"}), None],
    "categorical_features": ["array-like", StrOptions({"from_dtype"}), None],
    "categories": [dict, StrOptions({"private"}), None],
    "random_state": ["random_state", np.random.Generator, NoiseSource],
    "verbose": ["verbose"],
    "diagnostics": ["boolean"],
    "n_jobs": [Integral, None],
    "accountant": [PrivacyAccountant, None],
    "sample_weight_bound": [Interval(Real, 0, None, closed="neither"), None],
    "warm_start": ["boolean"],
}


def check_mechanisms(leaf_noise, delta, l2_regularization, min_child_weight=0.0):
    """Combinations the planner cannot honour, refused before any budget is spent."""
    if min_child_weight > 0 and leaf_noise == "laplace":
        raise ValueError(f"min_child_weight={min_child_weight} needs leaf_noise='gaussian' or "
                         "'average': it is decided on a released weight, and leaf_noise='laplace' "
                         "releases none (an exact count would leak).")
    if leaf_noise == "gaussian" and delta == 0:
        raise ValueError("leaf_noise='gaussian' needs delta > 0: the Gaussian mechanism is not "
                         "pure DP (set delta, e.g. 1e-5, well below 1 / n_samples).")
    if leaf_noise == "gaussian" and l2_regularization == 0:
        raise ValueError("leaf_noise='gaussian' needs l2_regularization > 0: the released leaf "
                         "-G / max(H + lambda, lambda) divides by lambda.")


#: DPBoost's setting (Li et al. 2020, Sec. 5), the estimators' ``dpboost_paper()`` (and
#: ``loss="square"`` for the classifier).
DPBOOST_PAPER = {"delta": 0.0, "n_estimators": 50, "max_depth": 6, "learning_rate": 0.1,
                 "l2_regularization": 0.1, "max_bins": 32, "trees_per_ensemble": 50,
                 "budget_allocation": "eoe", "gradient_bound": 1.0, "gradient_filtering": True,
                 "leaf_clipping": True,
                 "leaf_noise": "laplace", "min_child_weight": 0.0, "subsample": 1.0,
                 "split_selection": "exponential", "split_candidates": "uniform",
                 "interaction_cst": None}


def check_iteration_range(iteration_range, n_stages):
    """``(begin, end)`` of the boosting stages a prediction uses (XGBoost's ``iteration_range``):
    None for all, else integers with ``0 <= begin < end <= n_estimators``."""
    if iteration_range is None:
        return 0, n_stages
    try:
        begin, end = (int(v) for v in iteration_range)
        valid = 0 <= begin < end <= n_stages and tuple(iteration_range) == (begin, end)
    except (TypeError, ValueError):
        valid = False
    if not valid:
        raise ValueError(f"iteration_range={iteration_range!r} must be (begin, end) with "
                         f"0 <= begin < end <= n_estimators={n_stages}.")
    return begin, end


def n_threads(n_jobs):
    """Threads for ``n_jobs`` on this machine (:func:`check_n_jobs` with Numba's thread count)."""
    return check_n_jobs(n_jobs, numba.config.NUMBA_NUM_THREADS)


def check_n_jobs(n_jobs, max_threads):
    """Number of threads for ``n_jobs``: None or -1 all ``max_threads``, -2 all but one, ..."""
    if n_jobs == 0:
        raise ValueError("n_jobs=0 must be a positive number of threads, -1 (all) or None (all).")
    if n_jobs is None:
        return max_threads
    return max(1, min(n_jobs, max_threads) if n_jobs > 0 else max_threads + 1 + n_jobs)


def check_feature_bounds(feature_bounds, n_features):
    """Validate public feature bounds.

    Parameters
    ----------
    feature_bounds : array-like of shape (n_features, 2) or (2,)
        Rows ``(lower, upper)``; a single pair applies to every feature.
    n_features : int

    Returns
    -------
    bounds : ndarray of shape (n_features, 2), dtype=float64

    Raises
    ------
    ValueError
        Wrong shape, a non-finite bound, or ``lower >= upper``.
    """
    bounds = np.asarray(feature_bounds, dtype=np.float64)
    if bounds.shape == (2,):
        bounds = np.tile(bounds, (n_features, 1))
    if bounds.shape != (n_features, 2):
        raise ValueError(
            f"feature_bounds must have shape (n_features, 2) = ({n_features}, 2) or (2,); "
            f"got shape {bounds.shape}.")
    if not np.isfinite(bounds).all():
        raise ValueError("feature_bounds must be finite.")
    bad = np.flatnonzero(bounds[:, 0] >= bounds[:, 1])
    if bad.size:
        j = int(bad[0])
        raise ValueError(
            f"feature_bounds[{j}] = ({bounds[j, 0]}, {bounds[j, 1]}) must satisfy lower < upper.")
    bad = np.flatnonzero(unusable_widths(bounds))
    if bad.size:
        j = int(bad[0])
        raise ValueError(
            f"feature_bounds[{j}] = ({bounds[j, 0]}, {bounds[j, 1]}): upper - lower must be a "
            f"finite, normal positive number whose grid scale {_FINEST_GRID} / (upper - lower) "
            "is finite.")
    return bounds


#: Bins per unit of a bound's width on the finest grid any code builds (the quantile sketch's
#: 8 fine bins per bin at 255 bins, rounded up to a power of two).
_FINEST_GRID = 4096.0


def unusable_widths(bounds):
    """Rows of ``bounds`` whose width a grid cannot divide: not finite, not a normal float, or
    so small that ``_FINEST_GRID / width`` overflows.

    Returns
    -------
    mask : ndarray of shape (n_features,), dtype=bool
    """
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        width = bounds[:, 1] - bounds[:, 0]
        return ~(np.isfinite(width) & (width >= np.finfo(np.float64).tiny)
                 & np.isfinite(_FINEST_GRID / width))


def check_target_bounds(target_bounds):
    """Validate public target bounds ``(lower, upper)``; returns a tuple of two floats."""
    bounds = np.asarray(target_bounds, dtype=np.float64)
    if (bounds.shape != (2,) or not np.isfinite(bounds).all() or bounds[0] >= bounds[1]
            or unusable_widths(bounds[None, :])[0]):
        raise ValueError(
            f"target_bounds={target_bounds!r} must be a pair (lower, upper) of finite numbers "
            "with lower < upper and a finite, normal width.")
    return float(bounds[0]), float(bounds[1])


def check_classes(classes):
    """Validate a public list of class labels; returns them sorted (``classes_``)."""
    values = np.asarray(classes)
    unique = np.unique(values)
    if values.ndim != 1 or unique.size != values.size:
        raise ValueError(f"classes={classes!r} must be a 1-d list of distinct labels.")
    if unique.size < 2:
        raise ValueError(f"classes={classes!r} must hold at least 2 labels.")
    return unique


def _float_or_nan(value):
    try:
        return float(value)
    except Exception:  # noqa: BLE001 - whatever a cell's __float__ raises, it is not a number
        return math.nan


_float_cells = np.frompyfunc(_float_or_nan, 1, 1)


def float_cells(values):
    """``values`` as float64, cell by cell: anything that is not a number becomes NaN.

    The per-record treatment of a non-numeric value in a numeric column or target: missing,
    never an exception (whose message would quote the private value).

    Parameters
    ----------
    values : ndarray of any shape and dtype

    Returns
    -------
    out : ndarray of the same shape, dtype=float64
    """
    values = np.asarray(values)
    if values.dtype.kind in "biuf":
        return values.astype(np.float64)
    return _float_cells(values.astype(object)).astype(np.float64)


def numeric_cells(X, categorical):
    """``X`` with every column not in ``categorical`` read as numbers by :func:`float_cells`.

    Columns of a numeric dtype pass as they are. Silently: pandas (and ``np.array``) infer a
    column's dtype from its values, so a warning keyed to "this column is not numeric" would
    appear or not with one record (found by ``tests/test_replay.py``). Declare categorical
    columns in ``categorical_features`` with their public ``categories``.

    Parameters
    ----------
    X : array-like or pandas.DataFrame of shape (n_samples, n_features)
        After :func:`encode_categorical` (categorical columns already codes).
    categorical : collection of int
        Indices of the categorical columns.

    Returns
    -------
    X : ndarray of dtype float64, or the DataFrame with those columns converted
    """
    if hasattr(X, "iloc"):
        from pandas.api.types import is_numeric_dtype

        converted = [j for j, t in enumerate(X.dtypes)
                     if j not in categorical and not is_numeric_dtype(t)]
        if converted:
            X = X.copy()
            for j in converted:
                X.isetitem(j, float_cells(X.iloc[:, j].to_numpy(dtype=object)))
        return X
    if hasattr(X, "tocsr") or not hasattr(X, "__len__"):
        return X  # sparse input or a scalar: validate_data refuses it with the usual message
    X = np.asarray(X)
    return X if X.dtype.kind in "biuf" else float_cells(X)


def label_codes(y, classes):
    """Position of each label in the public ``classes``, -1 for a label outside them.

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
    classes : ndarray of shape (n_classes,)
        Sorted public labels.

    Returns
    -------
    codes : ndarray of shape (n_samples,), dtype=int64
        A record with code -1 (NaN, or any label not in ``classes``) is left out of training:
        a per-record decision.
    """
    y = np.asarray(y)
    if y.dtype.kind in "biuf" and classes.dtype.kind in "biuf":
        position = np.minimum(np.searchsorted(classes, y), classes.size - 1)
        return np.where(classes[position] == y, position, -1).astype(np.int64)
    index = {}
    for k, c in enumerate(classes.tolist()):
        index.setdefault(c, k)

    def code(v):
        try:
            return index.get(v, -1)
        except TypeError:  # an unhashable label is not one of the classes
            return -1

    return np.fromiter((code(v) for v in y.tolist()), dtype=np.int64, count=y.shape[0])


def data_dependent(name, value):
    """Warn that a public input was read from the private data instead."""
    warnings.warn(
        f"{name} was not given and is computed from the training data; the model is not "
        f"differentially private with respect to it. Pass {name} from public knowledge.",
        # At the user's call of fit: fit's wrapper, fit, fit_inputs, the resolver, here.
        PrivacyLeakWarning, stacklevel=6)
    return value


def warn_reproducible_noise(random_state):
    """Warn that ``random_state`` makes the noise predictable: anything but None or a
    :class:`~dpboost._mechanisms.SecureNoise` on the operating system's randomness (a seed, a
    Generator, a :class:`~dpboost._mechanisms.NumpyNoise`, a ``SecureNoise`` fed by another
    word stream, a noise source of the user's: its words may be a seed's)."""
    if random_state is not None and not getattr(random_state, "unpredictable", False):
        warnings.warn(
            "random_state is set: the noise is reproducible by anyone who knows the seed, so the "
            "model is not differentially private as released. Use random_state=None for "
            "releases; filter ReproducibleNoiseWarning to opt in for experiments.",
            ReproducibleNoiseWarning, stacklevel=5)


def warn_diagnostics():
    """Warn that ``diagnostics=True`` stores exact statistics of the training data."""
    warnings.warn("diagnostics=True stores filtered_fraction_, an exact statistic of the training "
                  "data that is not differentially private.", PrivacyLeakWarning, stacklevel=5)


def _schema_dtype(arrow_type):
    """The pandas dtype of an Arrow column, from its type alone (``types_mapper`` of
    ``pyarrow.Table.to_pandas``): nullable integers, floats, booleans and strings, so that a
    missing value never changes a column's dtype (numpy's bool or int64 would become object or
    float64 with one null, and "from_dtype" would then read the data); dictionaries (polars
    Categorical and Enum) become pandas categories by pyarrow's default."""
    import pandas as pd
    import pyarrow as pa

    if pa.types.is_integer(arrow_type):
        return pd.Int64Dtype()
    if pa.types.is_floating(arrow_type):
        return pd.Float64Dtype()
    if pa.types.is_boolean(arrow_type):
        return pd.BooleanDtype()
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type) or (
            pa.types.is_string_view(arrow_type)):
        return pd.StringDtype()
    return None


def pandas_frame(X, schema_only=False):
    """A dataframe of another library (polars, pyarrow, anything narwhals reads eagerly) as a
    pandas DataFrame with its column names and dtypes from its schema (:func:`_schema_dtype`);
    anything else (pandas, arrays, lists) as it is.

    The optional path of ``pip install dpboost[frames]`` (narwhals, pyarrow, pandas): without
    narwhals every input is returned as it is.

    Parameters
    ----------
    X : object
    schema_only : bool, default=False
        Convert no row (the planner reads the schema only).

    Returns
    -------
    X : pandas.DataFrame or X
    """
    try:
        import narwhals as nw
        from narwhals.dependencies import is_dask_dataframe, is_into_dataframe, is_pandas_dataframe
    except ImportError:
        return X
    if not is_into_dataframe(X) or is_pandas_dataframe(X) or is_dask_dataframe(X):
        return X
    try:
        frame = nw.from_native(X, eager_only=True)
    except TypeError:  # a lazy frame: not data fit can read
        return X
    table = (frame.head(0) if schema_only else frame).to_arrow()
    return table.to_pandas(types_mapper=_schema_dtype)


def _columns(X):
    """Column names of a DataFrame, else positions: schema only."""
    return list(getattr(X, "columns", range(np.shape(X)[1])))


def _column_index(columns, parameter="categorical_features"):
    """``index_of(key)``: the position of a column given by name or index in ``parameter``."""
    def index_of(key):
        if isinstance(key, str):
            if key not in columns:
                raise ValueError(f"{parameter} names {key!r}, which is not a column of X.")
            return columns.index(key)
        if not 0 <= int(key) < len(columns):
            raise ValueError(f"{parameter} index {key} is outside [0, {len(columns)}).")
        return int(key)

    return index_of


def categorical_columns(X, categorical_features, categories=None, feature_bounds=None):
    """Indices of the categorical columns, from the schema only (column names, dtypes, shape).

    Parameters
    ----------
    X : array-like or pandas.DataFrame of shape (n_samples, n_features)
    categorical_features : None, "from_dtype", array-like of int, str or bool
        ``"from_dtype"``: the columns of a ``category``, object or string dtype (a polars
        ``String``, ``Categorical`` or ``Enum`` after :func:`pandas_frame`) but those a
        ``feature_bounds`` dict names (numeric whatever their dtype), and the columns
        ``categories`` names (declared categorical, bounds or not).
    categories : dict or None, default=None
    feature_bounds : dict, array-like, str or None, default=None
        The estimator's parameter; only a dict's keys are read.

    Returns
    -------
    indices : list of int

    Raises
    ------
    ValueError
        An unknown column name or index, or a mask of the wrong length.
    """
    if categorical_features is None:
        return []
    if isinstance(categorical_features, str) and categorical_features == "from_dtype":
        dtypes = getattr(X, "dtypes", None)
        # Columns are looked up only when categories or feature_bounds name some: an X of the
        # wrong shape reaches validate_data and its usual message.
        named = ({_column_index(_columns(X), "categories")(k) for k in categories}
                 if isinstance(categories, dict) else set())
        # A bounded column is numeric whatever its dtype: one text cell (say 'unknown' in an
        # age column) must not turn a column categorical, nor its values into a list. A column
        # that categories names is declared categorical, as with explicit categorical_features.
        bounded = ({_column_index(_columns(X), "feature_bounds")(k) for k in feature_bounds}
                   if isinstance(feature_bounds, dict) else set())
        return sorted(named | {j for j, t in enumerate([] if dtypes is None else dtypes)
                               if (str(t) in ("category", "object") or str(t).startswith("str"))
                               and j not in bounded})
    columns = _columns(X)
    keys = np.asarray(categorical_features)
    if keys.dtype == bool:
        if keys.shape != (len(columns),):
            raise ValueError(f"categorical_features mask has shape {keys.shape}; X has "
                             f"{len(columns)} columns.")
        return [int(j) for j in np.flatnonzero(keys)]
    return [_column_index(columns)(k) for k in keys.tolist()]


def resolve_categorical(X, categorical_features, categories, feature_bounds=None):
    """Indices of the categorical columns and their category lists.

    Parameters
    ----------
    X : array-like or pandas.DataFrame of shape (n_samples, n_features)
    categorical_features : None, "from_dtype", array-like of int, str or bool
        As scikit-learn's HistGradientBoosting: indices, column names, a boolean mask, or
        ``"from_dtype"`` (the DataFrame's ``category``, object and string columns, and those
        ``categories`` names; :func:`categorical_columns`).
    categories : None, "private" or dict
        Public category list per column (key: column name or index), or ``"private"`` for a
        column (or, as the whole parameter, for every categorical column) whose list the fit
        releases. A ``category`` column without an entry takes its dtype's categories, but is
        reported in ``from_data``: pandas reads them off the values unless they were declared,
        which the code cannot tell.

    Returns
    -------
    lists : dict of int -> ndarray of shape (n_categories,), dtype=object
        Column index -> category list, in the order that defines the codes. For a private
        column, the values it holds (:func:`observed_values`): PRIVATE, for the fit's release
        only.
    from_data : list of str
        Columns whose list had to be read from the data (the caller warns).

    Raises
    ------
    ValueError
        An unknown column name or index, a mask of the wrong length, or a column in
        ``categories`` that ``categorical_features`` does not declare.
    """
    indices = categorical_columns(X, categorical_features, categories, feature_bounds)
    if not indices and not categories:
        return {}, []
    columns = _columns(X)
    index_of = _column_index(columns, "categories")
    private = private_category_columns(X, categorical_features, categories, feature_bounds)
    given = ({} if isinstance(categories, str) else
             {index_of(k): v for k, v in (categories or {}).items()})
    undeclared = sorted(set(given) - set(indices))
    if undeclared:
        raise ValueError(f"categories names column {columns[undeclared[0]]!r}, which "
                         f"categorical_features={categorical_features!r} does not declare "
                         "categorical: add it to categorical_features (or use 'from_dtype', "
                         "under which categories= declares its columns).")
    lists, from_data = {}, []
    for j in indices:
        column = X.iloc[:, j] if hasattr(X, "iloc") else np.asarray(X, dtype=object)[:, j]
        if j in private:
            # PRIVATE: the values seen, read only by the fit's release of its list.
            values = observed_values(column, typed=True)
        elif j in given:
            values = list(given[j])
        elif str(getattr(column, "dtype", "")) == "category":
            # pandas builds a category dtype's list from the values unless the user declared
            # it, and the code cannot tell which: only ``categories`` counts as public.
            values = list(column.cat.categories)
            from_data.append(str(columns[j]))
        else:
            values = observed_values(column, typed=False)
            from_data.append(str(columns[j]))
        lists[j] = np.array(values, dtype=object)
    return lists, from_data


def private_category_columns(X, categorical_features, categories, feature_bounds=None):
    """Indices of the categorical columns whose category list the fit releases privately:
    every categorical column with ``categories="private"``, else those whose entry in the
    ``categories`` dict is ``"private"``. From the schema and the parameters only.

    Returns
    -------
    columns : list of int
    """
    if categorical_features is None or categories is None:
        return []
    if isinstance(categories, str):
        return categorical_columns(X, categorical_features, feature_bounds=feature_bounds)
    index_of = _column_index(_columns(X))
    return sorted(index_of(k) for k, v in categories.items()
                  if isinstance(v, str) and v == "private")


def released_category_columns(categories, lists, columns):
    """The columns of ``lists`` whose category list a fit released privately (``categories``
    is ``"private"``, or their entry in the ``categories`` dict is): their cells are coded by
    :func:`category_key`. From the parameters and the column names only, so ``predict`` and a
    ``warm_start`` fit find the columns of the first fit.

    Parameters
    ----------
    categories : None, "private" or dict
        The estimator's parameter.
    lists : dict of int -> ndarray
        The category lists, by column index.
    columns : list
        Column names (or positions) of X.

    Returns
    -------
    columns : list of int
    """
    if isinstance(categories, str):
        return sorted(lists)
    index_of = _column_index(list(columns), "categories")
    return sorted(index_of(k) for k, v in (categories or {}).items()
                  if isinstance(v, str) and v == "private")


def _is_value(cell):
    """Whether a cell is a hashable, non-missing value (NaN, None and pandas' NA are missing;
    a cell that cannot be compared or hashed is in no list). Reads the cell alone."""
    try:
        hash(cell)
        str(cell)  # a released list is ordered by text (category_order): it must have one
        return bool(cell == cell) and cell is not None
    except Exception:  # noqa: BLE001 - whatever a cell raises, it is no category
        return False


def observed_values(column, typed):
    """The distinct values a categorical column holds (:func:`_is_value`), sorted by their text:
    the input of a private category list's release (``typed``), or a list read from the data.

    Parameters
    ----------
    column : iterable
    typed : bool
        Tell values apart by :func:`category_key` and return them as :func:`category_value`
        (a private list: what a release may show is a function of the key alone); otherwise
        by equality, as a public list matches cells.

    Returns
    -------
    values : list
    """
    if typed:
        distinct = {category_key(v): category_value(v) for v in column if _is_value(v)}
    else:
        distinct = {}
        for v in column:
            if _is_value(v):
                distinct.setdefault(v, v)
    return sorted(distinct.values(), key=lambda v: (str(v), type(v).__qualname__, repr(v)))


def encode_categorical(X, lists, typed=()):
    """``X`` as float64 with each categorical column replaced by the position of its value in the
    public list; values not in the list and missing values become NaN (the missing-value bin).

    Parameters
    ----------
    X : array-like or pandas.DataFrame of shape (n_samples, n_features)
    lists : dict of int -> ndarray, dtype=object
        From :func:`resolve_categorical`.
    typed : collection of int, default=()
        The private columns (:func:`private_category_columns`): their cells match by
        :func:`category_key`, at ``fit`` (the observed values), ``predict`` and ``warm_start``
        (the released list) alike; the others by equality, as a public list.

    Returns
    -------
    X_encoded : same container as X (a DataFrame stays a DataFrame, with its column names)
    """
    if not lists:
        return X
    frame = hasattr(X, "iloc")
    X = X.copy() if frame else np.array(X, dtype=object)
    for j, values in lists.items():
        # A missing cell (None, pandas' NA) has a text too: it must not name a category.
        key = ((lambda v: category_key(v) if _is_value(v) else None) if j in typed
               else (lambda v: v))
        lookup = {key(v): float(i) for i, v in enumerate(values)}

        def code(v, key=key, lookup=lookup):
            try:
                return lookup.get(key(v), np.nan)
            except TypeError:  # an unhashable cell is in no list: missing, like any unknown
                return np.nan

        cells = X.iloc[:, j].to_numpy(dtype=object) if frame else X[:, j]
        codes = np.fromiter((code(v) for v in cells), dtype=np.float64, count=len(cells))
        if frame:
            X.isetitem(j, codes)
        else:
            X[:, j] = codes
    return X


def cells_as_numbers(X, categories, typed=()):
    """``X`` (a polars or pyarrow table as a pandas one, :func:`pandas_frame`) with categorical
    cells as their codes in the public ``categories`` (``typed``: see
    :func:`encode_categorical`) and every other cell as a number or missing: the same per-cell
    treatment for ``fit`` and ``predict``."""
    X = pandas_frame(X)
    return numeric_cells(encode_categorical(X, categories, typed), categories)


@dataclass(frozen=True)
class PublicInputs:
    """What a fit takes as public: the inputs the guarantee is stated for.

    Attributes
    ----------
    feature_bounds : ndarray of shape (n_features, 2), dtype=float64
        Per feature ``(lower, upper)``; categorical rows ``(-0.5, n_categories - 0.5)``.
    categories : dict of int -> ndarray of shape (n_categories,), dtype=object
        Category list of each categorical column, in code order.
    numeric : ndarray of shape (n_numeric,), dtype=int64
        Indices of the numeric features.
    target : dict
        ``{"classes_": ndarray}`` (classifier) or ``{"target_bounds_": (lower, upper)}``.
    data_derived : tuple of str
        The inputs read from the data instead (each announced by a PrivacyLeakWarning).
    monotonic_cst : ndarray of shape (n_features,), dtype=int8, or None
        -1 / 0 / +1 per feature (:func:`resolve_monotonic_cst`); None: no constraint.
    observed_categories : dict of int -> ndarray of dtype=object, default={}
        PRIVATE, not a public input: the values each column of ``categories="private"`` holds,
        in the order of the codes of ``X``; read only by the fit's release of the lists
        (``_candidates.private_categories``), which replaces those columns' empty entry in
        ``categories`` and their placeholder rows ``(-0.5, 0.5)`` in ``feature_bounds``.
    """

    feature_bounds: np.ndarray
    categories: dict
    numeric: np.ndarray
    target: dict
    data_derived: tuple
    monotonic_cst: object = None
    observed_categories: dict = field(default_factory=dict)


def public_categories(X, categorical_features, categories, feature_bounds=None):
    """The category lists of a fit (:func:`resolve_categorical`), warning for any list read
    from the data."""
    lists, from_data = resolve_categorical(X, categorical_features, categories, feature_bounds)
    if from_data:
        data_dependent("categories (of " + ", ".join(from_data) + ")", None)
    return lists, tuple(f"categories[{c}]" for c in from_data)


def encode_classes(y, classes):
    """Which records train, their labels as -1 / +1 per output, and the classes.

    Two classes: one output, +1 for ``classes[1]``. K > 2 classes: one-vs-rest (or the softmax's
    one-hot), output k is +1 for ``classes[k]``. With public ``classes`` a record whose label is
    not one of them (NaN included) is left out.

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
    classes : array-like or None
        The public labels; None reads them from ``y`` with a PrivacyLeakWarning.

    Returns
    -------
    keep : ndarray of shape (n_samples,), dtype=bool
    y_scaled : ndarray of shape (n_kept, n_outputs), dtype=float64
    target : dict
        ``{"classes_": sorted classes}``.
    derived : tuple of str

    Raises
    ------
    ValueError
        Invalid ``classes``; without ``classes``, a ``y`` of one class (data-derived, announced).
    """
    derived = ()
    if classes is None:
        check_classification_targets(y)
        classes = np.unique(y)
        if classes.size < 2:
            raise ValueError("y has only one class; DPGBClassifier needs two classes "
                             "(pass the public classes=[...] to train anyway).")
        classes = data_dependent("classes", classes)
        derived = ("classes",)
    else:
        classes = check_classes(classes)
    code = label_codes(y, classes)
    keep = code >= 0
    positive = np.arange(1, 2) if classes.size == 2 else np.arange(classes.size)
    y_scaled = np.where(code[keep, None] == positive[None, :], 1.0, -1.0)
    return keep, y_scaled, {"classes_": classes}, derived


def encode_targets(y, target_bounds):
    """Which records train, their targets clipped and scaled into [-1, 1], and the bounds.

    A target that is not a number (NaN, None, a string) leaves its record out; +-inf and values
    outside ``target_bounds`` are clipped to it.

    Returns
    -------
    keep : ndarray of shape (n_samples,), dtype=bool
    y_scaled : ndarray of shape (n_kept, 1), dtype=float64
        With ``target_bounds="private"`` the targets unscaled (``+-inf`` included): the fit
        releases the bounds, then scales.
    target : dict
        ``{"target_bounds_": (lower, upper)}`` (``"private"`` until the fit releases them).
    derived : tuple of str
    """
    y = float_cells(y)
    keep = ~np.isnan(y)
    y = y[keep]
    derived = ()
    if isinstance(target_bounds, str):  # "private": released by the fit, which scales y then
        return keep, y[:, None], {"target_bounds_": "private"}, derived
    if target_bounds is None:
        finite = y[np.isfinite(y)]
        lower, upper = ((float(finite.min()), float(finite.max())) if finite.size
                        else (0.0, 1.0))
        # A constant target still needs a width that survives rounding (as a constant feature).
        upper = upper if upper > lower else lower + max(1.0, 1e-6 * abs(lower))
        if unusable_widths(np.array([[lower, upper]]))[0]:
            # Read off the data: the message must not quote them.
            raise ValueError("target_bounds read from the data do not span a finite, normal "
                             "width; pass public target_bounds.")
        bounds = data_dependent("target_bounds", (lower, upper))
        derived = ("target_bounds",)
    else:
        bounds = check_target_bounds(target_bounds)
    return keep, scale_target(y, bounds)[:, None], {"target_bounds_": bounds}, derived


def resolve_feature_bounds(X, feature_bounds, categories, names=None):
    """The bounds of a fit: ``feature_bounds`` checked (an array, or a dict by column name or
    index), or read from ``X`` with a PrivacyLeakWarning (if any feature is numeric), or NaN for
    the numeric rows with ``"private"`` (the fit releases them); categorical rows set from the
    lists.

    Parameters
    ----------
    names : ndarray of str or None, default=None
        The columns' names (``feature_names_in_``), for a dict's keys.

    Returns
    -------
    bounds : ndarray of shape (n_features, 2), dtype=float64
    derived : tuple of str

    Raises
    ------
    ValueError
        Bounds of the wrong shape or with ``lower >= upper``; an empty category list; bounds
        read from the data that do not span a finite, normal width (the message names the
        column, never a value).
    """
    derived = ()
    for j, values in categories.items():
        if values.size == 0:
            raise ValueError(f"categories of column {j} is empty: a categorical feature needs "
                             "at least one public category.")
    if isinstance(feature_bounds, str):  # "private": released by the fit; NaN until then
        bounds = np.full((X.shape[1], 2), np.nan)
        for j, values in categories.items():
            bounds[j] = (-0.5, values.size - 0.5)
        return bounds, derived
    if feature_bounds is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # an all-missing column
            finite = np.where(np.isfinite(X), X, np.nan)
            lower, upper = np.nanmin(finite, axis=0), np.nanmax(finite, axis=0)
        # A constant column still needs a non-empty interval (and an all-missing one, any).
        lower = np.nan_to_num(lower)
        upper = np.where(upper > lower, upper, lower + np.maximum(1.0, 1e-6 * np.abs(lower)))
        bounds = np.column_stack([lower, upper])
        if len(categories) < X.shape[1]:
            bounds = data_dependent("feature_bounds", bounds)
            derived = ("feature_bounds",)
        wide = np.flatnonzero(unusable_widths(bounds))
        if wide.size:
            # Read off the data: the message must not quote them.
            raise ValueError(f"feature_bounds read from the data for column {wide[0]} do "
                             "not span a finite, normal positive width; pass public "
                             "feature_bounds.")
    elif isinstance(feature_bounds, dict):
        bounds = _bounds_by_column(feature_bounds, X.shape[1], categories, names)
    else:
        bounds = check_feature_bounds(feature_bounds, X.shape[1]).copy()
    for j, values in categories.items():
        # One code per category; the grid puts each in its own bin when n <= max_bins.
        bounds[j] = (-0.5, values.size - 0.5)
    return check_feature_bounds(bounds, X.shape[1]), derived


def resolve_monotonic_cst(monotonic_cst, n_features, categories, n_outputs, names=None):
    """The monotonic constraints of a fit (scikit-learn's encoding): an array of -1 / 0 / +1
    per feature, or a dict by column name or index (others 0).

    Returns
    -------
    constraints : ndarray of shape (n_features,), dtype=int8, or None
        None when no feature is constrained.

    Raises
    ------
    ValueError
        A wrong length, a value other than -1, 0 or 1, an unknown key, a constraint on a
        categorical feature (its codes have no order), or constraints with several outputs
        (K > 2 classes), as scikit-learn's HistGradientBoosting.
    """
    if monotonic_cst is None:
        return None
    if isinstance(monotonic_cst, dict):
        constraints = np.zeros(n_features, dtype=np.int8)
        for key, value in monotonic_cst.items():
            j = _dict_column(key, n_features, names, "monotonic_cst")
            if value not in (-1, 0, 1):
                raise ValueError(f"monotonic_cst[{key!r}] = {value!r}; expected -1, 0 or 1.")
            constraints[j] = value
    else:
        values = np.asarray(monotonic_cst)
        if values.shape != (n_features,):
            raise ValueError(f"monotonic_cst has shape {values.shape}; expected ({n_features},) "
                             "(one of -1, 0, 1 per feature).")
        if not np.isin(values, (-1, 0, 1)).all():
            raise ValueError("monotonic_cst must hold -1, 0 or 1 per feature.")
        constraints = values.astype(np.int8)
    constrained = [j for j in categories if constraints[j] != 0]
    if constrained:
        raise ValueError(f"monotonic_cst constrains categorical column {constrained[0]}: "
                         "category codes have no order.")
    if not constraints.any():
        return None
    if n_outputs > 1:
        raise ValueError("monotonic_cst is not supported with more than two classes (one "
                         "model per class), as in scikit-learn.")
    return constraints


def _dict_column(key, n_features, names, parameter):
    """The column a key of the dict parameter ``parameter`` names: a column name of ``names``
    (``feature_names_in_``) or an index; ValueError naming the parameter and the key."""
    if isinstance(key, str):
        index = {} if names is None else {str(name): j for j, name in enumerate(names)}
        if key not in index:
            raise ValueError(f"{parameter} names {key!r}, which is not a column of X.")
        return index[key]
    if isinstance(key, (int, np.integer)) and 0 <= key < n_features:
        return int(key)
    raise ValueError(f"{parameter} key {key!r} is neither a column name nor an index in "
                     f"[0, {n_features}).")


def _bounds_by_column(feature_bounds, n_features, categories, names):
    """Rows of a ``feature_bounds`` dict (key: column name or index); categorical columns need
    no entry. Raises ValueError naming the column whose entry is missing, unknown or None."""
    bounds = np.full((n_features, 2), np.nan)
    for key, pair in feature_bounds.items():
        j = _dict_column(key, n_features, names, "feature_bounds")
        if pair is None or np.shape(pair) != (2,):
            raise ValueError(f"feature_bounds[{key!r}] = {pair!r} must be a pair (lower, "
                             "upper).")
        bounds[j] = pair
    for j in range(n_features):
        if j not in categories and np.isnan(bounds[j]).any():
            column = repr(str(names[j])) if names is not None else str(j)
            raise ValueError(f"feature_bounds has no (lower, upper) for column {column}: every "
                             "numeric column needs public bounds (categorical ones take their "
                             "categories' codes).")
        if j in categories:
            bounds[j] = (0.0, 1.0)  # replaced by the codes' bounds
    return bounds


def resolve_min_child_weight(min_child_weight, leaf_noise, epsilon, hessian_bound,
                             weight_bound=None):
    """``min_child_weight`` with ``"auto"`` resolved for this fit's epsilon.

    ``"auto"``: the released weight of about 200 / epsilon records, i.e. ``200 h* / epsilon``
    with Gaussian leaves (their weight is a Hessian sum) and ``200 / epsilon`` with ``"average"``
    leaves (a count); 0 with Laplace leaves, which release no weight, and without noise. Tuned
    for 100 trees in ``bench_blocks_grid.py --candidates``. With sample weights (``weight_bound``
    W, :func:`resolve_weight_bound`) times W: the weight's noise scales with W.
    """
    if min_child_weight != "auto":
        return float(min_child_weight)
    if leaf_noise == "laplace" or not math.isfinite(epsilon):
        return 0.0
    per_record = hessian_bound if leaf_noise == "gaussian" else 1.0
    auto = 200.0 * per_record / float(epsilon)
    return auto if weight_bound is None else auto * weight_bound


def check_class_weight(class_weight, classes):
    """Validate a public ``class_weight``: a dict ``{label: weight}`` of finite weights
    ``>= 0`` (a label it leaves out weighs 1), whose labels are among the public ``classes``
    (checked only when ``classes`` is given: a check against classes read from the data would
    raise or not with the data).

    Returns
    -------
    class_weight : dict or None
        ``{label: float}``.

    Raises
    ------
    ValueError
        ``"balanced"`` (it reads the class frequencies from the training data, which are not
        public), a weight that is negative or not finite, a label outside ``classes``.
    """
    if class_weight is None:
        return None
    if isinstance(class_weight, str):
        raise ValueError(f"class_weight={class_weight!r} reads the class frequencies from the "
                         "training data, which are not public; pass a dict {label: weight} of "
                         "public weights (e.g. from published class shares).")
    weights = {}
    for label, weight in class_weight.items():
        try:
            value = float(weight)
        except (TypeError, ValueError):
            value = math.nan
        if not (math.isfinite(value) and value >= 0):
            raise ValueError(f"class_weight[{label!r}] = {weight!r} must be a finite number "
                             ">= 0.")
        weights[label] = value
    if classes is not None:
        known = set(check_classes(classes).tolist())
        for label in weights:
            if label not in known:
                raise ValueError(f"class_weight names {label!r}, which is not one of "
                                 f"classes={list(known)!r}.")
    return weights


def resolve_weight_bound(sample_weight, sample_weight_bound, class_weight=None, classes=None):
    """W, the public bound on one record's weight, or None for an unweighted fit.

    A record's weight is its ``sample_weight`` clipped into ``[0, sample_weight_bound]``, times
    its class's ``class_weight`` (1 without them): W is ``sample_weight_bound`` (1 without
    ``sample_weight``) times the largest class weight (over the public ``classes``; without
    them, the largest given and 1). Public: the parameters and whether ``sample_weight`` was
    passed, never its values.

    Returns
    -------
    weight_bound : float or None

    Raises
    ------
    ValueError
        ``sample_weight`` without ``sample_weight_bound``; ``class_weight`` as
        :func:`check_class_weight`; every weight 0.
    """
    if sample_weight is None and class_weight is None:
        return None
    if sample_weight is not None and sample_weight_bound is None:
        raise ValueError("sample_weight needs a public sample_weight_bound: every sensitivity "
                         "scales with the largest weight a record may carry, and weights are "
                         "clipped into [0, sample_weight_bound] (docs/privacy.md, Sample "
                         "weights).")
    bound = 1.0 if sample_weight is None else float(sample_weight_bound)
    weights = check_class_weight(class_weight, classes)
    if weights is not None:
        bound *= (max([1.0, *weights.values()]) if classes is None
                  else max(weights.get(c, 1.0) for c in check_classes(classes).tolist()))
    if not (math.isfinite(bound) and bound > 0):
        raise ValueError(f"the weight bound sample_weight_bound x max(class_weight) = {bound} "
                         "must be finite and > 0.")
    return bound


def record_weights(sample_weight, sample_weight_bound, class_weight, class_codes, classes,
                   weight_bound):
    """Each record's weight, clipped per record into ``[0, W]`` (docs/privacy.md, Sample
    weights).

    ``sample_weight`` is read cell by cell (:func:`float_cells`): NaN and anything that is not
    a number weigh 0 (the record counts nowhere), negative weights 0, weights above
    ``sample_weight_bound`` (``+inf`` included) the bound; never an error. Then times the
    record's ``class_weight``, and the product as float32, at most the largest float32 ``<=
    W``.

    Parameters
    ----------
    sample_weight : ndarray of shape (n_kept,) or None
        The kept records' weights (None: 1 each).
    sample_weight_bound : float or None
    class_weight : dict or None
    class_codes : ndarray of shape (n_kept,), dtype=int64, or None
        Each kept record's position in ``classes`` (classifiers).
    classes : ndarray or None
    weight_bound : float
        W (:func:`resolve_weight_bound`).

    Returns
    -------
    weights : ndarray of shape (n_kept,), dtype=float32
    """
    n = class_codes.size if sample_weight is None else sample_weight.size
    weights = np.ones(n)
    if sample_weight is not None:
        weights = np.nan_to_num(np.clip(float_cells(sample_weight), 0.0, sample_weight_bound),
                                nan=0.0)
    if class_weight is not None:
        factor = np.array([class_weight.get(c, 1.0) for c in classes.tolist()])
        weights = weights * factor[class_codes]
    return np.clip(weights.astype(np.float32), 0.0, float32_at_most(weight_bound))


def check_same_length(X, y):
    """Raise ValueError unless ``X`` and ``y`` hold the same number of records; the message
    quotes neither count (the number of records is not public), unlike scikit-learn's
    ``check_consistent_length``."""
    if len(X) != len(y):
        raise ValueError("X and y must have the same number of records (one row of X per "
                         "label); the lengths differ.")


def check_sample_weight(sample_weight, n_samples):
    """``sample_weight`` as a 1-d array of ``n_samples`` cells (any dtype: :func:`record_weights`
    reads them), or None. Raises ValueError for another shape: a fact of the schema."""
    if sample_weight is None:
        return None
    values = np.asarray(sample_weight)
    if values.ndim == 2 and values.shape[1] == 1:
        values = values[:, 0]
    if values.shape != (n_samples,):
        # Neither length is quoted: the number of records is not public.
        raise ValueError("sample_weight must be 1-d with one weight per row of X.")
    return values


#: The ``"auto"`` learning rate and subsample by epsilon (DPGBClassifier's preset, issue 16):
#: below the threshold, a small Poisson sample per tree (amplification) and slow learning; from
#: it on, larger samples and steps. Chosen on ``adult.test`` (benchmarks/README.md, "Frontier"),
#: never on the folds the frontier is scored on.
AUTO_EPSILON_THRESHOLD = 0.5
AUTO_SCHEDULE = {"low": {"learning_rate": 0.1, "subsample": 0.1},
                 "high": {"learning_rate": 0.2, "subsample": 0.3}}


def resolve_schedule(learning_rate, subsample, epsilon):
    """``learning_rate`` and ``subsample`` with ``"auto"`` resolved from the fit's epsilon (a
    public input), by :data:`AUTO_SCHEDULE`; without noise (``epsilon=inf``) ``"auto"`` is the
    high-epsilon value of the learning rate and a subsample of 1.

    Returns
    -------
    learning_rate, subsample : float
    """
    regime = AUTO_SCHEDULE["low" if epsilon < AUTO_EPSILON_THRESHOLD else "high"]
    if learning_rate == "auto":
        learning_rate = regime["learning_rate"]
    if subsample == "auto":
        subsample = regime["subsample"] if math.isfinite(epsilon) else 1.0
    return float(learning_rate), float(subsample)


#: ``n_estimators="auto"`` of the regressor (issue 16): ``k(epsilon)`` trees per feature,
#: ``k = 25 min(1, epsilon / 2) ** 0.4`` (7.5 at epsilon 0.1, 18.9 at 1, 25 from 2 on), at least
#: :data:`AUTO_MIN_TREES`. With one feature per tree, an additive model needs its shrinkage per
#: feature, ``learning_rate * n_estimators / n_features``, to grow with the features and with
#: epsilon (more trees split the same budget into noisier leaves). Chosen on the inner tuning
#: splits of the shared regression sets (``bench_regression_sweep.py``), never on test folds.
AUTO_TREES_PER_FEATURE, AUTO_TREES_EPSILON, AUTO_MIN_TREES = 25.0, 2.0, 200
#: ``n_estimators="auto"`` of the classifier (issue 16): :data:`AUTO_FEW_TREES` trees below
#: epsilon :data:`AUTO_FEW_TREES_BELOW`, else :data:`AUTO_MIN_TREES` (fewer, less noisy trees
#: where the budget is smallest: +0.03 ROC AUC at epsilon 0.01 and 0.02 on ``adult.test``,
#: ``bench_small_epsilon.py``; equal within noise at 0.03 and 0.05).
AUTO_FEW_TREES, AUTO_FEW_TREES_BELOW = 50, 0.03


def resolve_n_estimators(n_estimators, epsilon, n_features, regression):
    """``n_estimators`` with ``"auto"`` resolved from public inputs: for a regressor
    ``max(200, round(25 min(1, epsilon / 2) ** 0.4 n_features))`` (:data:`AUTO_TREES_PER_FEATURE`;
    without noise, ``epsilon=inf``, 25 per feature), for a classifier 50 below epsilon 0.03 and
    200 from it on (:data:`AUTO_FEW_TREES`).

    Parameters
    ----------
    n_estimators : int or "auto"
    epsilon : float
    n_features : int or None
        Columns of ``X`` (its schema); None when ``X`` has no two-dimensional shape (its
        validation then refuses it before anything is planned): 200.
    regression : bool

    Returns
    -------
    n_estimators : int
    """
    if n_estimators != "auto":
        return int(n_estimators)
    if not regression:
        return AUTO_FEW_TREES if epsilon < AUTO_FEW_TREES_BELOW else AUTO_MIN_TREES
    if n_features is None:
        return AUTO_MIN_TREES
    share = min(1.0, epsilon / AUTO_TREES_EPSILON) ** 0.4
    return max(AUTO_MIN_TREES, round(AUTO_TREES_PER_FEATURE * share * n_features))


def schema_width(X):
    """The number of columns of ``X`` from its shape (arrays, DataFrames, Dask's empty
    metadata, lists of rows), or None if it has no two dimensions: a fact of the schema."""
    shape = getattr(X, "shape", None)
    if shape is None:
        try:
            shape = np.asarray(X, dtype=object).shape
        except ValueError:  # ragged rows: refused by validation
            return None
    return int(shape[1]) if len(shape) == 2 else None


def resolve_params(params, hessian_bound, sample_weight=None, n_features=None):
    """An estimator's parameters (``get_params(deep=False)``) with every ``"auto"`` resolved from
    the public inputs (:func:`resolve_schedule`, :func:`resolve_min_child_weight` with the loss's
    Hessian bound and the weight bound): what the plan and the boosting loop read.

    Parameters
    ----------
    params : dict
    hessian_bound : float
    sample_weight : array-like or None, default=None
        Only whether it is given is read (:func:`resolve_weight_bound`).
    n_features : int or None, default=None
        Columns of ``X`` (:func:`schema_width`), for ``n_estimators="auto"``.

    Returns
    -------
    params : dict
        A new dict, with ``weight_bound``: W with sample or class weights, else None;
        ``params`` is not changed.
    """
    epsilon = float(params["epsilon"])
    learning_rate, subsample = resolve_schedule(params["learning_rate"], params["subsample"],
                                                epsilon)
    weight_bound = resolve_weight_bound(sample_weight, params["sample_weight_bound"],
                                        params.get("class_weight"), params.get("classes"))
    min_child_weight = resolve_min_child_weight(params["min_child_weight"],
                                                params["leaf_noise"], params["epsilon"],
                                                hessian_bound, weight_bound)
    return dict(params, min_child_weight=min_child_weight, learning_rate=learning_rate,
                subsample=subsample, weight_bound=weight_bound,
                n_estimators=resolve_n_estimators(params["n_estimators"], epsilon, n_features,
                                                  "target_bounds" in params))


def fit_inputs(estimator, X, y, sample_weight=None, weight_bound=None, previous=None):
    """Check everything ``fit`` takes before any noise is drawn: the parameters' combinations,
    the public inputs, and each record's place in the data domain.

    Parameters
    ----------
    estimator : DPGBClassifier or DPGBRegressor
        Its parameters; ``n_features_in_`` and ``feature_names_in_`` are set on it (by
        scikit-learn's ``validate_data``).
    X : array-like or DataFrame of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    sample_weight : array-like of shape (n_samples,) or None, default=None
    weight_bound : float or None, default=None
        W (:func:`resolve_weight_bound`); None: an unweighted fit.
    previous : PublicInputs or None, default=None
        ``warm_start`` (:func:`warm_start_inputs`): the fitted model's public inputs, used as
        they are (its released grid, category lists, classes or target bounds); nothing is read
        from the data again, and ``X`` must have the fitted model's columns.

    Returns
    -------
    X : ndarray of shape (n_kept, n_features), dtype=float64
        The records in the data domain, categorical cells as codes, non-numbers as NaN.
    y_scaled : ndarray of shape (n_kept, n_outputs), dtype=float64
    inputs : PublicInputs
    weights : ndarray of shape (n_kept,), dtype=float32, or None
        Each kept record's weight in ``[0, W]`` (:func:`record_weights`); None unweighted.

    Raises
    ------
    ValueError
        Facts of the parameters and the schema only (see the estimators' ``fit``).
    """
    warn_reproducible_noise(estimator.random_state)
    X = pandas_frame(X)
    if previous is None:
        lists, derived = public_categories(X, estimator.categorical_features,
                                           estimator.categories, estimator.feature_bounds)
    else:
        lists, derived = previous.categories, ()
    typed = released_category_columns(estimator.categories, lists, _columns(X))
    # A warm start codes the cells by its released lists: nothing is released again.
    private = typed if previous is None else ()
    # An empty training set is a dataset like any other (its neighbour holds one record):
    # fit releases noise only, never raises for it.
    X = validate_data(estimator, cells_as_numbers(X, lists, typed=typed), dtype=np.float64,
                      ensure_all_finite=False, ensure_min_samples=0, reset=previous is None)
    y = column_or_1d(y, warn=True)
    check_same_length(X, y)
    sample_weight = check_sample_weight(sample_weight, X.shape[0])
    # Records outside the data domain (a label outside the public classes, a missing target)
    # are left out, each by its own value: a per-record decision.
    public = {} if previous is None else previous.target
    if hasattr(estimator, "classes"):
        keep, y_scaled, target, from_y = encode_classes(
            y, public.get("classes_", estimator.classes))
    else:
        keep, y_scaled, target, from_y = encode_targets(
            y, public.get("target_bounds_", estimator.target_bounds))
    # A boolean index copies X even when it keeps every record: 1x the input's size on top of
    # the fit's 0.25x (1M x 100). The same records either way; nothing emitted depends on it.
    if not keep.all():
        X = X[keep]
    weights = None
    if weight_bound is not None:
        classes = target.get("classes_")
        class_weight = check_class_weight(getattr(estimator, "class_weight", None), None)
        codes = (None if classes is None else np.argmax(y_scaled, axis=1) if y_scaled.shape[1] > 1
                 else (y_scaled[:, 0] > 0).astype(np.int64))
        weights = record_weights(None if sample_weight is None else sample_weight[keep],
                                 estimator.sample_weight_bound, class_weight, codes, classes,
                                 weight_bound)
    observed = {j: lists[j] for j in private}
    # A private column's list is released by the fit: one placeholder code until then.
    placeholder = np.array([None], dtype=object)
    if previous is None:
        bounds, from_X = resolve_feature_bounds(
            X, estimator.feature_bounds, {j: placeholder if j in observed else v
                                          for j, v in lists.items()},
            getattr(estimator, "feature_names_in_", None))
    else:
        bounds, from_X = previous.feature_bounds, ()
    if estimator.diagnostics:
        warn_diagnostics()
    numeric = np.setdiff1d(np.arange(X.shape[1]), list(lists))
    monotonic = resolve_monotonic_cst(estimator.monotonic_cst, X.shape[1], lists,
                                      y_scaled.shape[1],
                                      getattr(estimator, "feature_names_in_", None))
    public_lists = {j: np.empty(0, dtype=object) if j in observed else v
                    for j, v in lists.items()}
    return X, y_scaled, PublicInputs(bounds, public_lists, numeric, target,
                                     derived + from_y + from_X, monotonic, observed), weights


#: Parameters a ``warm_start`` fit must share with the fitted model: the trees' shape, the grid
#: and its candidates, the loss, the accounting mode and the public inputs (the new trees use
#: the fitted model's; docs/privacy.md, Warm start).
WARM_START_FIXED = ("max_depth", "max_bins", "split_candidates", "loss", "delta",
                    "feature_bounds", "categorical_features", "categories", "classes",
                    "target_bounds")


def warm_start_inputs(estimator):
    """With ``warm_start=True`` and a fitted model, its forest and public inputs: the trees
    a new ``fit`` adds to and what it takes as public (the released grid, category lists,
    classes or target bounds, never read from the data again); None otherwise (a fresh fit).

    Returns
    -------
    previous : tuple (Forest, PublicInputs) or None

    Raises
    ------
    ValueError
        ``n_estimators`` below the fitted number of stages, or a parameter of
        :data:`WARM_START_FIXED` changed since the fit (named).
    """
    forest = getattr(estimator, "_forest", None)
    if not estimator.warm_start or forest is None:
        return None
    n_estimators = resolve_n_estimators(estimator.n_estimators, float(estimator.epsilon),
                                        estimator.n_features_in_,
                                        hasattr(estimator, "target_bounds"))
    if n_estimators < forest.n_stages:
        shown = "" if n_estimators == estimator.n_estimators else f" ({n_estimators})"
        raise ValueError(f"n_estimators={estimator.n_estimators!r}{shown} must be >= the "
                         f"{forest.n_stages} trees per output fitted so far when "
                         "warm_start=True (set warm_start=False to refit from scratch).")
    fitted = getattr(estimator, "_warm_start_params", None)
    if fitted is None:
        raise ValueError("warm_start=True: the fitted model does not record the parameters it "
                         "was fitted with (an older dpboost wrote it); set warm_start=False to "
                         "refit from scratch.")
    for name, value in estimator.get_params(deep=False).items():
        if name in WARM_START_FIXED and repr(value) != fitted[name]:
            raise ValueError(f"{name} changed from {fitted[name]} to {value!r} since the fit; "
                             "warm_start=True adds trees to the fitted model, which fixes it "
                             "(set warm_start=False to refit from scratch).")
    categories = estimator.categories_
    numeric = np.setdiff1d(np.arange(estimator.n_features_in_), list(categories))
    target = ({"classes_": estimator.classes_} if hasattr(estimator, "classes_")
              else {"target_bounds_": estimator.target_bounds_})
    return forest, PublicInputs(estimator.feature_bounds_, categories, numeric, target, ())


def warm_start_params(estimator):
    """What :func:`warm_start_inputs` compares a later fit's parameters with."""
    return {name: repr(value) for name, value in estimator.get_params(deep=False).items()
            if name in WARM_START_FIXED}


def planned_shape(estimator, X):
    """``(n_outputs, n_numeric, n_private_categories)`` of a fit from the schema of ``X``, the
    public classes and ``categories`` (:func:`private_category_columns`), so
    that its budget can be planned before any record is read; None when the classes are read
    from the data or ``X`` has no ``shape`` of two dimensions, as a list of lists (the plan then
    follows validation).

    Raises
    ------
    ValueError
        Invalid ``classes`` or ``categorical_features``.
    """
    # Arrays and DataFrames state their shape; anything else is planned after validation.
    if len(getattr(X, "shape", ())) != 2:
        return None
    if not hasattr(estimator, "classes"):
        n_outputs = 1
    elif estimator.classes is None:
        return None
    else:
        n_classes = check_classes(estimator.classes).size
        n_outputs = 1 if n_classes == 2 else n_classes
    X = pandas_frame(X, schema_only=True)
    n_features = X.shape[1]
    return (n_outputs,
            n_features - len(set(categorical_columns(X, estimator.categorical_features,
                                                     estimator.categories,
                                                     estimator.feature_bounds))),
            len(private_category_columns(X, estimator.categorical_features,
                                         estimator.categories, estimator.feature_bounds)))

"""Categorical columns: which columns are categorical (from the schema and the parameters
only), their category lists (public, released privately, or read from the data), and the
coding of their cells as positions in the list: a private list's values are identified by type
and exact text (:func:`~dpboost._common.category_key`) at fit, predict and warm start alike."""

import itertools

import numpy as np

from ._common import category_key, category_value


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
            # The column's declared dtype (the whole array's for numpy) against its list.
            from ._cells import check_value_types, declared_kind  # _cells imports this module

            check_value_types(declared_kind(column if hasattr(X, "iloc") else X), values,
                              f"categories[{columns[j]!r}]", f"column {columns[j]!r}")
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
    columns : callable
        ``columns()`` returns the column names (or positions) of X; called only when
        ``categories`` is a dict (before ``validate_data``, X may have no columns at all).

    Returns
    -------
    columns : list of int
    """
    if isinstance(categories, str):
        return sorted(lists)
    if not isinstance(categories, dict) or not lists:
        return []
    index_of = _column_index(list(columns()), "categories")
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


def lookup_cells(cells, lookup, default, dtype, key=None):
    """``lookup.get(key(cell), default)`` of every cell, ``default`` where that raises
    TypeError (an unhashable cell is in no list): a cell's code is a function of that cell
    alone.

    Parameters
    ----------
    cells : sequence
    lookup : dict
    default : scalar
    dtype : numpy dtype of the codes
    key : callable or None, default=None
        None: the cell itself.

    Returns
    -------
    codes : ndarray of shape (len(cells),)
    """
    if key is None:
        try:
            # The lookups in C, without a Python call per cell (2.7x faster a million cells).
            return np.fromiter(map(lookup.get, cells, itertools.repeat(default)), dtype=dtype,
                               count=len(cells))
        except TypeError:  # an unhashable cell: every cell on its own, as below
            pass

    def code(v):
        try:
            return lookup.get(v if key is None else key(v), default)
        except TypeError:
            return default

    return np.fromiter(map(code, cells), dtype=dtype, count=len(cells))


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
        key = (lambda v: category_key(v) if _is_value(v) else None) if j in typed else None
        lookup = {v if key is None else key(v): float(i) for i, v in enumerate(values)}
        cells = X.iloc[:, j].to_numpy(dtype=object) if frame else X[:, j]
        codes = lookup_cells(cells, lookup, np.nan, np.float64, key)
        if frame:
            X.isetitem(j, codes)
        else:
            X[:, j] = codes
    return X

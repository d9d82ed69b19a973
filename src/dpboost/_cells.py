"""The record boundary: every cell becomes a number through its column's public type.

A numeric cell that is not a number is missing; a categorical cell is its code in the column's
list (a private list's values identified by type and exact text, :func:`~dpboost._common.category_key`);
a label outside the public classes or a missing target leaves its record out; a weight is
clipped to its public bound. Each decision reads one cell or one record only, so it is DP-safe
under add/remove of a record; nothing here raises on a value of the data, and no message quotes
one."""

import math

import numpy as np
from sklearn.utils.multiclass import check_classification_targets

from ._categories import encode_categorical, lookup_cells
from ._common import float32_at_most
from ._loss import scale_target
from ._parameters import check_classes, check_target_bounds, unusable_widths
from ._warnings import data_dependent


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
    # An unhashable label is not one of the classes.
    return lookup_cells(y.tolist(), index, -1, np.int64)


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


def check_columns(estimator, X):
    """``X`` (a polars or pyarrow table as a pandas one) after scikit-learn's checks of its
    columns against the fitted ones (``feature_names_in_``: names missing, unseen or out of
    order; ``n_features_in_``), as HistGradientBoosting: before any cell is coded by a
    column's position. Column names and counts are schema (public). Anything without a
    two-dimensional ``shape`` (a 1-d array, a list) is left to ``validate_data``'s own
    messages ("Reshape your data")."""
    from sklearn.utils.validation import validate_data

    X = pandas_frame(X)
    if hasattr(X, "iloc") or len(getattr(X, "shape", ())) == 2:
        validate_data(estimator, X, skip_check_array=True, reset=False)
    return X


def cells_as_numbers(X, categories, typed=()):
    """``X`` (a polars or pyarrow table as a pandas one, :func:`pandas_frame`) with categorical
    cells as their codes in the public ``categories`` (``typed``: see
    :func:`encode_categorical`) and every other cell as a number or missing: the same per-cell
    treatment for ``fit`` and ``predict``."""
    X = pandas_frame(X)
    return numeric_cells(encode_categorical(X, categories, typed), categories)


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


def declared_kind(values):
    """``"text"``, ``"number"`` or None: what a container's declared dtype says its cells are.

    Read from the dtype of a numpy array or a pandas column alone (numpy ``U`` / ``S`` and
    pandas ``str`` / ``string`` are text; booleans, integers and floats are numbers); None for
    an object dtype (any cell may be anything) and for a container without a dtype (a list,
    whose dtype numpy would infer from its values: one record's value must not decide it).
    """
    dtype = getattr(values, "dtype", None)
    if dtype is None:
        return None
    if getattr(dtype, "kind", None) in ("U", "S") or str(dtype) in ("str", "string") or (
            str(dtype).startswith("string[")):
        return "text"
    if getattr(dtype, "kind", None) in ("b", "i", "u", "f"):
        return "number"
    return None


def check_value_types(kind, values, parameter, what):
    """Refuse a public list whose values cannot be spelled as the cells' declared ``kind``
    (:func:`declared_kind`): a text column or ``y`` with a list holding no text, a numeric one
    with a list holding text. A schema fact (the dtype) against a public one (the list): no
    record is read, and the message quotes neither.

    Raises
    ------
    ValueError
        Names ``parameter``, the dtype's kind and the rule.
    """
    texts = [isinstance(v, (str, bytes, np.str_, np.bytes_)) for v in values]
    if kind == "text" and not any(texts):
        raise ValueError(f"{parameter} holds no text value but {what} has a text dtype: no "
                         "cell could match, and every record would be treated as outside the "
                         f"list. Spell {parameter} as the data (text values for a text "
                         f"dtype), or give {what} the dtype of the list's values.")
    if kind == "number" and any(texts):
        raise ValueError(f"{parameter} holds text but {what} has a numeric dtype: no cell "
                         f"could match it. Spell {parameter} as the data's numbers, or give "
                         f"{what} a text dtype.")


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

"""The public inputs of a fit: :func:`fit_inputs` checks everything ``fit`` takes before any
noise is drawn and returns the public inputs as one :class:`PublicInputs` record (bounds,
category lists, classes or target bounds, monotonic constraints, and which of them were read
from the data, each announced by a :class:`~dpboost._warnings.PrivacyLeakWarning`)."""

import math
from dataclasses import dataclass, field

import numpy as np
from sklearn.base import is_classifier
from sklearn.utils.validation import column_or_1d, validate_data

from ._binning import finite_ranges
from ._categories import (
    _columns,
    categorical_columns,
    private_category_columns,
    released_category_columns,
    resolve_categorical,
)
from ._cells import (
    cells_as_numbers,
    check_columns,
    check_same_length,
    check_sample_weight,
    check_value_types,
    declared_kind,
    pandas_frame,
    record_weights,
)
from ._domain import domain_counts, domain_layout
from ._parameters import (
    check_class_weight,
    check_classes,
    check_feature_bounds,
    unusable_widths,
)
from ._parameters import n_threads as job_threads
from ._warnings import data_dependent, warn_diagnostics, warn_reproducible_noise


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
    domain : tuple or None, default=None
        With ``domain_report=True``: ``(layout, counts, names)``, the report's public layout
        (``_domain.domain_layout``), its PRIVATE exact counts (``_domain.domain_counts``),
        read only by the fit's release (``_domain.release_domain_report``), and the columns'
        names (or indices) as text.
    """

    feature_bounds: np.ndarray
    categories: dict
    numeric: np.ndarray
    target: dict
    data_derived: tuple
    monotonic_cst: object = None
    observed_categories: dict = field(default_factory=dict)
    domain: object = None


def public_categories(X, categorical_features, categories, feature_bounds=None):
    """The category lists of a fit (:func:`resolve_categorical`), warning for any list read
    from the data."""
    lists, from_data = resolve_categorical(X, categorical_features, categories, feature_bounds)
    if from_data:
        data_dependent("categories (of " + ", ".join(from_data) + ")", None)
    return lists, tuple(f"categories[{c}]" for c in from_data)


def resolve_feature_bounds(X, feature_bounds, categories, names=None, n_threads=1):
    """The bounds of a fit: ``feature_bounds`` checked (an array, or a dict by column name or
    index), or read from ``X`` with a PrivacyLeakWarning (if any feature is numeric), or NaN for
    the numeric rows with ``"private"`` (the fit releases them); categorical rows set from the
    lists.

    Parameters
    ----------
    names : ndarray of str or None, default=None
        The columns' names (``feature_names_in_``), for a dict's keys.
    n_threads : int, default=1
        Threads of the pass that reads the bounds from ``X`` (``feature_bounds=None``).

    Returns
    -------
    bounds : ndarray of shape (n_features, 2), dtype=float64
    derived : tuple of str

    Raises
    ------
    ValueError
        Bounds of the wrong shape or with ``lower >= upper``; an empty category list; bounds
        read from the data that do not span a finite, normal width (the message names the
        column, never a value), or from an ``X`` without rows.
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
        if X.shape[0] == 0:  # (a non-private path: it reads the data anyway)
            raise ValueError("feature_bounds cannot be read from an X without rows; pass "
                             "public feature_bounds.")
        lower, upper = finite_ranges(X, n_threads)
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
    X = pandas_frame(X) if previous is None else check_columns(estimator, X)
    if previous is None:
        lists, derived = public_categories(X, estimator.categorical_features,
                                           estimator.categories, estimator.feature_bounds)
    else:
        lists, derived = previous.categories, ()
    typed = released_category_columns(estimator.categories, lists, lambda: _columns(X))
    # A warm start codes the cells by its released lists: nothing is released again.
    private = typed if previous is None else ()
    # An empty training set is a dataset like any other (its neighbour holds one record):
    # fit releases noise only, never raises for it.
    raw = X
    X = validate_data(estimator, cells_as_numbers(X, lists, typed=typed), dtype=np.float64,
                      ensure_all_finite=False, ensure_min_samples=0, reset=previous is None)
    encoded = X
    check_target_dtype(y, estimator, {} if previous is None else previous.target)
    y = column_or_1d(y, warn=True)
    check_same_length(X, y)
    sample_weight = check_sample_weight(sample_weight, X.shape[0])
    # Records outside the data domain (a label outside the public classes, a missing target)
    # are left out, each by its own value: a per-record decision.
    keep, y_scaled, target, from_y = estimator._encode_y(
        y, {} if previous is None else previous.target)
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
            getattr(estimator, "feature_names_in_", None), job_threads(estimator.n_jobs))
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
    domain = None
    if getattr(estimator, "domain_report", False) and previous is None:
        target_bounds = target.get("target_bounds_")
        layout = domain_layout(X.shape[1], lists, observed,
                               isinstance(estimator.feature_bounds, str),
                               not is_classifier(estimator), isinstance(target_bounds, str))
        names = getattr(estimator, "feature_names_in_", range(X.shape[1]))
        domain = (layout, domain_counts(raw, encoded, y, keep, layout, bounds, target_bounds),
                  [str(name) for name in names])
    return X, y_scaled, PublicInputs(bounds, public_lists, numeric, target,
                                     derived + from_y + from_X, monotonic, observed,
                                     domain), weights


def check_target_dtype(y, estimator, fitted_target):
    """Refuse a ``y`` whose declared dtype (:func:`~dpboost._cells.declared_kind`) no public
    label or target can match: text labels with classes that hold no text (or numbers with
    classes that hold text), a text regression target. Schema facts only (the dtype, the
    parameters): a ``y`` of object dtype or a list is not judged here (its records are, one by
    one, and ``domain_report`` counts them).

    Raises
    ------
    ValueError
        Names ``classes`` or ``y`` and the rule; quotes no label.
    """
    kind = declared_kind(y)
    if not is_classifier(estimator):
        if kind == "text":
            raise ValueError("y has a text dtype: a regression target must be numbers (each "
                             "target that is not a number leaves its record out, here every "
                             "one). Convert y to a numeric dtype.")
        return
    classes = fitted_target.get("classes_", estimator.classes)
    if classes is not None:
        check_value_types(kind, np.asarray(classes, dtype=object).ravel().tolist(), "classes",
                          "y")


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
    n_outputs = estimator._planned_outputs()
    if n_outputs is None:
        return None
    X = pandas_frame(X, schema_only=True)
    n_features = X.shape[1]
    return (n_outputs,
            n_features - len(set(categorical_columns(X, estimator.categorical_features,
                                                     estimator.categories,
                                                     estimator.feature_bounds))),
            len(private_category_columns(X, estimator.categorical_features,
                                         estimator.categories, estimator.feature_bounds)))

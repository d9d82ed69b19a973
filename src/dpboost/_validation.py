"""Parameter constraints, checks of public inputs (bounds, classes), and the data domain.

The data domain (what one record may hold) and the per-record treatment of everything outside
it live here: a cell that is not a number is missing, a label outside the public classes or a
missing target removes its record. Each decision reads one record only, so it is DP-safe under
add/remove of a record; no check here reads the data and raises, and no message quotes a value.
"""

import math
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ._common import MAX_BINS
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
    "subsample": [Interval(Real, 0, 1, closed="right")],
    "split_selection": [StrOptions({"exponential", "cyclical", "random"})],
    "split_candidates": [StrOptions({"uniform", "sketch", "hessian"})],
    "n_estimators": [Interval(Integral, 1, None, closed="left")],
    "max_depth": [Interval(Integral, 1, MAX_DEPTH, closed="both")],
    "learning_rate": [Interval(Real, 0, 1, closed="right")],
    "l2_regularization": [Interval(Real, 0, None, closed="left")],
    "max_bins": [Interval(Integral, 2, MAX_BINS, closed="both")],
    "trees_per_ensemble": [Interval(Integral, 1, None, closed="left")],
    "budget_allocation": [StrOptions({"eoe", "sequential", "parallel"})],
    "gradient_filtering": ["boolean"],
    "leaf_clipping": ["boolean"],
    "feature_bounds": ["array-like", None],
    "categorical_features": ["array-like", StrOptions({"from_dtype"}), None],
    "categories": [dict, None],
    "random_state": ["random_state", np.random.Generator, NoiseSource],
    "verbose": ["verbose"],
    "diagnostics": ["boolean"],
    "n_jobs": [Integral, None],
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
    with np.errstate(over="ignore", divide="ignore"):
        # The grid divides by the width: it must neither overflow nor underflow.
        bad = np.flatnonzero(~np.isfinite(1.0 / (bounds[:, 1] - bounds[:, 0]))
                             | ~np.isfinite(bounds[:, 1] - bounds[:, 0]))
    if bad.size:
        j = int(bad[0])
        raise ValueError(
            f"feature_bounds[{j}] = ({bounds[j, 0]}, {bounds[j, 1]}): upper - lower must be a "
            "finite, normal positive number.")
    return bounds


def check_target_bounds(target_bounds):
    """Validate public target bounds ``(lower, upper)``; returns a tuple of two floats."""
    bounds = np.asarray(target_bounds, dtype=np.float64)
    if bounds.shape != (2,) or not np.isfinite(bounds).all() or bounds[0] >= bounds[1]:
        raise ValueError(
            f"target_bounds={target_bounds!r} must be a pair (lower, upper) of finite numbers "
            "with lower < upper.")
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
        PrivacyLeakWarning, stacklevel=3)
    return value


def warn_reproducible_noise(random_state):
    """Warn that a seeded ``random_state`` (not None, not a noise source) makes noise predictable."""
    if random_state is not None and not isinstance(random_state, NoiseSource):
        warnings.warn(
            "random_state is set: the noise is reproducible by anyone who knows the seed, so the "
            "model is not differentially private as released. Use random_state=None for "
            "releases; filter ReproducibleNoiseWarning to opt in for experiments.",
            ReproducibleNoiseWarning, stacklevel=4)


def warn_diagnostics():
    """Warn that ``diagnostics=True`` stores exact statistics of the training data."""
    warnings.warn("diagnostics=True stores filtered_fraction_, an exact statistic of the training "
                  "data that is not differentially private.", PrivacyLeakWarning, stacklevel=3)

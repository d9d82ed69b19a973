"""Parameter constraints: what each hyper-parameter and public input may be, checked before
any budget is spent or any record read (scikit-learn's ``_parameter_constraints`` and the
checks of combinations and public values it cannot express). Nothing here reads a record."""

import math
from numbers import Integral, Real

import numba
import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ._accountant import PrivacyAccountant
from ._common import MAX_BINS
from ._noise import NoiseSource
from ._tree_mechanisms import LEAF_RELEASES, SPLIT_SELECTIONS

#: Deepest tree allowed: histograms of the last level hold ``2**(max_depth - 1)`` nodes.
MAX_DEPTH = 10


PARAMETER_CONSTRAINTS = {
    "epsilon": [Interval(Real, 0, None, closed="right")],
    "delta": [Interval(Real, 0, 1, closed="left")],
    "leaf_noise": [StrOptions(set(LEAF_RELEASES))],
    "min_child_weight": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
    "subsample": [Interval(Real, 0, 1, closed="right"), StrOptions({"auto"})],
    "split_selection": [StrOptions({*SPLIT_SELECTIONS, "auto"})],
    "interaction_cst": [None, StrOptions({"no_interactions", "auto"})],
    "monotonic_cst": ["array-like", dict, None],
    "gradient_bound": [Interval(Real, 0, None, closed="neither")],
    "split_candidates": [StrOptions({"auto", "uniform", "log", "sketch", "hessian"})],
    "n_estimators": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
    "max_depth": [Interval(Integral, 1, MAX_DEPTH, closed="both")],
    "learning_rate": [Interval(Real, 0, 1, closed="right"), StrOptions({"auto"})],
    "l2_regularization": [Interval(Real, 0, None, closed="left")],
    "max_bins": [Interval(Integral, 2, MAX_BINS, closed="both")],
    "trees_per_ensemble": [Interval(Integral, 1, None, closed="left")],
    "budget_allocation": [StrOptions({"eoe", "sequential", "parallel"})],
    "gradient_filtering": ["boolean"],
    "renyi_filter": [Interval(Real, 0, 1, closed="right"), None],
    "accounting": [StrOptions({"auto", "rdp"})],
    "leaf_clipping": ["boolean"],
    "feature_bounds": ["array-like", dict, StrOptions({"private"}), None],
    "categorical_features": ["array-like", StrOptions({"from_dtype"}), None],
    "categories": [dict, StrOptions({"private"}), None],
    "random_state": ["random_state", np.random.Generator, NoiseSource],
    "verbose": ["verbose"],
    "diagnostics": ["boolean"],
    "domain_report": ["boolean"],
    "n_jobs": [Integral, None],
    "accountant": [PrivacyAccountant, None],
    "sample_weight_bound": [Interval(Real, 0, None, closed="neither"), None],
    "warm_start": ["boolean"],
    "early_stopping": ["boolean"],
    "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
    "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
    "init": [StrOptions({"auto", "private", "zero"})],
}


def check_mechanisms(leaf_noise, delta, l2_regularization, min_child_weight=0.0):
    """Combinations the planner cannot honour, refused before any budget is spent."""
    leaves = LEAF_RELEASES[leaf_noise]
    if min_child_weight > 0 and not leaves.releases_weight:
        raise ValueError(f"min_child_weight={min_child_weight} needs leaf_noise='gaussian' or "
                         "'average': it is decided on a released weight, and leaf_noise='laplace' "
                         "releases none (an exact count would leak).")
    if leaves.gaussian and delta == 0:
        raise ValueError("leaf_noise='gaussian' needs delta > 0: the Gaussian mechanism is not "
                         "pure DP (set delta, e.g. 1e-5, well below 1 / n_samples).")
    if leaves.newton and l2_regularization == 0:
        raise ValueError("leaf_noise='gaussian' needs l2_regularization > 0: the released leaf "
                         "-G / max(H + lambda, lambda) divides by lambda.")
    warn_large_delta(delta)


#: A delta above this warns (:func:`warn_large_delta`).
DELTA_WARNING = 1e-4


def warn_large_delta(delta):
    """Warn (UserWarning) when ``delta`` exceeds :data:`DELTA_WARNING`: an (epsilon, delta)
    guarantee allows a total failure with probability delta, e.g. the release of ``delta n``
    whole records of ``n``, so delta must be well below ``1 / n`` (Dwork & Roth 2014, Sec.
    2.3); ``1e-4`` is already ``1 / n`` at 10,000 records. A public parameter against a fixed
    value (the record count is private: ``domain_report=True`` compares delta with its
    released count)."""
    if delta > DELTA_WARNING:
        import warnings

        warnings.warn(f"delta={delta:g} exceeds {DELTA_WARNING:g}: (epsilon, delta)-DP allows a "
                      "failure with probability delta (e.g. delta n of n records released "
                      "whole), so delta must be well below 1 / n_samples; use 1e-5 or less "
                      "(docs/privacy.md, Public inputs).", UserWarning, stacklevel=4)


#: DPBoost's setting (Li et al. 2020, Sec. 5), the estimators' ``dpboost_paper()`` (and
#: ``loss="square"`` for the classifier).
DPBOOST_PAPER = {"delta": 0.0, "n_estimators": 50, "max_depth": 6, "learning_rate": 0.1,
                 "l2_regularization": 0.1, "max_bins": 32, "trees_per_ensemble": 50,
                 "budget_allocation": "eoe", "gradient_bound": 1.0, "gradient_filtering": True,
                 "leaf_clipping": True,
                 "leaf_noise": "laplace", "min_child_weight": 0.0, "subsample": 1.0,
                 "split_selection": "exponential", "split_candidates": "uniform",
                 "interaction_cst": None, "init": "zero"}


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

"""Figures of dpboost results: the privacy–utility curve and the feature importances.

matplotlib is an optional dependency (``pip install dpboost[plot]``); it is imported when a function is
called, so ``import dpboost.plotting`` works without it. The functions draw on an existing Axes (or a
new figure) and return the Axes; they never choose a backend.
"""

import math
from collections import defaultdict

import numpy as np


def _pyplot():
    """matplotlib.pyplot, or an ImportError that says how to install it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise ImportError("dpboost.plotting needs matplotlib: pip install dpboost[plot]") from error
    return plt


def _axes(ax):
    if ax is None:
        _, ax = _pyplot().subplots()
    return ax


def _records(results):
    """``results`` as a list of dicts (a pandas DataFrame becomes its records)."""
    if hasattr(results, "to_dict") and hasattr(results, "columns"):
        return results.to_dict("records")
    if not isinstance(results, (list, tuple)):
        raise TypeError("results must be a list of dicts or a pandas DataFrame, "
                        f"not {type(results).__name__}.")
    others = [type(r).__name__ for r in results if not isinstance(r, dict)]
    if others:
        raise TypeError(f"results must be a list of dicts; it holds a {others[0]}.")
    return list(results)


def plot_privacy_utility(results, *, x="epsilon", y="error", hue="method", xscale="log",
                         ax=None):
    """Utility against the privacy budget: one line per ``hue``, mean and std over repeats.

    Rows with the same ``hue`` and ``x`` (folds, seeds) are averaged; their standard deviation is
    drawn as error bars when there is more than one. Rows with ``x = inf`` (no noise, epsilon = inf)
    cannot sit on a log axis: their mean is drawn as a dashed horizontal reference line labelled
    ``"<hue> (no noise)"``.

    Parameters
    ----------
    results : list of dict or pandas.DataFrame
        One row per fitted model, as the benchmark scripts write them (``write_results``): at
        least the columns ``x`` and ``y`` (and ``hue`` unless None). Rows whose ``y`` is None or
        NaN (e.g. an RMSE column on a classification row) are ignored.
    x : str, default="epsilon"
        Column of the horizontal axis: float, > 0 on a log axis; ``inf`` means no noise.
    y : str, default="error"
        Column of the metric (test error, ROC AUC, RMSE, ...); it labels the vertical axis.
    hue : str or None, default="method"
        Column whose values make separate lines, in order of first appearance; None: one line.
    xscale : {"log", "linear"}, default="log"
        Scale of the horizontal axis; ``"linear"`` for e.g. ``x="trees"``.
    ax : matplotlib.axes.Axes or None, default=None
        Axes to draw on; None: a new figure.

    Returns
    -------
    ax : matplotlib.axes.Axes

    Raises
    ------
    TypeError
        ``results`` is neither a list of dicts nor a DataFrame.
    ValueError
        ``results`` is empty or lacks a column; ``xscale`` is not "log" or "linear"; an ``x`` is
        <= 0 on a log axis, or NaN.
    ImportError
        matplotlib is not installed.
    """
    rows = _records(results)
    if not rows:
        raise ValueError("results is empty: nothing to plot.")
    if xscale not in ("log", "linear"):
        raise ValueError(f"xscale={xscale!r} must be 'log' or 'linear'.")
    columns = list(dict.fromkeys(k for r in rows for k in r))
    for name, column in (("x", x), ("y", y), ("hue", hue)):
        if column is not None and column not in columns:
            raise ValueError(f"{name}={column!r} is not a column of results; columns: {columns}")

    points = defaultdict(lambda: defaultdict(list))  # hue value -> x -> y values
    for r in rows:
        value = r.get(y)
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        position = float(r[x])
        if math.isnan(position) or (xscale == "log" and position <= 0):
            raise ValueError(f"x={x!r} has the value {position!r}; it must be "
                             + ("> 0 on a log axis." if xscale == "log" else "a number."))
        points[None if hue is None else r[hue]][position].append(float(value))

    ax = _axes(ax)
    for group, by_x in points.items():
        finite = sorted(v for v in by_x if math.isfinite(v))
        label = y if group is None else str(group)
        color = "k"  # a group without finite x (the NP baseline) is only a reference line
        if finite:
            means = np.array([np.mean(by_x[v]) for v in finite])
            stds = np.array([np.std(by_x[v]) for v in finite])
            repeated = any(len(by_x[v]) > 1 for v in finite)
            bars = ax.errorbar(np.array(finite), means, yerr=stds if repeated else None,
                               marker="o", ms=3, capsize=2, label=label)
            color = bars.lines[0].get_color()
        if math.inf in by_x:
            ax.axhline(np.mean(by_x[math.inf]), color=color, ls="--", lw=1,
                       label=f"{label} (no noise)")
    ax.set_xscale(xscale)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    return ax


def plot_feature_importances(estimator, *, max_features=20, ax=None):
    """Horizontal bars of a fitted model's ``feature_importances_``, largest on top.

    Uses only released information: ``feature_importances_`` (the spread of each feature's
    contribution to the margin, from the released trees) and ``feature_names_in_`` (public).

    Parameters
    ----------
    estimator : fitted DPGBClassifier or DPGBRegressor
        Any fitted estimator with ``feature_importances_`` of shape (n_features_in_,).
    max_features : int, default=20
        Number of bars, >= 1: the ``max_features`` most important features (ties keep the column
        order).
    ax : matplotlib.axes.Axes or None, default=None
        As :func:`plot_privacy_utility`'s; the axes drawn on are returned.

    Raises
    ------
    ValueError
        ``max_features`` is not an integer >= 1.
    sklearn.exceptions.NotFittedError
        ``estimator`` is not fitted.
    ImportError
        matplotlib is not installed.
    """
    if isinstance(max_features, bool) or not isinstance(max_features, (int, np.integer)) \
            or max_features < 1:
        raise ValueError(f"max_features={max_features!r} must be an integer >= 1.")
    importances = np.asarray(estimator.feature_importances_, dtype=np.float64)
    names = getattr(estimator, "feature_names_in_", None)
    if names is None:
        names = [f"x{j}" for j in range(importances.size)]
    order = np.argsort(-importances, kind="stable")[:max_features]
    ax = _axes(ax)
    # barh draws from the bottom up: reverse so the most important feature is the top bar.
    ax.barh([str(names[j]) for j in order[::-1]], importances[order[::-1]])
    ax.set_xlabel("fraction of split nodes (released splits)")
    return ax

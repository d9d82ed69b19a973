"""Inspection from released values only: feature importances, a privacy report, tree text, JSON.

Everything here reads public inputs, the split choices and the released (noised) leaf values, and
the ledger; nothing reads the training data (docs/privacy.md, rule 4).
"""

import json
from collections import defaultdict

import numpy as np

from ._accounting import LedgerEntry
from ._binning import BoundsBinner

#: Version of the JSON model format written by :func:`model_to_json`.
FORMAT_VERSION = 1


def split_count_importances(split_feature, n_features):
    """Fraction of all split nodes that use each feature.

    Split choices are outputs of the exponential mechanism, hence released values.

    Parameters
    ----------
    split_feature : ndarray of shape (n_trees, n_internal), dtype=int32
    n_features : int

    Returns
    -------
    importances : ndarray of shape (n_features,), dtype=float64
        Non-negative, summing to 1.
    """
    counts = np.bincount(split_feature.ravel(), minlength=n_features).astype(np.float64)
    return counts / counts.sum()


def privacy_report(ledger, epsilon, filtered_fraction=None, delta=0.0):
    """Human-readable account of a fit's releases.

    Parameters
    ----------
    ledger : list of LedgerEntry
    epsilon : float
        The composed epsilon (``privacy_spent_``).
    filtered_fraction : ndarray of shape (n_trees,) or None
        GDF diagnostics, only when the user opted in (``diagnostics=True``).
    delta : float, default=0.0
        ``0``: pure DP; otherwise the delta of Renyi accounting.

    Returns
    -------
    report : str
    """
    by_mechanism = defaultdict(lambda: [0, 0, set()])
    for e in ledger:
        row = by_mechanism[(e.mechanism, e.epsilon, e.sensitivity, e.noise_multiplier)]
        row[0] += 1
        row[1] += e.n_nodes
        if e.tree >= 0:
            row[2].add(e.tree)
    # Tree -1 holds the split-candidate sketches, composed sequentially with the trees.
    in_trees = [e for e in ledger if e.tree >= 0]
    n_sketches = len(ledger) - len(in_trees)
    sketch = (", and the split-candidate sketch (tree -1)" if n_sketches == 1 else
              f", and {n_sketches} releases of the split-candidate sketch (tree -1)"
              if n_sketches else "")
    guarantee = ("pure DP" if delta == 0
                 else f"(epsilon, delta={delta:g})-DP by Renyi composition")
    lines = [f"composed epsilon ({guarantee}, add/remove one record): {epsilon:.6g}",
             f"releases: {len(ledger)} ledger entries over "
             f"{len({e.tree for e in in_trees})} trees in {len({e.group for e in in_trees})} "
             f"sequentially composed groups{sketch}",
             "mechanism     epsilon/node   sensitivity   noise mult.   entries   nodes   trees"]
    for (mechanism, eps, sensitivity, sigma), (entries, nodes, trees) in sorted(
            by_mechanism.items(), key=lambda item: (item[0][0], item[0][1], item[0][2])):
        lines.append(f"{mechanism:<12}  {eps:>12.6g}  {sensitivity:>12.6g}  {sigma:>12.6g}  "
                     f"{entries:>8}  {nodes:>6}  {len(trees):>6}")
    if filtered_fraction is not None:
        lines.append("GDF filtered fraction per tree (exact, NOT differentially private): "
                     + " ".join(f"{v:.3f}" for v in filtered_fraction))
    return "\n".join(lines)


def tree_text(split_feature, split_bin, missing_left, leaf_value, binner, feature_names,
              categories):
    """Indented text of one complete tree with its split rules and released leaves.

    A numeric split prints its real-valued threshold; a categorical split prints the categories of
    each side (the public list's first categories go left). Each split says which side takes
    missing values (for a categorical feature also the values outside its list).

    Parameters
    ----------
    split_feature, split_bin : ndarray of shape (2**depth - 1,)
    missing_left : ndarray of shape (2**depth - 1,), dtype=bool
    leaf_value : ndarray of shape (2**depth,)
        Released leaf values (after shrinkage).
    binner : BoundsBinner
        The fitted grid.
    feature_names : list of str
    categories : dict of int -> ndarray
        Category list of each categorical feature (``categories_``).

    Returns
    -------
    text : str
    """
    thresholds = binner.thresholds()
    n_internal = split_feature.shape[0]
    lines = []

    def rules(f, b):
        if f not in categories:
            return f"< {thresholds[f, b]:.6g}", f">= {thresholds[f, b]:.6g}", "missing"
        # Category i is coded i; its bin decides its side, as at prediction time.
        codes = np.arange(categories[f].size, dtype=np.float64)
        column = np.zeros((codes.size, binner.lower.size))
        column[:, f] = codes
        left = binner.transform(column)[:, f] <= b
        return (_category_set(categories[f][left], categories[f].size),
                _category_set(categories[f][~left], categories[f].size), "missing/unknown")

    def visit(k, depth):
        pad = "|   " * depth
        if k >= n_internal:
            lines.append(f"{pad}value: {leaf_value[k - n_internal]:.6g}")
            return
        name = feature_names[split_feature[k]]
        left, right, missing = rules(split_feature[k], split_bin[k])
        lines.append(f"{pad}{name} {left}" + (f" or {missing}" if missing_left[k] else ""))
        visit(2 * k + 1, depth + 1)
        lines.append(f"{pad}{name} {right}" + ("" if missing_left[k] else f" or {missing}"))
        visit(2 * k + 2, depth + 1)

    visit(0, 0)
    return "\n".join(lines)


def _category_set(names, n_categories, shown=6):
    """``in {a, b, c}``; a long set shows its first and last names and its size."""
    names = [str(v) for v in names]
    if len(names) <= shown:
        return "in {" + ", ".join(names) + "}"
    return ("in {" + ", ".join(names[:shown // 2]) + ", ..., " + ", ".join(names[-2:])
            + f"}} ({len(names)} of {n_categories} categories)")


def model_to_json(estimator):
    """Serialise a fitted estimator's public and released values (format version 1).

    Holds the hyper-parameters, the public bounds and classes, split choices, released leaf values
    and the ledger; never a statistic of the training data.
    """
    params = estimator.get_params(deep=False)
    params["random_state"] = None  # a Generator is not serialisable, and the fit is done
    for key in ("feature_bounds", "classes", "target_bounds", "categorical_features"):
        if params.get(key) is not None and not isinstance(params[key], str):
            params[key] = np.asarray(params[key]).tolist()
    if params.get("categories") is not None:
        # JSON objects only have string keys: keep (key, list) pairs so int keys survive.
        params["categories"] = [[k, list(v)] for k, v in params["categories"].items()]
    fitted = {
        "n_features_in_": estimator.n_features_in_,
        "feature_bounds_": estimator.feature_bounds_.tolist(),
        "categories_": [[j, v.tolist()] for j, v in estimator.categories_.items()],
        "privacy_spent_": estimator.privacy_spent_,
        "privacy_ledger_": [vars(e) for e in estimator.privacy_ledger_],
        "split_feature": estimator._split_feature.tolist(),
        "split_bin": estimator._split_bin.tolist(),
        "missing_left": estimator._missing_left.tolist(),
        "leaf_value": estimator._leaf_value.tolist(),
    }
    if estimator._binner.max_bins != estimator.max_bins:
        # split_candidates="hessian": the fine grid of the Hessian sketch
        fitted["bin_codes"] = estimator._binner.max_bins
    if estimator._binner.custom_thresholds is not None:
        # split_candidates="sketch": thresholds released by the sketch (post-processing)
        fitted["bin_thresholds"] = estimator._binner.custom_thresholds.tolist()
    if hasattr(estimator, "feature_names_in_"):
        fitted["feature_names_in_"] = estimator.feature_names_in_.tolist()
    if hasattr(estimator, "classes_"):
        fitted["classes_"] = estimator.classes_.tolist()
    if hasattr(estimator, "target_bounds_"):
        fitted["target_bounds_"] = list(estimator.target_bounds_)
    return json.dumps({"format": "dpboost", "version": FORMAT_VERSION,
                       "estimator": type(estimator).__name__, "params": params,
                       "fitted": fitted}, default=_numpy_scalar)


def _numpy_scalar(value):
    """JSON form of numpy scalars (category labels read by pandas are often numpy ints)."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def model_from_json(cls, text):
    """Rebuild an estimator of class ``cls`` from :func:`model_to_json` output.

    Raises
    ------
    ValueError
        Not a dpboost model, another estimator class, or an unknown format version.
    """
    doc = json.loads(text)
    if doc.get("format") != "dpboost" or doc.get("version") != FORMAT_VERSION:
        raise ValueError(f"not a dpboost model of format version {FORMAT_VERSION}: "
                         f"format={doc.get('format')!r}, version={doc.get('version')!r}")
    if doc["estimator"] != cls.__name__:
        raise ValueError(f"the JSON holds a {doc['estimator']}, not a {cls.__name__}")
    params = doc["params"]
    if params.get("categories") is not None:
        params["categories"] = {k: v for k, v in params["categories"]}
    est = cls(**params)
    f = doc["fitted"]
    est.n_features_in_ = f["n_features_in_"]
    est.feature_bounds_ = np.array(f["feature_bounds_"], dtype=np.float64)
    est.categories_ = {j: np.array(v, dtype=object) for j, v in f.get("categories_", [])}
    est.privacy_spent_ = f["privacy_spent_"]
    est.privacy_ledger_ = [LedgerEntry(**e) for e in f["privacy_ledger_"]]
    est._split_feature = np.array(f["split_feature"], dtype=np.int32)
    est._split_bin = np.array(f["split_bin"], dtype=np.uint8)
    est._missing_left = np.array(f["missing_left"], dtype=np.bool_)
    est._leaf_value = np.array(f["leaf_value"], dtype=np.float64)
    est._binner = BoundsBinner(est.feature_bounds_, f.get("bin_codes", est.max_bins),
                               f.get("bin_thresholds"))
    if "feature_names_in_" in f:
        est.feature_names_in_ = np.array(f["feature_names_in_"], dtype=object)
    if "classes_" in f:
        est.classes_ = np.array(f["classes_"])
    if "target_bounds_" in f:
        est.target_bounds_ = tuple(f["target_bounds_"])
    return est

"""The fitted model as versioned JSON: public inputs, released values and the ledger only.

Reads and writes a :class:`~dpboost._predictor.Forest`, the fitted public attributes and the
ledger; never a statistic of the training data (docs/privacy.md, rule 4).
"""

import json

import numpy as np

from ._accounting import LedgerEntry
from ._binning import BoundsBinner
from ._predictor import Forest

#: Version of the JSON model format written by :func:`model_to_json`.
FORMAT_VERSION = 1

#: Fitted public attributes stored as lists, with the dtype they are rebuilt with.
_ARRAYS = {"feature_bounds_": np.float64, "feature_names_in_": object, "classes_": None}


#: The fitted public attributes a model's JSON holds (those of them the estimator has).
FITTED = ("n_features_in_", "feature_bounds_", "categories_", "privacy_spent_", "feature_names_in_",
          "classes_", "target_bounds_")


def model_to_json(estimator_name, params, fitted, forest, ledger):
    """Serialise a fitted model (format version 1, with the writing library's version).

    Parameters
    ----------
    estimator_name : str
        The estimator's class name, checked when loading.
    params : dict
        Its hyper-parameters (``get_params(deep=False)``).
    fitted : dict
        Its fitted public attributes: ``n_features_in_``, ``feature_bounds_``, ``categories_``,
        ``privacy_spent_``, and those it has of ``feature_names_in_``, ``classes_``,
        ``target_bounds_``.
    forest : Forest
    ledger : list of LedgerEntry

    Returns
    -------
    text : str
    """
    from . import __version__

    # A Generator or an accountant is not serialisable, and the fit is done.
    params = dict(params, random_state=None, accountant=None)
    for key in ("feature_bounds", "classes", "target_bounds", "categorical_features",
                "monotonic_cst"):
        if params.get(key) is not None and not isinstance(params[key], (str, dict)):
            params[key] = np.asarray(params[key]).tolist()
    for key in ("categories", "feature_bounds", "monotonic_cst"):
        if isinstance(params.get(key), dict):
            # JSON objects only have string keys: keep (key, list) pairs so int keys survive.
            params[key] = {"pairs": [[k, np.asarray(v).tolist()] for k, v in params[key].items()]}
    stored = {name: (np.asarray(value).tolist() if name in _ARRAYS else value)
              for name, value in fitted.items()}
    stored["categories_"] = [[j, v.tolist()] for j, v in fitted["categories_"].items()]
    if "target_bounds_" in fitted:
        stored["target_bounds_"] = list(fitted["target_bounds_"])
    # The fit's identifier once (every entry of one fit carries the same): ledgers of loaded
    # models still compose sequentially with each other. A warm-started model's ledger holds
    # several fits: each entry keeps its own.
    stored["fit_id"] = ledger[0].fit if ledger else ""
    one_fit = len({e.fit for e in ledger}) <= 1
    stored["privacy_ledger_"] = [{k: v for k, v in vars(e).items() if k != "fit" or not one_fit}
                                 for e in ledger]
    stored.update(split_feature=forest.split_feature.tolist(),
                  split_bin=forest.split_bin.tolist(),
                  missing_left=forest.missing_left.tolist(),
                  leaf_value=forest.leaf_value.tolist(), bin_codes=forest.binner.max_bins)
    if np.isfinite(forest.leaf_statistics).all():
        # released (gradient sum, weight) of the leaves; Laplace leaves release none (NaN)
        stored["leaf_statistics"] = forest.leaf_statistics.tolist()
    if forest.binner.custom_thresholds is not None:
        # split_candidates="sketch": thresholds released by the sketch (post-processing)
        stored["bin_thresholds"] = forest.binner.custom_thresholds.tolist()
    return json.dumps({"format": "dpboost", "version": FORMAT_VERSION,
                       "dpboost_version": __version__, "estimator": estimator_name,
                       "params": params, "fitted": stored}, default=_numpy_scalar)


def _numpy_scalar(value):
    """JSON form of numpy scalars (category labels read by pandas are often numpy ints)."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def model_from_json(text, estimator_name):
    """Read :func:`model_to_json` output.

    Returns
    -------
    params : dict
    fitted : dict
        The fitted public attributes, as arrays of their dtypes, and ``privacy_ledger_``.
    forest : Forest

    Raises
    ------
    ValueError
        Not a dpboost model, another estimator class, or an unknown format version.
    """
    doc = json.loads(text)
    if doc.get("format") != "dpboost" or doc.get("version") != FORMAT_VERSION:
        raise ValueError(f"not a dpboost model of format version {FORMAT_VERSION}: "
                         f"format={doc.get('format')!r}, version={doc.get('version')!r}")
    if doc["estimator"] != estimator_name:
        raise ValueError(f"the JSON holds a {doc['estimator']}, not a {estimator_name}")
    params = doc["params"]
    for key in ("categories", "feature_bounds", "monotonic_cst"):
        if isinstance(params.get(key), dict):
            params[key] = {k: v for k, v in params[key]["pairs"]}
        elif key == "categories" and isinstance(params.get(key), list):  # first writers: pairs
            params[key] = {k: v for k, v in params[key]}
    f = doc["fitted"]
    fitted = {name: f[name] for name in ("n_features_in_", "privacy_spent_")}
    for name, dtype in _ARRAYS.items():
        if name in f:
            fitted[name] = np.array(f[name], dtype=dtype)
    fitted["categories_"] = {j: np.array(v, dtype=object) for j, v in f.get("categories_", [])}
    if "target_bounds_" in f:
        fitted["target_bounds_"] = tuple(f["target_bounds_"])
    fitted["privacy_ledger_"] = [LedgerEntry(**{"fit": f.get("fit_id", ""), **e})
                                 for e in f["privacy_ledger_"]]
    # Files of the first writers hold no bin_codes when the grid had max_bins bins.
    binner = BoundsBinner(fitted["feature_bounds_"], f.get("bin_codes", params["max_bins"]),
                          f.get("bin_thresholds"))
    split_feature = np.array(f["split_feature"], dtype=np.int32)
    forest = Forest(split_feature, np.array(f["split_bin"], dtype=np.uint8),
                    np.array(f["missing_left"], dtype=np.bool_),
                    np.array(f["leaf_value"], dtype=np.float64), binner,
                    split_feature.shape[0] // _n_outputs(fitted),
                    None if "leaf_statistics" not in f
                    else np.array(f["leaf_statistics"], dtype=np.float64))
    return params, fitted, forest


def _n_outputs(fitted):
    """Trees per stage: one per class with more than two classes, else one (``n_estimators``
    may be "auto": the stages are counted from the trees)."""
    classes = fitted.get("classes_")
    return 1 if classes is None or len(classes) <= 2 else len(classes)

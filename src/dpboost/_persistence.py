"""The fitted model as versioned JSON: public inputs, released values and the ledger only.

Reads and writes a :class:`~dpboost._predictor.Forest`, the fitted public attributes and the
ledger; never a statistic of the training data (docs/privacy.md, rule 4).
"""

import dataclasses
import json
import os
import re
import sys
import warnings
from datetime import date, datetime
from decimal import Decimal

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils._param_validation import validate_parameter_constraints

from ._accounting import LedgerEntry
from ._binning import BoundsBinner
from ._common import MAX_BINS, n_internal_nodes
from ._parameters import check_n_jobs
from ._predictor import Forest

#: Version of the JSON model format written by :func:`model_to_json`.
FORMAT_VERSION = 1

#: Fitted public attributes stored as lists.
_ARRAYS = ("feature_bounds_", "feature_names_in_", "classes_")


#: The fitted public attributes a model's JSON holds (those of them the estimator has).
FITTED = ("n_features_in_", "feature_bounds_", "categories_", "privacy_spent_", "feature_names_in_",
          "classes_", "target_bounds_")


def model_to_json(estimator_name, params, fitted, forest, ledger, choices=None):
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
    choices : tuple of tuples of LedgerEntry, or None, default=None
        The plans the first fit's private row count chose among (``FitResult.choices``),
        which ``privacy_spent_`` composes; written without their fit's identifier.

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
            # Object arrays keep each category value's type (a str array would not).
            params[key] = {"pairs": [[k, np.asarray(v, dtype=object).tolist()]
                                     for k, v in params[key].items()]}
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
    stored["privacy_ledger_"] = written_ledger(ledger, keep_fit=not one_fit)
    if choices is not None:
        stored["privacy_choices"] = [written_ledger(plan, keep_fit=False) for plan in choices]
    stored.update(split_feature=forest.split_feature.tolist(),
                  split_bin=forest.split_bin.tolist(),
                  missing_left=forest.missing_left.tolist(),
                  leaf_value=forest.leaf_value.tolist(), bin_codes=forest.binner.max_bins)
    if np.isfinite(forest.leaf_statistics).all():
        # released (gradient sum, weight) of the leaves; Laplace leaves release none (NaN)
        stored["leaf_statistics"] = forest.leaf_statistics.tolist()
    if forest.binner.custom_thresholds is not None:
        # split_candidates="sketch" (thresholds released by the sketch, post-processing) or
        # "log" (public thresholds of the bounds)
        stored["bin_thresholds"] = forest.binner.custom_thresholds.tolist()
    return json.dumps({"format": "dpboost", "version": FORMAT_VERSION,
                       "dpboost_version": __version__, "estimator": estimator_name,
                       "params": params, "fitted": stored}, default=_json_scalar)


def _tagged_types():
    """The types written as ``{tag: str(value)}``, by tag, a subclass before its base (a pandas
    Timestamp is a datetime, a datetime a date)."""
    pandas = sys.modules.get("pandas")  # a Timestamp exists only once pandas is imported
    return {"Decimal": Decimal, "datetime64": np.datetime64,
            "Timestamp": () if pandas is None else pandas.Timestamp, "datetime": datetime,
            "date": date}


def _json_scalar(value):
    """JSON form of a value JSON has no type for (category values and labels keep the type of
    a column's cells): a Decimal, a numpy datetime64, a pandas Timestamp, a datetime or a date
    as ``{type name: str(value)}``, which :func:`_read_value` parses back to the same type and
    text (``Decimal("1.00")`` stays ``Decimal("1.00")``, a timestamp keeps its nanoseconds and
    UTC offset); any other numpy scalar as its Python value."""
    for tag, kind in _tagged_types().items():
        if isinstance(value, kind):
            return {tag: str(value)}
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} value {value!r} cannot be written to a model file "
                    f"(JSON values, numpy scalars and {', '.join(_tagged_types())} can)")


def _timestamp(text):
    """A pandas Timestamp of :func:`_json_scalar`'s text."""
    try:
        import pandas
    except ImportError:
        raise ValueError("a Timestamp value needs pandas installed") from None
    return pandas.Timestamp(text)


#: The parser of each tag of :func:`_json_scalar`.
_PARSERS = {"Decimal": Decimal, "datetime64": np.datetime64, "Timestamp": _timestamp,
            "datetime": datetime.fromisoformat, "date": date.fromisoformat}

#: Numpy dtype kinds that JSON lists of each target kind may hold: JSON integers for integer
#: arrays, any JSON number for float arrays, true/false for boolean arrays.
_KINDS = {"i": "iu", "u": "iu", "f": "iuf", "b": "b"}


def read_source(source):
    """The document of ``from_json`` / ``load_model``'s argument: JSON text, a path or a dict.

    A ``str`` is JSON text (what ``to_json`` returns), an ``os.PathLike`` (``pathlib.Path``)
    the path of a file holding it, read as UTF-8; a dict is the parsed document itself.

    Returns
    -------
    doc : object
        The parsed JSON (checked by :func:`model_from_json`).

    Raises
    ------
    ValueError
        "model file: " and why: a file that is not UTF-8 text or not JSON (a truncated file).
    OSError
        The path cannot be read (``FileNotFoundError``, ...).
    TypeError
        ``source`` is none of the three.
    """
    if isinstance(source, dict):
        return source
    if isinstance(source, str):
        text = source
    elif isinstance(source, os.PathLike):
        with open(source, "rb") as fh:
            data = fh.read()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ValueError(f"model file: {os.fspath(source)!r} is not UTF-8 text (byte "
                             f"{error.start}): not a dpboost model") from None
    else:
        raise TypeError(f"source is a {type(source).__name__}; expected JSON text (str), a "
                        "path (os.PathLike) or a dict")
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("model file: not JSON text (nested too deeply)") from None
    except ValueError as error:  # JSONDecodeError (a truncated file), or too many digits
        hint = ""
        if isinstance(source, str) and "\n" not in source and len(source) < 4096 \
                and os.path.isfile(source):
            hint = (f"; {source!r} is a file: pass pathlib.Path({source!r}), or use "
                    "load_model")
        raise ValueError(f"model file: not JSON text ({error}){hint}") from None


def model_from_json(doc, estimator_name):
    """Read :func:`model_to_json` output, checking every field before it is used.

    A model file is untrusted input, and the prediction kernel reads the forest's arrays
    without bounds checks (:meth:`~dpboost._predictor.Forest.check`): the document's structure,
    the parameters (the estimator's constraints), the fitted attributes (shapes, ranges, finite
    values, categories and bounds consistent with ``n_features_in_``), the ledger's entries and
    the forest (trees per output, depth, feature and bin indices, leaf values) are all checked
    on load, once.

    Parameters
    ----------
    doc : object
        The parsed document (:func:`read_source`).
    estimator_name : {"DPGBClassifier", "DPGBRegressor"}

    Returns
    -------
    params : dict
    fitted : dict
        The fitted public attributes, as arrays of their dtypes, and ``privacy_ledger_``.
    forest : Forest

    Raises
    ------
    ValueError
        "model file: " and what is wrong, naming the field, its value and the rule: text that
        is not JSON, not a dpboost model, another estimator class, a newer or unknown format
        version, a missing field, or a field of the wrong type, shape or range.

    Warns
    -----
    UserWarning
        The file was written by a newer dpboost than this one (its format is readable, but
        a model it describes may rely on behaviour this version lacks).
    """
    try:
        return _read_model(doc, estimator_name)
    except ValueError as error:
        raise ValueError(f"model file: {error}") from None


def _read_model(doc, estimator_name):
    """:func:`model_from_json` of a parsed document, its errors without the prefix."""
    version = doc.get("version") if isinstance(doc, dict) else None
    if (isinstance(doc, dict) and doc.get("format") == "dpboost" and isinstance(version, int)
            and not isinstance(version, bool) and version > FORMAT_VERSION):
        raise ValueError(f"format version {version}, written by a newer dpboost "
                         f"({_shown(doc.get('dpboost_version'))}); this one reads version "
                         f"{FORMAT_VERSION}: upgrade dpboost to load it")
    if not isinstance(doc, dict) or doc.get("format") != "dpboost" or version != FORMAT_VERSION:
        found = (f"format={_shown(doc.get('format'))}, version={_shown(version)}"
                 if isinstance(doc, dict) else f"a JSON {type(doc).__name__}")
        raise ValueError(f"not a dpboost model of format version {FORMAT_VERSION}: {found}")
    _warn_if_newer(doc.get("dpboost_version"))
    if doc.get("estimator") != estimator_name:
        raise ValueError(f"the file holds a {_shown(doc.get('estimator'))}, not a "
                         f"{estimator_name}")
    from . import _estimators  # which imports this module

    estimator_class = getattr(_estimators, estimator_name)
    params, resolved = _read_params(_get(doc, "params", dict, "the model"), estimator_class)
    f = _get(doc, "fitted", dict, "the model")
    fitted = _read_fitted(f, issubclass(estimator_class, ClassifierMixin))
    return params, fitted, _read_forest(f, fitted, resolved)


def _read_params(stored, estimator_class):
    """The stored parameters, and with the defaults of those not stored, both checked against
    the estimator's constraints (prediction reads ``loss`` and ``n_jobs``, the forest's shape
    ``max_depth`` and ``n_estimators``)."""
    defaults = estimator_class().get_params(deep=False)
    unknown = sorted(set(stored) - set(defaults))
    if unknown:
        raise ValueError(f"params holds {unknown}, not parameters of {estimator_class.__name__}")
    params = dict(stored)
    for key in ("categories", "feature_bounds", "monotonic_cst"):
        if isinstance(params.get(key), dict):
            params[key] = _read_pairs(params[key], f"params.{key}")
        elif key == "categories" and isinstance(params.get(key), list):  # first writers: pairs
            params[key] = _read_pairs({"pairs": params[key]}, f"params.{key}")
    if isinstance(params.get("categories"), dict):
        params["categories"] = {
            k: v if isinstance(v, str) else _read_values(v, f"params.categories[{k!r}]")
            for k, v in params["categories"].items()}
    if isinstance(params.get("classes"), list):
        params["classes"] = _read_values(params["classes"], "params.classes")
    resolved = {**defaults, **params}
    try:
        validate_parameter_constraints(estimator_class._parameter_constraints, resolved,
                                       caller_name=estimator_class.__name__)
        check_n_jobs(resolved["n_jobs"], 1)
    except ValueError as error:
        raise ValueError(f"params: {error}") from None
    return params, resolved


def _read_pairs(value, name):
    """A dict written as ``{"pairs": [[key, value], ...]}`` (column names or indices as keys)."""
    pairs = value.get("pairs") if set(value) == {"pairs"} else None
    if not (isinstance(pairs, list) and all(isinstance(p, list) and len(p) == 2
                                            and isinstance(p[0], (str, int)) for p in pairs)):
        raise ValueError(f"{name} holds {_shown(value)}, must be "
                         "{\"pairs\": [[column, value], ...]}")
    return {k: v for k, v in pairs}


def _read_fitted(f, classifier):
    """The fitted public attributes of ``fitted``: ``n_features_in_`` and everything sized by
    it, the target (``classes_`` or ``target_bounds_``), the spend and the ledger."""
    n_features = _integer(_get(f, "n_features_in_"), "n_features_in_", 1)
    bounds = _array(_get(f, "feature_bounds_"), "feature_bounds_", np.float64, 2)
    if bounds.shape != (n_features, 2):
        raise ValueError(f"feature_bounds_ has shape {bounds.shape}, must be "
                         f"(n_features_in_, 2) = ({n_features}, 2)")
    with np.errstate(over="ignore"):
        valid = (np.isfinite(bounds[:, 1] - bounds[:, 0]) & (bounds[:, 0] < bounds[:, 1]))
    if not valid.all():
        j = int(np.argmin(valid))
        raise ValueError(f"feature_bounds_[{j}] holds {bounds[j].tolist()}, must be finite with "
                         "lower < upper")
    fitted = {"n_features_in_": n_features, "feature_bounds_": bounds}
    if "feature_names_in_" in f:
        names = f["feature_names_in_"]
        if not (isinstance(names, list) and len(names) == n_features
                and all(isinstance(name, str) for name in names)
                and len(set(names)) == n_features):
            raise ValueError(f"feature_names_in_ holds {_shown(names)}, must be a list of "
                             f"n_features_in_={n_features} distinct strings")
        fitted["feature_names_in_"] = np.array(names, dtype=object)
    if classifier:
        classes = _read_values(_get(f, "classes_"), "classes_")
        if len(classes) < 2 or len(set(classes)) < len(classes):
            raise ValueError(f"classes_ holds {_shown(classes)}, must be at least two distinct "
                             "labels")
        fitted["classes_"] = np.array(classes)
    else:
        target = _array(_get(f, "target_bounds_"), "target_bounds_", np.float64, 1)
        with np.errstate(over="ignore"):
            if target.shape != (2,) or not (target[0] < target[1]
                                            and np.isfinite(target[1] - target[0])):
                raise ValueError(f"target_bounds_ holds {target.tolist()}, must be (lower, "
                                 "upper), finite with lower < upper")
        fitted["target_bounds_"] = (float(target[0]), float(target[1]))
    fitted["categories_"] = _read_categories(_get(f, "categories_", list), bounds)
    fitted["privacy_spent_"] = _number(_get(f, "privacy_spent_"), "privacy_spent_")
    fit_id = f.get("fit_id", "")
    if not isinstance(fit_id, str):
        raise ValueError(f"fit_id holds {_shown(fit_id)}, must be a string")
    fitted["privacy_ledger_"] = list(read_ledger(_get(f, "privacy_ledger_", list),
                                                 "privacy_ledger_", fit_id))
    if "privacy_choices" in f:
        # The first fit's: its entries lead the ledger.
        first = fitted["privacy_ledger_"][0].fit if fitted["privacy_ledger_"] else fit_id
        plans = _get(f, "privacy_choices", list)
        if not plans or not all(isinstance(plan, list) and plan for plan in plans):
            raise ValueError(f"privacy_choices holds {_shown(plans)}, must be an array of "
                             "non-empty ledgers")
        fitted["_privacy_choices"] = tuple(read_ledger(plan, f"privacy_choices[{k}]", first)
                                           for k, plan in enumerate(plans))
    return fitted


def _read_categories(pairs, bounds):
    """``categories_`` from its ``[feature, values]`` pairs: distinct features of the model,
    each binned on ``(-0.5, n_categories - 0.5)`` (one bin at least; ``_boosting``)."""
    categories = {}
    for i, pair in enumerate(pairs):
        if not (isinstance(pair, list) and len(pair) == 2):
            raise ValueError(f"categories_[{i}] holds {_shown(pair)}, must be a pair "
                             "[feature, values]")
        j = _integer(pair[0], f"categories_[{i}][0]", 0, bounds.shape[0] - 1)
        if j in categories:
            raise ValueError(f"categories_[{i}] repeats feature {j}")
        values = _read_values(pair[1], f"categories_[{i}][1]")
        expected = [-0.5, max(len(values), 1) - 0.5]
        if bounds[j].tolist() != expected:
            raise ValueError(f"feature_bounds_[{j}] holds {bounds[j].tolist()}, must be "
                             f"{expected} for the {len(values)} categories of feature {j}")
        categories[j] = np.array(values, dtype=object)
    return categories


def written_entry(entry, keep_fit=True):
    """A :class:`LedgerEntry` as a JSON object: its fields but those at their defaults (read
    back as such), and without its fit's identifier unless ``keep_fit``.

    Returns
    -------
    fields : dict
    """
    return {k: v for k, v in vars(entry).items()
            if (k != "fit" or keep_fit) and not (
                k in _DEFAULTS and v == _DEFAULTS[k] and type(v) is type(_DEFAULTS[k]))}


#: The fields of :class:`LedgerEntry` that have a default, with it.
_DEFAULTS = {f.name: f.default for f in dataclasses.fields(LedgerEntry)
             if f.default is not dataclasses.MISSING}

#: The most entries a stored ledger may expand to (a run's ``repeat`` is read from the file).
MAX_LEDGER_ENTRIES = 10 ** 8


def written_ledger(entries, keep_fit=True):
    """A ledger as a JSON array: each entry as :func:`written_entry`, and the entries of
    consecutive trees that repeat the tree before's, ``tree`` and ``group`` moved by one step,
    as one run ``{"repeat": k, "step": [tree step, group step], "entries": [...]}`` (the first
    tree's entries): a default fit's trees make a few runs, not one object per release (0.7 MB
    of a 400-tree model's file). :func:`read_ledger` gives the entries back.

    Returns
    -------
    items : list of dict
    """
    segments = []  # the entries of one tree (tree >= 0), or one entry of no tree
    for entry in entries:
        if segments and entry.tree >= 0 and segments[-1][-1].tree == entry.tree:
            segments[-1].append(entry)
        else:
            segments.append([entry])
    items, i = [], 0
    while i < len(segments):
        block, repeat, step = segments[i], 1, None
        while i + repeat < len(segments) and block[0].tree >= 0:
            shift = _shift(segments[i + repeat - 1], segments[i + repeat])
            if shift is None or (step is not None and shift != step):
                break
            step, repeat = shift, repeat + 1
        written = [written_entry(e, keep_fit) for e in block]
        items += ([{"repeat": repeat, "step": list(step), "entries": written}] if repeat > 1
                  else written)
        i += repeat
    return items


def _shift(a, b):
    """``(tree step, group step)`` when the entries ``b`` are ``a``'s with ``tree`` and
    ``group`` moved by it (the same for every entry, the tree forward); None otherwise."""
    if len(a) != len(b):
        return None
    steps = {(y.tree - x.tree, y.group - x.group) for x, y in zip(a, b)}
    if len(steps) != 1:
        return None
    step = steps.pop()
    # vars: every field, the fit's identifier too (which LedgerEntry's == leaves out)
    if step[0] <= 0 or any(vars(dataclasses.replace(x, tree=y.tree, group=y.group)) != vars(y)
                           for x, y in zip(a, b)):
        return None
    return step


def read_ledger(items, name, fit_id=""):
    """The entries of a stored ledger (:func:`written_ledger`; a ledger of plain entries, as
    the first writers stored, reads the same), each field checked.

    Parameters
    ----------
    items : list
        The stored JSON array.
    name : str
        Where the ledger is, for the messages.
    fit_id : str, default=""
        The fit's identifier of entries stored without theirs.

    Returns
    -------
    entries : tuple of LedgerEntry

    Raises
    ------
    ValueError
        An item that is neither an entry nor a run, a field of the wrong type, or a ledger of
        more than :data:`MAX_LEDGER_ENTRIES` entries.
    """
    if not isinstance(items, list):
        raise ValueError(f"{name} holds {_shown(items)}, must be an array")
    entries = []
    for i, item in enumerate(items):
        where = f"{name}[{i}]"
        if not (isinstance(item, dict) and "repeat" in item):
            entries.append(_read_entry(item, where, fit_id))
            continue
        if set(item) != {"repeat", "step", "entries"}:
            raise ValueError(f"{where} holds the fields {sorted(item)}; a run holds repeat, "
                             "step and entries")
        repeat = _integer(item["repeat"], f"{where}.repeat", 2, MAX_LEDGER_ENTRIES)
        step, block = item["step"], item["entries"]
        if not (isinstance(step, list) and len(step) == 2):
            raise ValueError(f"{where}.step holds {_shown(step)}, must be [tree step, "
                             "group step]")
        tree_step = _integer(step[0], f"{where}.step[0]", 1)
        group_step = _integer(step[1], f"{where}.step[1]")
        if not (isinstance(block, list) and block):
            raise ValueError(f"{where}.entries holds {_shown(block)}, must be a non-empty "
                             "array of entries")
        if len(entries) + repeat * len(block) > MAX_LEDGER_ENTRIES:
            raise ValueError(f"{name} expands to more than {MAX_LEDGER_ENTRIES} entries")
        block = [_read_entry(e, f"{where}.entries[{k}]", fit_id) for k, e in enumerate(block)]
        entries += [dataclasses.replace(e, tree=e.tree + r * tree_step,
                                        group=e.group + r * group_step)
                    for r in range(repeat) for e in block]
    return tuple(entries)


def _read_entry(entry, name, fit_id):
    """A :class:`LedgerEntry` of a stored one: its fields, each of its type, and the fit's
    identifier unless the entry has its own."""
    if not isinstance(entry, dict):
        raise ValueError(f"{name} holds {_shown(entry)}, must be an object")
    fields = {field.name: field for field in dataclasses.fields(LedgerEntry)}
    unknown = sorted(set(entry) - set(fields))
    if unknown:
        raise ValueError(f"{name} holds {unknown}, not fields of a ledger entry")
    values = {"fit": fit_id}
    for field in fields.values():
        if field.name in entry:
            values[field.name] = _read_field(entry[field.name], f"{name}.{field.name}",
                                             getattr(field.type, "__name__", field.type))
        elif field.default is dataclasses.MISSING:
            raise ValueError(f"{name} has no field {field.name!r}")
    return LedgerEntry(**values)


def _read_field(value, name, kind):
    """A ledger entry's field of type ``kind``: a float is a cost, scale, rate or threshold
    (a number >= 0, inf allowed); an int an index (of any sign: -1 is "no tree")."""
    if kind == "float":
        return _number(value, name)
    if kind == "int":
        return _integer(value, name)
    if not isinstance(value, {"str": str, "bool": bool}[kind]):
        raise ValueError(f"{name} holds {_shown(value)}, must be a {kind}")
    return value


def _read_forest(f, fitted, params):
    """The forest of ``fitted``, checked (:meth:`Forest.check`) against the model's features,
    outputs (classes), ``max_depth`` and ``n_estimators`` (unless "auto")."""
    split_feature = _array(_get(f, "split_feature"), "split_feature", np.int32, 2)
    n_internal = n_internal_nodes(params["max_depth"])
    if split_feature.shape[1] != n_internal:
        raise ValueError(f"split_feature holds trees of {split_feature.shape[1]} internal "
                         f"nodes, must be 2**max_depth - 1 = {n_internal}")
    n_outputs = _n_outputs(fitted)
    n_stages = (split_feature.shape[0] // n_outputs if params["n_estimators"] == "auto"
                else params["n_estimators"])
    # Files of the first writers hold no bin_codes when the grid had max_bins bins.
    n_bins = _integer(f.get("bin_codes", params["max_bins"]), "bin_codes", 2, MAX_BINS)
    thresholds = (None if "bin_thresholds" not in f
                  else _array(f["bin_thresholds"], "bin_thresholds", np.float64, 2))
    leaf_statistics = (None if "leaf_statistics" not in f
                       else _array(f["leaf_statistics"], "leaf_statistics", np.float64, 3))
    forest = Forest(split_feature, _array(_get(f, "split_bin"), "split_bin", np.uint8, 2),
                    _array(_get(f, "missing_left"), "missing_left", np.bool_, 2),
                    _array(_get(f, "leaf_value"), "leaf_value", np.float64, 2),
                    BoundsBinner(fitted["feature_bounds_"], n_bins, thresholds), n_stages,
                    leaf_statistics)
    forest.check(fitted["n_features_in_"], n_outputs)
    return forest


def _get(mapping, key, kind=object, where="fitted"):
    """``mapping[key]``, which must be a ``kind``."""
    if key not in mapping:
        raise ValueError(f"{where} has no field {key!r}")
    if not isinstance(mapping[key], kind):
        raise ValueError(f"{key} holds {_shown(mapping[key])}, must be a JSON "
                         f"{'object' if kind is dict else 'array'}")
    return mapping[key]


def _integer(value, name, low=None, high=None):
    """``value``, which must be a JSON integer in ``[low, high]`` (None: unbounded)."""
    if (isinstance(value, bool) or not isinstance(value, int)
            or (low is not None and value < low) or (high is not None and value > high)):
        raise ValueError(f"{name} holds {_shown(value)}, must be an integer in "
                         f"[{'-inf' if low is None else low}, {'inf' if high is None else high}]")
    return value


def _number(value, name):
    """``value`` as a float: a JSON number >= 0, not NaN (inf allowed)."""
    try:
        number = (float(value) if isinstance(value, (int, float)) and not isinstance(value, bool)
                  else np.nan)
    except OverflowError:  # an integer beyond float64
        number = np.nan
    if not number >= 0:
        raise ValueError(f"{name} holds {_shown(value)}, must be a number >= 0")
    return number


def _array(value, name, dtype, ndim):
    """``value`` (nested JSON lists) as an array of ``dtype``, refused unless rectangular of
    ``ndim`` dimensions with every element a JSON value of the dtype's kind that ``dtype``
    holds exactly (numpy would cast ``"3"``, ``1.5`` or ``2**40`` to int32 without a word)."""
    dtype = np.dtype(dtype)
    what = {"i": "integers", "u": "integers", "f": "numbers", "b": "booleans"}[dtype.kind]
    try:
        array = np.array(value)
    except ValueError:  # ragged lists
        array = None
    if (array is None or array.ndim != ndim
            or (array.size and array.dtype.kind not in _KINDS[dtype.kind])):
        raise ValueError(f"{name} must be a {ndim}-D array (lists of equal lengths) of {what}")
    if array.size and dtype.kind in "iu":
        info = np.iinfo(dtype)
        outside = np.argwhere((array < info.min) | (array > info.max))
        if outside.size:
            where = tuple(int(i) for i in outside[0])
            raise ValueError(f"{name}{list(where)} holds {array[where]}, must be in "
                             f"[{info.min}, {info.max}] ({dtype})")
    return array.astype(dtype)


def _read_values(value, name):
    """Category values or class labels: a list of JSON strings, numbers and booleans, and
    ``{tag: text}`` of :func:`_json_scalar`."""
    if not isinstance(value, list):
        raise ValueError(f"{name} holds {_shown(value)}, must be a list of values")
    return [_read_value(v, f"{name}[{i}]") for i, v in enumerate(value)]


def _read_value(value, name):
    """One value of :func:`_read_values`."""
    if isinstance(value, (str, int, float)):  # bool is an int
        return value
    if isinstance(value, dict) and len(value) == 1:
        ((tag, text),) = value.items()
        if tag in _PARSERS and isinstance(text, str):
            try:
                return _PARSERS[tag](text)
            except (ValueError, ArithmeticError) as error:  # decimal.InvalidOperation
                raise ValueError(f"{name} holds {_shown(text)}, not the text of a {tag} "
                                 f"({error})") from None
    raise ValueError(f"{name} holds {_shown(value)}, must be a string, a number, a boolean or "
                     f"{{type: text}} of a {', '.join(_PARSERS)}")


def _release(version):
    """The leading release numbers of a version string (``"1.2.0rc1"`` -> (1, 2, 0)), or None."""
    match = re.match(r"\d+(\.\d+)*", version) if isinstance(version, str) else None
    return tuple(int(part) for part in match.group().split(".")) if match else None


def _warn_if_newer(written_by):
    """Warn when the file's ``dpboost_version`` is a later release than this library's."""
    from . import __version__

    written, running = _release(written_by), _release(__version__)
    if written is not None and running is not None and written > running:
        warnings.warn(f"model file written by dpboost {written_by}, newer than this dpboost "
                      f"{__version__}: its format is read, but upgrade dpboost to be sure the "
                      "model behaves as it did", UserWarning, stacklevel=4)


def _shown(value, width=60):
    """``repr(value)``, cut to ``width`` characters (a message quotes what a file holds)."""
    text = repr(value)
    return text if len(text) <= width else text[:width - 3] + "..."


def _n_outputs(fitted):
    """Trees per stage: one per class with more than two classes, else one (``n_estimators``
    may be "auto": the stages are counted from the trees)."""
    classes = fitted.get("classes_")
    return 1 if classes is None or len(classes) <= 2 else len(classes)

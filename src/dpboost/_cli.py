"""The commands ``train``, ``predict``, ``report`` and ``schema`` of ``dpboost`` (the parser is
in :mod:`dpboost.__main__`), and the schema file they read.

Schema file
-----------
The public inputs of ``dpboost train --schema SCHEMA.json``: a JSON object whose keys are all
optional. An input it leaves out is read from the data, with a :class:`PrivacyLeakWarning` (the
model is then not differentially private with respect to it)::

    {
      "description": "free text, ignored",
      "bounds": {"age": [17, 90], "hours_per_week": [1, 99]},
      "categories": {"workclass": ["Private", "Self-emp-not-inc", "Local-gov"]},
      "categorical_features": ["zip_code"],
      "classes": [0, 1],
      "target_bounds": [0, 500000]
    }

``bounds``
    ``{column: [lower, upper]}``, finite numbers with ``lower < upper`` (the estimator's
    ``feature_bounds``; values outside are clipped). Given, it must hold every numeric column:
    every column of the CSV but the target and the categorical ones. ``"private"`` releases them
    in the fit (10 % of epsilon). Absent: read from the data.
``categories``
    ``{column: [value, ...]}``: the column is categorical and its category list public, in the
    order that defines the split candidates ("first k categories vs the rest"). A list holds at
    least one value, all strings, all numbers or all booleans, no two alike. A cell matches a
    value it spells: the same text, or for numbers the same number (``2`` and ``2.0`` both match
    ``2``); a cell matching none, or empty, is missing (the missing-value bin).
``categorical_features``
    ``[column, ...]``: further categorical columns whose lists are not public; each list is read
    from the data. (Columns of ``categories`` need not be repeated here.)
``classes``
    The public labels (classification), at least two, all strings, all numbers or all booleans,
    distinct, matched to the target's cells as category values are; a record whose label
    matches none is left out of training.
``target_bounds``
    ``[lower, upper]`` of the target (regression; targets outside are clipped) or ``"private"``.

It is the format of :data:`dpboost.datasets.SCHEMAS` (``bounds``, ``categories``) plus the
target's public inputs: ``dpboost schema adult`` writes Adult's.

CSV files
---------
With a schema, the schema alone types every column and each cell is converted on its own by
its column's type (:mod:`dpboost._csv`, the record boundary of the command line: a record is one
line, a malformed line is a record whose every cell is missing). ``dpboost predict`` reads its
file the same way, each column typed by the model (the columns of ``categories_`` categorical,
the others numeric), one output row per record.

Without a schema file every input is read from the data with a :class:`PrivacyLeakWarning`, and
so are the columns' types: pandas reads the file as :func:`dpboost.datasets.read_csv` does (empty
fields and ``?`` are missing, nothing else is; numbers parsed exactly, :func:`exact_floats`),
inferring each column's type from all its cells, and the columns it reads as text are
categorical (``categorical_features="from_dtype"``), as ``dpboost demo --data`` does. One record
can then change a column's type (a word in a numeric column makes it text), and one malformed
line fails the read: give a schema for data whose records you do not trust.

Privacy of the output: no message, warning or summary line quotes a cell or counts records, and
with a schema none depends on one record's value; pandas' parser messages, which may quote a
line, are replaced by their kind. Predictions and the model file hold released values only.
"""

import json
import math
import os
import sys
import warnings
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ._csv import NUMBER, TEXT, as_float, is_number, read_records, typed_columns
from ._estimators import DPGBClassifier, DPGBRegressor
from .datasets import NA_VALUES, SCHEMAS

#: The keys a schema file may hold.
SCHEMA_KEYS = ("description", "bounds", "categories", "categorical_features", "classes",
               "target_bounds")

#: Estimator parameters that ``--param`` may not set: the schema's and the flags' own.
_NOT_PARAMS = {"feature_bounds": "--schema", "categories": "--schema",
               "categorical_features": "--schema", "classes": "--schema",
               "target_bounds": "--schema", "epsilon": "--epsilon", "delta": "--delta",
               "random_state": "--random-state", "n_estimators": "--n-estimators",
               "max_depth": "--max-depth", "verbose": "--verbose",
               "accountant": "the Python API"}

_ESTIMATORS = {"DPGBClassifier": DPGBClassifier, "DPGBRegressor": DPGBRegressor}


class CommandError(Exception):
    """A refused run: its one-line message goes to stderr, the exit status is ``status``."""

    status = 1


class UsageError(CommandError):
    """A bad argument found after parsing (exit status 2, as argparse's)."""

    status = 2


def run(args, prog):
    """Run ``args.command``, printing warnings and errors as single lines on stderr.

    Parameters
    ----------
    args : argparse.Namespace
    prog : str
        The prefix of every line on stderr, e.g. ``"dpboost train"``.

    Returns
    -------
    status : int
        0, 1 (refused: unreadable file, missing column, invalid schema or model, the estimator's
        own ``ValueError``) or 2 (bad argument).
    """
    commands = {"train": train_command, "predict": predict_command, "report": report_command,
                "schema": schema_command}
    try:
        with _one_line_warnings(prog):
            commands[args.command](args)
        return 0
    except CommandError as error:
        return _fail(prog, str(error), error.status)
    except ValueError as error:
        # The estimators' messages name parameters and columns, never a record's value.
        return _fail(prog, str(error))
    except BrokenPipeError:  # the reader of standard output left (`| head`): stop quietly
        _silence_stdout()
        return 141  # 128 + SIGPIPE, the status a shell reports for a tool SIGPIPE stopped
    except OSError as error:  # writing the output
        target = error.filename or "the output"
        return _fail(prog, f"cannot write {target}: {error.strerror or type(error).__name__}")
    except Warning as error:  # a warning turned into an error by -W error
        return _fail(prog, f"{type(error).__name__}: {error}")
    except KeyboardInterrupt:
        return _fail(prog, "interrupted", 130)


def _silence_stdout():
    """Point standard output at /dev/null, so that flushing it at exit raises no second
    BrokenPipeError (Python's documented recipe, "Note on SIGPIPE")."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no file descriptor (a captured stream): nothing to flush
        pass


def _fail(prog, message, status=1):
    print(f"{prog}: error: {' '.join(message.split())}", file=sys.stderr)
    return status


@contextmanager
def _one_line_warnings(prog):
    """Show each distinct warning once, as ``prog: warning: Category: message`` on stderr (the
    filters, ``-W`` included, still decide which are shown)."""
    seen = set()

    def show(message, category, filename, lineno, file=None, line=None):
        text = " ".join(str(message).split())
        if (category, text) not in seen:
            seen.add((category, text))
            print(f"{prog}: warning: {category.__name__}: {text}", file=sys.stderr)

    with warnings.catch_warnings():
        warnings.showwarning = show
        yield


# --- the schema file ------------------------------------------------------------------------

def read_schema(path):
    """Read and check a schema file (format: this module's docstring).

    Parameters
    ----------
    path : path-like

    Returns
    -------
    schema : dict
        The file's keys but ``description``, checked; ``bounds`` and ``target_bounds`` as
        tuples of floats (or ``"private"``).

    Raises
    ------
    CommandError
        An unreadable file, invalid JSON, an unknown key or a value of the wrong form (the
        message names the key and the column; a schema is public, so it may quote it).
    """
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise CommandError(f"cannot read schema {path}: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise CommandError(f"schema {path} is not UTF-8 text") from None
    except json.JSONDecodeError as error:
        raise CommandError(f"schema {path} is not valid JSON: {error}") from None
    where = f"schema {path}"
    if not isinstance(doc, dict):
        raise CommandError(f"{where} must be a JSON object with the keys {list(SCHEMA_KEYS)}")
    unknown = [k for k in doc if k not in SCHEMA_KEYS]
    if unknown:
        raise CommandError(f"{where}: unknown key {unknown[0]!r}; a schema holds "
                           f"{list(SCHEMA_KEYS)}")
    schema = {}
    if "bounds" in doc:
        bounds = doc["bounds"]
        if bounds == "private":
            schema["bounds"] = bounds
        elif isinstance(bounds, dict):
            schema["bounds"] = {column: _pair(pair, f"{where}: bounds[{column!r}]")
                                for column, pair in bounds.items()}
        else:
            raise CommandError(f'{where}: bounds must be {{column: [lower, upper]}} or "private"')
    if "categories" in doc:
        if not isinstance(doc["categories"], dict):
            raise CommandError(f"{where}: categories must be {{column: [value, ...]}}")
        schema["categories"] = {column: _values(values, f"{where}: categories[{column!r}]", 1)
                                for column, values in doc["categories"].items()}
    if "categorical_features" in doc:
        columns = doc["categorical_features"]
        if not (isinstance(columns, list) and all(isinstance(c, str) for c in columns)):
            raise CommandError(f"{where}: categorical_features must be a list of column names")
        schema["categorical_features"] = list(columns)
    if "classes" in doc:
        schema["classes"] = _values(doc["classes"], f"{where}: classes", 2)
    if "target_bounds" in doc:
        target = doc["target_bounds"]
        schema["target_bounds"] = (target if target == "private"
                                   else _pair(target, f"{where}: target_bounds"))
    if "classes" in schema and "target_bounds" in schema:
        raise CommandError(f"{where} holds both classes (classification) and target_bounds "
                           "(regression); keep the one of the task")
    both = [c for c in schema.get("categories", {}) if isinstance(schema.get("bounds"), dict)
            and c in schema["bounds"]]
    if both:
        raise CommandError(f"{where}: column {both[0]!r} has both bounds (numeric) and "
                           "categories (categorical)")
    return schema


def _pair(pair, where):
    """``[lower, upper]``: two finite numbers, ``lower < upper``, as a tuple of floats."""
    numbers = ([as_float(v) for v in pair] if isinstance(pair, list) and len(pair) == 2
               and all(is_number(v) for v in pair) else [None])
    if not (None not in numbers and all(math.isfinite(v) for v in numbers)
            and numbers[0] < numbers[1]):
        raise CommandError(f"{where} = {json.dumps(pair)} must be [lower, upper], finite numbers "
                           "with lower < upper")
    return numbers[0], numbers[1]


def _values(values, where, at_least):
    """A public list of categories or classes: all strings, numbers or booleans, distinct."""
    kinds = {str: "strings", bool: "booleans"}
    if not (isinstance(values, list) and len(values) >= at_least):
        raise CommandError(f"{where} must be a list of at least {at_least} value(s)")
    kind = {kinds.get(type(v), "numbers" if is_number(v) else "other") for v in values}
    if len(kind) > 1 or "other" in kind:
        raise CommandError(f"{where} must hold only strings, only numbers or only booleans")
    keys = [as_float(v) if is_number(v) else v for v in values]
    if None in keys:
        raise CommandError(f"{where} holds a number too large for a float")
    if len(set(keys)) < len(keys):
        raise CommandError(f"{where} holds a value twice")
    return list(values)


def schema_params(schema, columns, target, task):
    """The estimator's public-input parameters for the CSV's ``columns``.

    Parameters
    ----------
    schema : dict
        From :func:`read_schema`.
    columns : list of str
        The CSV's columns but the target, in order.
    target : str
    task : {"classification", "regression"}

    Returns
    -------
    params : dict
        ``feature_bounds``, ``categorical_features`` (a list, empty if no column is
        categorical: the schema, never a dtype, says which are), ``categories`` and ``classes``
        or ``target_bounds``, as the schema gives them (None where it leaves them out).

    Raises
    ------
    CommandError
        A column of the schema that is not in the CSV, or is the target; a numeric column
        without bounds when bounds are given; an input of the other task.
    """
    other = "target_bounds" if task == "classification" else "classes"
    if other in schema:
        raise CommandError(f"the schema has {other}, an input of "
                           f"{'regression' if task == 'classification' else 'classification'}; "
                           f"this is {task} (--task)")
    categories = schema.get("categories", {})
    bounds = schema.get("bounds")
    named = [*categories, *schema.get("categorical_features", []),
             *(bounds if isinstance(bounds, dict) else [])]
    for column in named:
        if column == target:
            raise CommandError(f"the schema describes the target {target!r} as a feature")
        if column not in columns:
            raise CommandError(f"the schema names column {column!r}, which is not in the data")
    categorical = [c for c in columns
                   if c in categories or c in schema.get("categorical_features", [])]
    if isinstance(bounds, dict):
        both = [c for c in categorical if c in bounds]
        missing = [c for c in columns if c not in bounds and c not in categorical]
        if both:
            raise CommandError(f"the schema gives column {both[0]!r} bounds and declares it "
                               "categorical")
        if missing:
            raise CommandError(f"the schema has no bounds for column(s) {missing}: every numeric "
                               "column needs [lower, upper] (or declare it categorical)")
    params = {"feature_bounds": bounds, "categorical_features": categorical,
              "categories": dict(categories) or None}
    if task == "classification":
        params["classes"] = schema.get("classes")
    else:
        params["target_bounds"] = schema.get("target_bounds")
    return params


def column_kinds(params, columns, target):
    """The public type of each column (:func:`typed_columns`' ``kinds``) that the estimator's
    public inputs imply.

    Parameters
    ----------
    params : dict
        From :func:`schema_params`.
    columns : list of str
        The features, in order.
    target : str

    Returns
    -------
    kinds : dict of str to NUMBER, TEXT or list
        The features in order, then the target: a categorical column its public list (TEXT
        without one), any other column NUMBER; the target its public classes (TEXT without
        them) or NUMBER (regression).
    """
    categories = params["categories"] or {}
    kinds = {c: list(categories[c]) if c in categories
             else TEXT if c in params["categorical_features"] else NUMBER for c in columns}
    if "target_bounds" in params:
        kinds[target] = NUMBER
    else:
        kinds[target] = TEXT if params["classes"] is None else list(params["classes"])
    return kinds


def schema_document(name):
    """The schema file of a dataset of :data:`dpboost.datasets.SCHEMAS`, as JSON text: one
    column a line."""
    public = SCHEMAS[name]
    parts = {"description": f"public schema of the shared {name} files (dpboost.datasets, where "
                            "each bound's source is written); target column: target",
             "bounds": {c: list(pair) for c, pair in public.bounds.items()},
             "categories": public.categories, "classes": list(public.classes)}
    lines = []
    for key, value in parts.items():
        if isinstance(value, dict):
            rows = [f"    {json.dumps(k)}: {json.dumps(v)}" for k, v in value.items()]
            lines.append(f"  {json.dumps(key)}: {{\n" + ",\n".join(rows) + "\n  }")
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


# --- CSV files: the record boundary ---------------------------------------------------------





















def _pandas():
    try:
        import pandas as pd
    except ImportError:
        raise CommandError("reading CSV files needs pandas: pip install 'dpboost[demo]' (or "
                           "pip install pandas)") from None
    return pd


def read_table(path):
    """A CSV file as pandas reads it, each column's type inferred from all its cells (without
    a schema only: module docstring, "CSV files").

    Parameters
    ----------
    path : path-like

    Raises
    ------
    CommandError
        pandas missing, an unreadable or unparsable file; the message names the file and the
        kind of failure, never a line of it.
    """
    pd = _pandas()
    try:
        return pd.read_csv(path, keep_default_na=False, na_values=list(NA_VALUES),
                           low_memory=False, **exact_floats(pd))
    except OSError as error:  # missing, a directory, no permission, a broken gzip
        raise CommandError(f"cannot read {path}: {error.strerror or type(error).__name__}"
                           ) from None
    except UnicodeDecodeError:
        raise CommandError(f"cannot read {path}: not UTF-8 text") from None
    except pd.errors.EmptyDataError:
        raise CommandError(f"cannot read {path}: the file is empty (no header line)") from None
    except (ValueError, pd.errors.ParserError) as error:
        # pandas' messages may quote a line of the file: only their kind is shown.
        raise CommandError(f"cannot parse {path} as CSV ({type(error).__name__}); check the "
                           "delimiter (a comma), the quotes and the number of fields of each "
                           "line") from None


def exact_floats(pd):
    """The keyword of ``pd.read_csv`` that parses numbers exactly (as ``float(text)``):
    ``float_precision="round_trip"`` before pandas 3, whose default parser is exact (and which
    deprecates the keyword)."""
    return {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}


# --- models ---------------------------------------------------------------------------------

def load_model(path):
    """The estimator of a model file written by ``train`` (or ``to_json``).

    Returns
    -------
    estimator : DPGBClassifier or DPGBRegressor
    doc : dict
        The parsed JSON.

    Raises
    ------
    CommandError
        An unreadable file, or not a dpboost model this version reads.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
        doc = json.loads(text)
    except OSError as error:
        raise CommandError(f"cannot read {path}: {error.strerror or error}") from None
    except (UnicodeDecodeError, ValueError, RecursionError):  # JSONDecodeError is a ValueError
        raise CommandError(f"{path} is not a dpboost model (not JSON text)") from None
    name = doc.get("estimator") if isinstance(doc, dict) else None
    if name not in _ESTIMATORS:
        raise CommandError(f"{path} is not a dpboost model (no DPGBClassifier or DPGBRegressor "
                           "in it)")
    try:
        return _ESTIMATORS[name].from_json(text), doc
    except ValueError as error:  # from_json checks every field: nothing else escapes it
        raise CommandError(f"{path}: {str(error).removeprefix('model file: ')}") from None


def _check_output(out, *inputs):
    """Refuse an output path before the work: a missing folder, a folder, or an input file."""
    if out is None:
        return
    out = Path(out)
    if not out.parent.is_dir():
        raise CommandError(f"cannot write {out}: no folder {out.parent}")
    if out.is_dir():
        raise CommandError(f"cannot write {out}: it is a folder")
    if any(Path(p).resolve() == out.resolve() for p in inputs):
        raise UsageError(f"--out {out} would overwrite an input file")


def _parse_params(pairs, estimator_class):
    """``--param NAME=VALUE`` as a dict; VALUE is JSON if it parses, else a string."""
    allowed = estimator_class().get_params()
    params = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or not name:
            raise UsageError(f"--param {pair!r} must be NAME=VALUE")
        if name in _NOT_PARAMS:
            raise UsageError(f"--param {name} is set by {_NOT_PARAMS[name]}")
        if name not in allowed:
            raise UsageError(f"--param {name} is not a parameter of {estimator_class.__name__}")
        try:
            params[name] = json.loads(value)
        except json.JSONDecodeError:
            params[name] = value
    return params


# --- the commands ---------------------------------------------------------------------------

def train_command(args):
    """``dpboost train``: fit on a CSV file, write the model's JSON, print the spend."""
    schema = read_schema(args.schema) if args.schema else None
    task = args.task or ("regression" if schema and "target_bounds" in schema
                         else "classification")
    estimator_class = DPGBClassifier if task == "classification" else DPGBRegressor
    params = _parse_params(args.param, estimator_class)
    _check_output(args.out, args.data, *([args.schema] if args.schema else []))
    if schema is None:
        frame = read_table(args.data)
        _check_target(list(map(str, frame.columns)), args.target, args.data)
        X, y = frame.drop(columns=args.target), frame[args.target].to_numpy()
        public = {"categorical_features": "from_dtype"}
    else:
        pd = _pandas()
        columns, records = read_records(args.data)
        _check_target(columns, args.target, args.data)
        features = [c for c in columns if c != args.target]
        public = schema_params(schema, features, args.target, task)
        kinds = column_kinds(public, features, args.target)
        typed = typed_columns(columns, records, kinds)
        y = typed.pop(args.target)
        X = pd.DataFrame(typed)
        if kinds[args.target] == TEXT:
            # Without public classes the estimator reads them off the labels, where a missing
            # one is no class: its record is left out, as one outside public classes is.
            labelled = np.array([label is not None for label in y], dtype=bool)
            X, y = X[labelled], y[labelled]
    shape = {"n_estimators": args.n_estimators, "max_depth": args.max_depth,
             "delta": args.delta}
    estimator = estimator_class(
        epsilon=args.epsilon, random_state=args.random_state, verbose=int(args.verbose),
        **public, **{k: v for k, v in shape.items() if v is not None}, **params)
    estimator.fit(X, y)
    Path(args.out).write_text(estimator.to_json(), encoding="utf-8")
    print(f"{estimator_class.__name__} written to {args.out}: epsilon spent "
          f"{estimator.privacy_spent_:.6g} of {estimator.epsilon:g} (delta {estimator.delta:g}); "
          f"`dpboost report {args.out}` lists the releases")


def _check_target(columns, target, path):
    if target not in columns:
        raise CommandError(f"--target {target!r} is not a column of {path}; its columns: "
                           f"{columns}")


def predict_command(args):
    """``dpboost predict``: one CSV row per record, labels or class probabilities."""
    model, _ = load_model(args.model)
    if args.proba and not hasattr(model, "predict_proba"):
        raise CommandError(f"--proba needs a classifier; {args.model} holds a "
                           f"{type(model).__name__}")
    _check_output(args.out, args.model, args.data)
    pd = _pandas()
    columns, records = read_records(args.data)
    fitted_names = getattr(model, "feature_names_in_", None)
    # Fitted on a DataFrame: its columns by name (others, such as the target, are ignored);
    # fitted on an array: every column of the CSV, by position.
    names = columns if fitted_names is None else [str(n) for n in fitted_names]
    missing = [n for n in names if n not in columns]
    if missing:
        raise CommandError(f"{args.data} lacks the model's column(s) {missing}")
    # Each column typed by the model, as train types it by the schema.
    kinds = {name: list(model.categories_[j]) if j in model.categories_ else NUMBER
             for j, name in enumerate(names)}
    X = pd.DataFrame(typed_columns(columns, records, kinds))
    if fitted_names is None:
        X = X.to_numpy(dtype=object)
    if args.proba:
        proba = model.predict_proba(X)
        result = pd.DataFrame(proba, columns=[f"proba_{c}" for c in model.classes_])
    else:
        result = pd.DataFrame({"prediction": model.predict(X)})
    result.to_csv(args.out if args.out else sys.stdout, index=False)


def report_command(args):
    """``dpboost report``: the model's privacy report."""
    model, doc = load_model(args.model)
    print(f"{type(model).__name__} written by dpboost {doc.get('dpboost_version', '?')}: "
          f"epsilon={model.epsilon:g}, delta={model.delta:g}, n_estimators="
          f"{model.n_estimators_}, max_depth={model.max_depth}")
    print(model.privacy_report())


def schema_command(args):
    """``dpboost schema``: a shipped dataset's public schema as a schema file."""
    _check_output(args.out)
    text = schema_document(args.dataset)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)

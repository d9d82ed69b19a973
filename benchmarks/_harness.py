"""The benchmark harness: grid -> rows -> CSV (+ machine facts) -> table -> figure, one timer.

Every ``bench_*.py`` script is a grid of cells run through these pieces:

- :func:`parser` and :func:`result_name`: ``--quick`` (and ``--datasets``) and the name of the
  results, ``<base>[_quick][_subset]``, so that a partial run never overwrites the full results;
- data: ``_loaders`` (the one loader of ../shared/datasets, and of the synthetic sets);
- :func:`best_of`: the one timer (best-of-n wall time in seconds, a warm-up run and timed apart,
  several calls interleaved); :func:`timed_fit` fits one estimator with it;
- :func:`run_grid`: dataset x fold x cell -> one row per fitted model (timed, scored);
- :func:`write_results`: ``results/<name>.csv`` and ``results/<name>.machine.json``;
- :func:`group_stats`, :func:`summarise` and :func:`print_table`: mean and std over folds, printed;
- :func:`plot_panels`: one panel per dataset, ``results/<name>.png``.

``tables.py`` turns the CSVs into the tables of README.md. Importing this module opts in to seeded
(numpy) noise once, for every script, and says so.
"""

import argparse
import csv
import json
import math
import os
import platform
import sys
import time
import warnings
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

import _loaders
import numpy as np
from sklearn.metrics import mean_squared_error, roc_auc_score

from dpboost import ReproducibleNoiseWarning

#: Every benchmark seeds numpy's noise so that its tables are reproducible: it opts in here, once,
#: and says so on stdout and in every result's machine facts.
NOISE_NOTE = ("noise: seeded fits use numpy's (reproducible, hence predictable): such models are for "
              "measurement, NOT for release")
warnings.filterwarnings("ignore", category=ReproducibleNoiseWarning)
print(f"[benchmarks] {NOISE_NOTE}", file=sys.stderr)

RESULTS = Path(__file__).resolve().parent / "results"

#: The default classifier's additive random-split trees without a row count: the model the
#: speed and capacity benchmarks measured before the classifier released its count by default
#: (at their n x epsilon the count would choose 400 or unrestricted exponential-split trees,
#: another algorithm; benchmarks/README.md, "The classifier's trees against the row count
#: times epsilon").
ADDITIVE = {"interaction_cst": "no_interactions", "n_samples_hint": None}

#: Seconds of this process's Numba warm-up (:func:`warm_up`), recorded in the machine facts.
_WARM_UP = {}


# --- command line and result names -------------------------------------------------------------

def parser(doc, datasets=None):
    """Command line of a script: ``--quick``, and ``--datasets`` when ``datasets`` are given."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller settings (module docstring)")
    if datasets is not None:
        parser.add_argument("--datasets", nargs="+", choices=list(datasets),
                            help="only these datasets (results get the suffix _subset)")
    return parser


def result_name(base, args):
    """``base`` with ``_quick`` / ``_subset`` so that partial runs never overwrite full results."""
    return (base + ("_quick" if args.quick else "")
            + ("_subset" if getattr(args, "datasets", None) else ""))


# --- the timer ---------------------------------------------------------------------------------

class Timing(NamedTuple):
    """What :func:`best_of` measured, in seconds: like its ``calls`` (a float, or a dict)."""

    seconds: object
    #: The warm-up's wall time, a float or a dict like ``warmup`` (None without one).
    warmup_s: object


def peer_classifiers(threads, trees, depth, bins):
    """Non-private libraries with the same trees, depth, bins and threads, when installed:
    scikit-learn's HistGradientBoosting, LightGBM and XGBoost (hist), unfitted, by name."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    peers = {"hgb": HistGradientBoostingClassifier(
        max_iter=trees, max_depth=depth, max_bins=bins, max_leaf_nodes=None,
        early_stopping=False, random_state=0)}
    try:
        import lightgbm
        peers["lightgbm"] = lightgbm.LGBMClassifier(
            n_estimators=trees, max_depth=depth, num_leaves=2**depth, max_bin=bins,
            n_jobs=threads, random_state=0, verbose=-1)
    except ImportError:
        pass
    try:
        import xgboost
        peers["xgboost"] = xgboost.XGBClassifier(
            n_estimators=trees, max_depth=depth, max_bin=bins, tree_method="hist",
            n_jobs=threads, random_state=0)
    except ImportError:
        pass
    return peers


def _wall(call):
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def best_of(calls, repeats=1, warmup=None):
    """The one timer: best wall time of ``repeats`` calls, after a warm-up timed apart.

    Parameters
    ----------
    calls : callable or dict of name -> callable
        Zero-argument calls. A dict is timed interleaved: every repeat calls each entry once, in
        order, so that all see the same moments of a shared machine.
    repeats : int, default=1
    warmup : callable, dict of name -> callable, or None
        Run once before the timed calls (Numba compilation or loading from its cache, thread
        pools, first-touch memory), a dict in order; its wall time is returned apart, never in
        the best. Typically the same call on a small slice of the data.

    Returns
    -------
    Timing
        ``seconds``: the minimum over the repeats (a float, or a dict keyed like ``calls``);
        ``warmup_s``: the warm-up's wall time (a float, or a dict keyed like ``warmup``), None
        without a warm-up.
    """
    if warmup is None:
        warm = None
    elif callable(warmup):
        warm = _wall(warmup)
    else:
        warm = {name: _wall(call) for name, call in warmup.items()}
    one = callable(calls)
    calls = {None: calls} if one else dict(calls)
    best = dict.fromkeys(calls, math.inf)
    for _ in range(repeats):
        for name, call in calls.items():
            best[name] = min(best[name], _wall(call))
    return Timing(best[None] if one else best, warm)


def warm_up():
    """Compile (or load from Numba's cache) the kernels of the usual estimators, once per process.

    Small fits of the classifier and regressor in DPBoost's setting (epsilon 1 and inf) and as
    shipped, on 300 synthetic rows; their wall time goes into the machine facts
    (``numba_warmup_s``). Another configuration may still load a kernel in its first fit.
    """
    if _WARM_UP:
        return
    from dpboost import DPGBClassifier, DPGBRegressor

    X = np.random.default_rng(0).uniform(-1, 1, size=(300, 4))
    common = {"feature_bounds": (-1, 1), "random_state": 0}
    models = [DPGBClassifier.dpboost_paper(epsilon=1.0, classes=[0, 1], **common),
              DPGBClassifier.dpboost_paper(epsilon=math.inf, classes=[0, 1], **common),
              DPGBClassifier(epsilon=1.0, classes=[0, 1], **common),
              DPGBRegressor.dpboost_paper(epsilon=1.0, target_bounds=(-1, 1), **common),
              DPGBRegressor(epsilon=1.0, target_bounds=(-1, 1), **common)]
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for model in models:
            model.fit(X, X[:, 0] > 0 if isinstance(model, DPGBClassifier) else X[:, 0])
            model.predict(X)
    _WARM_UP["numba_warmup_s"] = time.perf_counter() - start


def timed_fit(model, X, y, repeats=1):
    """Fit ``model`` (any scikit-learn estimator, warnings silenced) with :func:`best_of` after
    this process's :func:`warm_up`; return the best wall time in seconds."""
    warm_up()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return best_of(lambda: model.fit(X, y), repeats).seconds


# --- the grid ----------------------------------------------------------------------------------

def metric_name(data):
    """The main metric of a dataset: ``"rmse"`` (regression) or ``"error"``."""
    return "rmse" if data["task"] == "regression" else "error"


def score(data, model, X_test, y_test):
    """Test metrics of any fitted scikit-learn estimator: error and ROC AUC, or RMSE in target units."""
    with warnings.catch_warnings():
        # out-of-bounds test values are clipped, as documented; not news in a benchmark
        warnings.simplefilter("ignore")
        if data["task"] == "regression":
            return {"rmse": float(np.sqrt(mean_squared_error(y_test, model.predict(X_test))))}
        proba = model.predict_proba(X_test)[:, 1]
        return {"error": float(np.mean((proba >= 0.5) != (y_test == 1))),
                "auc": float(roc_auc_score(y_test, proba))}


def scores(data, model, fold):
    """The default ``describe`` of :func:`run_grid`: the main metric's name and the test metrics."""
    return {"metric": metric_name(data), **score(data, model, fold.X_test, fold.y_test)}


class Fold(NamedTuple):
    """One train / test split of :func:`run_grid`."""

    fold: int
    X: np.ndarray
    y: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray


def run_grid(names, cells, n_folds, *, max_rows=None, load=_loaders.load, splits=_loaders.splits,
             describe=scores, fold_key="fold"):
    """Fit and score every cell on every fold of every dataset: the rows of a results CSV.

    Parameters
    ----------
    names : iterable of str
        Datasets (``_loaders.DATASETS``); the missing ones are skipped with a message.
    cells : callable (data, Fold) -> iterable of (dict, estimator)
        The grid at one fold: the row's fields (method, epsilon, ...) and an unfitted estimator.
    n_folds : int
    max_rows : int or None
        Training and test rows at most (a fixed subsample, for quick runs).
    load, splits : callables
        ``load(name) -> data`` and ``splits(data, n_folds, ...)`` yielding
        ``(fold, X, y, X_test, y_test)``; ``_loaders``' by default.
    describe : callable (data, fitted estimator, Fold) -> dict or list of dicts
        The measured columns (default :func:`scores`); a list gives one row per entry.
    fold_key : str
        Name of the fold's column.

    Returns
    -------
    rows : list of dict
        ``dataset``, the cell's fields, the fold, ``describe``'s columns and ``fit_s`` (the fit's
        wall time after this process's warm-up).
    """
    rows = []
    kwargs = {} if max_rows is None else {"max_train": max_rows, "max_test": max_rows}
    for name in _loaders.available(names):
        data = load(name)
        for split in splits(data, n_folds, **kwargs):
            fold = Fold(*split)
            for fields, model in cells(data, fold):
                seconds = timed_fit(model, fold.X, fold.y)
                measured = describe(data, model, fold)
                base = {"dataset": name, **fields, fold_key: fold.fold}
                rows += [{**base, **m, "fit_s": seconds}
                         for m in (measured if isinstance(measured, list) else [measured])]
        print(f"{name} done", flush=True)
    return rows


def run_public(doc, cells, keys, columns=None, describe=scores):
    """The scripts on Adult as a new user gets it: parse ``--quick``, fit ``cells`` 5 times (2
    with ``--quick``) on its official split with the public schema (``_loaders.load_public``),
    and summarise ``columns`` (default: error, ROC AUC, fit time) per ``keys``.

    Returns
    -------
    args, rows, table
    """
    args = parser(doc).parse_args()
    rows = run_grid(["adult"], cells, 2 if args.quick else 5, load=_loaders.load_public,
                    describe=describe)
    columns = columns or {"error": "error", "auc": "auc", "fit_s": "fit_s"}
    return args, rows, summarise(rows, keys, columns, count="runs")


# --- results, tables and figures ---------------------------------------------------------------

def machine_facts():
    """Facts to record beside every figure: CPU, cores, library versions, thread settings, and
    the load average (1, 5, 15 minutes) when the results are written (the machines are shared:
    a load above the core count makes the timings of a run, two-thread ones most, unreliable)."""
    import numba
    import sklearn

    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(line.split(":", 1)[1].strip() for line in fh if "model name" in line)
    except (OSError, StopIteration):
        pass
    return {
        "cpu": cpu, "cores": os.cpu_count(), "python": sys.version.split()[0],
        "numpy": np.__version__, "numba": numba.__version__, "sklearn": sklearn.__version__,
        "numba_threads": numba.get_num_threads(), "noise": NOISE_NOTE,
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", ""),
        "load_average": [round(v, 2) for v in os.getloadavg()], **_WARM_UP,
    }


def write_results(name, rows):
    """Write ``rows`` (list of dicts) to ``results/<name>.csv`` and machine facts beside them."""
    RESULTS.mkdir(exist_ok=True)
    with open(RESULTS / f"{name}.csv", "w", newline="") as fh:
        # rows may differ in their metric columns (error/auc or rmse): the union, blanks elsewhere
        writer = csv.DictWriter(fh, fieldnames=list(dict.fromkeys(k for r in rows for k in r)))
        writer.writeheader()
        writer.writerows(rows)
    with open(RESULTS / f"{name}.machine.json", "w") as fh:
        json.dump(machine_facts(), fh, indent=1)


def read_results(name):
    """Rows of ``results/<name>.csv`` (strings; blank cells are ""), [] when it is missing."""
    path = RESULTS / f"{name}.csv"
    if not path.exists():
        return []
    with open(path) as fh:
        return list(csv.DictReader(fh))


def group_stats(rows, keys, value):
    """Mean and std of ``value`` over the rows of every ``keys`` tuple (folds, seeds), in first-seen
    order; rows where it is blank are left out.

    Parameters
    ----------
    rows : list of dict
    keys : list of str
    value : str or callable
        A column, or a function of the row (``main_metric``: the column its ``metric`` names).

    Returns
    -------
    list of dict
        The keys, then ``mean``, ``std`` and ``n``.
    """
    groups = defaultdict(list)
    for r in rows:
        v = value(r) if callable(value) else r.get(value)
        if v not in (None, ""):
            groups[tuple(r[k] for k in keys)].append(float(v))
    return [{**dict(zip(keys, key)), "mean": float(np.mean(v)), "std": float(np.std(v)),
             "n": len(v)} for key, v in groups.items()]


def summarise(rows, keys, columns, count="n"):
    """One row per ``keys`` tuple: ``<name>_mean`` and ``<name>_std`` of every ``name: value`` of
    ``columns`` (see :func:`group_stats`), and under ``count`` the number of rows averaged."""
    stats = {name: _by_key(group_stats(rows, keys, value), keys)
             for name, value in columns.items()}
    first = next(iter(stats.values()), {})
    return [{**dict(zip(keys, key)), count: group["n"],
             **{f"{name}_{s}": stats[name][key][s] for name in columns for s in ("mean", "std")}}
            for key, group in first.items()]


def _by_key(stats, keys):
    return {tuple(t[k] for k in keys): t for t in stats}


def main_metric(row):
    """The value of the column that the row's ``metric`` names (error or RMSE)."""
    return row[row["metric"]]


def print_table(rows):
    """Print ``rows`` (list of dicts) as an aligned plain-text table."""
    keys = list(dict.fromkeys(k for r in rows for k in r))
    cells = [[f"{r[k]:.4g}" if isinstance(r.get(k), float) else str(r.get(k, "")) for k in keys]
             for r in rows]
    widths = [max(len(k), *(len(c[i]) for c in cells)) for i, k in enumerate(keys)]
    print("  ".join(k.rjust(w) for k, w in zip(keys, widths)))
    for c in cells:
        print("  ".join(v.rjust(w) for v, w in zip(c, widths)))


def plot_panels(rows, path, *, y, hue, x="epsilon", xlabel="epsilon", ylabel=None,
                xscale="log", log_y=(), max_cols=5):
    """One panel per dataset of ``dpboost.plotting.plot_privacy_utility``, saved as a PNG.

    Parameters
    ----------
    rows : list of dict
    path : Path
    y : str or None
        The column plotted; None: each panel's ``metric`` column names it.
    hue : str
        The column with one curve per value.
    x, xlabel, xscale : str
    ylabel : str or None
        None: the name of the plotted column.
    log_y : tuple of str
        Plotted columns drawn on a log axis (RMSE that spans orders of magnitude).
    max_cols : int
        Panels per line of the grid.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from dpboost.plotting import plot_privacy_utility

    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    if not datasets:
        return
    n_cols = min(max_cols, len(datasets))
    n_rows = math.ceil(len(datasets) / n_cols)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(3.4 * n_cols, 2.8 * n_rows), squeeze=False)
    for ax, dataset in zip(axes.flat, datasets):
        points = [r for r in rows if r["dataset"] == dataset]
        column = y or points[0]["metric"]
        plot_privacy_utility(points, x=x, y=column, hue=hue, xscale=xscale, ax=ax)
        ax.set_title(dataset, fontsize=9)
        ax.set_xlabel(xlabel, fontsize=8)
        ax.set_ylabel(ylabel or column, fontsize=8)
        ax.tick_params(labelsize=7)
        if column in log_y:
            ax.set_yscale("log")
    for ax in list(axes.flat)[len(datasets):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)

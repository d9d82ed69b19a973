"""Thread scaling of a whole fit: dpboost's classifier (secure noise) and seeded, against
HistGradientBoosting (HGB), LightGBM and XGBoost.

make_classification, ``--rows`` x 20 (1M by default), every contender with 200 trees of depth 6
on 32 bins (the default classifier's ``max_bins``; dpboost with the public bounds and classes a
private fit takes, :data:`PUBLIC`), fitted on each of ``--threads`` (1, 2 and
``os.cpu_count()`` by default; dpboost's ``n_jobs``, threadpoolctl for HGB's OpenMP, the peers'
``n_jobs``). dpboost's contenders (:func:`contenders`): ``dpboost_additive`` (secure) and
``dpboost_seeded``, the additive random-split trees without a row count these goals were set on
(``_harness.ADDITIVE``); ``dpboost_default``, the default as shipped at epsilon 1 (its private row
count picks the trees: at 1M x 20, unrestricted exponential-split trees on every record);
``dpboost_paper``, DPBoost's setting with the same trees, depth and bins. The contenders of one
thread count are timed interleaved (``_harness.best_of``, best of ``--repeats``) after a warm-up
fit on :data:`WARM_UP_ROWS` rows (Numba's kernels loaded or compiled apart; the default's
warm-up is told the row count as a public hint, so that it compiles the kernels of the full
fit's trees), with the
load average before and after each thread count: the machines are shared, so compare ratios
within one run (``speedup``: the 1-thread time over this one; ``vs_lightgbm``: over LightGBM's
time at the same threads). ``--models`` keeps some contenders. LightGBM and XGBoost are skipped
when missing (``pip install lightgbm xgboost``).

Run: ``python benchmarks/bench_threads.py [--rows N] [--threads T ...] [--models M ...]
[--repeats R] [--label L]``; results in
results/threads[_L].csv, its machine json and results/threads[_L].png (fit seconds against
threads, one line per contender; ``--plot`` redraws it from the CSV) (``--label before`` with
``PYTHONPATH`` on an older checkout keeps a before/after pair). benchmarks/README.md's table
quotes results/threads_quiet.csv (``tables.py``).
"""

import argparse
import os
import warnings

import _harness
import numpy as np
from sklearn.base import clone
from sklearn.datasets import make_classification
from threadpoolctl import threadpool_limits

from dpboost import DPGBClassifier

TREES, DEPTH, BINS = 200, 6, 32
#: Rows of a contender's warm-up fit: at least ``_loss.PARALLEL_ROWS`` and the selection's, so
#: that the warm-up runs (and compiles) the parallel kernels of the timed fits; with 20,000 rows
#: the additive trees' gradients and selection ran on one thread there and compiled inside the
#: first timed fit on 16 threads.
WARM_UP_ROWS = 100_000
#: dpboost's public inputs, as a private fit takes them (make_classification's features are
#: standard-normal mixtures: +-8 is a generous public box, as in bench_capacity.py).
PUBLIC = {"feature_bounds": (-8.0, 8.0), "classes": [0, 1]}


def contenders(threads):
    """Unfitted models with the same trees, depth and bins on ``threads`` threads."""
    shape = {"n_estimators": TREES, "max_depth": DEPTH, "max_bins": BINS, "n_jobs": threads,
             **PUBLIC}
    return {
        "dpboost_additive": DPGBClassifier(**shape, **_harness.ADDITIVE),
        "dpboost_seeded": DPGBClassifier(**shape, random_state=0, **_harness.ADDITIVE),
        "dpboost_default": DPGBClassifier(**shape),
        "dpboost_paper": DPGBClassifier.dpboost_paper(**shape),
        **_harness.peer_classifiers(threads, TREES, DEPTH, BINS),
    }


def warm_up_fit(name, model, X, y, rows):
    """The warm-up of one contender: a fit on the first :data:`WARM_UP_ROWS` rows (the default
    told the full fit's row count, so that its count picks the same trees and compiles their
    kernels)."""
    if name == "dpboost_default":
        model = clone(model).set_params(n_samples_hint=rows)
    return lambda: model.fit(X[:WARM_UP_ROWS], y[:WARM_UP_ROWS])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--threads", type=int, nargs="+", default=None,
                        help="thread counts (default: 1, 2 and os.cpu_count())")
    parser.add_argument("--models", nargs="+", default=None, help="contenders to keep")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--label", default="")
    parser.add_argument("--plot", action="store_true", help="redraw the figure from the CSV")
    args = parser.parse_args()
    name = "threads" + (f"_{args.label}" if args.label else "")
    if args.plot:
        plot(_harness.read_results(name), name)
        return
    warnings.simplefilter("ignore")
    X, y = make_classification(n_samples=args.rows, n_features=20, random_state=0)
    rows = []
    for threads in sorted(set(args.threads or (1, 2, os.cpu_count()))):
        models = {model: m for model, m in contenders(threads).items()
                  if args.models is None or model in args.models}
        load_before = os.getloadavg()[0]
        with threadpool_limits(threads):
            timing = _harness.best_of(
                {model: (lambda m=m: m.fit(X, y)) for model, m in models.items()},
                repeats=args.repeats,
                warmup={model: warm_up_fit(model, m, X, y, args.rows)
                        for model, m in models.items()})
        load_after = os.getloadavg()[0]
        for model, seconds in timing.seconds.items():
            rows.append({"rows": args.rows, "threads": threads, "model": model,
                         "fit_s": round(seconds, 3), "load_before": round(load_before, 2),
                         "load_after": round(load_after, 2)})
            print(rows[-1], flush=True)
    fewest = min(r["threads"] for r in rows)
    one = {r["model"]: r["fit_s"] for r in rows if r["threads"] == fewest}
    for r in rows:
        same = {s["model"]: s["fit_s"] for s in rows if s["threads"] == r["threads"]}
        r["speedup"] = round(one[r["model"]] / r["fit_s"], 3)
        r["vs_lightgbm"] = (round(r["fit_s"] / same["lightgbm"], 3) if "lightgbm" in same
                            else np.nan)
    _harness.write_results(name, rows)
    plot(rows, name)


def plot(rows, name):
    """results/<name>.png: fit seconds against threads, one line per contender."""
    points = [{**r, "dataset": f"{int(r['rows']):,} x 20, {TREES} trees of depth {DEPTH}",
               "threads": int(r["threads"]), "fit_s": float(r["fit_s"])} for r in rows]
    _harness.plot_panels(points, _harness.RESULTS / f"{name}.png", y="fit_s", hue="model",
                         x="threads", xlabel="threads", ylabel="fit (s)", log_y=("fit_s",))


if __name__ == "__main__":
    main()

"""Thread scaling of a whole fit: dpboost's default (secure noise) and seeded, against
HistGradientBoosting (HGB), LightGBM and XGBoost.

make_classification, ``--rows`` x 20 (1M by default), every contender with 200 trees of depth 6
on 32 bins (the default classifier's ``max_bins``; dpboost with the public bounds and classes a
private fit takes, :data:`PUBLIC`), fitted on 1, 2 and ``os.cpu_count()``
threads (dpboost's ``n_jobs``, threadpoolctl for HGB's OpenMP, the peers' ``n_jobs``). The
contenders of one thread count are timed interleaved (``_harness.best_of``, best of
``--repeats``) after a warm-up fit on 20,000 rows (Numba's kernels loaded or compiled apart),
with the load average before and after each thread count: the machines are shared, so compare
ratios within one run (``speedup``: the 1-thread time over this one; ``vs_lightgbm``: over
LightGBM's time at the same threads). LightGBM and XGBoost are skipped when missing
(``pip install lightgbm xgboost``).

Run: ``python benchmarks/bench_threads.py [--rows N] [--repeats R] [--label L]``; results in
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
from sklearn.datasets import make_classification
from threadpoolctl import threadpool_limits

from dpboost import DPGBClassifier

TREES, DEPTH, BINS = 200, 6, 32
#: dpboost's public inputs, as a private fit takes them (make_classification's features are
#: standard-normal mixtures: +-8 is a generous public box, as in bench_capacity.py).
PUBLIC = {"feature_bounds": (-8.0, 8.0), "classes": [0, 1]}


def contenders(threads):
    """Unfitted models with the same trees, depth and bins on ``threads`` threads."""
    models = {
        "dpboost_default": DPGBClassifier(n_estimators=TREES, max_depth=DEPTH, max_bins=BINS,
                                          n_jobs=threads, **_harness.ADDITIVE, **PUBLIC),
        "dpboost_seeded": DPGBClassifier(n_estimators=TREES, max_depth=DEPTH, max_bins=BINS,
                                         n_jobs=threads, random_state=0, **_harness.ADDITIVE, **PUBLIC),
        **_harness.peer_classifiers(threads, TREES, DEPTH, BINS),
    }
    return models


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
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
    for threads in sorted({1, 2, os.cpu_count()}):
        models = contenders(threads)
        load_before = os.getloadavg()[0]
        with threadpool_limits(threads):
            timing = _harness.best_of(
                {name: (lambda m=m: m.fit(X, y)) for name, m in models.items()},
                repeats=args.repeats,
                warmup={name: (lambda m=m: m.fit(X[:20_000], y[:20_000]))
                        for name, m in models.items()})
        load_after = os.getloadavg()[0]
        for name, seconds in timing.seconds.items():
            rows.append({"rows": args.rows, "threads": threads, "model": name,
                         "fit_s": round(seconds, 3), "load_before": round(load_before, 2),
                         "load_after": round(load_after, 2)})
            print(rows[-1], flush=True)
    one = {r["model"]: r["fit_s"] for r in rows if r["threads"] == 1}
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

"""Fit time per tree: dpboost (epsilon=1 and inf) next to scikit-learn's HistGradientBoosting.

Same trees, depth and bins, measured in one run, with Numba compilation timed apart (a warm-up fit
on a small slice). Both libraries are timed with 1 and with 2 threads (dpboost's ``n_jobs``,
threadpoolctl for HGB's OpenMP).

Run: ``python benchmarks/bench_fit_time.py [--quick]``; writes results/fit_time.csv.
"""

import argparse
import time
import warnings

import numpy as np
from sklearn.datasets import make_classification
from sklearn.ensemble import HistGradientBoostingClassifier
from threadpoolctl import threadpool_limits

from _common import SHARED, print_table, write_results
from dpboost import DPGBClassifier, PrivacyLeakWarning
from dpboost._demo import load_adult


def _datasets():
    X, y = make_classification(n_samples=100_000, n_features=20, random_state=0)
    n_train = 80_000
    # make_classification's features are standard-normal mixtures: +-8 is a public, generous box.
    yield "make_classification_100k_20", X[:n_train], y[:n_train], np.tile([-8.0, 8.0], (20, 1))
    if (SHARED / "adult_train.csv.gz").exists():
        X_train, y_train, _, _, bounds, _ = load_adult(SHARED)
        yield "adult", X_train, y_train, bounds
    else:
        print(f"skipping Adult: {SHARED} has no adult_train.csv.gz")


def _best_of(repeats, fit):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fit()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one repeat instead of three")
    args = parser.parse_args()
    repeats = 1 if args.quick else 3
    n_trees, depth, bins = 50, 6, 32
    rows = []
    for name, X, y, bounds in _datasets():
        def dp(eps, threads=None, X=X, y=y, bounds=bounds):
            return DPGBClassifier(epsilon=eps, n_estimators=n_trees, max_depth=depth,
                                  max_bins=bins, feature_bounds=bounds, classes=[0, 1],
                                  random_state=0, n_jobs=threads)
        start = time.perf_counter()
        dp(1.0).fit(X[:200], y[:200])
        compile_s = time.perf_counter() - start

        def hgb_fit(threads, X=X, y=y):
            with threadpool_limits(threads):
                HistGradientBoostingClassifier(
                    max_iter=n_trees, max_depth=depth, max_bins=bins, max_leaf_nodes=None,
                    early_stopping=False, random_state=0).fit(X, y)

        for threads in [1, 2]:
            hgb_s = _best_of(repeats, lambda threads=threads: hgb_fit(threads))
            for eps in [1.0, np.inf]:
                fit_s = _best_of(repeats,
                                 lambda eps=eps, threads=threads, X=X, y=y: dp(eps, threads).fit(X, y))
                rows.append({
                    "dataset": name, "n_samples": X.shape[0], "n_features": X.shape[1],
                    "trees": n_trees, "depth": depth, "bins": bins, "threads": threads,
                    "epsilon": eps, "dpboost_fit_s": fit_s,
                    "dpboost_ms_per_tree": 1e3 * fit_s / n_trees, "hgb_fit_s": hgb_s,
                    "ratio_vs_hgb": fit_s / hgb_s, "dpboost_compile_s": compile_s,
                })
    print_table(rows)
    write_results("fit_time", rows)


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        main()

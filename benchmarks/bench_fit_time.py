"""Fit time per tree (DPBoost paper, Table 2): DPBoost and NP next to scikit-learn's
HistGradientBoosting, with the same trees, depth and bins, measured in one run.

Numba compilation is timed apart (a warm-up fit on a small slice). Both libraries are timed with 1
and with 2 threads (dpboost's ``n_jobs``, threadpoolctl for HGB's OpenMP).

Run: ``python benchmarks/bench_fit_time.py [--quick]``; writes results/fit_time.csv. ``--quick``:
one repeat instead of three, make_classification and three paper datasets.
"""

import argparse
import math
import time
import warnings

import _loaders
import _paper
import numpy as np
from _common import print_table, write_results
from sklearn.datasets import make_classification
from sklearn.ensemble import (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
)
from threadpoolctl import threadpool_limits

from dpboost import PrivacyLeakWarning

N_TREES, DEPTH, BINS = 50, 6, 32


def _datasets_to_time(quick):
    X, y = make_classification(n_samples=100_000, n_features=20, random_state=0)
    # make_classification's features are standard-normal mixtures: +-8 is a public, generous box.
    yield "make_classification_80k_20", {"X": X[:80_000], "y": y[:80_000], "task": "binary",
                                         "bounds": np.tile([-8.0, 8.0], (20, 1))}
    names = ("adult", "cod_rna", "abalone") if quick else tuple(_loaders.DATASETS)
    for name in _loaders.available(names):
        yield name, _loaders.load(name)


def _best_of(repeats, fit):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fit()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="see the module docstring")
    quick = parser.parse_args().quick
    repeats = 1 if quick else 3
    rows = []
    for name, data in _datasets_to_time(quick):
        X, y = data["X"], data["y"]
        hgb = (HistGradientBoostingRegressor if data["task"] == "regression"
               else HistGradientBoostingClassifier)

        def dp(method, threads, data=data):
            return _paper.make_model(data, method, 1.0, seed=0, n_jobs=threads)

        start = time.perf_counter()
        dp("DPBoost", None).fit(X[:200], y[:200])
        compile_s = time.perf_counter() - start

        def hgb_fit(threads, X=X, y=y, hgb=hgb):
            with threadpool_limits(threads):
                hgb(max_iter=N_TREES, max_depth=DEPTH, max_bins=BINS, max_leaf_nodes=None,
                    early_stopping=False, random_state=0).fit(X, y)

        for threads in [1, 2]:
            hgb_s = _best_of(repeats, lambda threads=threads: hgb_fit(threads))
            for method in ["DPBoost", "NP"]:
                fit_s = _best_of(repeats, lambda method=method, threads=threads, X=X, y=y:
                                 dp(method, threads).fit(X, y))
                rows.append({
                    "dataset": name, "n_samples": X.shape[0], "n_features": X.shape[1],
                    "trees": N_TREES, "depth": DEPTH, "bins": BINS, "threads": threads,
                    "method": method, "epsilon": math.inf if method == "NP" else 1.0,
                    "dpboost_fit_s": fit_s, "dpboost_ms_per_tree": 1e3 * fit_s / N_TREES,
                    "hgb_fit_s": hgb_s, "ratio_vs_hgb": fit_s / hgb_s,
                    "dpboost_compile_s": compile_s,
                })
        print(f"{name} done", flush=True)
    print_table(rows)
    write_results("fit_time", rows)


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        main()

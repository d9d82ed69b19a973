"""Issue 5's performance table: dpboost vs scikit-learn HGB at 100k x 20, 1M x 20 and 1M x 100.

make_classification, 80 % train, 50 trees, depth 6, 255 bins (the issue's setting), epsilon 1 and
inf, 1 and 2 threads, HGB with the same trees, depth, bins and threads, in one run. Also: predict on
1M rows x 20 (50 trees, 2 threads), peak traced memory of the fit on 1M x 100 against the size of the
float64 input, and ``import dpboost`` + a first small fit in a fresh process (warm Numba cache).
Compilation is timed apart (a warm-up fit). Writes results/fit.csv.

Run: ``python benchmarks/bench_fit.py [--quick]`` (``--quick``: 100k x 20 only).
"""

import argparse
import subprocess
import sys
import time
import tracemalloc
import warnings

import numpy as np
from _common import print_table, write_results
from sklearn.datasets import make_classification
from sklearn.ensemble import HistGradientBoostingClassifier
from threadpoolctl import threadpool_limits

from dpboost import DPGBClassifier, PrivacyLeakWarning

TREES, DEPTH, BINS = 50, 6, 255


def _timed(fit):
    start = time.perf_counter()
    fit()
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100k x 20 only")
    sizes = [(100_000, 20)] if parser.parse_args().quick else [(100_000, 20), (1_000_000, 20),
                                                              (1_000_000, 100)]
    rows = []
    for n, d in sizes:
        X, y = make_classification(n_samples=n, n_features=d, random_state=0)
        X = X[: int(0.8 * n)]
        y = y[: int(0.8 * n)]
        bounds = np.tile([-8.0, 8.0], (d, 1))  # standard-normal mixtures: a public, generous box

        def dp(epsilon, threads, bounds=bounds):
            return DPGBClassifier(epsilon=epsilon, n_estimators=TREES, max_depth=DEPTH,
                                  max_bins=BINS, feature_bounds=bounds, classes=[0, 1],
                                  random_state=0, n_jobs=threads)

        compile_s = _timed(lambda X=X, y=y: dp(1.0, None).fit(X[:500], y[:500]))
        for threads in (1, 2):
            with threadpool_limits(threads):
                hgb_s = _timed(lambda X=X, y=y: HistGradientBoostingClassifier(
                    max_iter=TREES, max_depth=DEPTH, max_bins=BINS, max_leaf_nodes=None,
                    early_stopping=False, random_state=0).fit(X, y))
            for epsilon in (1.0, np.inf):
                fit_s = _timed(lambda e=epsilon, t=threads, X=X, y=y: dp(e, t).fit(X, y))
                rows.append({"rows": X.shape[0], "features": d, "threads": threads,
                             "epsilon": epsilon, "dpboost_fit_s": fit_s, "hgb_fit_s": hgb_s,
                             "ratio_vs_hgb": fit_s / hgb_s, "compile_s": compile_s})
        print(f"{n} x {d} done", flush=True)
    print_table(rows)
    extra = {}
    if len(sizes) > 1:
        X, y = make_classification(n_samples=1_000_000, n_features=20, random_state=0)
        model = DPGBClassifier(epsilon=1.0, n_estimators=TREES, max_depth=DEPTH, max_bins=BINS,
                               feature_bounds=(-8, 8), classes=[0, 1], random_state=0,
                               n_jobs=2).fit(X[:100_000], y[:100_000])
        model.predict_proba(X[:1000])
        extra["predict_1M_x20_2threads_s"] = _timed(lambda: model.predict_proba(X))
        X, y = make_classification(n_samples=1_000_000, n_features=100, random_state=0)
        tracemalloc.start()
        DPGBClassifier(epsilon=np.inf, n_estimators=5, max_depth=DEPTH, max_bins=BINS,
                       feature_bounds=(-8, 8), classes=[0, 1], random_state=0).fit(X, y)
        extra["peak_traced_memory_over_input"] = tracemalloc.get_traced_memory()[1] / X.nbytes
        tracemalloc.stop()
    code = ("import time; s = time.perf_counter(); import numpy as np; from dpboost import "
            "DPGBClassifier; X = np.random.default_rng(0).normal(size=(1000, 5)); "
            "DPGBClassifier(feature_bounds=(-5, 5), classes=[0, 1], random_state=0)"
            ".fit(X, X[:, 0] > 0); print(time.perf_counter() - s)")
    extra["import_and_first_fit_s"] = float(subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    print(extra)
    write_results("fit", [{**r, **extra} for r in rows])


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        main()

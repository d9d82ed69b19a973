"""Issue 5's performance table: dpboost vs scikit-learn HGB (and LightGBM / XGBoost when installed).

make_classification, 80 % train, 50 trees, depth 6, 255 bins (the issue's setting) at 100k x 20,
1M x 20 and 1M x 100 (80k and 800k training rows); dpboost at epsilon 1 and inf; every library
with the same trees, depth, bins and threads (1 and 2), timed in one run, interleaved, best of
``--repeats``. Also: the histogram kernel in ns per row x feature (1 and 2 threads), predict on
1M rows x 20 (2 threads, every library), fit-time scaling from 80k to 800k rows, peak memory
of a fit on 1M x 100 (traced by tracemalloc, and resident in a fresh process) against the size
of the float64 input, and compilation: ``import
dpboost`` + a first small fit and predict in a fresh process with an empty and with a warm
Numba cache. Steady-state fits are timed after a warm-up fit. Writes results/fit.csv.

LightGBM and XGBoost are optional (``pip install lightgbm xgboost``); they are skipped when
missing. Run: ``python benchmarks/bench_fit.py [--quick] [--repeats R]`` (``--quick``: 100k x 20
only, one repeat).
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
import warnings

import numba
import numpy as np
from _common import print_table, write_results
from sklearn.datasets import make_classification
from sklearn.ensemble import HistGradientBoostingClassifier
from threadpoolctl import threadpool_limits

from dpboost import DPGBClassifier, PrivacyLeakWarning
from dpboost._histogram import build_level_histograms

TREES, DEPTH, BINS = 50, 6, 255


def _timed(call):
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def _dpboost(epsilon, threads, d):
    # make_classification's features are standard-normal mixtures: +-8 is a public, generous box.
    return DPGBClassifier.dpboost_paper(epsilon=epsilon, n_estimators=TREES, max_depth=DEPTH,
                                        max_bins=BINS,
                                        feature_bounds=np.tile([-8.0, 8.0], (d, 1)), classes=[0, 1],
                                        random_state=0, n_jobs=threads)


def _peers(threads):
    """Non-private libraries with the same trees, depth, bins and threads, when installed."""
    peers = {"hgb": HistGradientBoostingClassifier(
        max_iter=TREES, max_depth=DEPTH, max_bins=BINS, max_leaf_nodes=None,
        early_stopping=False, random_state=0)}
    try:
        import lightgbm
        peers["lightgbm"] = lightgbm.LGBMClassifier(
            n_estimators=TREES, max_depth=DEPTH, num_leaves=2**DEPTH, max_bin=BINS,
            n_jobs=threads, random_state=0, verbose=-1)
    except ImportError:
        pass
    try:
        import xgboost
        peers["xgboost"] = xgboost.XGBClassifier(
            n_estimators=TREES, max_depth=DEPTH, max_bin=BINS, tree_method="hist",
            n_jobs=threads, random_state=0)
    except ImportError:
        pass
    return peers


def _contenders(threads, d):
    """name -> (epsilon, estimator factory), dpboost first."""
    out = {f"dpboost eps={e:g}": (e, lambda e=e: _dpboost(e, threads, d)) for e in (1.0, np.inf)}
    for name in _peers(threads):
        out[name] = (None, lambda name=name: _peers(threads)[name])
    return out


def fit_table(sizes, repeats):
    rows = []
    for n, d in sizes:
        X, y = make_classification(n_samples=n, n_features=d, random_state=0)
        X, y = X[: int(0.8 * n)], y[: int(0.8 * n)]
        for threads in (1, 2):
            contenders = _contenders(threads, d)
            best = dict.fromkeys(contenders, np.inf)
            with threadpool_limits(threads):
                for _, make in contenders.values():
                    make().fit(X[:2000], y[:2000])  # warm-up: compilation, thread pools
                for _ in range(repeats):
                    for name, (_, make) in contenders.items():
                        best[name] = min(best[name], _timed(lambda m=make: m().fit(X, y)))
            for name, (epsilon, _) in contenders.items():
                rows.append({"task": "fit", "library": name.split()[0], "rows": X.shape[0],
                             "features": d, "threads": threads,
                             "epsilon": "" if epsilon is None else epsilon, "seconds": best[name],
                             "ratio_vs_hgb": best[name] / best["hgb"]})
        print(f"{n} x {d} done", flush=True)
    return rows


def predict_rows(repeats):
    """Predict 1M x 20 on 2 threads with models fitted on 80k x 20."""
    X, y = make_classification(n_samples=1_000_000, n_features=20, random_state=0)
    rows = []
    with threadpool_limits(2):
        models = {"dpboost": _dpboost(1.0, 2, 20).fit(X[:80_000], y[:80_000])}
        for name, model in _peers(2).items():
            models[name] = model.fit(X[:80_000], y[:80_000])
        best = dict.fromkeys(models, np.inf)
        for model in models.values():
            model.predict_proba(X[:1000])
        for _ in range(repeats):
            for name, model in models.items():
                best[name] = min(best[name], _timed(lambda m=model: m.predict_proba(X)))
    for name, seconds in best.items():
        rows.append({"task": "predict", "library": name, "rows": X.shape[0], "features": 20,
                     "threads": 2, "epsilon": 1.0 if name == "dpboost" else "",
                     "seconds": seconds, "ratio_vs_hgb": seconds / best["hgb"]})
    return rows


def histogram_ns(n=1_000_000, d=20, repeats=30):
    """ns per row x feature of the level-histogram kernel on half of the rows through their
    indices (the general path), 1 and 2 threads, timed alternately (best of ``repeats`` each) so
    that both see the same moments of a shared machine."""
    rng = np.random.default_rng(0)
    X_binned = np.asfortranarray(rng.integers(0, BINS + 1, size=(n, d), dtype=np.uint8))
    idx = np.sort(rng.choice(n, n // 2, replace=False)).astype(np.int32)
    g = rng.uniform(-1, 1, idx.size).astype(np.float32)
    start = np.array([0, idx.size], dtype=np.int64)
    parent, side = np.empty((d, 0, BINS + 1, 2)), np.empty(0, dtype=np.uint8)
    out = np.empty((d, 1, BINS + 1, 2))
    best = {1: np.inf, 2: np.inf}
    previous = numba.get_num_threads()
    for _ in range(repeats):
        for threads in best:
            numba.set_num_threads(threads)
            best[threads] = min(best[threads], _timed(lambda t=threads: build_level_histograms(
                X_binned, idx, g, start, parent, side, t, out)))
    numba.set_num_threads(previous)
    result = {f"hist_ns_per_row_feature_{t}thread": 1e9 * s / (idx.size * d)
              for t, s in best.items()}
    result["hist_speedup_2threads"] = best[1] / best[2]
    return result


def peak_memory_ratio():
    """Peak traced memory of a fit (5 trees, eps=inf: every row in every tree) on 1M x 100 over
    the size of the float64 input."""
    X, y = make_classification(n_samples=1_000_000, n_features=100, random_state=0)
    tracemalloc.start()
    _dpboost(np.inf, None, 100).set_params(n_estimators=5).fit(X, y)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / X.nbytes


def peak_rss_ratios():
    """Peak resident memory of a fit on 1M x 100 (5 trees, eps=inf) in a fresh process, over the
    size of the float64 input: what the fit adds (the peak ``VmHWM`` during the fit minus the
    resident size before it, with the input in memory) and the whole process's peak (interpreter,
    libraries and the input included). Unlike tracemalloc this sees Numba's and every library's
    allocations. Linux: the peak is reset through /proc/self/clear_refs before the fit
    (``ru_maxrss`` would not do: a child inherits its parent's peak across fork and exec)."""
    code = ("import numpy as np; from dpboost import DPGBClassifier; "
            "X = np.random.default_rng(0).standard_normal((1_000_000, 100)); y = X[:, 0] > 0; "
            "fit = lambda n, t: DPGBClassifier.dpboost_paper(epsilon=np.inf, n_estimators=t, max_depth=6, "
            f"max_bins={BINS}, feature_bounds=(-8, 8), classes=[0, 1], random_state=0)"
            ".fit(X[:n], y[:n]); fit(1000, 1); "
            "kb = lambda key: int(next(line.split()[1] for line in open('/proc/self/status') "
            "if line.startswith(key))) * 1024; "
            "before = kb('VmRSS:'); open('/proc/self/clear_refs', 'w').write('5'); "
            "fit(None, 5); peak = kb('VmHWM:'); "
            "print((peak - before) / X.nbytes, peak / X.nbytes)")
    added, total = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                  check=True).stdout.split()
    return {"peak_rss_added_by_fit_over_input": float(added),
            "peak_rss_process_over_input": float(total)}


def startup_seconds():
    """``import dpboost`` + first fit and predict in a fresh process: empty, then warm cache."""
    code = ("import time; s = time.perf_counter(); import numpy as np; from dpboost import "
            "DPGBClassifier; X = np.random.default_rng(0).normal(size=(1000, 5)); "
            "m = DPGBClassifier.dpboost_paper(feature_bounds=(-5, 5), classes=[0, 1], random_state=0)"
            ".fit(X, X[:, 0] > 0); m.predict_proba(X); print(time.perf_counter() - s)")
    result = {}
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        for label in ("no_cache", "warm_cache"):
            result[f"import_and_first_fit_{label}_s"] = float(subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True,
                env=env).stdout)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100k x 20 only, one repeat")
    parser.add_argument("--repeats", type=int, default=2, help="best of this many fits")
    args = parser.parse_args()
    repeats = 1 if args.quick else args.repeats
    sizes = [(100_000, 20)] if args.quick else [(100_000, 20), (1_000_000, 20), (1_000_000, 100)]
    extra = {**startup_seconds(), **histogram_ns()}
    print(extra, flush=True)
    rows = fit_table(sizes, repeats)
    if not args.quick:
        rows += predict_rows(repeats)
        seconds = {(r["rows"], r["features"], r["threads"], r["epsilon"]): r["seconds"]
                   for r in rows if r["task"] == "fit" and r["library"] == "dpboost"}
        extra["scaling_800k_over_80k_max"] = max(
            seconds[(800_000, 20, t, e)] / seconds[(80_000, 20, t, e)]
            for t in (1, 2) for e in (1.0, np.inf))
        extra["peak_traced_memory_over_input"] = peak_memory_ratio()
        extra.update(peak_rss_ratios())
    print_table(rows)
    print(extra)
    write_results("fit", [{**r, **extra} for r in rows])


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        main()

"""Fit time against scikit-learn's HistGradientBoosting (HGB) and the DPBoost paper's Table 2.

The table against HGB (``--part hgb``, results/fit.csv): make_classification, 80 % train, 50 trees,
depth 6, 255 bins (the setting of the performance targets) at 100k x 20, 1M x 20 and 1M x 100 (80k
and 800k training rows); dpboost at epsilon 1 and inf; every library (HGB, and LightGBM / XGBoost
when installed) with the same trees, depth, bins and threads (1 and 2). Also: the histogram kernel
in ns per row x feature (1 and 2 threads), predict on 1M rows x 20 (2 threads, every library),
fit-time scaling from 80k to 800k rows, peak memory of a fit on 1M x 100 (traced by tracemalloc, and
resident in a fresh process) against the size of the float64 input, and compilation: ``import
dpboost`` + a first small fit and predict in a fresh process with an empty and with a warm Numba
cache.

Table 2 (results/fit_time.csv; until this harness ``bench_fit_time.py``): time per tree of
DPBoost (epsilon 1, EoE) and NP (epsilon inf) next to HGB, 50 trees, depth 6, 32 bins, on
make_classification 80k x 20 and every paper dataset, 1 and 2 threads (dpboost's ``n_jobs``,
threadpoolctl for HGB's OpenMP), best of 3; ``dpboost_compile_s``: the warm-up fit on 200 rows.

Every timing is ``_harness.best_of``: the contenders of one size and thread count timed
interleaved, best of ``--repeats``, after a warm-up fit on a small slice. LightGBM and XGBoost are
optional (``pip install lightgbm xgboost``); they are skipped when missing.

Run: ``python benchmarks/bench_fit.py [--quick] [--repeats R] [--part {hgb,table2}]
[--threads {1,2} ...]`` (default: both parts). ``--quick``: the HGB table at 100k x 20 only,
Table 2 on make_classification and three paper datasets, one repeat; results/fit_quick.csv and
results/fit_time_quick.csv. ``--threads 1``: the HGB table's fits on one thread only (on a shared
machine the two-thread fits wait for a busy core; a one-thread ratio holds up), written to
results/fit_threads1.csv (the predict row stays on 2 threads).
"""

import os
import subprocess
import sys
import tempfile
import tracemalloc
import warnings

import _harness
import _loaders
import _paper
import numba
import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from threadpoolctl import threadpool_limits

from dpboost import DPGBClassifier, PrivacyLeakWarning
from dpboost._histogram import build_level_histograms

TREES, DEPTH, BINS = 50, 6, 255
TABLE2_BINS = 32


def _dpboost(epsilon, threads, bounds):
    return DPGBClassifier.dpboost_paper(epsilon=epsilon, n_estimators=TREES, max_depth=DEPTH,
                                        max_bins=BINS, feature_bounds=bounds, classes=[0, 1],
                                        random_state=0, n_jobs=threads)


def _peers(threads):
    """Non-private libraries with the same trees, depth, bins and threads, when installed."""
    return _harness.peer_classifiers(threads, TREES, DEPTH, BINS)


def _contenders(threads, bounds):
    """name -> (epsilon, estimator factory), dpboost first."""
    out = {f"dpboost eps={e:g}": (e, lambda e=e: _dpboost(e, threads, bounds))
           for e in (1.0, np.inf)}
    for name in _peers(threads):
        out[name] = (None, lambda name=name: _peers(threads)[name])
    return out


def fit_table(sizes, repeats, thread_counts):
    rows = []
    for n, d in sizes:
        data = _loaders.synthetic(n, d)
        X, y = data["X"], data["y"]
        for threads in thread_counts:
            contenders = _contenders(threads, data["bounds"])
            with threadpool_limits(threads):
                # warm-up on 2000 rows: compilation, thread pools
                best = _harness.best_of(
                    {name: lambda m=make: m().fit(X, y) for name, (_, make) in contenders.items()},
                    repeats,
                    warmup={name: lambda m=make: m().fit(X[:2000], y[:2000])
                            for name, (_, make) in contenders.items()}).seconds
            for name, (epsilon, _) in contenders.items():
                rows.append({"task": "fit", "library": name.split()[0], "rows": X.shape[0],
                             "features": d, "threads": threads,
                             "epsilon": "" if epsilon is None else epsilon, "seconds": best[name],
                             "ratio_vs_hgb": best[name] / best["hgb"]})
        print(f"{n} x {d} done", flush=True)
    return rows


def predict_rows(repeats):
    """Predict 1M x 20 on 2 threads with models fitted on 80k x 20."""
    data = _loaders.synthetic(1_000_000, 20, train_share=1.0)
    X, y = data["X"], data["y"]
    rows = []
    with threadpool_limits(2):
        models = {"dpboost": _dpboost(1.0, 2, data["bounds"]).fit(X[:80_000], y[:80_000])}
        for name, model in _peers(2).items():
            models[name] = model.fit(X[:80_000], y[:80_000])
        best = _harness.best_of(
            {name: lambda m=model: m.predict_proba(X) for name, model in models.items()},
            repeats,
            warmup={name: lambda m=model: m.predict_proba(X[:1000])
                    for name, model in models.items()}).seconds
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
    previous = numba.get_num_threads()

    def level(threads):
        numba.set_num_threads(threads)  # a microsecond against the kernel's milliseconds
        build_level_histograms(X_binned, idx, g, start, parent, side, threads, out)

    best = _harness.best_of({t: lambda t=t: level(t) for t in (1, 2)}, repeats).seconds
    numba.set_num_threads(previous)
    result = {f"hist_ns_per_row_feature_{t}thread": 1e9 * s / (idx.size * d)
              for t, s in best.items()}
    result["hist_speedup_2threads"] = best[1] / best[2]
    return result


def peak_memory_ratio():
    """Peak traced memory of a fit (5 trees, eps=inf: every row in every tree) on 1M x 100 over
    the size of the float64 input."""
    data = _loaders.synthetic(1_000_000, 100, train_share=1.0)
    X, y = data["X"], data["y"]
    tracemalloc.start()
    _dpboost(np.inf, None, data["bounds"]).set_params(n_estimators=5).fit(X, y)
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


def _table2_datasets(quick):
    yield "make_classification_80k_20", _loaders.synthetic(100_000, 20)
    names = ("adult", "cod_rna", "abalone") if quick else tuple(_loaders.DATASETS)
    for name in _loaders.available(names):
        yield name, _loaders.load(name)


def table2(quick, repeats):
    """Time per tree of DPBoost (epsilon 1) and NP next to HGB on every dataset, 32 bins."""
    rows = []
    for name, data in _table2_datasets(quick):
        X, y = data["X"], data["y"]
        hgb = (HistGradientBoostingRegressor if data["task"] == "regression"
               else HistGradientBoostingClassifier)

        def dp(method, threads, data=data):
            return _paper.make_model(data, method, 1.0, seed=0, n_jobs=threads)

        def hgb_fit(threads, X=X, y=y, hgb=hgb):
            with threadpool_limits(threads):
                hgb(max_iter=TREES, max_depth=DEPTH, max_bins=TABLE2_BINS, max_leaf_nodes=None,
                    early_stopping=False, random_state=0).fit(X, y)

        compile_s = _harness.best_of(lambda: dp("DPBoost", None).fit(X[:200], y[:200])).seconds
        for threads in [1, 2]:
            best = _harness.best_of(
                {"HGB": lambda t=threads: hgb_fit(t),
                 **{m: lambda m=m, t=threads, X=X, y=y: dp(m, t).fit(X, y)
                    for m in ("DPBoost", "NP")}}, repeats).seconds
            for method in ["DPBoost", "NP"]:
                rows.append({
                    "dataset": name, "n_samples": X.shape[0], "n_features": X.shape[1],
                    "trees": TREES, "depth": DEPTH, "bins": TABLE2_BINS, "threads": threads,
                    "method": method, "epsilon": np.inf if method == "NP" else 1.0,
                    "dpboost_fit_s": best[method],
                    "dpboost_ms_per_tree": 1e3 * best[method] / TREES,
                    "hgb_fit_s": best["HGB"], "ratio_vs_hgb": best[method] / best["HGB"],
                    "dpboost_compile_s": compile_s,
                })
        print(f"{name} done", flush=True)
    return rows


def hgb_table(quick, repeats, thread_counts=(1, 2)):
    """The rows of the table against HGB, and the run's single measurements (histogram, startup,
    memory)."""
    sizes = [(100_000, 20)] if quick else [(100_000, 20), (1_000_000, 20), (1_000_000, 100)]
    extra = {**startup_seconds(), **histogram_ns()}
    print(extra, flush=True)
    rows = fit_table(sizes, repeats, thread_counts)
    if not quick:
        rows += predict_rows(repeats)
        seconds = {(r["rows"], r["features"], r["threads"], r["epsilon"]): r["seconds"]
                   for r in rows if r["task"] == "fit" and r["library"] == "dpboost"}
        extra["scaling_800k_over_80k_max"] = max(
            seconds[(800_000, 20, t, e)] / seconds[(80_000, 20, t, e)]
            for t in thread_counts for e in (1.0, np.inf))
        extra["peak_traced_memory_over_input"] = peak_memory_ratio()
        extra.update(peak_rss_ratios())
    return rows, extra


def main():
    parser = _harness.parser(__doc__)
    parser.add_argument("--repeats", type=int, default=None,
                        help="best of this many fits (default: 2 for the HGB table, 3 for Table 2)")
    parser.add_argument("--part", choices=["hgb", "table2"], default=None,
                        help="only this part (default: both)")
    parser.add_argument("--threads", type=int, nargs="+", choices=[1, 2], default=[1, 2],
                        help="thread counts of the HGB table's fits (default: 1 2; another choice "
                             "writes results/fit_threads<T>.csv)")
    args = parser.parse_args()
    if args.part in (None, "hgb"):
        threads = sorted(set(args.threads))
        rows, extra = hgb_table(args.quick, 1 if args.quick else args.repeats or 2, threads)
        _harness.print_table(rows)
        print(extra)
        name = "fit" if threads == [1, 2] else "fit_threads" + "".join(map(str, threads))
        # the single measurements repeated in every row, as columns
        _harness.write_results(_harness.result_name(name, args), [{**r, **extra} for r in rows])
    if args.part in (None, "table2"):
        rows = table2(args.quick, 1 if args.quick else args.repeats or 3)
        _harness.print_table(rows)
        _harness.write_results(_harness.result_name("fit_time", args), rows)


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        main()

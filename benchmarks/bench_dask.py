"""Training on a cluster: the default estimator on a Dask cluster against the in-memory fit of
the same rows.

A synthetic binary task (``--rows`` x 20 standard-normal features, a logistic label of 5 of them;
the bounds +-6 are a public box) is written once as parquet (one file per ``--rows-per-file``
rows) in ``--dir``. Then, in one process and one run:

1. the in-memory fit: the parquet files read into one numpy array, ``DPGBClassifier`` (the
   default preset, epsilon 1) fitted on it; wall time of ``fit`` and the process's peak resident
   set;
2. the Dask fit: ``dd.read_parquet`` on a ``LocalCluster`` of 2 worker processes of one thread,
   each with ``memory_limit`` = ``--worker-memory`` (by default less than the float64 data, so
   the data do not fit in one worker's memory), ``DaskDPGBClassifier`` with the same parameters
   and ``random_state``; wall time of ``fit``, each worker's peak resident set, and the fit's time
   split by Dask's task stream into compute (the partition tasks: binning, gradients, sampling,
   histograms / leaf sums: summed over tasks and divided by the workers), reduction (the tasks
   adding partial sums) and the rest (scheduling, transfers, the client's releases);
3. the two released models compared (same splits, leaf values to float rounding, same ledger).

Both fits use the same seeded numpy noise (``random_state=0``): the benchmark's models are for
measurement, not for release. A warm-up fit on 20,000 rows compiles the kernels first, in the
client and in the workers. ``--quick``: 1M rows.

Writes ``results/dask[_quick].csv`` (+ machine facts). ``--dask-only N``: the Dask fit alone, of
``N`` trees, for data past the in-memory fit (``--rows 100000000``: 16 GB of float64); writes
``results/dask_rows<rows>.csv``. Needs ``pip install -e ".[bench]"``.
"""

import os
import resource
import sys
import time
from pathlib import Path

import _harness
import numpy as np

from dpboost import DPGBClassifier

N_FEATURES = 20
BOUND = 6.0


def write_parquet(directory, n_rows, rows_per_file, seed=0):
    """Write the task in files of ``rows_per_file`` rows (each file from its own seeded generator,
    so the data do not depend on how many files are written at once); returns the paths."""
    import pandas as pd

    directory.mkdir(parents=True, exist_ok=True)
    weights = np.zeros(N_FEATURES)
    weights[:5] = [1.0, -0.8, 0.6, 0.5, -0.4]
    paths = []
    for index, start in enumerate(range(0, n_rows, rows_per_file)):
        path = directory / f"part-{index:04d}.parquet"
        paths.append(path)
        if path.exists():
            continue
        rng = np.random.default_rng([seed, index])
        n = min(rows_per_file, n_rows - start)
        X = rng.normal(size=(n, N_FEATURES))
        y = (rng.random(n) < 1 / (1 + np.exp(-X @ weights))).astype(np.int64)
        frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(N_FEATURES)])
        frame["y"] = y
        frame.to_parquet(path, index=False)
    return paths


def params(seed=0, n_estimators=200):
    """The model every fit of this benchmark (and ``bench_spark.py``) trains: the additive
    trees its results measured (``_harness.ADDITIVE``)."""
    return {"epsilon": 1.0, "feature_bounds": (-BOUND, BOUND), "classes": [0, 1],
            "random_state": seed, "n_estimators": n_estimators, **_harness.ADDITIVE}


def peak_rss_gb():
    """This process's peak resident set since it started, in GB (Linux: ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def in_memory_fit(paths):
    import pandas as pd

    frame = pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True)
    y = frame.pop("y").to_numpy()
    X = frame.to_numpy(dtype=np.float64)
    del frame
    start = time.perf_counter()
    model = DPGBClassifier(**params()).fit(X, y)
    seconds = time.perf_counter() - start
    return model, seconds, X.nbytes


def task_split(stream, n_workers):
    """Seconds of the task stream's compute (partition tasks, per worker) and reductions."""
    compute = reduction = 0.0
    for task in stream:
        busy = sum(s["stop"] - s["start"] for s in task["startstops"] if s["action"] == "compute")
        key = task["key"][0] if isinstance(task["key"], tuple) else task["key"]
        # client.submit(add_sums, ...) names its tasks add_sums-<hash>
        if key.startswith("add_sums-"):
            reduction += busy
        else:
            compute += busy
    return compute / n_workers, reduction / n_workers


def dask_fit(path, worker_memory, n_workers=2, n_estimators=200):
    import dask.dataframe as dd
    from distributed import Client, LocalCluster, get_task_stream

    from dpboost.dask import DaskDPGBClassifier

    with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                      memory_limit=worker_memory, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        frame = dd.read_parquet(str(path))
        X, y = frame.drop(columns="y"), frame["y"]
        # Compile (or load from the cache) the kernels in every worker, untimed.
        small = dd.from_pandas(frame.head(20_000, npartitions=1), npartitions=n_workers)
        DaskDPGBClassifier(**{**params(), "n_estimators": 5}).fit(small.drop(columns="y"),
                                                                  small["y"])
        client.run(_reset_peak)
        with get_task_stream(client) as stream:
            start = time.perf_counter()
            model = DaskDPGBClassifier(**params(n_estimators=n_estimators)).fit(X, y)
            seconds = time.perf_counter() - start
        compute, reduction = task_split(stream.data, n_workers)
        peaks = sorted(client.run(_worker_peak_gb).values())
        limit_gb = cluster.workers[next(iter(cluster.workers))].memory_manager.memory_limit / 1e9
        return model.to_local(), {"fit_s": seconds, "compute_s": compute,
                                  "reduction_s": reduction,
                                  "other_s": seconds - compute - reduction,
                                  "worker_peak_gb": max(peaks), "worker_limit_gb": limit_gb,
                                  "n_partitions": frame.npartitions}


def _reset_peak():
    """Reset this worker's peak resident set (Linux: writing 5 to clear_refs resets VmHWM)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:  # not Linux, or not allowed: the peak then counts from the worker's start
        pass


def _worker_peak_gb():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def same_model(a, b):
    fa, fb = a._forest, b._forest
    structure = all(np.array_equal(getattr(fa, k), getattr(fb, k))
                    for k in ("split_feature", "split_bin", "missing_left"))
    leaves = float(np.max(np.abs(fa.leaf_value - fb.leaf_value)))
    ledger = [(e.mechanism, e.epsilon, e.sensitivity) for e in a.privacy_ledger_] == \
        [(e.mechanism, e.epsilon, e.sensitivity) for e in b.privacy_ledger_]
    return structure, leaves, ledger


def task_parser(doc):
    """The command line of the parquet task: ``--quick``, ``--rows``, ``--rows-per-file`` and
    ``--dir`` (this script's and ``bench_spark.py``'s)."""
    parser = _harness.parser(doc)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--rows-per-file", type=int, default=500_000)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/dpboost_bench_dask"))
    return parser


def task_files(args):
    """``(rows, directory, paths)`` of the task's parquet files (written if absent)."""
    rows = 1_000_000 if args.quick else args.rows
    path = args.dir / f"rows{rows}"
    return rows, path, write_parquet(path, rows, args.rows_per_file)


def compared(local, other, row, load_before):
    """``row`` with the comparison of the two released models (:func:`same_model`) and the
    load averages: ``load_before`` and now."""
    structure, leaves, ledger = same_model(local, other)
    return {**row, "same_splits": structure, "max_leaf_difference": leaves,
            "same_ledger": ledger,
            # other jobs on the machine slow the two fits unevenly: the 1-minute load average
            # before and after the timed fits
            "load_before": load_before, "load_after": os.getloadavg()[0]}


def report_compared(name, rows):
    """Print and write ``rows`` (:func:`compared`'s) as results/<name>.csv, and exit with an
    error if any fit did not release the in-memory model."""
    _report(name, rows)
    if not all(r["same_splits"] and r["same_ledger"] and r["max_leaf_difference"] < 1e-9
               for r in rows):
        sys.exit(f"{name}: the fit did not release the in-memory model")


def dask_only(path, rows, args):
    load_before = os.getloadavg()[0]
    _, facts = dask_fit(path, args.worker_memory, n_estimators=args.dask_only)
    row = {"rows": rows, "features": N_FEATURES, "n_trees": args.dask_only,
           "data_gb": rows * N_FEATURES * 8 / 1e9, **facts,
           "per_tree_ms": 1e3 * facts["fit_s"] / args.dask_only,
           "load_before": load_before, "load_after": os.getloadavg()[0]}
    _report(f"dask_rows{rows}", [row])


def _report(name, rows):
    """Print ``rows`` (floats to 4 digits) and write them as results/<name>.csv."""
    _harness.print_table([{k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in r.items()}
                          for r in rows])
    _harness.write_results(name, rows)


def main():
    parser = task_parser(__doc__)
    parser.add_argument("--worker-memory", default="1.25GiB",
                        help="memory_limit of each of the 2 workers (default below the data)")
    parser.add_argument("--dask-only", type=int, metavar="N_ESTIMATORS",
                        help="only the Dask fit, of N_ESTIMATORS trees (data too large for the "
                             "in-memory fit); writes results/dask_rows<rows>.csv")
    args = parser.parse_args()
    rows, path, paths = task_files(args)
    _harness.warm_up()
    if args.dask_only:
        dask_only(path, rows, args)
        return

    load_before = os.getloadavg()[0]
    local, local_s, data_bytes = in_memory_fit(paths)
    local_peak = peak_rss_gb()
    on_dask, facts = dask_fit(path, args.worker_memory)
    n_trees = local._forest.split_feature.shape[0]
    row = {"rows": rows, "features": N_FEATURES, "n_trees": n_trees,
           "data_gb": data_bytes / 1e9, "in_memory_fit_s": local_s,
           "in_memory_peak_gb": local_peak, **facts,
           "dask_over_memory": facts["fit_s"] / local_s,
           "per_tree_ms": 1e3 * facts["fit_s"] / n_trees,
           "compute_per_tree_ms": 1e3 * facts["compute_s"] / n_trees,
           "reduction_per_tree_ms": 1e3 * facts["reduction_s"] / n_trees,
           "other_per_tree_ms": 1e3 * facts["other_s"] / n_trees}
    report_compared(_harness.result_name("dask", args),
                    [compared(local, on_dask, row, load_before)])


if __name__ == "__main__":
    main()

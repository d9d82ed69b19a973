"""Training on Spark: the default estimator on a ``local[2]`` SparkSession against the in-memory
fit of the same rows.

The task of ``bench_dask.py`` (``--rows`` x 20 standard-normal features, a logistic label of 5 of
them, public bounds +-6), written once as parquet in ``--dir`` (one file per ``--rows-per-file``
rows). Then, in one process and one run, on a ``local[2]`` SparkSession (driver memory
``--driver-memory``) and ``spark.read.parquet``:

1. the in-memory fit: the DataFrame's rows collected in its order (``toPandas``: Spark reads the
   files in an order of its own, and the records' order is their coins' rows), ``DPGBClassifier``
   (the default preset, epsilon 1) fitted on them; wall time of ``fit``, the JVM idle;
2. the Spark fit: ``SparkDPGBClassifier`` on the DataFrame's 20 named columns with the same
   parameters and ``random_state``; wall time of ``fit`` (the checkpoint of the columns, the
   barrier job's tasks reading their Arrow batches, the boosting), and the time until the
   first statistic is back (the plan, the checkpoint, the job's start and the tasks' loading);
3. the two released models compared (same splits, leaf values to float rounding, same ledger).

Steps 1-3 run ``--repeats`` times in turn (default 3; one row each, the median ratio printed):
the machines here are shared, and one fit alone moves by a fifth between runs.

Both fits use the same seeded numpy noise (``random_state=0``): the benchmark's models are for
measurement, not for release. A warm-up fit on 20,000 rows compiles the kernels first, in this
process and in Spark's Python workers (which Spark reuses across tasks). ``--quick``: 1M rows.

Writes ``results/spark[_quick].csv`` (+ machine facts). Needs ``pip install -e ".[bench]"`` and
a Java runtime.
"""

import os
import time

import _harness
import numpy as np
from bench_dask import N_FEATURES, compared, params, report_compared, task_files, task_parser

from dpboost import DPGBClassifier

FEATURES = [f"x{j}" for j in range(N_FEATURES)]


def fit_params(as_shipped):
    """``bench_dask.params`` (the additive trees), or with ``as_shipped`` the default's own
    choice of trees: its private row count picks them (at 10M x 20 and epsilon 1, unrestricted
    exponential-split trees on every record)."""
    return ({**params(), "interaction_cst": "auto", "n_samples_hint": "private"} if as_shipped
            else params())


def in_memory_fit(frame, model_params):
    data = frame.toPandas()
    y = data.pop("y").to_numpy()
    X = data.to_numpy(dtype=np.float64)
    del data
    start = time.perf_counter()
    model = DPGBClassifier(**model_params).fit(X, y)
    return model, time.perf_counter() - start, X.nbytes


def spark_fit(frame, model_params, rows, warm_up=True):
    from dpboost.spark import SparkDPGBClassifier, SparkRecords

    if warm_up:
        # Start the Python workers and compile (or load from the cache) the kernels there,
        # untimed; told the full row count, so that a count picks the full fit's trees.
        hint = {} if model_params["n_samples_hint"] is None else {"n_samples_hint": rows}
        SparkDPGBClassifier(featuresCol=FEATURES, labelCol="y",
                            **{**model_params, "n_estimators": 5, **hint}).fit(
                                frame.limit(20_000))
    first = []
    reduce = SparkRecords.reduce

    def timed_reduce(self, *args):
        total = reduce(self, *args)
        if not first:
            first.append(time.perf_counter())
        return total

    SparkRecords.reduce = timed_reduce
    start = time.perf_counter()
    model = SparkDPGBClassifier(featuresCol=FEATURES, labelCol="y", **model_params).fit(frame)
    seconds = time.perf_counter() - start
    SparkRecords.reduce = reduce
    return model.to_local(), {"fit_s": seconds, "n_partitions": frame.rdd.getNumPartitions(),
                              "to_first_statistic_s": first[0] - start}


def main():
    parser = task_parser(__doc__)
    parser.add_argument("--repeats", type=int, default=3,
                        help="pairs of fits (in memory, then Spark), one row each")
    parser.add_argument("--as-shipped", action="store_true",
                        help="the default estimator as shipped (its private row count picks the "
                        "trees) instead of the additive trees; results spark_as_shipped[_quick]")
    parser.add_argument("--driver-memory", default="8g",
                        help="spark.driver.memory (local mode: the executors' memory too)")
    args = parser.parse_args()
    rows, path, _ = task_files(args)
    _harness.warm_up()
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[2]").appName("dpboost-bench")
             .config("spark.driver.memory", args.driver_memory)
             .config("spark.driver.maxResultSize", "0")  # toPandas of the whole data set
             .config("spark.sql.execution.arrow.pyspark.enabled", "true")
             .config("spark.ui.showConsoleProgress", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    frame = spark.read.parquet(str(path))

    import pyspark

    versions = {"pyspark": pyspark.__version__,
                "java": spark.sparkContext._jvm.System.getProperty("java.version")}
    model_params = fit_params(args.as_shipped)
    rows_out = []
    for repeat in range(args.repeats):
        # In turn, so that another job on the machine slows both fits of a pair alike.
        load_before = os.getloadavg()[0]
        local, local_s, data_bytes = in_memory_fit(frame, model_params)
        on_spark, facts = spark_fit(frame, model_params, rows, warm_up=repeat == 0)
        n_trees = local._forest.split_feature.shape[0]
        row = {"repeat": repeat, "rows": rows, "features": N_FEATURES, "n_trees": n_trees,
               "data_gb": data_bytes / 1e9, "in_memory_fit_s": local_s, **facts,
               "spark_over_memory": facts["fit_s"] / local_s,
               "per_tree_ms": 1e3 * facts["fit_s"] / n_trees, **versions}
        rows_out.append(compared(local, on_spark, row, load_before))
        del local, on_spark
    spark.stop()
    ratios = [row["spark_over_memory"] for row in rows_out]
    print(f"Spark / in memory: median {np.median(ratios):.3f}x over {len(ratios)} pairs")
    report_compared(_harness.result_name("spark_as_shipped" if args.as_shipped else "spark", args),
                    rows_out)


if __name__ == "__main__":
    main()

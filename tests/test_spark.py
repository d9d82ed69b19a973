"""``dpboost.spark`` on a ``local[2]`` SparkSession started here.

With a fixed seed a Spark fit releases the in-memory fit's model (same splits and ledger, leaf
values to float rounding) whatever the partitions, an empty one included; a task lost mid-fit
makes Spark run the stage again, whose tasks replay the fit's decisions to the same model; what
the fit refuses is refused before any record is read; the estimators are SparkML stages (a
Pipeline, ``transform``, ``to_local``); and the record-and-replay harness
(tests/replay_harness.py) passes on the Spark path.
"""

import functools
import os
import shutil
import sys

import numpy as np
import pytest

pyspark = pytest.importorskip("pyspark")
pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")
if shutil.which("java") is None and "JAVA_HOME" not in os.environ:
    pytest.skip("Spark needs a Java runtime (.ci/run installs one)", allow_module_level=True)

from cluster_cases import RECOVERY_PARAMS, SETTINGS, recovery_case  # noqa: E402
from cluster_cases import data as _data  # noqa: E402
from pyspark import cloudpickle  # noqa: E402
from pyspark.ml import Pipeline  # noqa: E402
from pyspark.ml.feature import VectorAssembler  # noqa: E402
from pyspark.sql import DataFrame, SparkSession  # noqa: E402

from dpboost import (  # noqa: E402
    BudgetExceededError,
    DPGBClassifier,
    DPGBRegressor,
    PrivacyAccountant,
)
from dpboost._records import load_partition  # noqa: E402
from dpboost._spark_columns import _Columns, _Load, _rows  # noqa: E402
from dpboost._spark_records import SparkRecords  # noqa: E402
from dpboost.spark import (  # noqa: E402
    SparkDPGBClassificationModel,
    SparkDPGBClassifier,
    SparkDPGBRegressor,
)

# The steps this module sends to the tasks travel by value (the workers cannot import it).
cloudpickle.register_pickle_by_value(sys.modules[__name__])


@pytest.fixture(scope="session")
def spark():
    session = (SparkSession.builder.master("local[2]").appName("dpboost-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def _frame(spark, X, y, cuts=(), vector=False):
    """``X`` (an array or a pandas DataFrame) and ``y`` as a Spark DataFrame whose partitions
    hold rows ``[0, cuts[0]), [cuts[0], cuts[1]), ...`` (equal cuts: an empty partition), with
    the label in "label"; returns it and its ``featuresCol``. ``vector``: the features of an
    array in a VectorAssembler's column "features" (NaN and inf kept)."""
    frame = X.copy() if isinstance(X, pd.DataFrame) else pd.DataFrame(
        np.asarray(X, dtype=np.float64), columns=[f"x{j}" for j in range(np.shape(X)[1])])
    names = list(frame.columns)
    frame["label"] = y
    schema = spark.createDataFrame(frame).schema
    bounds = [0, *cuts, len(frame)]
    parts = [spark.createDataFrame(frame.iloc[a:b], schema=schema).coalesce(1)
             for a, b in zip(bounds, bounds[1:])]
    data = functools.reduce(DataFrame.union, parts)
    if not vector:
        return data, names
    assembler = VectorAssembler(inputCols=names, outputCol="features", handleInvalid="keep")
    return assembler.transform(data).select("features", "label"), "features"


@pytest.mark.parametrize("setting", [pytest.param(s, marks=pytest.mark.slow)
                                     if s == "dpboost_paper" else s for s in sorted(SETTINGS)])
def test_a_spark_fit_is_the_in_memory_fit(spark, setting, assert_same_model):
    local_class, params = SETTINGS[setting]
    # The default preset's number of trees ("auto") capped at 60: each tree costs the driver
    # a round trip to the tasks per level.
    params = {"n_estimators": 60, **params, "epsilon": 2.0, "random_state": 3}
    X, y = _data(regression=local_class is DPGBRegressor)
    local = local_class(**params).fit(X, y)
    spark_class = SparkDPGBRegressor if local_class is DPGBRegressor else SparkDPGBClassifier
    # uneven partitions, one of them a single row; features in a vector column
    frame, features = _frame(spark, X, y, cuts=(1, 1201), vector=True)
    on_spark = spark_class(featuresCol=features, **params).fit(frame).to_local()
    assert type(on_spark) is local_class
    assert_same_model(local, on_spark)
    assert on_spark.privacy_report() == local.privacy_report()


# Seven partitions are slow: more partitions than task slots are also joined in
# test_a_spark_fit_is_the_in_memory_fit (three).
@pytest.mark.parametrize("cuts", [(), (3000,), pytest.param((400, 800, 1500, 1501, 2000, 2999),
                                                            marks=pytest.mark.slow)],
                         ids=["one-partition", "an-empty-partition", "seven-partitions"])
def test_partitions_do_not_change_the_model(spark, cuts, assert_same_model):
    # (3000,): two partitions, the second empty, so one task holds no record; seven are
    # joined into two tasks (local[2] has two task slots).
    X, y = _data()
    params = {"classes": [0, 1, 2], "feature_bounds": (-4, 4), "random_state": 5,
              "n_estimators": 30}
    frame = pd.DataFrame(X, columns=list("abcd"))
    data, features = _frame(spark, frame, y, cuts)
    model = SparkDPGBClassifier(featuresCol=features, **params).fit(data)
    assert_same_model(DPGBClassifier(**params).fit(frame, y), model.to_local())
    assert list(model.to_local().feature_names_in_) == list("abcd")


def test_a_pipeline_stage_that_transforms_dataframes(spark):
    # Named columns (one categorical, of strings) through a Pipeline; the model adds SparkML's
    # columns, computed by the in-memory model it hands out.
    X, y = _data(1000)
    frame = pd.DataFrame(X[:, :3], columns=["a", "b", "c"])
    frame["colour"] = np.array(["red", "green", "blue", None], dtype=object)[np.arange(1000) % 4]
    labels = np.array(["low", "mid", "high"])[y]
    data, _ = _frame(spark, frame, labels, cuts=(500,))
    assembler = VectorAssembler(inputCols=["a", "b"], outputCol="ab", handleInvalid="keep")
    stage = SparkDPGBClassifier(featuresCol="ab", classes=["high", "low", "mid"],
                                feature_bounds=(-4, 4), random_state=0, n_estimators=10)
    model = Pipeline(stages=[assembler, stage]).fit(data)
    fitted = model.stages[-1]
    assert isinstance(fitted, SparkDPGBClassificationModel)
    out = model.transform(data).toPandas()
    local = fitted.to_local()
    assert type(local) is DPGBClassifier and local is not fitted.to_local()
    expected = local.predict_proba(X[:, :2])
    np.testing.assert_array_equal(np.stack(out["probability"].map(lambda v: v.toArray())),
                                  expected)
    np.testing.assert_array_equal(out["prediction"].to_numpy(), local.predict(X[:, :2]))
    np.testing.assert_array_equal(np.stack(out["rawPrediction"].map(lambda v: v.toArray())),
                                  local.decision_function(X[:, :2]))
    # the same with the columns by name, the string column categorical
    named = SparkDPGBClassifier(featuresCol=["a", "b", "c", "colour"], classes=["high", "low",
                                                                                 "mid"],
                                categories={"colour": ["blue", "green", "red"]},
                                feature_bounds={"a": (-4, 4), "b": (-4, 4), "c": (-4, 4)},
                                random_state=0, n_estimators=10, probabilityCol="",
                                rawPredictionCol="").fit(data)
    predicted = named.transform(data).select("prediction").toPandas()["prediction"]
    np.testing.assert_array_equal(predicted.to_numpy(), named.to_local().predict(frame))
    assert "probability" not in named.transform(data).columns


def test_regression_and_params(spark):
    X, y = _data(600, regression=True)
    data, features = _frame(spark, X, y, vector=True)
    estimator = SparkDPGBRegressor(target_bounds=(-8, 8), feature_bounds=(-4, 4),
                                   random_state=1, n_estimators=10)
    assert estimator.getOrDefault("max_depth") == DPGBRegressor().max_depth
    copied = estimator.copy({estimator.max_depth: 2})
    assert copied.getOrDefault("max_depth") == 2 and estimator.getOrDefault("max_depth") == 4
    model = copied.setPredictionCol("y_hat").fit(data)
    assert model.to_local().max_depth == 2
    out = model.transform(data).toPandas()
    np.testing.assert_array_equal(out["y_hat"].to_numpy(), model.to_local().predict(X))
    with pytest.raises(TypeError, match="unexpected keyword argument 'client'"):
        SparkDPGBRegressor(client=None)


def _no_job_may_start(monkeypatch):
    def start(self):  # pragma: no cover - must not run
        raise AssertionError("the fit's record set started")

    monkeypatch.setattr(SparkRecords, "_start", start)


def _jobs(spark):
    """The Spark jobs run so far (a job is what reads records)."""
    return sorted(spark.sparkContext.statusTracker().getJobIdsForGroup())


REFUSALS = {
    "feature_bounds": ({"feature_bounds": None}, ValueError,
                       "feature_bounds=None: SparkDPGBClassifier needs public"),
    "classes": ({"classes": None}, ValueError, "classes=None: SparkDPGBClassifier needs public"),
    "private-categories": ({"categorical_features": [0], "categories": "private"}, ValueError,
                           "categories='private' is not supported by SparkDPGBClassifier yet"),
    "class-weight": ({"class_weight": {0: 2.0}}, NotImplementedError,
                     "SparkDPGBClassifier does not take sample_weight, class_weight"),
    "warm-start": ({"warm_start": True}, ValueError, "warm_start=True: SparkDPGBClassifier"),
    "missing-column": ({"featuresCol": "missing"}, ValueError,
                       "column 'missing' is not in the DataFrame"),
    "label-type": ({"labelCol": "when"}, ValueError, "labelCol='when' is of type timestamp"),
    "feature-type": ({"featuresCol": ["x0", "when"]}, ValueError,
                     "feature column 'when' is of type timestamp"),
    "not-a-vector": ({"featuresCol": "x0"}, ValueError, "featuresCol='x0' is a column of "
                                                        "type double; name a vector"),
    "vector-of-unknown-size": ({"featuresCol": "array"}, ValueError,
                               "the size of the vector column 'array' is not in its metadata"),
    "label-among-features": ({"featuresCol": ["x0", "label"]}, ValueError,
                             "labelCol='label' is also a feature column"),
    "budget": ({"epsilon": 1.0}, BudgetExceededError,
               r"SparkDPGBClassifier\(epsilon=1, delta=1e-05\) would spend"),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_what_spark_refuses_is_refused_before_any_record_is_read(spark, case, monkeypatch):
    params, error, message = REFUSALS[case]
    X, y = _data(300)
    data, names = _frame(spark, X, y)
    data = data.selectExpr("*", "current_timestamp() as when", "array(x0, x1) as array")
    accountant = PrivacyAccountant(epsilon=0.5 if case == "budget" else 5.0, delta=1e-3)
    _no_job_may_start(monkeypatch)
    estimator = SparkDPGBClassifier(featuresCol=names, classes=[0, 1, 2], feature_bounds=(-4, 4),
                                    accountant=accountant)
    jobs = _jobs(spark)
    with pytest.raises(error, match=message):
        estimator.setParams(**params).fit(data)
    assert accountant.spent() == 0.0
    assert _jobs(spark) == jobs


def test_in_memory_data_is_refused_with_a_pointer():
    X, y = _data(300)
    with pytest.raises(TypeError, match="takes a Spark DataFrame; got ndarray.*DPGBClassifier"):
        SparkDPGBClassifier(classes=[0, 1, 2], feature_bounds=(-4, 4)).fit(X)


def test_a_spark_connect_dataframe_is_refused():
    # Spark Connect's DataFrame (a pyspark.sql.DataFrame in PySpark 4) has no SparkContext to
    # run the fit's barrier job; its class is named here as PySpark names it.
    remote = type("DataFrame", (), {"__module__": "pyspark.sql.connect.dataframe"})()
    with pytest.raises(TypeError, match="does not take a Spark Connect DataFrame"):
        SparkDPGBClassifier(classes=[0, 1, 2], feature_bounds=(-4, 4)).fit(remote)


def _before_reduction(monkeypatch, n, function, *args):
    """Queue ``function(partition, *args)`` before the ``n``-th reduction of the next fit."""
    real = SparkRecords.reduce
    reductions = []

    def reduce(self, statistic, *statistic_args):
        reductions.append(statistic)
        if len(reductions) == n:
            self.update(function, *args)
        return real(self, statistic, *statistic_args)

    monkeypatch.setattr(SparkRecords, "reduce", reduce)
    return reductions


def _exit_once(partition, marker):
    """The first task to get here exits (its Python worker crashes, as on a lost executor)."""
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        return partition
    os._exit(1)


def _raise(partition):
    raise ArithmeticError("a partition function failed")


@pytest.mark.slow
def test_a_task_lost_mid_fit_is_run_again_to_the_same_model(spark, tmp_path, monkeypatch,
                                                            assert_same_model):
    # docs/spark.md: Spark runs the barrier stage again; its new tasks read their partitions
    # from the checkpoint and replay every decision sent so far.
    X, y, expected, spent = recovery_case(3000)
    accountant = PrivacyAccountant(epsilon=10.0, delta=1e-3)
    data, names = _frame(spark, X, y, cuts=(1500,))
    marker = str(tmp_path / "exited")
    reductions = _before_reduction(monkeypatch, 5, _exit_once, marker)
    model = SparkDPGBClassifier(featuresCol=names, accountant=accountant,
                                **RECOVERY_PARAMS).fit(data)
    assert os.path.exists(marker) and len(reductions) > 5
    assert_same_model(expected, model.to_local())
    assert accountant.spent() == pytest.approx(spent, rel=1e-12)


def test_an_error_in_a_task_ends_the_fit_cleanly(spark, monkeypatch):
    # The task's exception is raised on the driver (its traceback the cause); the fit leaves
    # nothing registered, and the job ends (the next fit runs).
    X, y = _data(300)
    data, names = _frame(spark, X, y, cuts=(150,))
    accountant = PrivacyAccountant(epsilon=10.0, delta=1e-3)
    _before_reduction(monkeypatch, 3, _raise)
    estimator = SparkDPGBClassifier(featuresCol=names, classes=[0, 1, 2], feature_bounds=(-4, 4),
                                    accountant=accountant, random_state=0, n_estimators=5)
    with pytest.raises(ArithmeticError, match="a partition function failed") as caught:
        estimator.fit(data)
    assert "_raise" in str(caught.value.__cause__)
    assert accountant.spent() == 0.0
    monkeypatch.undo()
    assert estimator.fit(data).to_local().n_estimators_ == 5


def test_vectors_of_another_length_are_per_record():
    # A record's vector never fails the fit: missing cells are NaN, extra cells dropped.
    pa = pytest.importorskip("pyarrow")
    lists = pa.chunked_array([[[1.0, 2.0, 3.0], [4.0]], [None, [5.0, 6.0, 7.0, 8.0], []]])
    np.testing.assert_array_equal(_rows(lists, 3), [[1, 2, 3], [4, np.nan, np.nan],
                                                    [np.nan] * 3, [5, 6, 7], [np.nan] * 3])
    np.testing.assert_array_equal(_rows(pa.chunked_array([[[1.0, 2.0]]]), 2), [[1, 2]])
    # a missing cell inside a vector, and an array that starts inside its buffers (a slice)
    sliced = pa.array([[9.0, 9.0], [1.0, None], [3.0]]).slice(1)
    np.testing.assert_array_equal(_rows(sliced, 2), [[1, np.nan], [3, np.nan]])
    assert _rows(pa.array([], type=pa.list_(pa.float64())), 3).shape == (0, 3)


def test_double_columns_are_read_as_pandas_reads_them():
    # Named double columns straight from their Arrow chunks: the kept records' numbers (and NaN
    # for a null, -0.0 and infinities) the pandas path gives, in one float64 array; other
    # schemas (a string column) take the pandas path.
    pa = pytest.importorskip("pyarrow")
    a = pa.chunked_array([[1.0, None, -0.0], [np.inf], [], [7.0]], type=pa.float64())
    b = pa.chunked_array([[0.5], [2.0, -np.inf, None], [8.0]], type=pa.float64())
    labels = [0, 1, 0, 2, 1]  # the label 2 is outside the classes: its record is left out
    table = pa.table({"a": a, "b": b, "y": labels})
    columns = _Columns(("a", "b"), False, 2, "y", table.schema)
    assert columns.all_doubles()
    keep = np.array([True, False, True, True, True])  # chunk boundaries on both sides
    numbers = columns.kept_numbers(table, keep)
    expected = columns.features_of(table).to_numpy(dtype=np.float64)[keep]
    assert numbers.dtype == np.float64 and numbers.flags.f_contiguous
    assert numbers.tobytes(order="F") == np.asfortranarray(expected).tobytes(order="F")
    # The task's load: the partition the in-memory records' load gives, bit for bit.
    partition = _Load(columns, {}, np.array([0, 1]), None)(table.to_batches(), 1)
    reference = load_partition(columns.features_of(table), np.array(labels), {},
                               np.array([0, 1]), None)
    assert partition.X.tobytes(order="F") == np.asfortranarray(reference.X).tobytes(order="F")
    np.testing.assert_array_equal(partition.y_rows, reference.y_rows)
    strings = pa.table({"a": a, "s": ["u", "v", None, "w", "x"], "y": labels})
    assert not _Columns(("a", "s"), False, 2, "y", strings.schema).all_doubles()


# The first three configurations of the harness's pairwise-covering set (two fits each, about
# 5 s: the first in the default suite).
@pytest.mark.parametrize("index", [0, pytest.param(1, marks=pytest.mark.slow),
                                   pytest.param(2, marks=pytest.mark.slow)])
def test_record_and_replay_on_the_spark_path(spark, index):
    import replay_harness

    # The replay's coins (replay_harness.ExtraCoins) travel to the tasks by value.
    cloudpickle.register_pickle_by_value(replay_harness)

    def on_spark(local_factory):
        def make(noise):
            local = local_factory(noise)
            adapter = _Regressor if isinstance(local, DPGBRegressor) else _Classifier
            return adapter(**local.get_params())
        return make

    config = replay_harness.FAST[index]
    D, D_prime = replay_harness.neighbours(config["task"], config["data"], config["features"],
                                           config["label"])
    replay_harness.replay(on_spark(replay_harness.estimator_factory(config)), D, D_prime,
                          probe=replay_harness.probe_set(config["data"]),
                          extra_coin=config["coin"], added_row=len(D[1]))


class _FromMemory:
    """The in-memory estimator's ``fit`` through the Spark estimator, on a DataFrame of 3
    partitions (the replay harness holds D and D' in memory): numeric data as a vector column,
    a pandas DataFrame by its named columns; the fitted attributes are the Spark model's."""

    def fit(self, X, y):
        cuts = (len(y) // 3, 2 * len(y) // 3)
        data, features = _frame(SparkSession.getActiveSession(), X, y, cuts,
                                vector=not isinstance(X, pd.DataFrame))
        model = self._spark_class(featuresCol=features, **self.get_params()).fit(data)
        self.__dict__.update(vars(model.to_local()))
        return self


class _Classifier(_FromMemory, DPGBClassifier):
    _spark_class = SparkDPGBClassifier


class _Regressor(_FromMemory, DPGBRegressor):
    _spark_class = SparkDPGBRegressor


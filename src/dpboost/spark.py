"""Training on Spark DataFrames: the noise added once, on the driver.

:class:`SparkDPGBClassifier` and :class:`SparkDPGBRegressor` are SparkML estimators (a
``pyspark.ml.Estimator``, usable in a ``pyspark.ml.Pipeline``) that take the in-memory
estimators' parameters and SparkML's columns: ``featuresCol`` (a vector column, an array column,
or a list of numeric, boolean or string columns), ``labelCol``, and for the model
``predictionCol``, ``probabilityCol`` and ``rawPredictionCol``. ``fit`` returns a
:class:`SparkDPGBClassificationModel` / :class:`SparkDPGBRegressionModel`, which transforms
DataFrames and hands out the fitted in-memory estimator (``to_local``).

The fit is the in-memory one (``_boosting.train``) over a ``SparkRecords``: one Spark job in
barrier mode (every task runs at once, at most one per task slot) whose tasks read their
partitions as Arrow batches, keep their records in memory (binned on the public grid once the
grid is known), apply the driver's public decisions to them and return sums of their records'
statistics, over an authenticated connection to the driver. The driver adds the sums in
partition order and makes every release once with the fit's noise source (secure by default);
nothing else about the records reaches it but each task's number of records. Accounting and
ledger are the in-memory ones; with the same ``random_state`` the two fits release the same model
(leaf values to float rounding: sums are added in another order), whatever the partitions.

Before the job, the DataFrame's columns are checkpointed on the executors
(``localCheckpoint``): a task lost mid-fit fails the job's stage, which Spark runs again (all
its tasks, as barrier mode does), and each new task reads the same records from the checkpoint
and replays the decisions made so far, which are pure functions of the records and the fit's
keyed coins: the released model is unchanged. An executor lost mid-fit takes its part of the
checkpoint with it: the fit then fails, leaving nothing fitted and nothing spent.

The public inputs must be public: ``feature_bounds`` (or ``"private"``), ``classes``
(classifier) and ``target_bounds`` (regressor, or ``"private"``) are required, as reading them
off the data would take a non-private pass over the cluster. Requires ``pyspark>=3.5`` and
``pyarrow`` (``pip install 'dpboost[spark]'``).
"""

import copy
import inspect
import queue
import secrets
import threading
import traceback
from dataclasses import dataclass, replace
from multiprocessing.connection import Client, Listener
from multiprocessing.context import AuthenticationError

import numpy as np

from ._estimators import DPGBClassifier, DPGBRegressor
from ._public_inputs import fit_inputs
from ._records import RecordSet, check_cluster_inputs, load_partition

try:
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyspark import BarrierTaskContext, InheritableThread, cloudpickle
    from pyspark.ml import Estimator, Model
    from pyspark.ml.functions import array_to_vector, vector_to_array
    from pyspark.ml.linalg import VectorUDT
    from pyspark.ml.param import Param, Params
    from pyspark.ml.param.shared import (
        HasLabelCol,
        HasPredictionCol,
        HasProbabilityCol,
        HasRawPredictionCol,
    )
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F
    from pyspark.sql import types as T
    from pyspark.sql.pandas.types import to_arrow_schema
except ImportError as error:  # pragma: no cover - the message is the documentation
    raise ImportError("dpboost.spark needs PySpark, pandas and pyarrow: pip install "
                      "'dpboost[spark]'") from error


# ------------------------------------------------------------------------------------------------
# The record set: the partitions in the tasks of one barrier job
# ------------------------------------------------------------------------------------------------

class SparkRecords(RecordSet):
    """A record set (``_records``) whose partitions live in the tasks of one Spark job.

    Nothing runs until the first :meth:`reduce`: then one job starts in barrier mode, each of
    its tasks loads its partition (``load``), connects to the driver (a listener authenticated
    by a key drawn for the fit) and says how many records it holds; the driver numbers the
    records across tasks in partition order and from then on sends each task the queued public
    decisions and the statistic to sum. :meth:`close` ends the job.

    Parameters
    ----------
    frame : pyspark.sql.DataFrame
        The records' columns, in at most as many partitions as the cluster has task slots.
    load : callable
        ``load(batches, n_threads)``: a task's iterator of ``pyarrow.RecordBatch`` as a
        :class:`~dpboost._records.Partition` whose records are numbered from 0.
    description : str
        The job's description in Spark's UI.
    """

    def __init__(self, frame, load, description):
        self._frame, self._load, self._description = frame, load, description
        self._pending = []
        self._log = []  # every decision sent: what the tasks of a stage run again replay
        self._tasks = None  # the connections in partition order, once the job runs
        self._seen = {}  # partition -> (task attempt, records) of its latest task
        self._job = self._failure = self._listener = None
        self._closing = False

    def update(self, function, *args):
        """Queue ``function(partition, *args)`` for every partition (sent with the next
        :meth:`reduce`)."""
        self._pending.append(_Step(function, args))

    def reduce(self, function, *args):
        """``function(partition, *args)`` of every task's partition, after the queued
        decisions, added on the driver in partition order.

        Returns
        -------
        total : ndarray, dtype=float64
        """
        if self._tasks is None:
            self._start()
        steps, self._pending = tuple(self._pending), []
        self._log.extend(steps)
        statistic = _Step(function, args)
        message = ("run", steps, statistic)
        while True:
            try:
                sums = self._exchange(message)
                break
            except (EOFError, OSError):
                # A task is gone: Spark runs the stage again; its new tasks replay the log
                # (which holds ``steps``), then the statistic is asked again.
                self._connect()
                message = ("run", (), statistic)
        total = sums[0].copy()
        for term in sums[1:]:
            total += term
        return total

    def number_rows(self):
        """Nothing to do: each task numbers its records when it starts, from every task's
        number of records (known to the driver before any statistic)."""

    def close(self, cancel=False):
        """End the job: tell the tasks to stop (``cancel``: cancel the job as well, after a
        failed fit) and wait for it."""
        if self._job is None:
            return
        for connection in self._tasks or ():
            try:
                connection.send_bytes(cloudpickle.dumps(("stop",)))
            except OSError:
                pass  # a task already gone
            connection.close()
        self._closing = True
        # Wakes the listener's thread, which then sees ``_closing``.
        Client(self._address, authkey=self._key).close()
        self._listener.close()
        if cancel:
            self._frame.sparkSession.sparkContext.cancelJobGroup(self._group)
        self._job.join()
        self._job = None

    def _start(self):
        # The checkpoint: what a task run again reads (the same records, in the same order,
        # whatever the DataFrame's plan), and a barrier stage's input, which must have as many
        # partitions as each RDD before it in the stage (no union or coalesce).
        frame = self._frame.localCheckpoint()
        context = self._frame.sparkSession.sparkContext
        conf = context.getConf()
        host = conf.get("spark.driver.host")
        self._key = secrets.token_bytes(32)
        self._listener = Listener((conf.get("spark.driver.bindAddress", host), 0),
                                  authkey=self._key)
        self._address = (host, self._listener.address[1])
        self._arrivals = queue.Queue()
        self._group = f"dpboost-{secrets.token_hex(8)}"
        threading.Thread(target=self._accept, daemon=True).start()
        serve = _Serve(self._address, self._key, self._load)
        # A barrier stage that is not the job's last (the shuffle after it) is one Spark runs
        # again when one of its tasks fails; a failed barrier result stage ends the job.
        job = frame.mapInArrow(serve, "task long", barrier=True).repartition(1)
        self._job = InheritableThread(target=self._run, args=(context, job), daemon=True)
        self._job.start()
        self._connect()

    def _run(self, context, job):
        context.setJobGroup(self._group, self._description, interruptOnCancel=True)
        try:
            # The noop sink: the job runs, nothing comes back to Python.
            job.write.format("noop").mode("overwrite").save()
        except Exception as error:  # raised on the driver's thread by _connect
            self._failure = error
        self._arrivals.put(None)

    def _accept(self):
        while True:
            try:
                connection = self._listener.accept()
            except AuthenticationError:
                continue  # not one of the fit's tasks
            except OSError:
                return
            if self._closing:
                connection.close()
                return
            self._arrivals.put(connection)

    def _connect(self):
        """Wait for one task per partition of the job's latest stage attempt, number the
        records and send each task its first row and the decisions so far."""
        for connection in self._tasks or ():
            connection.close()
        tasks, n_tasks = {}, None
        while n_tasks is None or len(tasks) < n_tasks:
            connection = self._arrivals.get()
            if connection is None:
                raise self._failure or RuntimeError("the Spark job of the fit ended early")
            try:
                index, attempt, n_tasks, n_records = cloudpickle.loads(connection.recv_bytes())
            except (EOFError, OSError):
                continue
            if attempt <= self._seen.get(index, (-1,))[0]:
                connection.close()  # a task of an attempt Spark has given up
                continue
            if index in tasks:
                tasks[index].close()
            tasks[index] = connection
            self._seen[index] = (attempt, n_records)
        counts = [self._seen[i][1] for i in range(n_tasks)]
        first_rows = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(int)
        log = tuple(self._log)
        self._tasks = [tasks[i] for i in range(n_tasks)]
        for connection, first_row in zip(self._tasks, first_rows):
            connection.send_bytes(cloudpickle.dumps(("start", int(first_row), log)))

    def _exchange(self, message):
        payload = cloudpickle.dumps(message)
        for connection in self._tasks:
            connection.send_bytes(payload)
        replies = [cloudpickle.loads(connection.recv_bytes()) for connection in self._tasks]
        for kind, value, remote in replies:
            if kind == "error":
                raise value from RemoteTraceback(remote)
        return [value for _, value, _ in replies]


class RemoteTraceback(Exception):
    """The traceback of an error raised in a Spark task, as text (the cause of the error
    re-raised on the driver)."""


@dataclass(frozen=True)
class _Step:
    """One partition function and its public arguments."""

    function: object
    args: tuple

    def __call__(self, partition):
        return self.function(partition, *self.args)


def _apply(partition, steps):
    for step in steps:
        partition = step(partition)
    return partition


@dataclass(frozen=True)
class _Serve:
    """A task of the fit's job (``mapInArrow``): load the partition, then serve the driver."""

    address: tuple
    key: bytes
    load: object

    def __call__(self, batches):
        context = BarrierTaskContext.get()
        partition = self.load(batches, context.cpus())
        hello = (context.partitionId(), context.taskAttemptId(), len(context.getTaskInfos()),
                 partition.y_rows.shape[1])
        with Client(self.address, authkey=self.key) as connection:
            connection.send_bytes(cloudpickle.dumps(hello))
            _, first_row, log = cloudpickle.loads(connection.recv_bytes())
            partition = _apply(replace(partition, first_row=first_row), log)
            while True:
                message = cloudpickle.loads(connection.recv_bytes())
                if message[0] == "stop":
                    break
                _, steps, statistic = message
                try:
                    partition = _apply(partition, steps)
                    reply = ("sum", np.asarray(statistic(partition), dtype=np.float64), None)
                except Exception as error:  # raised on the driver, which ends the fit
                    reply = ("error", error, traceback.format_exc())
                connection.send_bytes(_dumps_reply(reply))
        yield from ()


def _dumps_reply(reply):
    try:
        return cloudpickle.dumps(reply)
    except Exception:  # an exception that does not pickle: its text
        return cloudpickle.dumps(("error", RuntimeError(repr(reply[1])), reply[2]))


# ------------------------------------------------------------------------------------------------
# Columns: where a DataFrame holds the features and the label (from its schema only)
# ------------------------------------------------------------------------------------------------

def _quoted(name):
    return F.col("`" + name.replace("`", "``") + "`")


def _kind(data_type):
    """``"number"``, ``"string"``, ``"vector"``, ``"array"`` or None (not a feature)."""
    if isinstance(data_type, (T.NumericType, T.BooleanType)):
        return "number"
    if isinstance(data_type, T.StringType):
        return "string"
    if isinstance(data_type, VectorUDT):
        return "vector"
    if isinstance(data_type, T.ArrayType) and isinstance(data_type.elementType, T.NumericType):
        return "array"
    return None


@dataclass(frozen=True)
class _Columns:
    """The features and label of a DataFrame, as the columns sent to the tasks.

    Attributes
    ----------
    features : tuple of str
        The named feature columns, or the one vector (or array) column.
    vector : bool
        Whether ``features`` is one vector or array column of ``n_features`` numbers.
    n_features : int
    label : str or None
    schema : pyarrow.Schema
        Of :meth:`select`'s columns.
    """

    features: tuple
    vector: bool
    n_features: int
    label: object
    schema: object

    @classmethod
    def of(cls, frame, features_col, label_col, n_features, who):
        """The columns of ``frame`` (its schema only): ``features_col`` a column name or a list
        of names, ``label_col`` a name or None; ``n_features`` the number of features of a
        vector or array column (None: from its metadata, or an error); ``who`` the estimator
        for the messages.

        Raises
        ------
        ValueError
            A column that is missing or of a type the fit does not read, a label among the
            features, or a vector column of unknown size.
        """
        schema = frame.schema
        types = {field.name: field for field in schema.fields}
        names = [features_col] if isinstance(features_col, str) else list(features_col)
        for name in names + ([] if label_col is None else [label_col]):
            if name not in types:
                raise ValueError(f"{who}: column {name!r} is not in the DataFrame (its columns: "
                                 f"{', '.join(schema.names)}).")
        kinds = [_kind(types[name].dataType) for name in names]
        vector = isinstance(features_col, str)
        if vector and kinds[0] not in ("vector", "array"):
            raise ValueError(f"{who}: featuresCol={features_col!r} is a column of type "
                             f"{types[features_col].dataType.simpleString()}; name a vector "
                             "column (VectorAssembler's) or an array of numbers, or pass the "
                             "feature columns as a list of names.")
        if not vector:
            if not names or len(set(names)) < len(names):
                raise ValueError(f"{who}: featuresCol={names!r} must name distinct columns.")
            for name, kind in zip(names, kinds):
                if kind not in ("number", "string"):
                    raise ValueError(f"{who}: feature column {name!r} is of type "
                                     f"{types[name].dataType.simpleString()}; a feature column "
                                     "holds numbers, booleans or strings (categories).")
            n_features = len(names)
        elif n_features is None:
            n_features = types[features_col].metadata.get("ml_attr", {}).get("num_attrs")
            if n_features is None:
                raise ValueError(f"{who}: the size of the vector column {features_col!r} is not "
                                 "in its metadata: pass feature_bounds of shape (n_features, 2), "
                                 "assemble the column with VectorAssembler, or pass the feature "
                                 "columns as a list of names.")
        if label_col is not None:
            if label_col in names:
                raise ValueError(f"{who}: labelCol={label_col!r} is also a feature column.")
            if _kind(types[label_col].dataType) not in ("number", "string"):
                raise ValueError(f"{who}: labelCol={label_col!r} is of type "
                                 f"{types[label_col].dataType.simpleString()}; a label is a "
                                 "number, a boolean or a string.")
        columns = cls(tuple(names), vector, int(n_features), label_col, None)
        return replace(columns, schema=to_arrow_schema(columns.select(frame).schema))

    def expressions(self, frame):
        """The feature columns as the tasks read them: numbers as doubles, strings as they are,
        a vector or array column as an array of doubles."""
        types = {field.name: field.dataType for field in frame.schema.fields}
        out = []
        for name in self.features:
            kind = _kind(types[name])
            column = (vector_to_array(_quoted(name), "float64") if kind == "vector"
                      else _quoted(name).cast("array<double>") if kind == "array"
                      else _quoted(name).cast("double") if kind == "number" else _quoted(name))
            out.append(column.alias(name))
        return out

    def select(self, frame):
        """``frame``'s features (:meth:`expressions`) and label (decimals as doubles)."""
        label = []
        if self.label is not None:
            column = _quoted(self.label)
            if isinstance(frame.schema[self.label].dataType, T.DecimalType):
                column = column.cast("double")
            label = [column.alias(self.label)]
        return frame.select(*self.expressions(frame), *label)

    def features_of(self, table):
        """The features of a ``pyarrow.Table`` of :meth:`select`'s columns: an ndarray of shape
        (n, n_features) for a vector column, a pandas DataFrame for named columns."""
        if self.vector:
            return _rows(table.column(self.features[0]), self.n_features)
        return table.select(list(self.features)).to_pandas()

    def empty(self):
        """``(X, y)`` without records: the schema the plan and the checks read."""
        table = self.schema.empty_table()
        return self.features_of(table), table.column(self.label).to_numpy()


def _rows(lists, n_features):
    """A list column (``pyarrow``) as an array of shape (n, n_features), dtype=float64.

    Each record by its own value, never an error: a vector of another length has its missing
    cells NaN and its extra cells dropped; a null vector is all missing.
    """
    lists = (lists.combine_chunks() if isinstance(lists, pa.ChunkedArray) else lists)
    n = len(lists)
    lengths = pc.list_value_length(lists).fill_null(0).to_numpy(zero_copy_only=False)
    values = pc.list_flatten(lists).to_numpy(zero_copy_only=False).astype(np.float64)
    if (lengths == n_features).all():
        return values.reshape(n, n_features)
    X = np.full((n, n_features), np.nan)
    row = np.repeat(np.arange(n), lengths)
    column = np.arange(values.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    inside = column < n_features
    X[row[inside], column[inside]] = values[inside]
    return X


@dataclass(frozen=True)
class _Load:
    """A task's Arrow batches as a partition (``_records.load_partition``)."""

    columns: _Columns
    categories: dict
    classes: object
    target_bounds: object

    def __call__(self, batches, n_threads):
        batches = list(batches)
        table = (pa.Table.from_batches(batches) if batches else self.columns.schema.empty_table())
        X = self.columns.features_of(table)
        y = table.column(self.columns.label).to_numpy(zero_copy_only=False)
        del table, batches  # the Arrow copy, before the partition's own arrays are made
        return load_partition(X, y, self.categories, self.classes, self.target_bounds,
                              n_threads)


# ------------------------------------------------------------------------------------------------
# The in-memory estimator over SparkRecords
# ------------------------------------------------------------------------------------------------

@dataclass
class _SparkData:
    """What the in-memory ``fit`` receives as ``X``: the DataFrame's columns, and the record set
    made from them (closed when the fit ends)."""

    frame: object
    columns: _Columns
    name: str
    records: object = None

    def close(self, cancel=False):
        """End the record set's job, if it started (``SparkRecords.close``)."""
        if self.records is not None:
            self.records.close(cancel)


class _OnSpark:
    """What a fit on Spark changes in the in-memory estimator's ``fit``: the schema and the
    record set."""

    def fit(self, X, y=None):
        try:
            super().fit(X, y)
        except BaseException:
            X.close(cancel=True)
            raise
        X.close()
        return self

    def _schema(self, X):
        return X.columns.empty()[0]

    def _records(self, X, y, sample_weight=None, weight_bound=None, previous=None):
        X_meta, y_meta = X.columns.empty()
        check_cluster_inputs(self, X_meta, X.name, weight_bound, previous)
        _, y_scaled, inputs, _ = fit_inputs(self, X_meta, y_meta)
        load = _Load(X.columns, inputs.categories, getattr(self, "classes", None),
                     getattr(self, "target_bounds", None))
        X.records = SparkRecords(X.frame, load, f"dpboost: {X.name}.fit")
        return X.records, y_scaled.shape[1], inputs


class _ClassifierOnSpark(_OnSpark, DPGBClassifier):
    pass


class _RegressorOnSpark(_OnSpark, DPGBRegressor):
    pass


# The names the user knows, in the messages of parameter validation and the accountant's.
_ClassifierOnSpark.__name__ = _ClassifierOnSpark.__qualname__ = "SparkDPGBClassifier"
_RegressorOnSpark.__name__ = _RegressorOnSpark.__qualname__ = "SparkDPGBRegressor"


# ------------------------------------------------------------------------------------------------
# SparkML estimators and models
# ------------------------------------------------------------------------------------------------

def _columns_param(value):
    """featuresCol: a column name, or a list of column names."""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise TypeError(f"featuresCol={value!r} must be a column name or a list of column names.")


class _HasFeaturesCol(HasPredictionCol):
    featuresCol = Param(Params._dummy(), "featuresCol", "the features: a vector or array "
                        "column's name, or a list of numeric, boolean or string columns' names",
                        typeConverter=_columns_param)

    def getFeaturesCol(self):
        """The features' column (a name) or columns (a list of names)."""
        return self.getOrDefault(self.featuresCol)

    def setFeaturesCol(self, value):
        """Set ``featuresCol``."""
        return self._set(featuresCol=value)

    def setPredictionCol(self, value):
        """Set ``predictionCol`` (an empty name: no such column)."""
        return self._set(predictionCol=value)


class _HasProbabilities(HasProbabilityCol, HasRawPredictionCol):
    def setProbabilityCol(self, value):
        """Set ``probabilityCol`` (an empty name: no such column)."""
        return self._set(probabilityCol=value)

    def setRawPredictionCol(self, value):
        """Set ``rawPredictionCol`` (an empty name: no such column)."""
        return self._set(rawPredictionCol=value)


def _local_parameters(local):
    """The in-memory estimator's parameters and their defaults."""
    return {name: p.default for name, p in inspect.signature(local.__init__).parameters.items()
            if name != "self"}


def _declare(local):
    """A class decorator: one Spark ``Param`` per parameter of the in-memory estimator, so that
    ``copy``, ``ParamGridBuilder`` and ``explainParams`` see them."""
    def declare(cls):
        for name in _local_parameters(local):
            setattr(cls, name, Param(Params._dummy(), name, f"{local.__name__}'s {name} (see "
                                     f"dpboost.{local.__name__})"))
        return cls
    return declare


class _SparkEstimator(Estimator, _HasFeaturesCol, HasLabelCol):
    """What the two Spark estimators share; the subclasses set the classes below."""

    _local = _fitter = _model = None

    def __init__(self, **params):
        super().__init__()
        self._setDefault(featuresCol="features", **_local_parameters(self._local))
        self.setParams(**params)

    def setParams(self, **params):
        """Set parameters by name: the columns and any parameter of the in-memory estimator.

        Returns
        -------
        self

        Raises
        ------
        TypeError
            A name that is not a parameter.
        """
        names = {param.name for param in self.params}
        for name in params:
            if name not in names:
                raise TypeError(f"{type(self).__name__} got an unexpected keyword argument "
                                f"{name!r}.")
        return self._set(**params)

    def setLabelCol(self, value):
        """Set ``labelCol``."""
        return self._set(labelCol=value)

    def _fit(self, dataset):
        name = type(self).__name__
        if not isinstance(dataset, DataFrame):
            raise TypeError(f"{name}.fit takes a Spark DataFrame; got {type(dataset).__name__} "
                            f"(fit in-memory data with {self._local.__name__}).")
        params = {name: self.getOrDefault(name) for name in _local_parameters(self._local)}
        if params["warm_start"]:
            raise ValueError(f"warm_start=True: {name}.fit returns a new model each time; "
                             f"continue a fitted model in memory (to_local()).")
        context = dataset.sparkSession.sparkContext
        conf = context.getConf()
        if conf.get("spark.dynamicAllocation.enabled", "false").lower() == "true":
            raise ValueError(f"{name} trains in Spark's barrier execution mode, which does not "
                             "run with spark.dynamicAllocation.enabled=true.")
        bounds = params["feature_bounds"]
        width = (np.shape(bounds)[0] if not isinstance(bounds, (str, dict, type(None)))
                 and np.ndim(bounds) == 2 else None)
        columns = _Columns.of(dataset, self.getFeaturesCol(), self.getLabelCol(), width, name)
        frame = columns.select(dataset)
        # Barrier mode runs every task at once: no more partitions than task slots. coalesce
        # joins neighbouring partitions, keeping the records' order (their coins' rows).
        slots = max(1, context.defaultParallelism // int(conf.get("spark.task.cpus", "1")))
        n_partitions = frame.rdd.getNumPartitions()
        if n_partitions > slots:
            frame = frame.coalesce(slots)
        elif n_partitions == 0:
            frame = frame.repartition(1)
        fitter = self._fitter(**params)
        fitter.fit(_SparkData(frame, columns, name))
        local = self._local()
        local.__dict__.update(vars(fitter))
        return self._copyValues(self._model(local))


def _doc(kind, model, columns, required):
    """The docstring of the Spark estimator of ``DPGB<kind>`` fitting a ``model``: ``columns``
    (the parameters after ``featuresCol``), then the in-memory estimator's parameters and
    ``required``."""
    return f""":class:`~dpboost.DPGB{kind}` on Spark DataFrames (see :mod:`dpboost.spark`).

    A SparkML estimator: ``fit(dataset)`` returns a :class:`{model}`.

    Parameters
    ----------
    featuresCol : str or list of str, default="features"
        A vector column (VectorAssembler's: its size is read from the column's metadata, or
        from ``feature_bounds`` of shape (n_features, 2)) or array-of-numbers column, or the
        names of numeric, boolean or string (categorical) columns.
{columns}    **params
        Every parameter of :class:`~dpboost.DPGB{kind}`, with its default.
        {required}
    """


@_declare(DPGBClassifier)
class SparkDPGBClassifier(_SparkEstimator, _HasProbabilities):
    __doc__ = _doc("Classifier", "SparkDPGBClassificationModel", """    labelCol : str, default="label"
        Labels: numbers, booleans or strings; a record whose label is not one of ``classes``
        (null included) is left out.
    predictionCol : str, default="prediction"
        The model's predicted class (a double for numeric classes, else a string).
    probabilityCol : str, default="probability"
        The model's class probabilities (a vector, in the order of ``classes_``).
    rawPredictionCol : str, default="rawPrediction"
        The model's margins (a vector: ``[-F, F]`` for two classes, as SparkML's binary
        classifiers, else one per class).
""", "``classes`` and ``feature_bounds`` (or ``\"private\"``) are required;\n        "
                  "``sample_weight``, ``class_weight`` and ``warm_start`` are not supported.")

    _local = DPGBClassifier
    _fitter = _ClassifierOnSpark

    def __init__(self, **params):  # its own function: it carries the class's signature
        super().__init__(**params)


@_declare(DPGBRegressor)
class SparkDPGBRegressor(_SparkEstimator):
    __doc__ = _doc("Regressor", "SparkDPGBRegressionModel", """    labelCol : str, default="label"
        Targets; a record whose target is not a number (null included) is left out.
    predictionCol : str, default="prediction"
        The model's predicted target (a double).
""", "``target_bounds`` and ``feature_bounds`` (or ``\"private\"``) are required;\n        "
                  "``sample_weight`` and ``warm_start`` are not supported.")

    _local = DPGBRegressor
    _fitter = _RegressorOnSpark

    def __init__(self, **params):  # its own function: it carries the class's signature
        super().__init__(**params)


def _signature(local, columns):
    """Keyword-only ``columns`` (name -> default) then the in-memory estimator's parameters."""
    keyword = inspect.Parameter.KEYWORD_ONLY
    return inspect.Signature(
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [inspect.Parameter(name, keyword, default=default) for name, default in columns.items()]
        + [inspect.Parameter(name, keyword, default=default)
           for name, default in _local_parameters(local).items()])


_COLUMNS = {"featuresCol": "features", "labelCol": "label", "predictionCol": "prediction"}
SparkDPGBClassifier.__init__.__signature__ = _signature(
    DPGBClassifier, {**_COLUMNS, "probabilityCol": "probability",
                     "rawPredictionCol": "rawPrediction"})
SparkDPGBRegressor.__init__.__signature__ = _signature(DPGBRegressor, _COLUMNS)


class _SparkModel(Model, _HasFeaturesCol):
    """What the two fitted models share: the in-memory estimator, and ``transform``."""

    def __init__(self, local=None):
        super().__init__()
        self._setDefault(featuresCol="features")
        self._local = local

    def to_local(self):
        """The fitted model as the in-memory estimator (same parameters, same fitted
        attributes): for pickling, serving, :meth:`~dpboost.DPGBClassifier.to_json`,
        ``privacy_report`` and prediction without Spark.

        Returns
        -------
        estimator : DPGBClassifier or DPGBRegressor
            A new object on each call (its arrays shared with the model's).
        """
        return copy.copy(self._local)

    def _outputs(self):
        """``(field, column, Spark type, vector)`` of every output of ``transform``: the
        field of the pandas UDF's struct and the column it becomes (skipped if named "")."""
        return [("prediction", self.getPredictionCol(), self._prediction_type(), False)]

    def _prediction_type(self):
        return T.DoubleType()

    def _transform(self, dataset):
        columns = _Columns.of(dataset, self.getFeaturesCol(), None, self._local.n_features_in_,
                              type(self).__name__)
        outputs = [output for output in self._outputs() if output[1]]
        if not outputs:
            return dataset
        schema = T.StructType([T.StructField(field, data_type)
                               for field, _, data_type, _ in outputs])
        local, fields = self._local, [field for field, _, _, _ in outputs]

        def predict(*series: pd.Series) -> pd.DataFrame:
            return _predictions(local, columns, fields, series)

        # Marked nondeterministic so that Spark calls it once per row, not once per field the
        # columns below take from its struct.
        udf = F.pandas_udf(predict, returnType=schema).asNondeterministic()
        name = "__dpboost_predictions__"
        frame = dataset.withColumn(name, udf(*columns.expressions(dataset)))
        for field, column, _, vector in outputs:
            value = frame[name][field]
            frame = frame.withColumn(column, array_to_vector(value) if vector else value)
        return frame.drop(name)


def _predictions(local, columns, fields, series):
    """The pandas UDF of ``transform``: the in-memory model's predictions of a batch."""
    if columns.vector:
        X = _rows(pa.array(series[0], type=pa.list_(pa.float64()), from_pandas=True),
                  columns.n_features)
    else:
        X = pd.DataFrame({name: s.to_numpy() for name, s in zip(columns.features, series)})
    out = {}
    if "prediction" in fields:
        predicted = local.predict(X)
        out["prediction"] = (predicted.astype(np.float64) if predicted.dtype.kind in "biuf"
                             else predicted.astype(str))
    if "probability" in fields:
        out["probability"] = list(local.predict_proba(X))
    if "rawPrediction" in fields:
        margin = local.decision_function(X)
        out["rawPrediction"] = list(np.column_stack([-margin, margin]) if margin.ndim == 1
                                    else margin)
    return pd.DataFrame(out)


class SparkDPGBClassificationModel(_SparkModel, _HasProbabilities):
    """A fitted :class:`SparkDPGBClassifier`: a SparkML model.

    ``transform(dataset)`` adds ``predictionCol``, ``probabilityCol`` and ``rawPredictionCol``
    (those not set to ``""``) to the DataFrame, from the features in ``featuresCol``;
    :meth:`to_local` hands out the fitted :class:`~dpboost.DPGBClassifier`.

    Parameters
    ----------
    local : DPGBClassifier or None, default=None
        The fitted in-memory estimator.
    """

    def _outputs(self):
        return super()._outputs() + [
            ("probability", self.getProbabilityCol(), T.ArrayType(T.DoubleType()), True),
            ("rawPrediction", self.getRawPredictionCol(), T.ArrayType(T.DoubleType()), True)]

    def _prediction_type(self):
        classes = np.asarray(self._local.classes_)
        return T.DoubleType() if classes.dtype.kind in "biuf" else T.StringType()


class SparkDPGBRegressionModel(_SparkModel):
    """A fitted :class:`SparkDPGBRegressor`: a SparkML model.

    ``transform(dataset)`` adds ``predictionCol`` (unless set to ``""``) to the DataFrame, from
    the features in ``featuresCol``; :meth:`to_local` hands out the fitted
    :class:`~dpboost.DPGBRegressor`.

    Parameters
    ----------
    local : DPGBRegressor or None, default=None
        The fitted in-memory estimator.
    """


SparkDPGBClassifier._model = SparkDPGBClassificationModel
SparkDPGBRegressor._model = SparkDPGBRegressionModel

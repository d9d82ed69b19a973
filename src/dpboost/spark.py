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

This module holds the SparkML estimators and models; the record set in the tasks of the job is
``_spark_records``'s, the reading of the DataFrame's columns ``_spark_columns``'s.
"""

import copy
import inspect
from dataclasses import dataclass

import numpy as np

from ._estimators import DPGBClassifier, DPGBRegressor
from ._public_inputs import fit_inputs
from ._records import check_cluster_inputs

try:
    import pandas as pd
    import pyarrow as pa
    from pyspark.ml import Estimator, Model
    from pyspark.ml.functions import array_to_vector
    from pyspark.ml.param import Param, Params
    from pyspark.ml.param.shared import (
        HasLabelCol,
        HasPredictionCol,
        HasProbabilityCol,
        HasRawPredictionCol,
    )
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from ._spark_columns import _Columns, _Load, _rows
    from ._spark_records import SparkRecords
except ImportError as error:  # pragma: no cover - the message is the documentation
    raise ImportError("dpboost.spark needs PySpark, pandas and pyarrow: pip install "
                      "'dpboost[spark]'") from error
try:  # PySpark 4: pyspark.sql.DataFrame is the parent of the classic and Spark Connect's
    from pyspark.sql.classic.dataframe import DataFrame as _ClassicDataFrame
except ImportError:  # PySpark 3.5: it is the classic one
    from pyspark.sql import DataFrame as _ClassicDataFrame


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
        if type(dataset).__module__.startswith("pyspark.sql.connect."):
            raise TypeError(f"{name}.fit does not take a Spark Connect DataFrame: the fit runs a "
                            "barrier job through the SparkContext, which Spark Connect does not "
                            "expose; use a classic SparkSession.")
        if not isinstance(dataset, _ClassicDataFrame):
            raise TypeError(f"{name}.fit takes a Spark DataFrame; got {type(dataset).__name__} "
                            f"(fit in-memory data with {self._local.__name__}).")
        params = {p: self.getOrDefault(p) for p in _local_parameters(self._local)}
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
        fitter = self._fitter(**params)
        fitter.fit(_SparkData(columns.select(dataset), columns, name))
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

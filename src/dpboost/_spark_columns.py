"""Where a Spark DataFrame holds the features and the label, and how a task reads them.

:class:`_Columns` reads a DataFrame's schema (never a record) into the columns a fit or a
prediction reads: one vector or array column, or named numeric, boolean and string columns, and
the label; every column that the fit cannot read is refused here, from the schema, before any
record is read. :class:`_Load` turns a task's Arrow batches into a partition
(``_records.load_partition``): each record by its own value (:func:`_rows`), never an error.
"""

from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numba import njit
from pyspark.ml.functions import vector_to_array
from pyspark.ml.linalg import VectorUDT
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from ._records import kept_labels, kept_partition, load_partition


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

    def all_doubles(self):
        """Whether the features are named columns that are all doubles (the schema's
        :meth:`expressions` cast every numeric column): a fact of the schema."""
        return not self.vector and all(pa.types.is_float64(self.schema.field(name).type)
                                       for name in self.features)

    def kept_numbers(self, table, keep):
        """The rows ``keep`` (bool, shape (n,)) of :meth:`all_doubles` columns as one float64
        array of shape (n_kept, n_features) in Fortran order, filled from the Arrow chunks (a
        null is NaN, as pandas reads it): one copy instead of pandas' block, the array made
        from it and the kept rows taken from that."""
        out = np.empty((np.count_nonzero(keep), len(self.features)), order="F")
        for j, name in enumerate(self.features):
            start = stop = 0
            for chunk in table.column(name).chunks:
                kept = chunk.to_numpy(zero_copy_only=False)[keep[start:start + len(chunk)]]
                out[stop:stop + kept.size, j] = kept
                start += len(chunk)
                stop += kept.size
        return out

    def empty(self):
        """``(X, y)`` without records: the schema the plan and the checks read."""
        table = self.schema.empty_table()
        return self.features_of(table), table.column(self.label).to_numpy()


def _rows(lists, n_features):
    """A list column (``pyarrow``) as an array of shape (n, n_features), dtype=float64.

    Each record by its own value, never an error: a vector of another length has its missing
    cells NaN and its extra cells dropped; a null vector is all missing. One kernel
    (:func:`_fill_rows`) reads every column, whatever the lengths: no shortcut when every vector
    has ``n_features`` cells, so how long a partition takes to read does not say whether one of
    its vectors is of another length.
    """
    lists = (lists.combine_chunks() if isinstance(lists, pa.ChunkedArray) else lists)
    lengths = pc.list_value_length(lists).fill_null(0).to_numpy(zero_copy_only=False)
    values = pc.list_flatten(lists).to_numpy(zero_copy_only=False).astype(np.float64, copy=False)
    lengths = lengths.astype(np.int64)
    out = np.empty((lengths.size, n_features))
    _fill_rows(values, np.cumsum(lengths) - lengths, lengths, out)
    return out


@njit(cache=True)
def _fill_rows(values, starts, lengths, out):
    """``out[i, j]``: cell ``j`` of record ``i``'s vector (``values[starts[i] + j]``), NaN past
    its ``lengths[i]`` cells; the cells past ``out``'s columns are not read."""
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] = values[starts[i] + j] if j < lengths[i] else np.nan


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
        y = table.column(self.columns.label).to_numpy(zero_copy_only=False)
        if self.categories or not self.columns.all_doubles():
            # Categorical columns go through pandas as in memory (their cells keep their types).
            X = self.columns.features_of(table)
            del table, batches  # the Arrow copy, before the partition's own arrays are made
            return load_partition(X, y, self.categories, self.classes, self.target_bounds,
                                  n_threads)
        keep, y_scaled = kept_labels(y, self.classes, self.target_bounds)
        X = self.columns.kept_numbers(table, keep)
        del table, batches
        return kept_partition(X, y_scaled, n_threads)

"""Training on Dask collections: the noise added once, on the client.

:class:`DaskDPGBClassifier` and :class:`DaskDPGBRegressor` take the in-memory estimators'
parameters plus ``client`` and fit on ``dask.dataframe`` / ``dask.array`` collections. The fit is
the in-memory one (``_boosting.train``) over a ``DaskRecords``: each partition of the data is
validated, binned on the public grid (kept on its worker as uint8) and boosted by the functions the
in-memory fit runs on its single partition; every statistic is summed over the partitions
(float64, a tree of sums on the workers) and released once on the client by the fit's noise source
(secure by default), whose decisions go back to the workers. Accounting and ledger are the
in-memory ones; with the same ``random_state`` the two fits release the same model (leaf values
to float rounding: sums are added in another order), whatever the partitions.

The public inputs must be public: ``feature_bounds`` (or ``"private"``), ``classes`` (classifier)
and ``target_bounds`` (regressor, or ``"private"``) are required, as reading them off the data
would take a non-private pass over the cluster. Requires ``dask[distributed]``.
"""

import dataclasses
import inspect

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ._docstrings import CLASSIFIER, REGRESSOR
from ._estimators import DPGBClassifier, DPGBRegressor
from ._public_inputs import fit_inputs
from ._records import (
    Partition,
    RecordSet,
    Step,
    add_sums,
    check_cluster_inputs,
    load_partition,
)

try:
    import dask
    import dask.array as da
    import dask.dataframe as dd
    from dask.sizeof import sizeof
    from distributed import default_client
except ImportError as error:  # pragma: no cover - the message is the documentation
    raise ImportError("dpboost.dask needs Dask: pip install 'dask[distributed,dataframe]'"
                      ) from error

#: Partial sums added per task of the reduction tree.
FAN_IN = 8


@sizeof.register(Partition)
def _sizeof_partition(partition):
    """A partition's bytes for Dask's memory manager and scheduler: the sum of its arrays (the
    tree state's included). Dask's default, ``sys.getsizeof``, counts about 100 bytes: the
    workers then took their partitions for unmanaged memory and spilled them to disk at every tree
    (a third of the fit's time at 10M rows), and work stealing moved them between workers as if
    free."""
    return sum(_nbytes(value) for value in vars(partition).values())


def _nbytes(value):
    if dataclasses.is_dataclass(value):
        return sum(_nbytes(field) for field in vars(value).values())
    return sizeof(value)


class DaskRecords(RecordSet):
    """A record set (``_records``) whose partitions live on a Dask cluster's workers.

    ``update`` queues a public decision; the queue runs as one task per partition before the next
    ``reduce`` (with random splits, one task per partition and tree). Every task returns a new
    partition and leaves its input as it was, and every random decision on a worker comes from the
    fit's keyed record coins: a task that Dask recomputes after losing a worker gives the same
    result.

    Parameters
    ----------
    client : distributed.Client
    partitions : list of dask.delayed.Delayed
        Each computes a :class:`~dpboost._records.Partition` (records not yet binned).
    """

    def __init__(self, client, partitions):
        self.client = client
        self._parts = list(partitions)
        self._delayed = True  # until the first queue runs, the partitions are Delayed
        self._pending = []

    def update(self, function, *args):
        """Queue ``function(partition, *args)`` for every partition."""
        self._pending.append(Step(function, args))

    def reduce(self, function, *args):
        """``function(partition, *args)`` summed over the partitions, in a tree of float64 sums
        of :data:`FAN_IN` on the workers; the total is brought to the client.

        Returns
        -------
        total : ndarray, dtype=float64
        """
        self._run_pending()
        step = Step(function, args)
        # client.map: one message for all partitions (a submit per partition costs the client
        # about a millisecond each, per tree)
        sums = self.client.map(_statistic, self._parts, step=step, pure=False)
        while len(sums) > 1:
            sums = [self.client.submit(add_sums, sums[i:i + FAN_IN], pure=False)
                    for i in range(0, len(sums), FAN_IN)]
        return sums[0].result()

    def number_rows(self):
        """Number the records across partitions, in partition order (their coins' rows)."""
        self._run_pending()
        counts = self.client.gather([self.client.submit(_n_records, part, pure=False)
                                     for part in self._parts])
        first = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(int)
        self._parts = [self.client.submit(_with_first_row, part, int(start), pure=False)
                       for part, start in zip(self._parts, first)]

    def _run_pending(self):
        steps = _Steps(tuple(self._pending))
        self._pending = []
        if self._delayed:
            self._parts = self.client.compute([dask.delayed(_apply)(part, steps)
                                               for part in self._parts])
            self._delayed = False
        elif steps.steps:
            self._parts = self.client.map(_apply, self._parts, steps=steps, pure=False)


class _Steps:
    def __init__(self, steps):
        self.steps = steps


def _apply(partition, steps):
    for step in steps.steps:
        partition = step(partition)
    return partition


def _statistic(partition, step):
    return np.asarray(step(partition), dtype=np.float64)


def _n_records(partition):
    return partition.y_rows.shape[1]


def _with_first_row(partition, first_row):
    from dataclasses import replace
    return replace(partition, first_row=first_row)


def _collections(X, y):
    """``X`` and ``y`` as lists of aligned Delayed partitions, with their empty metadata."""
    if isinstance(X, dd.DataFrame):
        if not isinstance(y, (dd.Series, dd.DataFrame)) or y.npartitions != X.npartitions:
            raise ValueError("y must be a dask Series with the partitions of X (a dask "
                             f"DataFrame of {X.npartitions} partitions); got {type(y).__name__}.")
        # One frame, then its partitions: X and y partitioned apart need not stay aligned (dask
        # plans a column projection of read_parquet on its own, and fuses the files of a narrow
        # one into fewer partitions).
        target = _free_name(X.columns)
        try:
            frame = X.assign(**{target: y.iloc[:, 0] if isinstance(y, dd.DataFrame) else y})
        except (ValueError, TypeError, NotImplementedError) as error:
            raise ValueError("y must be aligned with X (the same index and partitions, e.g. a "
                             "column of the same dask DataFrame)") from error
        parts = frame.to_delayed()
        return ([dask.delayed(_drop)(part, target) for part in parts],
                [dask.delayed(_column)(part, target) for part in parts], X._meta, y._meta)
    if isinstance(X, da.Array):
        if X.ndim != 2 or not isinstance(y, da.Array) or y.ndim != 1:
            raise ValueError("X must be a 2-d dask array and y a 1-d dask array; got X of "
                             f"{X.ndim} dimensions and y of type {type(y).__name__}.")
        X = X.rechunk({1: -1})
        y = y.rechunk((X.chunks[0],))
        return (list(X.to_delayed().ravel()), list(y.to_delayed()),
                np.empty((0, X.shape[1]), dtype=X.dtype), np.empty(0, dtype=y.dtype))
    raise TypeError(f"X must be a dask DataFrame or a dask Array; got {type(X).__name__} (fit "
                    "in-memory data with DPGBClassifier / DPGBRegressor).")


def _free_name(columns):
    """A column name that is not in ``columns``."""
    name = "__dpboost_target__"
    while name in set(columns):
        name += "_"
    return name


def _drop(frame, column):
    return frame.drop(columns=column)


def _column(frame, column):
    return frame[column]


class _DaskFit:
    """What the Dask estimators add to the in-memory ones: the records on a cluster, predictions
    on collections, and :meth:`to_local`."""

    #: The in-memory estimator class (set by the subclasses).
    _local = None

    def _client(self):
        return self.client if self.client is not None else default_client()

    def _schema(self, X):
        if isinstance(X, da.Array):
            return np.empty((0,) + X.shape[1:], dtype=X.dtype)
        return getattr(X, "_meta", X)

    def _records(self, X, y, sample_weight=None, weight_bound=None, previous=None):
        check_cluster_inputs(self, self._schema(X), type(self).__name__, weight_bound, previous)
        X_parts, y_parts, X_meta, y_meta = _collections(X, y)
        _, y_scaled, inputs, _ = fit_inputs(self, X_meta, y_meta)
        classes = getattr(self, "classes", None)
        parts = [dask.delayed(load_partition)(x, t, inputs.categories, classes,
                                              getattr(self, "target_bounds", None))
                 for x, t in zip(X_parts, y_parts)]
        return DaskRecords(self._client(), parts), y_scaled.shape[1], inputs

    def to_local(self):
        """The fitted model as the in-memory estimator (same parameters but ``client``, same
        fitted attributes): for pickling, serving and prediction without Dask.

        Returns
        -------
        estimator : DPGBClassifier or DPGBRegressor
        """
        check_is_fitted(self)
        params = {k: v for k, v in self.get_params(deep=False).items() if k != "client"}
        local = self._local(**params)
        local.__dict__.update({k: v for k, v in self.__dict__.items() if k.endswith("_")
                               or k in ("_forest", "_warm_start_params")})
        return local

    def to_json(self):
        """The fitted model as the in-memory estimator's JSON (:meth:`to_local`; ``client`` is
        not part of a model). ``from_json`` loads it back as that estimator.

        Returns
        -------
        text : str
        """
        return self.to_local().to_json()

    def _predict_collection(self, method, X, **kwargs):
        """``method`` of the in-memory model on every partition of the collection ``X``."""
        local = self.to_local()
        # The output's type from one made-up row (prediction refuses an empty input).
        if isinstance(X, dd.DataFrame):
            meta = _predict_frame(X._meta_nonempty.iloc[:1], local, method, kwargs).iloc[:0]
            return X.map_partitions(_predict_frame, local, method, kwargs, meta=meta)
        X = X.rechunk({1: -1})
        one = getattr(local, method)(np.zeros((1, X.shape[1])), **kwargs)
        if one.ndim == 1:
            return X.map_blocks(_predict_block, local, method, kwargs, drop_axis=1,
                                dtype=one.dtype, meta=one[:0])
        return X.map_blocks(_predict_block, local, method, kwargs, dtype=one.dtype,
                            chunks=(X.chunks[0], (one.shape[1],)), meta=one[:0])

    def predict(self, X, **kwargs):
        if dask.is_dask_collection(X):
            return self._predict_collection("predict", X, **kwargs)
        return super().predict(X, **kwargs)


def _predict_frame(frame, local, method, kwargs):
    import pandas as pd
    out = getattr(local, method)(frame, **kwargs)
    if out.ndim == 1:
        return pd.Series(out, index=frame.index, name="prediction")
    return pd.DataFrame(out, index=frame.index, columns=[str(c) for c in range(out.shape[1])])


def _predict_block(block, local, method, kwargs):
    return getattr(local, method)(block, **kwargs)


def _signature(local):
    """The in-memory estimator's ``__init__`` signature with ``client=None`` first: the
    parameter list scikit-learn's ``get_params`` reads."""
    parameters = list(inspect.signature(local.__init__).parameters.values())
    client = inspect.Parameter("client", inspect.Parameter.KEYWORD_ONLY, default=None)
    return inspect.Signature([parameters[0], client] + parameters[1:])


_CLIENT_DOC = """    client : distributed.Client or None, default=None
        The cluster to train on; None: Dask's default client (``distributed.default_client()``).
"""


def _dask_doc(doc, name):
    head = (f"{name}: the estimator on Dask collections (see :mod:`dpboost.dask`).\n\n    ")
    return head + doc.replace("    Parameters\n    ----------\n",
                              "    Parameters\n    ----------\n" + _CLIENT_DOC, 1)


class DaskDPGBClassifier(_DaskFit, DPGBClassifier):
    _local = DPGBClassifier
    __doc__ = _dask_doc(CLASSIFIER, "DaskDPGBClassifier")

    def __init__(self, *, client=None, **params):
        self.client = client
        super().__init__(**params)

    __init__.__signature__ = _signature(DPGBClassifier)

    def predict_proba(self, X, **kwargs):
        if dask.is_dask_collection(X):
            return self._predict_collection("predict_proba", X, **kwargs)
        return super().predict_proba(X, **kwargs)

    def decision_function(self, X, **kwargs):
        if dask.is_dask_collection(X):
            return self._predict_collection("decision_function", X, **kwargs)
        return super().decision_function(X, **kwargs)


class DaskDPGBRegressor(_DaskFit, DPGBRegressor):
    _local = DPGBRegressor
    __doc__ = _dask_doc(REGRESSOR, "DaskDPGBRegressor")

    def __init__(self, *, client=None, **params):
        self.client = client
        super().__init__(**params)

    __init__.__signature__ = _signature(DPGBRegressor)

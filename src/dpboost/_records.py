"""The training records as partitions: everything a fit computes from the private data.

The boosting loop (``_boosting``), the grower and the candidates never hold records. They send a
*record set* (:class:`RecordSet`) public decisions (:meth:`RecordSet.update`) and ask it for sums
over its partitions (:meth:`RecordSet.reduce`); every noisy release is then made once, by the
caller, from the sum. A partition is a :class:`Partition`; the functions that read one live next
to the release they feed (``_candidates``: the sketches and bounds; ``_grower``: level
histograms, routing, leaf sums; ``_boosting``: binning, gradients, record selection, scores).
:class:`InMemoryRecords` is one partition in this process; ``dpboost.dask`` holds many on a
cluster's workers and ``dpboost.spark`` in the tasks of a Spark job, and both call the same
functions, so the fits cannot drift. Partition functions return a new partition and never modify
their input: a task that a cluster runs again after a failure finds its input as it was.

Record coins
------------
Every per-record random decision (a record's EoE position, its Poisson coin) comes from
:class:`RecordCoins`: one uniform per (stream, row), a word of the ChaCha20 keystream
(``_coins``) keyed with 32 bytes that the fit's noise source draws once (the operating system's
CSPRNG by default; docs/privacy.md, Record selection). A record's coin depends on the key, the
stream (which decision, which tree) and the record's row in the training set only: not on the
partition holding it, on other records or on the threads, and a recomputed task draws the same
coins.
"""

import sys
from abc import ABC, abstractmethod
from dataclasses import dataclass, replace

import numpy as np
from sklearn.base import is_classifier
from sklearn.utils.validation import column_or_1d

from . import _coins
from ._categories import private_category_columns

#: The coin streams (the first word of a stream's identity): Poisson sampling, EoE positions,
#: PrivateSearchCV's validation split, early stopping's held-out records, the parts of a private
#: choice of interactions.
POISSON_STREAM, POSITION_STREAM, VALIDATION_STREAM, HELD_OUT_STREAM, PART_STREAM = 1, 2, 3, 4, 5


@dataclass(frozen=True)
class RecordCoins:
    """The record coins of one fit: uniform floats on the ``2**-32`` grid in [0, 1).

    Parameters
    ----------
    key : bytes
        32 secret bytes, drawn once per fit by the noise source (``NoiseSource.coins``).
    n_threads : int, default=1
        Threads that compute the coins (``_boosting.boost`` sets the fit's); the coins do not
        depend on it.
    """

    key: bytes
    n_threads: int = 1

    def uniforms(self, stream, start, stop):
        """The coins of rows ``start .. stop - 1`` in ``stream``.

        Parameters
        ----------
        stream : tuple of three int
            ``(kind, output, tree)``: :data:`POISSON_STREAM`, :data:`POSITION_STREAM`,
            :data:`VALIDATION_STREAM`, :data:`HELD_OUT_STREAM` or :data:`PART_STREAM`, and the
            output and tree the decision is made for; each in ``[0, 2**32)``, the ChaCha20
            nonce's three words.
        start, stop : int
            Rows of the training set's records in the data domain, numbered from 0, below
            ``2**36`` (``_coins.MAX_ROWS``).

        Returns
        -------
        coins : ndarray of shape (stop - start,), dtype=float64
            ``w * 2**-32`` for row ``r``'s 32-bit word ``w`` of ChaCha20(key, nonce=stream),
            word ``r mod 16`` of block ``r // 16`` (``_coins.uniforms``).
        """
        if stop <= start:
            return np.empty(0)
        return _coins.uniforms(np.frombuffer(self.key, dtype="<u4"),
                               np.array(stream, dtype="<u4"), start, stop, self.n_threads)


@dataclass(frozen=True)
class TreeState:
    """One partition's records of the tree being grown.

    Attributes
    ----------
    selected : ndarray of shape (n_selected,), dtype=int32
        The partition's rows the tree sees, ascending.
    gradients, hessians : ndarray of shape (n_selected,), dtype=float32
        Theirs, bounded by the tree's ``g*``; ``hessians`` None for the square loss.
    indices, grads, hess : ndarray of shape (n_selected,)
        The same rows, gradients and Hessians (None without) grouped by node of the current
        level, ascending within a node (``_splitting.partition_level``). ``hess`` is grouped
        only by ``_grower.route_to_leaves``: the levels of a tree with split selection leave it
        in the selection's order (``hessians``), as only its last level's sums read it.
    node_start : ndarray of shape (n_nodes + 1,), dtype=int64
        Node ``j`` holds positions ``node_start[j]:node_start[j + 1]``.
    histograms : ndarray or None
        The partition's histograms of the current level (``_grower.level_histograms``).
    n_sampled : int
        Rows selected before gradient filtering (the non-private GDF diagnostic).
    leaf : ndarray of shape (n,), dtype=int16, or None
        After the last level of a tree with split selection (``_grower.split_leaves``): each
        selected row's leaf, by row (other rows unwritten); ``indices``, ``grads`` and ``hess``
        are then still grouped by the last level's nodes.
    leaf_sums : ndarray of shape (n_leaves, 3), dtype=float64, or None
        With ``leaf``: per leaf, the gradient sum, the Hessian sum and the number of records.
    """

    selected: np.ndarray
    gradients: np.ndarray
    hessians: object
    indices: np.ndarray
    grads: np.ndarray
    node_start: np.ndarray
    hess: object = None
    histograms: object = None
    n_sampled: int = 0
    leaf: object = None
    leaf_sums: object = None


@dataclass(frozen=True)
class Partition:
    """Records of one partition and what boosting keeps of them between trees.

    Attributes
    ----------
    X : ndarray of shape (n, n_features), dtype=float64, or None
        The records in the data domain, until they are binned (then None).
    y_rows : ndarray of shape (n_outputs, n), dtype=float64
        Labels or targets scaled into [-1, 1].
    first_row : int
        The row of the partition's first record among the training set's records in the data
        domain (its records are rows ``first_row .. first_row + n - 1``: their coins).
    n_threads : int
        Threads of the kernels run on the partition.
    X_binned : ndarray of shape (n, n_features), dtype=uint8, Fortran order, or None
    raw : ndarray of shape (n_outputs, n), dtype=float64, or None
        Scores of the trees added so far.
    gradients, hessians : ndarray of shape (n_outputs, n), dtype=float32, or None
        From the last scores (``hessians`` None for the square loss).
    positions : dict
        Output -> EoE position of every record in the output's current ensemble.
    tree : TreeState or None
    weights : ndarray of shape (n,), dtype=float32, or None
        Each record's weight in ``[0, W]`` (``sample_weight`` and ``class_weight``, clipped by
        ``_cells.record_weights``); None: an unweighted fit, every record counts 1.
    spent : ndarray of shape (n, len(FILTER_ORDERS)), dtype=int32, or None
        With an individual Renyi filter: every record's losses so far, in the filter's integer
        ticks at each order (``_filter.FilterBudget``); never read except by the record's own
        filter decision (``_boosting.select_records``).
    held_out : ndarray of shape (n,), dtype=bool, or None
        With early stopping: the records held out of every tree for the validation loss, each
        by its own coin (``_early_stopping.draw_held_out``); with a private choice of
        interactions, the records outside the part being boosted
        (``_interaction_choice.keep_part``); None: no record is held out.
    """

    X: object
    y_rows: np.ndarray
    first_row: int = 0
    n_threads: int = 1
    X_binned: object = None
    raw: object = None
    gradients: object = None
    hessians: object = None
    positions: dict = None
    tree: object = None
    weights: object = None
    spent: object = None
    held_out: object = None

    @classmethod
    def of(cls, X, y_scaled, n_threads=1, weights=None):
        """A partition of records ``X`` (n, n_features) with ``y_scaled`` (n, n_outputs) and
        their ``weights`` (n,) or None, its rows numbered from 0."""
        return cls(X, np.ascontiguousarray(np.asarray(y_scaled, dtype=np.float64).T),
                   n_threads=n_threads, positions={}, weights=weights)

    @property
    def rows(self):
        """``(start, stop)``: the partition's rows (:attr:`first_row`)."""
        return self.first_row, self.first_row + self.y_rows.shape[1]

    def with_tree(self, **fields):
        """A copy whose tree state has ``fields`` replaced."""
        return replace(self, tree=replace(self.tree, **fields))


class RecordSet(ABC):
    """The records of one fit as partitions, behind the three operations the fit needs.

    What ``_boosting.train`` and the functions it calls ask of the records; each backend keeps
    the partitions where it likes (:class:`InMemoryRecords`: in this process;
    ``dpboost.dask.DaskRecords``: on a Dask cluster's workers; ``dpboost.spark.SparkRecords``: in
    the tasks of a Spark job) and runs the same partition functions on them. A partition function
    takes a :class:`Partition` (and public arguments) and returns a new one, or a statistic, from
    its records alone; it never modifies its input.
    """

    @abstractmethod
    def update(self, function, *args):
        """Replace every partition with ``function(partition, *args)``: a public decision
        (a released split, the grid, the fit's record coins). A backend may queue it; it has
        run on every partition before the next :meth:`reduce` returns."""

    @abstractmethod
    def reduce(self, function, *args):
        """The statistic ``function(partition, *args)`` summed over the partitions.

        Returns
        -------
        total : ndarray, dtype=float64
            The only view of the records the caller gets: a release is made from it once.
        """

    @abstractmethod
    def number_rows(self):
        """Number the records across partitions, from 0 in partition order
        (:attr:`Partition.first_row`: the rows of their record coins). Called once, after the
        records are binned and before any coin is drawn; the numbering depends on the number
        of records each partition holds, never on their values."""


class InMemoryRecords(RecordSet):
    """A record set of one partition in this process: the estimators' fit.

    Parameters
    ----------
    partition : Partition
    """

    def __init__(self, partition):
        self.partition = partition

    @classmethod
    def of(cls, X, y_scaled, n_threads=1, weights=None):
        """The record set of a fit's records in this process (:meth:`Partition.of`)."""
        return cls(Partition.of(X, y_scaled, n_threads=n_threads, weights=weights))

    @classmethod
    def of_tree(cls, X_binned, sample_indices, gradients, hessians=None, n_threads=1):
        """The record set of one tree on given records: rows ``sample_indices`` (int32,
        ascending) of ``X_binned`` (uint8, Fortran order) with their bounded ``gradients`` (and
        ``hessians``), float32. What ``grow_tree`` grows on after ``_boosting.select_records``
        (the grower's tests and audits start here)."""
        tree = TreeState(selected=sample_indices, gradients=gradients, hessians=hessians,
                         indices=sample_indices, grads=gradients, hess=hessians,
                         node_start=np.array([0, sample_indices.size], dtype=np.int64))
        return cls(Partition(None, np.empty((0, X_binned.shape[0])), n_threads=n_threads,
                             X_binned=X_binned, tree=tree))

    def number_rows(self):
        """Number the records across partitions (here one: they are numbered from 0)."""

    def update(self, function, *args):
        """Replace the partition with ``function(partition, *args)`` (a public decision)."""
        self.partition = function(self.partition, *args)

    def reduce(self, function, *args):
        """``function(partition, *args)`` summed over the partitions (here: one).

        Returns
        -------
        total : ndarray, dtype=float64
        """
        return function(self.partition, *args)


class Step:
    """One partition function and its public arguments: ``Step(f, args)(partition)`` is
    ``f(partition, *args)``. What a record set outside this process sends its partitions (a
    plain class, which Dask's graph parser does not look into and pickle sends by value)."""

    def __init__(self, function, args):
        self.function, self.args = function, args

    def __call__(self, partition):
        return self.function(partition, *self.args)


def add_sums(terms):
    """The float64 sum of the partitions' statistics ``terms`` (a sequence of ndarrays of one
    shape), added in their order: a new array."""
    total = np.array(terms[0], dtype=np.float64)
    for term in terms[1:]:
        total += term
    return total


# What the front ends whose records live outside this process share (``dpboost.dask``,
# ``dpboost.spark``): the checks made before any record is read, and the loading of a partition.

def check_cluster_inputs(estimator, schema, name, weight_bound=None, previous=None):
    """Refuse, from the parameters and the schema alone, a fit that a record set outside this
    process cannot make: called before any record is read.

    Public inputs the in-memory fit could read from the data (with a warning) must be given:
    reading them off a cluster's partitions would be a non-private pass over the records.

    Parameters
    ----------
    estimator : DPGBClassifier or DPGBRegressor
        Its parameters.
    schema : ndarray of shape (0, n_features) or pandas.DataFrame of 0 rows
        The columns of the records (names and dtypes), no record.
    name : str
        The front end's estimator, for the messages (``"DaskDPGBClassifier"``).
    weight_bound : float or None, default=None
        The fit's weight bound (``_public_inputs.resolve_weight_bound``); None: unweighted.
    previous : PublicInputs or None, default=None
        A warm start's fitted inputs; None: a fresh fit.

    Raises
    ------
    NotImplementedError
        Sample or class weights, or a warm start.
    ValueError
        ``feature_bounds`` None, ``classes`` None (classifier), ``target_bounds`` None
        (regressor), or ``categories="private"``.
    """
    classifier = is_classifier(estimator)
    local = "DPGBClassifier" if classifier else "DPGBRegressor"
    if weight_bound is not None or previous is not None:
        raise NotImplementedError(f"{name} does not take sample_weight, class_weight or "
                                  "warm_start yet; fit in memory with DPGBClassifier / "
                                  "DPGBRegressor.")
    required = ["feature_bounds"] + (["classes"] if classifier else ["target_bounds"])
    for parameter in required:
        if getattr(estimator, parameter) is None:
            raise ValueError(f"{parameter}=None: {name} needs public {parameter} (or 'private' "
                             "where offered); reading them off the data would take a "
                             "non-private pass over the cluster.")
    if private_category_columns(schema, estimator.categorical_features, estimator.categories,
                                estimator.feature_bounds):
        # The values seen would need a pass over the cluster that merges value sets, which
        # the record sets' float64 sums do not do yet.
        raise ValueError(f"categories='private' is not supported by {name} yet: pass the "
                         f"public category lists (or fit in memory with {local}).")
    if estimator.domain_report:
        # Its counts are taken at the record boundary, before the partitions' records.
        raise ValueError(f"domain_report=True is not supported by {name} yet (fit in memory "
                         f"with {local}).")


def load_partition(X, y, categories, classes, target_bounds, n_threads=1):
    """One partition's records in the data domain: the in-memory fit's per-record treatment
    (``_public_inputs.fit_inputs``) with the public inputs checked before.

    Parameters
    ----------
    X : ndarray or pandas.DataFrame of shape (n, n_features)
    y : array-like of shape (n,)
    categories : dict of int -> ndarray
        The fit's public category lists (``PublicInputs.categories``).
    classes : array-like or None
        The public classes (classifier), or None (regressor).
    target_bounds : array-like, "private" or None
        The regressor's ``target_bounds``.
    n_threads : int, default=1

    Returns
    -------
    partition : Partition
        Its records numbered from 0; a record outside the data domain (a label outside the
        classes, a target that is not a number) is left out, by its own value.
    """
    # Imported here: ``_cells`` needs ``_loss`` and ``_budget``, which import this module
    # (through ``_noise``) before they are defined.
    from ._cells import cells_as_numbers

    keep, y_scaled = kept_labels(y, classes, target_bounds)
    X = np.asarray(cells_as_numbers(X, categories), dtype=np.float64)
    return kept_partition(X[keep], y_scaled, n_threads)


def kept_labels(y, classes, target_bounds):
    """Which of a partition's records are in the data domain, and their labels.

    Returns
    -------
    keep : ndarray of shape (n,), dtype=bool
        Each record by its own label (``_cells.encode_classes`` / ``encode_targets``).
    y_scaled : ndarray of shape (n_kept, n_outputs), dtype=float64
    """
    from ._cells import encode_classes, encode_targets

    y = column_or_1d(np.asarray(y))
    keep, y_scaled, _, _ = (encode_classes(y, classes) if classes is not None
                            else encode_targets(y, target_bounds))
    return keep, y_scaled


def kept_partition(X, y_scaled, n_threads=1):
    """The partition of the kept records ``X`` (n_kept, n_features), dtype=float64, and their
    labels (:func:`kept_labels`)."""
    partition = Partition.of(X, y_scaled, n_threads=n_threads)
    if "pyarrow" in sys.modules:
        # pyarrow's allocator (mimalloc or jemalloc) keeps the pages of a parquet read: Dask
        # counts them as the worker's unmanaged memory and spills the partitions to make room
        # (at 10M rows, workers under 1.25 GiB reread them from disk at every tree).
        sys.modules["pyarrow"].default_memory_pool().release_unused()
    return partition

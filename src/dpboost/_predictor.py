"""The fitted model: a :class:`Forest` of complete trees, and Numba prediction on binned data.

The node layout (heap order, leaves after the internal nodes) is ``_common``'s. A forest is what
boosting returns and what the estimator, inspection and persistence read: released split choices
and leaf values on a public (or privately released) grid, nothing else.
"""

from dataclasses import dataclass, replace

import numpy as np
from numba import njit, prange

from ._binning import flat_layout
from ._common import MAX_BINS, X_BINNED_DTYPE, n_internal_nodes
from ._splitting import goes_right_of, label_by_range


@dataclass(frozen=True)
class Tree:
    """One released tree of depth ``max_depth`` in heap order (the children of node k are
    2k + 1 and 2k + 2): what :func:`~dpboost._grower.grow_tree` returns and
    :meth:`Forest.set_tree` stores.

    Attributes
    ----------
    split_feature : ndarray of shape (2**max_depth - 1,), dtype=int32
    split_bin : ndarray of shape (2**max_depth - 1,), dtype=uint8
        Bins ``<= split_bin`` go left.
    missing_left : ndarray of shape (2**max_depth - 1,), dtype=bool
        Whether missing values (code ``n_bins``) go to the left child.
    leaf_value : ndarray of shape (2**max_depth,), dtype=float64
        Released leaf values (before shrinkage, as the grower returns them).
    leaf_statistics : ndarray of shape (2**max_depth, 2), dtype=float64
        The released (gradient sum, weight) of every leaf, the weight its Hessian sum
        (``"gaussian"``) or count (``"average"``); NaN for Laplace leaves, which release only
        their value.
    """

    split_feature: np.ndarray
    split_bin: np.ndarray
    missing_left: np.ndarray
    leaf_value: np.ndarray
    leaf_statistics: np.ndarray

    def shrunk(self, learning_rate):
        """The tree with its leaf values multiplied by ``learning_rate`` (post-processing)."""
        return replace(self, leaf_value=self.leaf_value * learning_rate)


@dataclass
class Forest:
    """Trees of every output of a boosted model, tree ``k * n_stages + t`` being stage ``t``
    of output ``k``.

    Parameters
    ----------
    split_feature : ndarray of shape (n_trees, 2**max_depth - 1), dtype=int32
    split_bin : ndarray of shape (n_trees, 2**max_depth - 1), dtype=uint8
        Bins ``<= split_bin`` go left.
    missing_left : ndarray of shape (n_trees, 2**max_depth - 1), dtype=bool
    leaf_value : ndarray of shape (n_trees, 2**max_depth), dtype=float64
        Released leaf values after shrinkage.
    binner : BoundsBinner
        The grid the codes refer to (``binner.max_bins`` is the missing-value code).
    n_stages : int
        Boosting stages (``n_estimators``); ``n_trees = n_outputs * n_stages``.
    leaf_statistics : ndarray of shape (n_trees, 2**max_depth, 2), dtype=float64, or None
        The released (gradient sum, weight) of every leaf (``grow_tree``), before shrinkage; NaN
        where the leaves released only their values (Laplace leaves). None: not known (a model
        saved before they were kept), read as NaN.
    """

    split_feature: np.ndarray
    split_bin: np.ndarray
    missing_left: np.ndarray
    leaf_value: np.ndarray
    binner: object
    n_stages: int
    leaf_statistics: np.ndarray = None

    def __post_init__(self):
        if self.leaf_statistics is None:
            self.leaf_statistics = np.full(self.leaf_value.shape + (2,), np.nan)

    @classmethod
    def empty(cls, n_outputs, n_stages, max_depth, binner):
        """A forest of ``n_outputs * n_stages`` trees of depth ``max_depth`` to fill."""
        n_trees, n_internal = n_outputs * n_stages, n_internal_nodes(max_depth)
        return cls(np.empty((n_trees, n_internal), dtype=np.int32),
                   np.empty((n_trees, n_internal), dtype=X_BINNED_DTYPE),
                   np.empty((n_trees, n_internal), dtype=np.bool_),
                   np.empty((n_trees, n_internal + 1), dtype=np.float64), binner, n_stages)

    @classmethod
    def constant(cls, n_outputs, max_depth, binner):
        """A forest of one stage whose trees predict 0 everywhere: every node a split on
        feature 0 at the grid's first boundary (a fixed, public choice), every leaf 0. With the
        initial scores added to its leaves (``_initial.fold_into_first_stage``) it is the
        constant model of a fit that grows no tree, in the layout every reader of a forest
        takes (and a warm start extends)."""
        forest = cls.empty(n_outputs, 1, max_depth, binner)
        for array in (forest.split_feature, forest.split_bin, forest.leaf_value):
            array.fill(0)
        forest.missing_left.fill(True)
        return forest

    def uses_splits(self):
        """ndarray of shape (n_trees,), dtype=bool: whether each tree's leaves hold more than
        one value (a tree whose leaves are all equal, as :meth:`constant`'s, splits on nothing
        the model uses)."""
        return np.ptp(self.leaf_value, axis=1) > 0

    @property
    def n_outputs(self):
        return self.split_feature.shape[0] // self.n_stages

    def check(self, n_features, n_outputs):
        """Raise unless prediction on ``n_features`` columns reads inside every array.

        The prediction kernel has no bounds checks (a check per node step would slow it), so a
        forest from outside (a model file) is checked once, here: the layout's dtypes and
        shapes (complete trees of one depth), ``n_outputs * n_stages`` trees, every
        ``split_feature`` a column of ``X``, every ``split_bin`` a boundary of the grid, finite
        leaf values whose sums stay finite, and a grid of ``binner.max_bins`` bins over
        ``n_features`` features. Training builds forests that pass.

        Parameters
        ----------
        n_features : int
            Columns of the binned data (``n_features_in_``).
        n_outputs : int
            Trees per boosting stage.

        Raises
        ------
        ValueError
            Naming the array, the tree and node (where one value is wrong), the value and the
            rule: ``split_feature[3, 0] holds 1073741824, must be in [0, n_features=4)``.
        """
        for name, dtype in (("split_feature", np.int32), ("split_bin", X_BINNED_DTYPE),
                            ("missing_left", np.bool_)):
            array = getattr(self, name)
            if not isinstance(array, np.ndarray) or array.dtype != dtype or array.ndim != 2:
                raise ValueError(f"{name} must be a 2-D array of {np.dtype(dtype)}")
        n_trees, n_internal = self.split_feature.shape
        if n_internal < 1 or n_internal & (n_internal + 1):
            raise ValueError(f"split_feature holds trees of {n_internal} internal nodes, must be "
                             "2**max_depth - 1 (complete trees) with max_depth >= 1")
        shapes = {"split_bin": (n_trees, n_internal), "missing_left": (n_trees, n_internal),
                  "leaf_value": (n_trees, n_internal + 1),
                  "leaf_statistics": (n_trees, n_internal + 1, 2)}
        for name, shape in shapes.items():
            array = getattr(self, name)
            if name.startswith("leaf") and (not isinstance(array, np.ndarray)
                                            or array.dtype != np.float64):
                raise ValueError(f"{name} must be an array of float64")
            if array.shape != shape:
                raise ValueError(f"{name} has shape {array.shape}, must be {shape} (the trees "
                                 "and nodes of split_feature)")
        if (not isinstance(self.n_stages, (int, np.integer)) or self.n_stages < 1
                or n_trees != n_outputs * self.n_stages):
            raise ValueError(f"{n_trees} trees, must be n_outputs * n_stages = {n_outputs} * "
                             f"{self.n_stages} (a tree per output and boosting stage, at least "
                             "one stage)")
        max_bins = self.binner.max_bins
        if not 2 <= max_bins <= MAX_BINS:
            raise ValueError(f"the grid has max_bins={max_bins} bins, must be in [2, {MAX_BINS}]")
        _check_range("split_feature", self.split_feature, 0, n_features,
                     f"n_features={n_features}")
        # Bins <= split_bin go left: a boundary of the grid is a bin below the last.
        _check_range("split_bin", self.split_bin, 0, max_bins - 1,
                     f"max_bins - 1 = {max_bins - 1}")
        _check_finite("leaf_value", self.leaf_value)
        with np.errstate(over="ignore"):
            largest_score = np.abs(self.leaf_value).max(axis=1).sum()
        if not np.isfinite(largest_score):
            raise ValueError("leaf_value: the sum of a row's leaves over the trees overflows "
                             "float64 (scores must be finite)")
        # NaN: statistics not released (Laplace leaves); a release is finite.
        _check_finite("leaf_statistics", self.leaf_statistics, nan=True)
        self._check_grid(n_features)

    def _check_grid(self, n_features):
        """The binner's arrays: the bin kernels read ``n_features`` entries of each, and
        ``max_bins - 1`` thresholds per feature."""
        binner = self.binner
        for name in ("lower", "upper"):
            if getattr(binner, name).shape != (n_features,):
                raise ValueError(f"the grid's {name} bounds have shape "
                                 f"{getattr(binner, name).shape}, must be ({n_features},)")
        thresholds = binner.custom_thresholds
        if thresholds is None:
            return
        shape = (n_features, binner.max_bins - 1)
        if thresholds.shape != shape:
            raise ValueError(f"bin_thresholds has shape {thresholds.shape}, must be {shape} "
                             "(n_features, max_bins - 1)")
        _check_finite("bin_thresholds", thresholds)
        decreasing = np.argwhere(np.diff(thresholds, axis=1) < 0)
        if decreasing.size:
            f, b = decreasing[0]
            raise ValueError(f"bin_thresholds[{f}] decreases at {b + 1}: "
                             f"{thresholds[f, b]} > {thresholds[f, b + 1]}; thresholds must "
                             "be non-decreasing per feature")
        outside = np.argwhere((thresholds < binner.lower[:, None])
                              | (thresholds > binner.upper[:, None]))
        if outside.size:
            f, b = outside[0]
            raise ValueError(f"bin_thresholds[{f}, {b}] holds {thresholds[f, b]}, must be "
                             f"within feature {f}'s bounds [{binner.lower[f]}, "
                             f"{binner.upper[f]}]")

    def set_tree(self, index, tree):
        """Store :class:`Tree` ``tree`` as tree ``index`` (its leaf values after shrinkage)."""
        self.split_feature[index], self.split_bin[index] = tree.split_feature, tree.split_bin
        self.missing_left[index], self.leaf_value[index] = tree.missing_left, tree.leaf_value
        self.leaf_statistics[index] = tree.leaf_statistics

    def extended(self, other):
        """This forest followed by ``other``'s stages (same outputs, depth and grid): the model
        of a ``warm_start`` fit.

        Returns
        -------
        forest : Forest
            ``n_stages = self.n_stages + other.n_stages``.
        """
        def stages(a, b):
            shape = (self.n_outputs, -1) + a.shape[1:]
            return np.concatenate([a.reshape(shape), b.reshape(shape)], axis=1).reshape(
                (-1,) + a.shape[1:])

        return Forest(stages(self.split_feature, other.split_feature),
                      stages(self.split_bin, other.split_bin),
                      stages(self.missing_left, other.missing_left),
                      stages(self.leaf_value, other.leaf_value), self.binner,
                      self.n_stages + other.n_stages,
                      stages(self.leaf_statistics, other.leaf_statistics))

    def node_statistics(self):
        """The released (gradient sum, weight) of every node, a node's the sum of its leaves'
        (post-processing of :attr:`leaf_statistics`), in heap order.

        Returns
        -------
        statistics : ndarray of shape (n_trees, 2**(max_depth + 1) - 1, 2), dtype=float64
        """
        return subtree_sums(self.leaf_statistics)

    def tree(self, tree):
        """Tree ``tree``'s (split_feature, split_bin, missing_left, leaf_value) rows."""
        return (self.split_feature[tree], self.split_bin[tree], self.missing_left[tree],
                self.leaf_value[tree])

    def add_trees(self, X_binned, trees, n_threads, out):
        """Add the predictions of trees ``trees`` (indices) to ``out`` of shape (n_samples,)."""
        predict_binned(X_binned, self.split_feature[trees], self.split_bin[trees],
                       self.missing_left[trees], self.binner.max_bins, self.leaf_value[trees],
                       n_threads, out)

    def raw_predict(self, X_binned, n_threads, stages=None):
        """Scores of every output, shape (n_samples, n_outputs), from the boosting stages
        ``stages = (begin, end)`` (None: all)."""
        begin, end = (0, self.n_stages) if stages is None else stages
        out = np.zeros((self.n_outputs, X_binned.shape[0]))
        for k in range(self.n_outputs):
            self.add_trees(X_binned, slice(k * self.n_stages + begin, k * self.n_stages + end),
                           n_threads, out[k])
        return out.T

    def staged_raw_predict(self, X_binned, n_threads):
        """Scores after each stage, shape (n_samples, n_outputs) each (copies)."""
        out = np.zeros((self.n_outputs, X_binned.shape[0]))
        for t in range(self.n_stages):
            for k in range(self.n_outputs):
                self.add_trees(X_binned, slice(k * self.n_stages + t, k * self.n_stages + t + 1),
                               n_threads, out[k])
            yield out.T.copy()


def _check_range(name, array, low, high, rule):
    """Raise naming the first element of ``array`` outside ``[low, high)``."""
    outside = np.argwhere((array < low) | (array >= high))
    if outside.size:
        where = tuple(int(i) for i in outside[0])
        raise ValueError(f"{name}{list(where)} holds {array[where]}, must be in [{low}, {rule})")


def _check_finite(name, array, nan=False):
    """Raise naming the first element of ``array`` that is infinite, or NaN unless ``nan``."""
    bad = np.argwhere(np.isinf(array) if nan else ~np.isfinite(array))
    if bad.size:
        where = tuple(int(i) for i in bad[0])
        rule = "finite or NaN" if nan else "finite"
        raise ValueError(f"{name}{list(where)} holds {array[where]}, must be {rule}")


def subtree_sums(leaves):
    """Per node of complete trees in heap order, the sum of ``leaves`` over its leaves.

    Parameters
    ----------
    leaves : ndarray of shape (n_trees, 2**max_depth, k)

    Returns
    -------
    nodes : ndarray of shape (n_trees, 2**(max_depth + 1) - 1, k), dtype=float64
    """
    n_trees, n_leaves = leaves.shape[:2]
    n_internal = n_leaves - 1
    nodes = np.empty((n_trees, n_internal + n_leaves) + leaves.shape[2:])
    nodes[:, n_internal:] = leaves
    for k in range(n_internal - 1, -1, -1):
        nodes[:, k] = nodes[:, 2 * k + 1] + nodes[:, 2 * k + 2]
    return nodes


def predict_binned(X_binned, split_feature, split_bin, missing_left, missing_code, leaf_value,
                   n_threads, out):
    """Add the predictions of the given trees to ``out`` (parallel over rows).

    Every tree is complete, so a row takes exactly ``depth`` steps, each without a branch: the
    next node is ``2k + 1 + go_right``. Four rows descend side by side, so the processor overlaps
    their four chains of dependent loads (measured 1.6x faster than one row at a time). Each
    node's feature, bin and missing direction are packed into one integer (one load per step).
    A row's trees are summed in tree order, starting from 0, then added to ``out``.

    Parameters
    ----------
    X_binned : ndarray of shape (n_samples, n_features), dtype=uint8
        C order (prediction: a row's codes share a cache line) or Fortran order (training);
        any other layout is copied.
    split_feature : ndarray of shape (n_trees, 2**max_depth - 1), dtype=int32
    split_bin : ndarray of shape (n_trees, 2**max_depth - 1), dtype=uint8
        Bins ``<= split_bin`` go left.
    missing_left : ndarray of shape (n_trees, 2**max_depth - 1), dtype=bool
        Whether the missing-value code goes left.
    missing_code : int
        The missing-value code (``max_bins``, larger than every ``split_bin``).
    leaf_value : ndarray of shape (n_trees, 2**max_depth), dtype=float64
        Released (noised, shrunk) leaf values.
    n_threads : int
        Rows go in ``n_threads`` contiguous parallel chunks (1, or a small job: on the calling
        thread, no parallel region). The result does not depend on it.
    out : ndarray of shape (n_samples,), dtype=float64
        Accumulated in place.
    """
    # The kernel takes row numbers, for :func:`add_tree_scores`' rows outside a tree's sample
    # (one compiled kernel for both uses): 8 bytes a row, one load per row and call.
    rows = np.arange(X_binned.shape[0])
    codes, row_stride, node = _packed(X_binned, split_feature, split_bin, missing_left)
    leaf_value = np.ascontiguousarray(leaf_value, dtype=np.float64)
    n_quads = (rows.shape[0] + 3) // 4
    if n_threads == 1 or n_quads * node.shape[0] < 4096:  # on the calling thread
        _predict_quads(codes, row_stride, rows, node, missing_code, leaf_value, 0, n_quads, out)
    else:
        _predict_parallel(codes, row_stride, rows, node, missing_code, leaf_value, n_threads,
                          out)


def add_tree_scores(raw, output, X_binned, selected, indices, leaf_start, split_feature,
                    split_bin, missing_left, missing_code, leaf_value, n_threads, leaf=None):
    """A copy of ``raw`` with one tree's predictions added to row ``output`` (parallel over rows).

    The score update of a grown tree (``_boosting.add_tree``). The rows of the tree's sample get
    their leaf's value by the leaf's range of the grower's partitioned indices
    (``_splitting.label_by_range``); the other rows go through prediction
    (:func:`predict_binned`'s kernel). Either way a score gets the same float addition, to the
    last bit: ``raw + (0.0 + leaf value)``. Two parallel loops over ``n_threads`` contiguous
    chunks: the sample's positions label their rows with their leaf, then the rows are
    written, in row order, straight into the new array. ``raw`` is read only: a recomputed
    task finds it as it was.

    Parameters
    ----------
    raw : ndarray of shape (n_outputs, n), dtype=float64
    output : int
    X_binned : ndarray of shape (n, n_features), dtype=uint8
        As :func:`predict_binned`.
    selected : ndarray of shape (n_selected,), dtype=int32
        The tree's sample, ascending distinct rows.
    indices : ndarray of shape (n_selected,), dtype=int32
        The same rows grouped by leaf.
    leaf_start : ndarray of shape (2**max_depth + 1,), dtype=int64
        Leaf ``j``'s rows are ``indices[leaf_start[j]:leaf_start[j + 1]]``.
    split_feature, split_bin, missing_left, missing_code, leaf_value
        The tree, as one tree of :func:`predict_binned` (without its leading axis).
    n_threads : int
        Chunks of each pass (1, or fewer than :data:`_PARALLEL_ROWS` rows: on the calling
        thread, no parallel region). The result does not depend on it.
    leaf : ndarray of shape (n,), dtype=int16, or None
        The sample's leaves by row, where the grower wrote them (``_grower.split_leaves``;
        ``indices`` and ``leaf_start`` are then not read); None: from the leaves' ranges.

    Returns
    -------
    new_raw : ndarray of shape (n_outputs, n), dtype=float64
    """
    codes, row_stride, node = _packed(X_binned, split_feature, split_bin, missing_left)
    leaf_value = np.ascontiguousarray(leaf_value, dtype=np.float64)
    new_raw = np.empty(raw.shape)
    offset = _one_feature(node)
    if offset >= 0:
        # A row's leaf is a function of its code alone: one lookup per row replaces the
        # tree's walk; the sample's rows reach the leaf the grower gave them, so need no labels.
        # Prediction's per-row total of one tree starts from 0: the value added is 0.0 + leaf.
        table = 0.0 + leaf_value[_code_leaves(node, missing_code)]
        args = (raw, np.int64(output), codes, row_stride, offset, table)
        if n_threads == 1 or raw.shape[1] < _PARALLEL_ROWS:
            _update_by_code(*args, np.int64(0), np.int64(raw.shape[1]), new_raw)
        else:
            _update_by_code_chunks(*args, n_threads, new_raw)
        return new_raw
    labelled = leaf is not None
    if not labelled:
        leaf = np.empty(raw.shape[1], dtype=np.int16)  # the sample's leaves; others unwritten
    args = (raw, np.int64(output), codes, row_stride, selected, leaf, node[None], missing_code,
            leaf_value[None])
    if n_threads == 1 or raw.shape[1] < _PARALLEL_ROWS:
        if not labelled:
            label_by_range(leaf_start, indices, 0, indices.shape[0], leaf)
        _update_rows(*args, np.int64(0), np.int64(raw.shape[1]), new_raw)
    else:
        # Two parallel loops (the second reads the labels of any chunk's positions).
        if not labelled:
            _label_chunks(leaf_start, indices, n_threads, leaf)
        _update_chunks(*args, n_threads, new_raw)
    return new_raw


def partition_leaves(X_binned, sample_indices, gradients, hessians, split_feature, split_bin,
                     missing_left, missing_code, n_chunks):
    """Stable partition of a tree's samples into its leaves, all levels at once: what
    ``_splitting.partition_level`` gives level by level, from one walk of each sample down the
    tree (:func:`predict_binned`'s routing) and one scatter (a counting sort by leaf). For
    trees whose splits do not read the records (drawn before any record is routed).

    Parameters
    ----------
    X_binned : ndarray of shape (n_samples, n_features), dtype=uint8
    sample_indices : ndarray of shape (n_selected,), dtype=int32
        Ascending rows.
    gradients : ndarray of shape (n_selected,), dtype=float32
    hessians : ndarray of shape (n_selected,) or (0,), dtype=float32
    split_feature, split_bin, missing_left, missing_code
        One tree, as :func:`add_tree_scores`'s.
    n_chunks : int
        Contiguous chunks of samples, each on a thread (1: on the calling thread). The result
        does not depend on it.

    Returns
    -------
    indices, grads, hess : ndarray of the shapes and dtypes of the inputs
        Grouped by leaf, ascending within a leaf.
    leaf_start : ndarray of shape (2**max_depth + 1,), dtype=int64
        Leaf ``j``'s samples are positions ``leaf_start[j]:leaf_start[j + 1]``.
    """
    codes, row_stride, node = _packed(X_binned, split_feature, split_bin, missing_left)
    n = sample_indices.shape[0]
    leaf = np.empty(n, dtype=np.int64)
    counts = np.zeros((n_chunks, node.shape[0] + 1), dtype=np.int64)
    indices, grads, hess = (np.empty_like(sample_indices), np.empty_like(gradients),
                            np.empty_like(hessians))
    # A tree of one feature: each sample's leaf looked up by its code, as add_tree_scores does.
    offset = _one_feature(node)
    table = (_code_leaves(node, missing_code) if offset >= 0
             else np.empty(0, dtype=np.int64))
    args = (codes, row_stride, sample_indices, node, missing_code, offset, table)
    if n_chunks == 1:
        _leaf_rows(*args, np.int64(0), np.int64(n), leaf, counts[0])
    else:
        _leaf_chunks(*args, leaf, counts)
    # Chunk c's first sample of leaf j goes after leaf j's samples of the chunks before it.
    leaf_start = np.concatenate([[0], np.cumsum(counts.sum(axis=0))])
    offsets = leaf_start[:-1] + np.cumsum(counts, axis=0) - counts
    args = (sample_indices, gradients, hessians, leaf)
    if n_chunks == 1:
        _scatter_leaves(*args, np.int64(0), np.int64(n), offsets[0], indices, grads, hess)
    else:
        _scatter_chunks(*args, offsets, indices, grads, hess)
    return indices, grads, hess, leaf_start


def _packed(X_binned, split_feature, split_bin, missing_left):
    """``(codes, row_stride, node)``: the kernels' flat codes (:func:`flat_layout`) and packed
    nodes."""
    if not (X_binned.flags.c_contiguous or X_binned.flags.f_contiguous):
        X_binned = np.ascontiguousarray(X_binned)  # a strided view: copied
    codes, row_stride, column_stride = flat_layout(X_binned)
    # node = offset * 512 + missing_left * 256 + bin (bins < 256), the offset of the feature's
    # codes in a row: a step is one load of ``codes[row_start + offset]``, whatever the layout.
    node = ((split_feature.astype(np.int64) * column_stride) * 512
            + np.where(missing_left, 256, 0) + split_bin.astype(np.int64))
    return codes, row_stride, node


#: Rows below which :func:`add_tree_scores` runs on the calling thread.
_PARALLEL_ROWS = 1 << 14
#: Rows of a block of :func:`_update_rows`: its rows to predict fit in the L1 cache.
_BLOCK_ROWS = 2048


@njit(cache=True)
def _update_rows(raw, output, codes, row_stride, selected, leaf, node, missing_code,
                 leaf_value, lo, hi, out):
    """Rows ``lo:hi`` of :func:`add_tree_scores` (``node``, ``leaf_value``: one tree's, with a
    leading axis of 1), block by block: the other outputs copied, the rows of ``selected``
    their leaf's value added, the others copied and predicted."""
    outside = np.empty(_BLOCK_ROWS, dtype=np.int64)
    inside = np.empty(_BLOCK_ROWS, dtype=np.bool_)
    source, target, values = raw[output], out[output], leaf_value[0]
    p = np.searchsorted(selected, lo)  # the first selected row at or after lo
    for start in range(lo, hi, _BLOCK_ROWS):
        stop = min(start + _BLOCK_ROWS, hi)
        for o in range(raw.shape[0]):
            if o != output:
                out[o, start:stop] = raw[o, start:stop]
        q = p + np.searchsorted(selected[p:], stop)  # the block's selected rows: p:q
        for s in range(p, q):
            r = selected[s]
            # Prediction's addition: its per-row total of one tree starts from 0.
            target[r] = source[r] + (0.0 + values[leaf[r]])
        if q - p < stop - start:
            # The block's complement of ``selected`` without a branch per row (a random sample
            # would mispredict half of them).
            inside[:stop - start] = False
            for s in range(p, q):
                inside[selected[s] - start] = True
            m = 0
            for r in range(start, stop):
                outside[m] = r
                m += not inside[r - start]
            for i in range(m):
                target[outside[i]] = source[outside[i]]
            # np.int64(0), not a literal 0: a literal would compile a specialization of its
            # own, where prediction's is reused.
            _predict_quads(codes, row_stride, outside[:m], node, missing_code, leaf_value,
                           np.int64(0), (m + 3) // 4, target)
        p = q


@njit(parallel=True, cache=True)
def _update_chunks(raw, output, codes, row_stride, selected, leaf, node, missing_code,
                   leaf_value, n_threads, out):
    n = raw.shape[1]
    for c in prange(n_threads):
        chunk = np.int64(c)
        _update_rows(raw, output, codes, row_stride, selected, leaf, node, missing_code,
                     leaf_value, chunk * n // n_threads, (chunk + 1) * n // n_threads, out)


def _one_feature(node):
    """The offset in a row of the one feature every packed node reads (the additive
    default's trees; a tree of no node: 0), or -1."""
    offset = node[0] >> 9 if node.size else np.int64(0)
    return offset if np.all(node >> 9 == offset) else np.int64(-1)


@njit(cache=True)
def _code_leaves(node, missing_code):
    """Per code 0-255 of a tree whose nodes all read one feature: the leaf it walks to."""
    n_internal = node.shape[0]
    table = np.empty(1 << 8, dtype=np.int64)
    for code in range(table.shape[0]):
        k = 0
        while k < n_internal:
            k = 2 * k + 1 + _goes_right(node[k], code, missing_code)
        table[code] = k - n_internal
    return table


@njit(cache=True)
def _update_by_code(raw, output, codes, row_stride, offset, table, lo, hi, out):
    """Rows ``lo:hi`` of :func:`add_tree_scores` for a tree of one feature, whose codes are
    at ``offset`` in each row: the other outputs copied, each row's value looked up."""
    for o in range(raw.shape[0]):
        if o != output:
            out[o, lo:hi] = raw[o, lo:hi]
    source, target = raw[output], out[output]
    for r in range(lo, hi):
        target[r] = source[r] + table[codes[np.uintp(r * row_stride + offset)]]


@njit(parallel=True, cache=True)
def _update_by_code_chunks(raw, output, codes, row_stride, offset, table, n_threads, out):
    n = raw.shape[1]
    for c in prange(n_threads):
        chunk = np.int64(c)
        _update_by_code(raw, output, codes, row_stride, offset, table, chunk * n // n_threads,
                        (chunk + 1) * n // n_threads, out)


@njit(cache=True)
def _leaf_rows(codes, row_stride, sample_indices, node, missing_code, offset, table, lo, hi,
               leaf, counts):
    """Samples ``lo:hi`` of :func:`partition_leaves`: each one's leaf (by ``table`` of its
    code at ``offset``, if any, else by a walk), counted."""
    n_internal = node.shape[0]
    by_code = table.shape[0] > 0
    for k in range(lo, hi):
        row_start = sample_indices[k] * row_stride
        if by_code:
            j = table[codes[np.uintp(row_start + offset)]]
        else:
            j = 0
            while j < n_internal:
                j = _child(node[j], codes, row_start, j, missing_code)
            j -= n_internal
        leaf[k] = j
        counts[j] += 1


@njit(parallel=True, cache=True)
def _leaf_chunks(codes, row_stride, sample_indices, node, missing_code, offset, table, leaf,
                 counts):
    n_chunks = counts.shape[0]
    n = sample_indices.shape[0]
    for c in prange(n_chunks):
        chunk = np.int64(c)
        _leaf_rows(codes, row_stride, sample_indices, node, missing_code, offset, table,
                   chunk * n // n_chunks, (chunk + 1) * n // n_chunks, leaf, counts[chunk])


#: Samples of a block of :func:`_scatter_leaves`: their positions (int64) fit in the L1 cache.
_SCATTER_BLOCK = 4096


@njit(cache=True)
def _scatter_leaves(sample_indices, gradients, hessians, leaf, lo, hi, offsets, indices, grads,
                    hess):
    """Samples ``lo:hi`` of :func:`partition_leaves` to their leaf's next position
    (``offsets``, advanced)."""
    # Block by block: the positions first, then each array moved alone, so that a loop writes
    # one array's streams (one per leaf) rather than all three arrays' at once: measured 2x
    # faster (1M samples into 64 leaves, one thread).
    position = np.empty(_SCATTER_BLOCK, dtype=np.int64)
    for start in range(lo, hi, _SCATTER_BLOCK):
        stop = min(start + _SCATTER_BLOCK, hi)
        for k in range(start, stop):
            p = offsets[leaf[k]]
            offsets[leaf[k]] = p + 1
            position[k - start] = p
        for k in range(start, stop):
            indices[position[k - start]] = sample_indices[k]
        for k in range(start, stop):
            grads[position[k - start]] = gradients[k]
        if hessians.shape[0] > 0:
            for k in range(start, stop):
                hess[position[k - start]] = hessians[k]


@njit(parallel=True, cache=True)
def _scatter_chunks(sample_indices, gradients, hessians, leaf, offsets, indices, grads, hess):
    n_chunks = offsets.shape[0]
    n = sample_indices.shape[0]
    for c in prange(n_chunks):
        chunk = np.int64(c)
        _scatter_leaves(sample_indices, gradients, hessians, leaf, chunk * n // n_chunks,
                        (chunk + 1) * n // n_chunks, offsets[chunk], indices, grads, hess)


@njit(parallel=True, cache=True)
def _label_chunks(start, sample_indices, n_threads, out):
    n = sample_indices.shape[0]
    for c in prange(n_threads):
        chunk = np.int64(c)
        label_by_range(start, sample_indices, chunk * n // n_threads,
                       (chunk + 1) * n // n_threads, out)


# The serial worker and the parallel loop whose body is one call of it, on the codes as a flat
# array (one compiled kernel for C and Fortran order): see _binning.


@njit(parallel=True, cache=True)
def _predict_parallel(codes, row_stride, rows, node, missing_code, leaf_value, n_threads, out):
    n_quads = (rows.shape[0] + 3) // 4
    for c in prange(n_threads):
        chunk = np.int64(c)
        _predict_quads(codes, row_stride, rows, node, missing_code, leaf_value,
                       chunk * n_quads // n_threads, (chunk + 1) * n_quads // n_threads, out)


@njit(cache=True)
def _predict_quads(codes, row_stride, rows, node, missing_code, leaf_value, first, stop, out):
    """Rows ``rows[4 * first]`` to ``rows[4 * stop - 1]`` (to the last of ``rows`` at most) of
    predict_binned: row ``r``'s codes start at ``codes[r * row_stride]``, and a node holds its
    feature's offset from there."""
    n_trees, n_internal = node.shape
    n_rows = rows.shape[0]
    depth = 0
    while (1 << depth) - 1 < n_internal:
        depth += 1
    for q in range(first, stop):
        i = 4 * q
        if i + 4 > n_rows:
            for p in range(i, n_rows):
                r = rows[p]
                total = 0.0
                for t in range(n_trees):
                    k = 0
                    for _ in range(depth):
                        k = _child(node[t, k], codes, r * row_stride, k, missing_code)
                    total += leaf_value[t, k - n_internal]
                out[r] += total
            continue
        r0, r1, r2, r3 = rows[i], rows[i + 1], rows[i + 2], rows[i + 3]
        row0, row1 = r0 * row_stride, r1 * row_stride
        row2, row3 = r2 * row_stride, r3 * row_stride
        total0 = total1 = total2 = total3 = 0.0
        for t in range(n_trees):
            tree = node[t]
            k0 = k1 = k2 = k3 = 0
            for _ in range(depth):
                k0 = _child(tree[k0], codes, row0, k0, missing_code)
                k1 = _child(tree[k1], codes, row1, k1, missing_code)
                k2 = _child(tree[k2], codes, row2, k2, missing_code)
                k3 = _child(tree[k3], codes, row3, k3, missing_code)
            leaves = leaf_value[t]
            total0 += leaves[k0 - n_internal]
            total1 += leaves[k1 - n_internal]
            total2 += leaves[k2 - n_internal]
            total3 += leaves[k3 - n_internal]
        out[r0] += total0
        out[r1] += total1
        out[r2] += total2
        out[r3] += total3


@njit(cache=True, inline="always")
def _child(packed, codes, row_start, k, missing_code):
    """Child of node ``k`` for the row whose codes start at ``row_start``: the missing code goes
    right unless missing goes left."""
    # An unsigned index spares Numba's negative-index wraparound.
    return 2 * k + 1 + _goes_right(packed, codes[np.uintp(row_start + (packed >> 9))],
                                   missing_code)


@njit(cache=True, inline="always")
def _goes_right(packed, code, missing_code):
    """Whether ``code`` goes right at the packed node (threshold in bits 0-7, missing goes
    left in bit 8)."""
    return goes_right_of(code, packed & 255, ((packed >> 8) & 1) == 1, missing_code)

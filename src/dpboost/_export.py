"""The fitted model in XGBoost's JSON model format, from released values only.

A :class:`~dpboost._predictor.Forest` maps onto XGBoost's ``gbtree`` one to one: the trees are
complete and in heap order (``_common``), which is XGBoost's node numbering for a complete tree
(node ``k`` has children ``2k + 1`` and ``2k + 2``), and a leaf's XGBoost node id is
``2**max_depth - 1 +`` its dpboost leaf index. What needs care is the threshold: dpboost sends a
record left when its *bin code* is ``<= b``; XGBoost sends it left when ``float32(x) <
split_condition``, with the split condition stored as float32. :func:`xgboost_thresholds` finds,
for every boundary, the smallest float32 value that dpboost's own binner puts right of it, so the
two agree on every float32 input, values exactly at a threshold included.

Everything written is post-processing of the released model (docs/privacy.md, rule 4): split
features, split bins and missing-value sides (released by the split mechanism), leaf values
(released by the leaf mechanism), the grid (public or released bounds or thresholds), the public
target bounds and category lists. XGBoost's per-node statistics have no released counterpart
are never exact statistics of the training data: ``loss_changes`` and the ``base_weights`` of
internal nodes are 0, and ``sum_hessian`` (the cover) is the released weight below the node
(Gaussian or averaged leaves: noisy Hessian sums or counts, floored at :data:`COVER_FLOOR` per
leaf), or for Laplace leaves, which release none, the number of leaves below the node, a constant
of the complete tree's shape (with zero covers XGBoost's SHAP values are NaN).
"""

import json

import numpy as np

from ._predictor import subtree_sums

#: The least cover of a leaf: a released weight can be 0 or negative (noise).
COVER_FLOOR = 1e-6

#: XGBoost's node id for "no parent" (the root's parent), as XGBoost writes it.
_NO_PARENT = 2147483647

#: The objectives the export writes, with the JSON block XGBoost stores for each.
_OBJECTIVES = {
    "binary:logistic": lambda n_outputs: {"reg_loss_param": {"scale_pos_weight": "1"}},
    "reg:squarederror": lambda n_outputs: {"reg_loss_param": {"scale_pos_weight": "1"}},
    "multi:softprob": lambda n_outputs: {"softmax_multiclass_param": {"num_class":
                                                                      str(n_outputs)}},
}


def xgboost_thresholds(binner):
    """XGBoost split conditions of every boundary of a grid: ``x < T[f, b]`` goes left exactly
    when dpboost's binner gives ``x`` a code ``<= b``, for every float32 ``x``.

    ``T[f, b]`` is the smallest float32 value that ``binner`` puts in a bin ``> b``. Binning is
    monotone in ``x``, so every float32 below it is binned ``<= b`` and every one at or above it
    ``> b``. It is found by bisection over the float32 values in their order (33 steps), each
    step decided by ``binner.transform`` itself: the equal-width grid's codes come from float64
    arithmetic whose rounding moves a boundary by far more than one float32 ulp near 0, where
    float32 values are dense, so no formula on the real threshold would do.

    Parameters
    ----------
    binner : BoundsBinner
        The forest's grid (public bounds, released bounds or released thresholds).

    Returns
    -------
    thresholds : ndarray of shape (n_features, max_bins - 1), dtype=float32
        Finite (``-inf`` is binned 0, left of every boundary).

    Raises
    ------
    ValueError
        A boundary that no finite float32 value passes (a bound beyond float32's range,
        3.4e38): XGBoost could not store the split.
    """
    boundary = np.arange(binner.max_bins - 1)
    shape = (binner.lower.size, boundary.size)
    # Invariant: codes(low) <= b < codes(high); -inf is binned 0 and +inf max_bins - 1.
    low = np.full(shape, _key(np.float32(-np.inf)))
    high = np.full(shape, _key(np.float32(np.inf)))
    while True:
        open_ = high - low > 1
        if not open_.any():
            break
        mid = (low + high) // 2
        right = _codes(binner, _from_key(mid)) > boundary
        high = np.where(open_ & right, mid, high)
        low = np.where(open_ & ~right, mid, low)
    thresholds = _from_key(high)
    if not np.isfinite(thresholds).all():
        f = int(np.argwhere(~np.isfinite(thresholds))[0, 0])
        raise ValueError(f"feature {f}: bounds ({binner.lower[f]:g}, {binner.upper[f]:g}) must "
                         "lie inside float32's range (|x| < 3.4e38) to export to XGBoost, "
                         "which stores split conditions as float32")
    return thresholds


def _key(values):
    """Integers in the order of the float32 ``values`` (consecutive floats: consecutive keys;
    -0.0 and 0.0 both 0)."""
    bits = np.asarray(values, dtype=np.float32).view(np.int32).astype(np.int64)
    return np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)


def _from_key(keys):
    """The float32 values of :func:`_key`'s integers."""
    bits = np.where(keys < 0, (-keys) | 0x80000000, keys)
    return bits.astype(np.uint32).view(np.float32)


def _codes(binner, values):
    """``binner``'s codes of ``values`` of shape (n_features, m): one row per feature."""
    return binner.transform(np.ascontiguousarray(values.T, dtype=np.float64), order="C").T


def forest_to_xgboost(forest, objective, n_features, *, base_score=0.0, leaf_scale=1.0,
                      feature_names=None, attributes=None):
    """XGBoost's JSON model (a ``dict``) of a forest.

    Parameters
    ----------
    forest : Forest
    objective : {"binary:logistic", "multi:softprob", "reg:squarederror"}
        ``"multi:softprob"`` writes one tree per output and round, in XGBoost's order (round
        ``t``: the trees of outputs ``0, ..., n_outputs - 1``).
    n_features : int
    base_score : float, default=0.0
        XGBoost's ``base_score``: in probability space for ``"binary:logistic"`` (0.5 is a
        margin of 0), added to every margin otherwise. Written as one number, the form every
        XGBoost version reads (XGBoost >= 3.1 broadcasts it to every class).
    leaf_scale : float, default=1.0
        Factor applied to every leaf value (an affine link folded into the trees).
    feature_names : sequence of str, default=None
    attributes : dict of str -> str, default=None
        XGBoost's free-form model attributes.

    Returns
    -------
    model : dict
        ``json.dumps(model)`` loads with ``xgboost.Booster().load_model(bytearray(...))``.
    """
    n_outputs, n_stages = forest.n_outputs, forest.n_stages
    thresholds = xgboost_thresholds(forest.binner)
    # XGBoost's order: round by round, output by output (dpboost's is output by output).
    order = [k * n_stages + t for t in range(n_stages) for k in range(n_outputs)]
    trees = [_tree(forest, tree, thresholds, leaf_scale, n_features, i)
             for i, tree in enumerate(order)]
    n_trees = len(trees)
    names = [] if feature_names is None else [str(name) for name in feature_names]
    return {
        "learner": {
            "attributes": dict(attributes or {}),
            "feature_names": names,
            "feature_types": ["float"] * len(names),
            "gradient_booster": {
                "model": {
                    "gbtree_model_param": {"num_parallel_tree": "1", "num_trees": str(n_trees)},
                    "iteration_indptr": list(range(0, n_trees + 1, n_outputs)),
                    "tree_info": [k for _ in range(n_stages) for k in range(n_outputs)],
                    "trees": trees,
                },
                "name": "gbtree",
            },
            "learner_model_param": {
                "base_score": _float_text(base_score),
                # The base score is the model's own: never re-estimated from data.
                "boost_from_average": "0",
                "num_class": str(n_outputs if objective == "multi:softprob" else 0),
                "num_feature": str(n_features),
                "num_target": "1",
            },
            "objective": {"name": objective, **_OBJECTIVES[objective](n_outputs)},
        },
        # The first XGBoost whose writer has every field above (readers only look for < 1.6).
        "version": [2, 0, 0],
    }


def _tree(forest, tree, thresholds, leaf_scale, n_features, tree_id):
    """XGBoost's JSON of tree ``tree`` of ``forest`` (id ``tree_id``)."""
    n_internal = forest.split_feature.shape[1]
    n_nodes = 2 * n_internal + 1
    internal = np.arange(n_internal)
    feature = forest.split_feature[tree].astype(np.int64)
    leaves = [_f32(v) for v in forest.leaf_value[tree] * leaf_scale]
    conditions = [_f32(v) for v in thresholds[feature, forest.split_bin[tree].astype(np.int64)]]
    leaf = [-1] * (n_internal + 1)
    weights = forest.leaf_statistics[tree, :, 1]
    if np.isfinite(weights).all():
        # Cover: the released weights below a node (noisy Hessian sums or counts), each leaf's
        # floored so that every cover is positive (TreeSHAP divides by them).
        cover = subtree_sums(np.maximum(weights, COVER_FLOOR)[None, :, None])[0, :, 0].tolist()
    else:
        # Laplace leaves release no weight: the number of leaves below a node, a constant of
        # the complete tree's shape.
        depth = n_nodes.bit_length() - 1
        cover = [float(2 ** (depth - (k + 1).bit_length() + 1)) for k in range(n_nodes)]
    return {
        "base_weights": [0.0] * n_internal + leaves,
        "categories": [],
        "categories_nodes": [],
        "categories_segments": [],
        "categories_sizes": [],
        "default_left": forest.missing_left[tree].astype(int).tolist() + [0] * (n_internal + 1),
        "id": tree_id,
        "left_children": (2 * internal + 1).tolist() + leaf,
        "loss_changes": [0.0] * n_nodes,
        "parents": [_NO_PARENT] + [(k - 1) // 2 for k in range(1, n_nodes)],
        "right_children": (2 * internal + 2).tolist() + leaf,
        "split_conditions": conditions + leaves,
        "split_indices": feature.tolist() + [0] * (n_internal + 1),
        "split_type": [0] * n_nodes,
        "sum_hessian": cover,
        "tree_param": {"num_deleted": "0", "num_feature": str(n_features),
                       "num_nodes": str(n_nodes), "size_leaf_vector": "1"},
    }


def _f32(value):
    """``value`` rounded to float32, as the Python float equal to it (its ``repr`` parses back
    to the same float32 whether a reader parses float32 or float64 then casts)."""
    return float(np.float32(value))


def _float_text(value):
    """A float32 in XGBoost's string form of a parameter."""
    return repr(_f32(value))


def xgboost_link(loss_name, n_outputs, target_bounds=None):
    """XGBoost's (objective, base_score, leaf scale) of a fitted model's link.

    Parameters
    ----------
    loss_name : {"softmax", "logistic", "square"}
        The classifier's ``loss``, or ``"square"`` for a regressor.
    n_outputs : int
    target_bounds : tuple of float, default=None
        A regressor's ``target_bounds_`` (the unscaling of the targets is folded into the
        trees); None for a classifier.

    Returns
    -------
    objective : str
    base_score, leaf_scale : float

    Raises
    ------
    NotImplementedError
        One-vs-rest outputs (``loss="logistic"`` or ``"square"`` with K > 2 classes).
    """
    if target_bounds is not None:
        lower, upper = target_bounds
        return "reg:squarederror", (lower + upper) / 2.0, (upper - lower) / 2.0
    if n_outputs == 1:
        if loss_name == "square":
            return "reg:squarederror", 0.5, 0.5
        return "binary:logistic", 0.5, 1.0
    if loss_name == "softmax":
        return "multi:softprob", 0.0, 1.0
    raise NotImplementedError(
        f"loss={loss_name!r} with {n_outputs} classes has one-vs-rest probabilities "
        "(normalised per-class scores), which no XGBoost objective computes; "
        "loss='softmax' exports as multi:softprob")


def estimator_to_xgboost(estimator_name, forest, link, n_features, feature_names, categories):
    """An estimator's ``to_xgboost_json`` text: :func:`forest_to_xgboost` with the ``link`` of
    :func:`xgboost_link` and the :func:`model_attributes` of this library's version."""
    from . import __version__

    objective, base_score, leaf_scale = link
    model = forest_to_xgboost(
        forest, objective, n_features, base_score=base_score, leaf_scale=leaf_scale,
        feature_names=feature_names,
        attributes=model_attributes(estimator_name, categories, __version__))
    return json.dumps(model)


def model_attributes(estimator_name, categories, version):
    """XGBoost model attributes naming the writer and the category lists (codes of the
    categorical columns the exported trees expect: a value's position in its list)."""
    lists = {str(j): [_json_label(v) for v in values] for j, values in categories.items()}
    return {"dpboost_estimator": estimator_name, "dpboost_version": version,
            "dpboost_categories": json.dumps(lists)}


def _json_label(value):
    """A category label as JSON can hold it (numpy scalars as Python ones, others as text)."""
    if isinstance(value, np.generic):
        value = value.item()
    return value if isinstance(value, (str, int, float, bool)) or value is None else str(value)

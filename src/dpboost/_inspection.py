"""Inspection from released values only: feature importances, a privacy report, tree text.

Everything here reads public inputs, the split choices and the released (noised) leaf values, and
the ledger; nothing reads the training data (docs/privacy.md, rule 4).
"""

from collections import defaultdict

import numpy as np

from ._accounting import FILTER_ORDERS
from ._predictor import predict_binned, subtree_sums
from ._tree_mechanisms import LEAF_RELEASES

#: The kinds of :func:`feature_importance`; the first is ``feature_importances_``.
IMPORTANCE_TYPES = ("contribution", "gain", "cover", "split")


def split_count_importances(split_feature, n_features):
    """Fraction of all split nodes that use each feature.

    Split choices are outputs of the exponential mechanism, hence released values.

    Parameters
    ----------
    split_feature : ndarray of shape (n_trees, n_internal), dtype=int32
    n_features : int

    Returns
    -------
    importances : ndarray of shape (n_features,), dtype=float64
        Non-negative, summing to 1; all 0 without a split node (no tree).
    """
    counts = np.bincount(split_feature.ravel(), minlength=n_features).astype(np.float64)
    return counts / counts.sum() if counts.sum() > 0 else counts


def released_split_values(forest, l2_regularization, floor):
    """Every split node's gain and cover from the released leaf statistics.

    A node's statistics are the sums of the released (gradient sum G, weight H) of the leaves
    below it (``Forest.node_statistics``: post-processing, no exact statistic is read). Gain of
    a split (XGBoost's, Chen & Guestrin 2016, Eq. 7, without the 1/2 and gamma):
    ``S(left) + S(right) - S(node)`` with ``S = G^2 / max(H + lambda, floor)``, the leaves'
    denominator (``denominator_floor`` of ``_tree_mechanisms.LEAF_RELEASES``: DP-XGB's), not clipped (noise can make it
    negative); cover: the node's released weight.

    Returns
    -------
    gain, cover : ndarray of shape (n_trees, n_internal), dtype=float64
    """
    n_internal = forest.split_feature.shape[1]
    nodes = forest.node_statistics()
    score = nodes[..., 0] ** 2 / np.maximum(nodes[..., 1] + l2_regularization, floor)
    children = score[:, 1:2 * n_internal + 1:2] + score[:, 2:2 * n_internal + 2:2]
    return children - score[:, :n_internal], nodes[:, :n_internal, 1]


def released_importances(forest, l2_regularization, floor, n_features, importance_type):
    """Importances from the released leaf statistics (:func:`released_split_values`).

    Each feature gets the sum of the gain (or of the cover, clipped at 0 per node) over the
    nodes that split on it, clipped at 0, normalised to sum to 1 (all 0 if nothing is
    positive). A node's gain is not clipped: the noise adds about the same positive amount to
    every node's gain, and clipping each node would add more to the many nodes without signal,
    flattening the ranking (measured: 0.171 vs 0.157 for the one strong feature of 8 at
    epsilon 1). With random splits the split counts are about uniform whatever the data; the
    released gain still ranks features by how much the noisy leaves differ across their splits.

    Parameters
    ----------
    forest : Forest
        With finite ``leaf_statistics`` (Gaussian or averaged leaves).
    l2_regularization, floor : float
        The leaves' lambda and least denominator (``denominator_floor`` of ``_tree_mechanisms.LEAF_RELEASES``).
    n_features : int
    importance_type : {"gain", "cover"}

    Returns
    -------
    importances : ndarray of shape (n_features,), dtype=float64
    """
    gain, cover = released_split_values(forest, l2_regularization, floor)
    value = gain if importance_type == "gain" else np.maximum(cover, 0.0)
    totals = np.maximum(np.bincount(forest.split_feature.ravel(), weights=value.ravel(),
                                    minlength=n_features), 0.0)
    total = totals.sum()
    return totals / total if total > 0 else totals


def contribution_importances(forest, n_features):
    """Spread of each feature's contribution to the margin, from released values only.

    The margin of a boosted model is a sum over trees, and a tree that splits on one feature
    only (``interaction_cst="no_interactions"``, the default's at a finite epsilon) is a
    function of that feature alone; so the margin is ``sum_f g_f(x_f)`` plus the trees on
    several features, with ``g_f`` the sum of the trees on ``f`` (Lou, Caruana & Gehrke 2012,
    GA2M: an additive model's importance is the spread of its shape functions). Feature ``f``
    gets the weighted variance of ``g_f`` over the codes of its public grid (its bins and the
    missing code), each code weighted by the released cover of its leaf shared equally among the
    leaf's codes (clipped at 0, averaged over the trees on ``f``), or 1 where the leaves
    released no statistics (Laplace leaves). A tree on several features adds, per split node,
    the between-children part of the law of total variance of its leaf values under the same
    covers, ``(c_L (v_L - v)^2 + c_R (v_R - v)^2) / c_root`` with ``v`` the cover-weighted mean
    value below a node (Saabas's contributions, "Interpreting random forests", 2014), to the
    node's feature. Each output's trees are pooled apart and the spreads summed.

    Pooling the trees before taking the spread is what makes it measure the model: the leaf
    noise of the trees is independent and partly cancels in ``g_f``, while their signal adds
    up. Post-processing: it reads the split choices, the released leaf values and covers and
    the public grid (the codes), never the training data.

    Parameters
    ----------
    forest : Forest
    n_features : int

    Returns
    -------
    importances : ndarray of shape (n_features,), dtype=float64
        Non-negative, summing to 1 (all 0 if every spread is 0).
    """
    released = releases_statistics(forest)
    cover = (np.maximum(forest.leaf_statistics[..., 1], 0.0) if released
             else np.ones_like(forest.leaf_value))
    single = (forest.split_feature == forest.split_feature[:, :1]).all(axis=1)
    spread = np.zeros(n_features)
    codes = np.arange(forest.binner.max_bins + 1)
    for output in range(forest.n_outputs):
        trees = np.arange(output * forest.n_stages, (output + 1) * forest.n_stages)
        for f in range(n_features):
            on_f = trees[single[trees] & (forest.split_feature[trees, 0] == f)]
            if on_f.size:
                spread[f] += _shape_spread(forest, on_f, f, n_features, codes, cover, released)
        mixed = trees[~single[trees]]
        if mixed.size:
            spread += _node_spreads(forest, mixed, cover, n_features)
    total = spread.sum()
    return spread / total if total > 0 else spread


def _shape_spread(forest, trees, feature, n_features, codes, cover, released):
    """Weighted variance of the sum of ``trees`` (all on ``feature``) over its codes."""
    grid = np.zeros((codes.size, n_features), dtype=np.uint8)
    grid[:, feature] = codes
    args = (grid, forest.split_feature[trees], forest.split_bin[trees],
            forest.missing_left[trees], forest.binner.max_bins)
    shape = np.zeros(codes.size)
    predict_binned(*args, forest.leaf_value[trees], 1, shape)
    weight = np.zeros(codes.size)
    if not released:
        weight[:] = 1.0
    else:
        n_leaves = forest.leaf_value.shape[1]
        for t in trees:
            leaf = np.zeros(codes.size)  # the leaf each code reaches in tree t
            predict_binned(grid, forest.split_feature[t:t + 1], forest.split_bin[t:t + 1],
                           forest.missing_left[t:t + 1], forest.binner.max_bins,
                           np.arange(n_leaves, dtype=np.float64)[None], 1, leaf)
            leaf = leaf.astype(np.int64)
            share = cover[t, leaf] / np.bincount(leaf, minlength=n_leaves)[leaf]
            if share.sum() > 0:
                weight += share / share.sum()
    if weight.sum() <= 0:
        return 0.0
    mean = np.average(shape, weights=weight)
    return float(np.average((shape - mean) ** 2, weights=weight))


def _node_spreads(forest, trees, cover, n_features):
    """Per feature, the between-children variance terms of the split nodes of ``trees``."""
    n_internal = forest.split_feature.shape[1]
    c = cover[trees]
    sums = subtree_sums(np.stack([c, c * forest.leaf_value[trees]], axis=-1))
    weight = sums[..., 0]
    value = np.divide(sums[..., 1], weight, out=np.zeros_like(weight), where=weight > 0)
    node = np.arange(n_internal)
    terms = sum(weight[:, child] * (value[:, child] - value[:, node]) ** 2
                for child in (2 * node + 1, 2 * node + 2))
    terms = np.divide(terms, weight[:, :1], out=np.zeros_like(terms), where=weight[:, :1] > 0)
    return np.bincount(forest.split_feature[trees].ravel(), weights=terms.ravel(),
                       minlength=n_features)


def releases_statistics(forest):
    """Whether every leaf of ``forest`` released its (gradient sum, weight): Gaussian or averaged
    leaves do, Laplace leaves release only their values (NaN statistics)."""
    return bool(np.isfinite(forest.leaf_statistics).all())


def feature_importance(forest, importance_type, l2_regularization, leaf_noise, n_features):
    """An estimator's ``feature_importance``: contribution spreads, split counts or released
    gain or cover.

    Parameters
    ----------
    forest : Forest
    importance_type : {"contribution", "gain", "cover", "split"}
        ``"contribution"``: :func:`contribution_importances`;
        ``"split"``: :func:`split_count_importances`; ``"gain"`` and ``"cover"``:
        :func:`released_importances` with the leaves' own least denominator
        (``denominator_floor`` of ``_tree_mechanisms.LEAF_RELEASES``).
    l2_regularization : float
    leaf_noise : {"laplace", "gaussian", "average"}
    n_features : int

    Returns
    -------
    importances : ndarray of shape (n_features,), dtype=float64

    Raises
    ------
    ValueError
        ``importance_type`` not one of :data:`IMPORTANCE_TYPES`, or ``"gain"`` / ``"cover"``
        while :func:`releases_statistics` is false.
    """
    if importance_type == "contribution":
        return contribution_importances(forest, n_features)
    if importance_type == "split":
        return split_count_importances(forest.split_feature[forest.uses_splits()], n_features)
    if importance_type not in IMPORTANCE_TYPES:
        raise ValueError(f"importance_type={importance_type!r}; expected one of "
                         + ", ".join(repr(t) for t in IMPORTANCE_TYPES) + ".")
    if not releases_statistics(forest):
        raise ValueError(f"importance_type={importance_type!r} needs the leaves' released "
                         "statistics; Laplace leaves (leaf_noise='laplace') release only "
                         "their values, and a model of no tree (the regressor's constant "
                         "regime) none: use importance_type='contribution' or 'split'.")
    l2 = float(l2_regularization)
    return released_importances(forest, l2, LEAF_RELEASES[leaf_noise].denominator_floor(l2), n_features,
                                importance_type)


def privacy_report(ledger, epsilon, filtered_fraction=None, delta=0.0, choices=0):
    """Human-readable account of a fit's releases.

    Parameters
    ----------
    ledger : list of LedgerEntry
    epsilon : float
        The composed epsilon (``privacy_spent_``).
    filtered_fraction : ndarray of shape (n_trees,) or None
        GDF diagnostics, only when the user opted in (``diagnostics=True``).
    delta : float, default=0.0
        ``0``: pure DP; otherwise the delta of Renyi accounting.
    choices : int, default=0
        The number of ledgers the private row count chose among, with a private choice of
        interactions its parts' (0: the plan was fixed).

    Returns
    -------
    report : str
    """
    budgets = [e for e in ledger if e.mechanism == "renyi_filter"]
    ledger = [e for e in ledger if e.mechanism != "renyi_filter"]
    by_mechanism = defaultdict(lambda: [0, 0, set()])
    for e in ledger:
        row = by_mechanism[(e.mechanism, e.epsilon, e.sensitivity, e.noise_multiplier)]
        row[0] += 1
        row[1] += e.n_nodes
        if e.tree >= 0:
            row[2].add(e.tree)
    # Tree -1 holds the releases before the trees (row count, domain report, category lists,
    # bounds, initial score, split-candidate sketches), composed sequentially with them.
    in_trees = [e for e in ledger if e.tree >= 0]
    n_before = len(ledger) - len(in_trees)
    before = (f", and {n_before} release{'s' * (n_before > 1)} before the trees (tree -1: "
              "row count, domain report, category lists, bounds, initial score or "
              "split-candidate sketch)" if n_before else "")
    guarantee = "pure DP" if delta == 0 else f"(epsilon, delta={delta:g})-DP"
    parts = sorted({e.part for e in ledger} - {""})
    if choices:
        guarantee += (f": the row count's epsilon (if released) plus the largest of the "
                      f"{choices} ledgers it chose among or that read disjoint parts, the "
                      "ledger below the ones taken")
    elif delta > 0:
        guarantee += " by Renyi composition"
    lines = [f"composed epsilon ({guarantee}, add/remove one record): {epsilon:.6g}",
             f"releases: {len(ledger)} ledger entries over "
             f"{len({e.tree for e in in_trees})} trees in {len({e.group for e in in_trees})} "
             f"sequentially composed groups{before}",
             "mechanism     epsilon/node   sensitivity   noise mult.   entries   nodes   trees"]
    for (mechanism, eps, sensitivity, sigma), (entries, nodes, trees) in sorted(
            by_mechanism.items(), key=lambda item: (item[0][0], item[0][1], item[0][2])):
        lines.append(f"{mechanism:<12}  {eps:>12.6g}  {sensitivity:>12.6g}  {sigma:>12.6g}  "
                     f"{entries:>8}  {nodes:>6}  {len(trees):>6}")
    if parts:
        trees = {part: len({e.tree for e in ledger if e.part == part and e.tree >= 0})
                 for part in parts}
        lines.append(
            f"private choice of interactions: each record in one of the parts A, B, V, T by its "
            f"own coin; {trees['A']} additive trees on A, {trees['B']} unrestricted trees on "
            f"B, their comparison released on V, the {trees['T']} trees of the plan it chose on "
            "T (the model); a record is read by one part's releases only")
    for e in ledger:
        if e.mechanism == "threshold":
            lines.append(f"category lists of {e.n_nodes} columns: values whose Gaussian-noised "
                         f"count exceeds {e.threshold:.6g} (noise std "
                         f"{e.noise_multiplier * e.sensitivity:.6g}); a value held by one "
                         f"record alone is released with probability at most {e.delta:.3g}, "
                         "added to delta (the Renyi part is converted at the rest)")
    for b in budgets:
        n_filtered = len({e.tree for e in ledger if e.filtered})
        sampled = (f" on Poisson samples of rate {b.sampling_rate:g}" if b.sampling_rate < 1
                   else "")
        lines.append(
            f"individual Renyi filter (Feldman & Zrnic 2021): the {n_filtered} filtered leaf "
            "releases are not composed one by one; each record took part in a tree only while "
            "its own losses (of its clipped gradient and Hessian) fit in its budget, the Renyi "
            f"curve of {b.filter_trees} worst-case trees (noise multiplier "
            f"{b.noise_multiplier:.6g}, sensitivity {b.sensitivity:.6g}{sampled}) at orders "
            f"{FILTER_ORDERS[0]}..{FILTER_ORDERS[-1]}; composed with the other releases and "
            "converted at those orders")
    if filtered_fraction is not None:
        lines.append("fraction of sampled records left out per tree by GDF or the individual "
                     "filter (exact, NOT differentially private): "
                     + " ".join(f"{v:.3f}" for v in filtered_fraction))
    return "\n".join(lines)


def tree_text(forest, tree, feature_names, categories):
    """Indented text of one complete tree with its split rules and released leaves (one line
    for a tree whose leaves all hold one value).

    A numeric split prints its real-valued threshold; a categorical split prints the categories of
    each side (the public list's first categories go left). Each split says which side takes
    missing values (for a categorical feature also the values outside its list).

    Parameters
    ----------
    forest : Forest
    tree : int
        Index of the tree in ``forest``.
    feature_names : sequence of str or None
        None: ``x0``, ``x1``, ...
    categories : dict of int -> ndarray
        Category list of each categorical feature (``categories_``).

    Returns
    -------
    text : str
    """
    binner = forest.binner
    split_feature, split_bin = forest.split_feature[tree], forest.split_bin[tree]
    missing_left, leaf_value = forest.missing_left[tree], forest.leaf_value[tree]
    thresholds = binner.thresholds()
    n_internal = split_feature.shape[0]
    lines = []

    def rules(f, b):
        if f not in categories:
            return f"< {thresholds[f, b]:.6g}", f">= {thresholds[f, b]:.6g}", "missing"
        # Category i is coded i; its bin decides its side, as at prediction time.
        codes = np.arange(categories[f].size, dtype=np.float64)
        column = np.zeros((codes.size, binner.lower.size))
        column[:, f] = codes
        left = binner.transform(column)[:, f] <= b
        return (_category_set(categories[f][left], categories[f].size),
                _category_set(categories[f][~left], categories[f].size), "missing/unknown")

    def visit(k, depth):
        pad = "|   " * depth
        if k >= n_internal:
            lines.append(f"{pad}value: {leaf_value[k - n_internal]:.6g}")
            return
        f = split_feature[k]
        name = f"x{f}" if feature_names is None else feature_names[f]
        left, right, missing = rules(split_feature[k], split_bin[k])
        lines.append(f"{pad}{name} {left}" + (f" or {missing}" if missing_left[k] else ""))
        visit(2 * k + 1, depth + 1)
        lines.append(f"{pad}{name} {right}" + ("" if missing_left[k] else f" or {missing}"))
        visit(2 * k + 2, depth + 1)

    if not forest.uses_splits()[tree]:
        # Every input reaches the same value (the constant regime's tree, ``Forest.constant``):
        # its placeholder splits would only mislead.
        return f"value: {leaf_value[0]:.6g} (every input)"
    visit(0, 0)
    return "\n".join(lines)


def _category_set(names, n_categories, shown=6):
    """``in {a, b, c}``; a long set shows its first and last names and its size."""
    names = [str(v) for v in names]
    if len(names) <= shown:
        return "in {" + ", ".join(names) + "}"
    return ("in {" + ", ".join(names[:shown // 2]) + ", ..., " + ", ".join(names[-2:])
            + f"}} ({len(names)} of {n_categories} categories)")

"""Sensitivities: every bound on how much one record (of weight at most W) moves a release, as
a named function with its source (DPBoost, Li et al. 2020, Lemmas 1 and 2; DP-XGB; the weighted
bounds of docs/privacy.md, Sample weights). The planner (``_budget``) reads them before any
record is read."""

import math

from ._common import GRADIENT_BOUND


def gain_sensitivity(gradient_bound=GRADIENT_BOUND, weight_bound=1.0):
    """Sensitivity of the split gain, ``3 W g*^2`` (Li et al. 2020, Lemma 1; docs/privacy.md, Split selection).

    Holds under add/remove of one record with ``|g| <= g*`` for every ``lambda >= 0``. With
    sample weights the gain's sums and denominators are weighted (``sum w g``, ``sum w``) and the
    bound is ``3 W g*^2`` for weights in ``[0, W]`` (docs/privacy.md, Sample weights): Lemma 1's
    three terms, ``2 |a A| / (B + w)``, ``a^2 / (B + w)`` and ``w A^2 / (B (B + w))`` with ``a = w g``, ``|A| <= g* (B - lambda)``,
    are each at most ``w g*^2`` or ``2 w g*^2`` for any real weight sum ``B - lambda >= 0``.
    """
    return 3.0 * gradient_bound**2 * weight_bound


#: A GLC bound below ``MIN_LEAF_CLIP * g*`` is planned as 0 (the leaf is the constant 0): such a
#: leaf cannot move a score of order g* in float64, and the noise scale of its release would sink
#: towards the subnormal range, where Laplace noise is not the distribution it claims to be.
MIN_LEAF_CLIP = 2.0**-52


def leaf_clip_bound(position, learning_rate, gradient_bound=GRADIENT_BOUND):
    """Geometric leaf clipping threshold ``g* (1 - eta)^t_e`` (Li et al. 2020, Sec. 3.1, GLC).

    ``position`` is the 0-based position of the tree inside its ensemble (docs/privacy.md, Leaves: the authors'
    code, not Algorithm 2's global index). A bound below ``MIN_LEAF_CLIP * g*`` (``eta = 1``, or
    many trees at a large eta) is exactly 0: the leaf is released as the constant 0
    (sensitivity 0, see ``_mechanisms``).
    """
    bound = gradient_bound * (1.0 - learning_rate) ** position
    return bound if bound >= MIN_LEAF_CLIP * gradient_bound else 0.0


def leaf_sensitivity(l2_regularization, clip_bound=math.inf, gradient_bound=GRADIENT_BOUND):
    """Sensitivity of one leaf value.

    ``min(g* / (1 + lambda), 2 * clip_bound)``: Lemma 2 of Li et al. 2020 bounds an unclipped leaf
    ``-sum g / (n + lambda)`` by ``g* / (1 + lambda)``; a leaf clipped to ``[-c, c]`` moves by
    at most
    ``2 c`` (Corollary 2).
    """
    return min(gradient_bound / (1.0 + l2_regularization), 2.0 * clip_bound)


def gaussian_leaf_sensitivity(hessian_bound, gradient_bound=GRADIENT_BOUND, weight_bound=1.0,
                              hessian_scale=1.0):
    """L2 sensitivity of one leaf's (gradient sum, c x Hessian sum), ``W sqrt(g*^2 + c^2 h*^2)``.

    One record adds ``(w g, c w h)`` with ``|g| <= g*``, ``0 <= h <= h*`` and its weight ``w`` in
    ``[0, W]`` (1 without sample weights) to exactly one leaf (DP-XGB, "Revisiting
    differentially private XGBoost", Sec. 3; docs/privacy.md, Leaves). ``c`` is the public
    ``hessian_scale`` (:func:`newton_hessian_scale`; 1: the joint release of ``(G, H)``).
    """
    return math.hypot(gradient_bound, hessian_scale * hessian_bound) * weight_bound


def newton_hessian_scale(gradient_share, gradient_bound=GRADIENT_BOUND, hessian_bound=1.0):
    """The scale ``c`` of the Hessian sum in a Newton leaf's release that puts the fraction
    ``gradient_share`` of the leaf's zCDP (Renyi) budget on the gradient sum.

    Gaussian noise of standard deviation ``sigma`` on ``(G, c H)`` costs
    ``(g*^2 + c^2 h*^2) / (2 sigma^2)`` (zCDP, Bun & Steinke 2016, Prop. 1.6) of which
    ``g*^2 / (2 sigma^2)`` is the gradient sum's: the share ``s = g*^2 / (g*^2 + c^2 h*^2)``,
    so ``c = (g* / h*) sqrt((1 - s) / s)``. Dividing the released second coordinate by ``c`` is
    post-processing: the same as separate Gaussian releases of ``G`` and ``H`` with the budget
    split ``s : 1 - s`` (S-BDT, Kirschte et al., reference code kirschte/sbdt, which puts most
    of it on ``G``).
    ``c = 1`` (the joint release of ``(G, H)``) is ``s = g*^2 / (g*^2 + h*^2)``.

    Parameters
    ----------
    gradient_share : float in (0, 1)
    gradient_bound, hessian_bound : float
        g* and h* > 0.

    Returns
    -------
    hessian_scale : float
        > 0.
    """
    return gradient_bound / hessian_bound * math.sqrt((1.0 - gradient_share) / gradient_share)


def average_leaf_sensitivity(gradient_bound=GRADIENT_BOUND, weight_bound=1.0):
    """L1 sensitivity of one leaf's (gradient sum, record count), ``W (g* + 1)``.

    One record moves the sum by at most ``w g*`` and the (weighted) count by ``w``, its weight
    ``w`` in ``[0, W]`` (1 without sample weights) (DP-XGBoost's noisy average, Grislain &
    Gonzalvez 2021; docs/privacy.md, Leaves).
    """
    return (gradient_bound + 1.0) * weight_bound


def quantile_sketch_sensitivity(n_features, weight_bound=1.0):
    """L1 sensitivity of the fine count histograms of ``n_features`` features, ``W n_features``.

    One record adds its weight (1 without sample weights, at most W with them: a weighted
    quantile sketch) to one fine bin of each feature (none for a missing value) (Grislain &
    Gonzalvez 2021; docs/privacy.md, Split-candidate sketches).
    """
    return float(n_features) * weight_bound


def bounds_column_weights(n_features, target, norm):
    """Weights of the columns' counts in the private bounds' release: 1 for each of the
    ``n_features`` features, then, if ``target``, ``n_features`` (L1) or ``sqrt(n_features)``
    (L2) for the target (1 alone). The target then gets as much of the release as the features
    together: its bounds scale every leaf, the features' only place the bins (docs/privacy.md,
    Private feature bounds).

    Returns
    -------
    weights : list of float
        One per released column, the target last.
    """
    weight = max(float(n_features) if norm == "l1" else math.sqrt(n_features), 1.0)
    return [1.0] * n_features + [weight] * bool(target)


def bounds_histogram_sensitivity(n_features, norm="l1", target=False):
    """Sensitivity of the weighted count histograms of ``n_features`` features (and the
    target, if ``target``) on the public log grid of private bounds: one record adds its
    column's weight (:func:`bounds_column_weights`) to one bin of each column (none for a
    missing value; sample weights do not enter these counts, so no weight bound either), so
    the sum of the weights (L1) or the root of the sum of their squares (L2); docs/privacy.md,
    Private feature bounds."""
    weights = bounds_column_weights(n_features, target, norm)
    return math.fsum(weights) if norm == "l1" else math.sqrt(math.fsum(w * w for w in weights))


def category_count_sensitivity(n_columns):
    """L2 sensitivity of the value counts of ``n_columns`` categorical columns on the values
    both neighbours hold, ``sqrt(n_columns)``.

    One record holds one value per column (or none: missing), so under add/remove it moves the
    count of at most one value of each column, by 1: a contribution bound of one value per
    column (Wilson et al. 2020; docs/privacy.md, Private category lists). A value held by the
    added record alone is not part of this vector: it is the threshold's delta
    (:func:`new_value_probability`).
    """
    return math.sqrt(n_columns)


def weighted_leaf_sensitivity(l2_regularization, clip_bound=math.inf,
                              gradient_bound=GRADIENT_BOUND, weight_bound=1.0):
    """Sensitivity of one Laplace leaf value ``V = -sum w g / (sum w + lambda)`` when every
    record carries a weight ``w`` in ``[0, W]`` (``sample_weight``; docs/privacy.md, Sample
    weights).

    Lemma 2 of Li et al. (2020) bounds an unweighted leaf by ``g* / (1 + lambda)`` because a
    non-empty leaf holds at least one whole record; with real weights the weight sum ``S`` of a
    leaf can be any number in ``[0, inf)``. Adding a record ``(w, g)`` to a leaf of gradient sum
    ``A`` (``|A| <= g* S``) and denominator ``B = S + lambda`` gives
    ``V' - V = -(w g + w V) / (B + w)``, so
    ``|V' - V| <= w g* (2 S + lambda) / ((S + lambda) (S + lambda + w))``, which increases with
    ``w``. Over ``S >= 0`` at ``w = W`` its maximum is at ``u = S + lambda =
    (lambda + sqrt(lambda^2 + 2 lambda W)) / 2`` (the root of ``-2u^2 + 2 lambda u + lambda W``,
    the derivative's numerator, which is ``>= lambda``), giving
    ``W g* (2u - lambda) / (u (u + W))``; ``lambda = 0`` gives the trivial ``2 g*`` (both values
    lie in ``[-g*, g*]``). A leaf clipped to ``[-c, c]`` moves by at most ``2 c``.

    At ``W = 1`` it exceeds ``g* / (1 + lambda)`` (``lambda = 1``: 0.536 g* against 0.5 g*):
    fractional weights break Lemma 2's integer counts, so a weighted fit uses this bound even
    when its weights are at most 1.

    Parameters
    ----------
    l2_regularization : float
        lambda >= 0.
    clip_bound : float, default=inf
        GLC's ``c``.
    gradient_bound : float, default=GRADIENT_BOUND
    weight_bound : float, default=1.0
        W > 0, the public bound on one record's weight.

    Returns
    -------
    sensitivity : float
    """
    lam, w = l2_regularization, weight_bound
    if lam == 0:
        bound = 2.0 * gradient_bound
    else:
        u = (lam + math.sqrt(lam * lam + 2.0 * lam * w)) / 2.0
        bound = min(w * gradient_bound * (2.0 * u - lam) / (u * (u + w)), 2.0 * gradient_bound)
    return min(bound, 2.0 * clip_bound)


def hessian_sketch_sensitivity(n_features, hessian_bound, norm, weight_bound=1.0):
    """Sensitivity of the fine Hessian histograms of ``n_features`` features.

    One record adds at most ``W h*`` to one fine bin of each feature (its weight times its
    Hessian; W = 1 without sample weights): ``W h* n`` in L1 (Laplace, pure DP) and
    ``W h* sqrt(n)`` in L2 (Gaussian) (DP-TR's adaptive Hessian sketch, Maddock et al. 2022;
    docs/privacy.md, Split-candidate sketches).

    Parameters
    ----------
    n_features : int
    hessian_bound : float
    norm : {"l1", "l2"}
    weight_bound : float, default=1.0
    """
    return hessian_bound * (math.sqrt(n_features) if norm == "l2" else n_features) * weight_bound


def validation_loss_sensitivity(clip):
    """Sensitivity of early stopping's validation loss, ``C``: the sum over the held-out records
    of each one's loss clipped to ``[0, C]`` (``_early_stopping.validation_loss``) moves by at
    most C when one record is added or removed (a sum of values in [0, C], Dwork & Roth 2014,
    Def. 3.1; unweighted, so sample weights do not scale it). L1 and L2 alike: one coordinate.
    """
    return float(clip)


def initial_statistics_sensitivity(weight_bound=1.0):
    """L1 (and L2) sensitivity of the initial score's statistics, ``W``.

    One record adds ``w (1 - u, u)`` with ``u = (y + 1) / 2`` in [0, 1] (one output: a target
    in [-1, 1], or the second of two classes as ``u = 1``), or ``w`` times its class's one-hot
    vector (several outputs), to the vector of sums: coordinates that are non-negative and sum
    to ``w <= W`` (1 without sample weights), so its L1 norm, hence its L2 norm, is at most W
    (the Laplace mechanism, Dwork et al. 2006; docs/privacy.md, Private initial score).
    """
    return float(weight_bound)


def row_count_sensitivity():
    """Sensitivity of the number of records, 1: adding or removing one record changes a count
    by one, whatever its weight (a counting query; Dwork & Roth 2014, Example 3.1;
    docs/privacy.md, Private row count)."""
    return 1.0


def choice_statistic_sensitivity():
    """Sensitivity of the statistic of a private choice of interactions, 1
    (``_interaction_choice.pairs_statistic``; docs/privacy.md, Private choice of interactions).

    One record's coin puts it in one slot of one bucket, so it changes that bucket's term
    alone: the mean, over the pairs of two counted records (alone in their slots) of different
    labels, of values in ``{-1, 0, 1}`` (0 without a pair). With ``a`` and ``b`` counted
    records of the two labels, adding a record of the first label to an empty slot adds ``b``
    pairs to the ``a b``: the mean moves by at most ``2 b / (a b + b) = 2 / (a + 1) <= 1``
    where ``a >= 1``, and from 0 to a mean of values in ``[-1, 1]`` where ``a = 0``. Adding it
    to a slot of one record uncounts that record, the reverse of adding it; to a slot of more,
    nothing. Removing a record reverses one of these.
    """
    return 1.0

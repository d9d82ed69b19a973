"""Pure budget planner and the sensitivities it uses.

The plan depends only on public hyper-parameters, so ``fit`` computes it before it reads any data,
and every mechanism takes its epsilon and sensitivity from here (STYLE.md habit 4).
"""

import dataclasses
import functools
import math
from dataclasses import dataclass

import numpy as np

from ._accounting import (
    FILTER_ORDERS,
    LedgerEntry,
    compose,
    deamplify_pure,
    rdp_bounds,
    rdp_epsilon,
    sampled_gaussian_rdp,
)
from ._common import GRADIENT_BOUND
from ._mechanisms import noise_scale
from ._noise import SecureNoise

#: Share of each tree's zCDP budget spent on split selection under Renyi accounting; the rest goes
#: to the leaves (DP-XGB, "Revisiting differentially private XGBoost", Sec. 4: 0.7 : 0.3).
SELECTION_SHARE = 0.7
#: Share of the budget spent on a private sketch of the split candidates, when asked for (after
#: DP-TR's sketch : selection : leaf = 0.1 : 0.6 : 0.3). The trees share the rest by their own
#: split (SELECTION_SHARE under Renyi accounting, so 0.1 : 0.63 : 0.27; half and half under pure
#: DP; all to the leaves with random splits); docs/privacy.md, Budget split.
SKETCH_SHARE = 0.1
#: Ledger scope of the sketch: released once, before the first tree, sequentially composed.
SKETCH_SCOPE = {"group": -1, "tree": -1, "level": 0}
#: Releases of the adaptive Hessian sketch per output, evenly spaced over the trees (one for the
#: square loss, whose Hessians are all 1: a second release would repeat the first's statistic).
HESSIAN_SKETCH_ROUNDS = 5
#: Share of the budget spent on private feature bounds (``feature_bounds="private"``), one Laplace
#: release before everything else; the rest of the fit is planned with the remainder.
BOUNDS_SHARE = 0.1
#: Ledger scope of the private bounds: released first, sequentially composed.
BOUNDS_SCOPE = {"group": -1, "tree": -1, "level": -1}
#: Private category lists (``categories="private"``): the Gaussian noise of the counts is the
#: noise that alone would cost this share of epsilon (at the Renyi delta); the trees get what
#: the Renyi composition leaves (docs/privacy.md, Private category lists).
CATEGORIES_SHARE = 0.1
#: Share of ``delta`` planned for the thresholds of private category lists: the probability
#: that a value held by the added record alone is released; the Renyi composition of
#: everything is converted at the rest, ``(1 - CATEGORIES_DELTA_SHARE) delta``.
CATEGORIES_DELTA_SHARE = 0.5
#: Ledger scope of the private category lists: released first of all, sequentially composed.
CATEGORIES_SCOPE = {"group": -1, "tree": -1, "level": -2}
#: Rounds of the pure-DP planner's shrinking of a tree's epsilon (each doubles the step).
_MAX_SHRINKS = 128
#: The Renyi planner's bisection stops once it knows the per-tree rho to this relative
#: precision, when no rho brings the accountant's epsilon within 1e-3 below the target.
RHO_PRECISION = 1e-9
#: Most trees one fit plans (all outputs): the plan and its ledger hold every tree, 30 to 50
#: microseconds each to plan (benchmarks/README.md, "Planning time"), so this many plan in
#: about half a second.
MAX_TREES = 10_000
#: Ledger scope of the individual Renyi filter's budget (not a release): first in the ledger.
FILTER_SCOPE = {"group": -1, "tree": -1, "level": -2, "n_nodes": 0}
#: Individual filter: a record's norm ``c`` is charged at the next point of a grid of
#: ``FILTER_GRID`` equal steps in [0, c*] (the divergence grows with c, so rounding up bounds it).
FILTER_GRID = 1024
#: Individual filter: a worst-case tree costs ``FILTER_TICKS`` integer ticks at every order;
#: smaller losses are rounded up to whole ticks, so the budgets are exact integer sums.
FILTER_TICKS = 2**16
#: Individual filter: the norm charged is ``c + FILTER_SLACK * noise_multiplier * c*``, above
#: the L2 shift of a row by one record on the secure noise's lattice, ``c + 2 g`` with the step
#: ``g <= s 2^-24`` (docs/privacy.md, Secure noise).
FILTER_SLACK = 2.0**-22


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


def gaussian_leaf_sensitivity(hessian_bound, gradient_bound=GRADIENT_BOUND, weight_bound=1.0):
    """L2 sensitivity of one leaf's (gradient sum, Hessian sum), ``W sqrt(g*^2 + h*^2)``.

    One record adds ``(w g, w h)`` with ``|g| <= g*``, ``0 <= h <= h*`` and its weight ``w`` in
    ``[0, W]`` (1 without sample weights) to exactly one leaf (DP-XGB, "Revisiting
    differentially private XGBoost", Sec. 3; docs/privacy.md, Leaves).
    """
    return math.hypot(gradient_bound, hessian_bound) * weight_bound


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


def bounds_histogram_sensitivity(n_features):
    """L1 sensitivity of the count histograms of ``n_features`` features on the public log grid
    of private bounds, ``n_features``: one record adds 1 to one bin of each feature (none for a
    missing value; sample weights do not enter these counts, so no weight bound either);
    docs/privacy.md, Private feature bounds."""
    return float(n_features)


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


def _lattice_excess(noise_multiplier):
    """Relative excess of the secure sampler's noise over the planned standard deviation, and
    the lattice step relative to it, for a one-value row (``SecureNoise.lattice``): the step is
    at most ``2**-b`` of the scale and the integer scale at most ``scale / step + sigma + 2``."""
    step = 2.0**-SecureNoise.GAUSSIAN_BITS
    return (noise_multiplier + 2.0) * step, step


def new_value_probability(threshold, noise_std, noise_multiplier):
    """Bound on the probability that a count of 1 plus the noise exceeds ``threshold``.

    ``P[N(0, s'^2) >= threshold - 1 - g]``, with ``s' = s (1 + (sigma + 2) 2^-24)`` and
    ``g = s 2^-24``: for numpy's Gaussian (``s' = s``, ``g = 0`` would do) and for the secure
    sampler's discrete Gaussian ``g Y`` on the lattice ``g Z`` of parameter ``t g <= s'``
    (``SecureNoise``), whose tail satisfies ``P[Y >= m] <= P[N(0, t^2) >= m - 1]`` for
    ``m >= 1`` (the sum of ``exp(-k^2 / 2t^2)`` over ``k >= m`` is at most the integral from
    ``m - 1``, and the normaliser is at least ``sqrt(2 pi) t`` by Poisson summation).
    ``0.5 erfc(x / sqrt(2))`` is the Gaussian tail.

    Parameters
    ----------
    threshold : float
        Above ``1 + g``.
    noise_std : float
        ``s``, the planned standard deviation of each count's noise.
    noise_multiplier : float
        ``sigma = s`` over the counts' sensitivity.

    Returns
    -------
    probability : float
    """
    excess, step = _lattice_excess(noise_multiplier)
    gap = threshold - 1.0 - step * noise_std
    return 0.5 * math.erfc(gap / (noise_std * (1.0 + excess) * math.sqrt(2.0)))


def category_threshold(noise_std, noise_multiplier, value_delta):
    """The smallest threshold whose :func:`new_value_probability` is at most ``value_delta``.

    Found by bisection on the tail bound (to a relative 1e-12, the upper end kept), so that a
    value of count 1 held by the added record alone is released with probability at most
    ``value_delta`` (Korolova et al. 2009; Wilson et al. 2020).

    Returns
    -------
    threshold : float
    """
    low = 1.0 + 2.0**-SecureNoise.GAUSSIAN_BITS * noise_std
    high = low + noise_std
    while new_value_probability(high, noise_std, noise_multiplier) > value_delta:
        high = low + 2.0 * (high - low)
    for _ in range(200):
        middle = 0.5 * (low + high)
        if new_value_probability(middle, noise_std, noise_multiplier) > value_delta:
            low = middle
        else:
            high = middle
        if high - low <= 1e-12 * high:
            break
    return high


def category_noise_multiplier(epsilon, delta):
    """Noise multiplier ``sigma`` of the Gaussian mechanism that alone is (epsilon, delta)-DP
    by dp-accounting's Renyi conversion, to a relative 1e-9 (bisection in log sigma; the
    conversion decreases with sigma). The categories' counts get ``epsilon =
    CATEGORIES_SHARE * epsilon`` of the fit."""
    import dp_accounting

    def cost(sigma):
        return rdp_epsilon(dp_accounting.GaussianDpEvent(sigma), delta)

    low, high = 1e-3, 1e7
    if cost(high) > epsilon:
        raise ValueError(f"epsilon={epsilon} is too small to plan private category lists with "
                         f"delta={delta}.")
    for _ in range(200):
        middle = math.sqrt(low * high)
        low, high = (middle, high) if cost(middle) > epsilon else (low, middle)
        if high / low < 1 + 1e-9:
            break
    return high


def categories_release(n_columns, epsilon, delta):
    """The ledger entry of the private category lists of ``n_columns`` columns.

    The counts of the observed values of every column get Gaussian noise of multiplier
    :func:`category_noise_multiplier` (``CATEGORIES_SHARE * epsilon`` at the Renyi delta
    ``(1 - CATEGORIES_DELTA_SHARE) delta``) on the L2 sensitivity
    :func:`category_count_sensitivity`; a value is released when its noisy count exceeds the
    threshold whose :func:`new_value_probability` is ``CATEGORIES_DELTA_SHARE * delta /
    n_columns`` (a union bound over the at most ``n_columns`` values the added record alone
    holds). Without noise (``epsilon = inf``) every observed value is released.

    Raises
    ------
    ValueError
        ``delta == 0``: the release is not pure DP; epsilon and delta too small for the
        counts' noise (:func:`category_noise_multiplier`).
    """
    sensitivity = category_count_sensitivity(n_columns)
    if delta == 0:
        raise ValueError("categories='private' needs delta > 0: releasing the values seen in "
                         "the data has a delta of its own (a value held by one record alone "
                         "clears the threshold with a small probability); set delta, e.g. "
                         "1e-5, well below 1 / n_samples.")
    if not math.isfinite(epsilon):
        return LedgerEntry(mechanism="exact", epsilon=math.inf, sensitivity=sensitivity,
                           n_nodes=n_columns, threshold=0.0, **CATEGORIES_SCOPE)
    value_delta = CATEGORIES_DELTA_SHARE * delta
    try:
        sigma = category_noise_multiplier(CATEGORIES_SHARE * epsilon, delta - value_delta)
    except ValueError:
        # The error names the counts' share; the fit's own values are what to change.
        raise ValueError(f"epsilon={epsilon} with delta={delta} is too small to plan private "
                         f"category lists: their counts get {CATEGORIES_SHARE:g} of epsilon "
                         f"at {1 - CATEGORIES_DELTA_SHARE:g} of delta, which no Gaussian noise "
                         "up to 1e7 times their sensitivity reaches.") from None
    threshold = category_threshold(sigma * sensitivity, sigma, value_delta / n_columns)
    return LedgerEntry(mechanism="threshold", epsilon=math.inf, sensitivity=sensitivity,
                       n_nodes=n_columns, noise_multiplier=sigma, threshold=threshold,
                       delta=n_columns * new_value_probability(threshold, sigma * sensitivity,
                                                               sigma),
                       **CATEGORIES_SCOPE)


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


@dataclass(frozen=True)
class TreeBudget:
    """Budget and sensitivities of one tree.

    Attributes
    ----------
    tree, group, position : int
        Tree index; its composition group (see ``LedgerEntry.group``); its position in the ensemble.
    output : int
        The output (one-vs-rest class) the tree belongs to; 0 for a single output.
    epsilon_level : float
        Exponential-mechanism epsilon of each depth level, ``eps_t / (2 max_depth)`` (Algorithm 1).
    epsilon_leaf : float
        Laplace epsilon of the leaves, ``eps_t / 2`` (Algorithm 1); ``inf`` for Gaussian leaves.
    gain_sensitivity, leaf_sensitivity : float
        ``leaf_sensitivity`` is the L1 sensitivity of a leaf value (Laplace) or the L2
        sensitivity of a leaf's (gradient sum, Hessian sum) pair (Gaussian).
    leaf_clip : float
        GLC bound on the leaf value before noise; ``inf`` without clipping. Gaussian leaves:
        ``g* / h*``, applied to the released leaf (post-processing).
    leaf_noise_multiplier : float, default=0.0
        Gaussian leaves: noise standard deviation over ``leaf_sensitivity``; 0 otherwise.
    split_selection : {"exponential", "cyclical", "random"}, default="exponential"
        How each node picks its split; ``"random"`` spends nothing on the splits.
    gradient_bound : float, default=GRADIENT_BOUND
        g*: the tree's gradients are clipped (or filtered, GDF) to ``[-g*, g*]``; every
        sensitivity above assumes it.
    leaf_noise : {"laplace", "gaussian", "average"}, default="laplace"
        How the leaves are released (see :func:`plan_budget`).
    sampling_rate : float, default=1.0
        Poisson sampling rate of the tree's records (``subsample``).
    filtered : bool, default=False
        The tree's records are chosen by the individual Renyi filter (``renyi_filter``); its
        leaf release is marked ``filtered`` in the ledger.
    """

    tree: int
    group: int
    position: int
    output: int
    epsilon_level: float
    epsilon_leaf: float
    gain_sensitivity: float
    leaf_sensitivity: float
    leaf_clip: float
    leaf_noise_multiplier: float = 0.0
    split_selection: str = "exponential"
    leaf_noise: str = "laplace"
    sampling_rate: float = 1.0
    gradient_bound: float = GRADIENT_BOUND
    filtered: bool = False


@dataclass(frozen=True)
class BudgetPlan:
    """Everything ``fit`` will release, decided before any data is read.

    Attributes
    ----------
    trees : tuple of TreeBudget
    record_shares : ndarray of shape (n_positions,), dtype=float64, or None
        Probability that a record goes to the tree at each position of its group (independent
        categorical draw per record); the rest of the probability mass is unused. ``None``: every
        tree sees every record.
    max_depth : int
    epsilon : float
        Composed epsilon of :attr:`entries` (pure DP, or at :attr:`delta`), never above the
        requested epsilon.
    delta : float, default=0.0
    sketch : LedgerEntry or None, default=None
        The quantile sketch's release (Laplace on the fine histograms of every sketched
        feature), made before the first tree; None on the equal-width grid.
    hessian_sketch_trees : tuple of int, default=()
        Trees ``t`` (of each output) before which the Hessian sketch is released.
    hessian_sketches : tuple of LedgerEntry, default=()
        The Hessian sketch's releases, ``hessian_sketches[k * S + s]`` before tree
        ``hessian_sketch_trees[s]`` of output ``k`` (S rounds).
    bounds : LedgerEntry or None, default=None
        The private feature bounds' release (``feature_bounds="private"``), made after the
        category lists.
    categories : LedgerEntry or None, default=None
        The private category lists' release (``categories="private"``), made first.
    filter : LedgerEntry or None, default=None
        The individual Renyi filter's per-record budget (``renyi_filter``), a
        ``"renyi_filter"`` entry declared before the trees; None without a filter.
    """

    trees: tuple
    record_shares: object
    max_depth: int
    epsilon: float
    delta: float = 0.0
    sketch: object = None
    hessian_sketch_trees: tuple = ()
    hessian_sketches: tuple = ()
    bounds: object = None
    categories: object = None
    filter: object = None

    def check_scales(self, sketch_features=0, hessian_sketch_features=0, bounds_features=0):
        """Refuse a plan with a noise scale that is not a positive normal float, or that the
        exact samplers cannot draw.

        Called by :func:`plan_budget`, so parameters whose budgets vanish or explode (a tiny
        ``subsample`` or epsilon, an astronomically large epsilon) fail before any data is
        read, not in the middle of a fit.

        Parameters
        ----------
        sketch_features, hessian_sketch_features, bounds_features : int, default=0
            Columns of the quantile sketch's, the Hessian sketch's and the private bounds'
            histograms: one record moves one count of each, as many coordinates of the
            release's row (``SecureNoise.check``). A leaf moves its whole row (1 value, or 2
            statistics), the categories' counts one value per row.

        Raises
        ------
        ValueError
            Names the release and its scale (:func:`dpboost._mechanisms.noise_scale`) or its
            integer scale on the secure samplers' lattice (``SecureNoise.check``).
        """
        # The trees repeat a few budgets (one; one per position with GLC): the releases of a
        # budget are checked at its first tree only, which fails first if any of them does.
        firsts = {}
        for tb in self.trees:
            firsts.setdefault(dataclasses.replace(tb, tree=0, group=0, position=0, output=0),
                              tb.tree)
        checked = set(firsts.values())
        entries = [e for e in self.entries if e.tree < 0 or e.tree in checked]
        for e in entries:
            noise_scale(e)
        moved = [(self.categories, 1), (self.bounds, bounds_features),
                 (self.sketch, sketch_features)]
        moved += [(e, hessian_sketch_features) for e in self.hessian_sketches]
        moved += [(e, 1 if self.trees[e.tree].leaf_noise == "laplace" else 2)
                  for e in entries if e.tree >= 0]
        for entry, k in moved:
            if entry is not None:
                SecureNoise.check(entry, k)
        return self

    @property
    def entries(self):
        """The ledger that fitting must produce, as a list of LedgerEntry (a new list)."""
        return list(self._ledger)

    @functools.cached_property
    def _ledger(self):
        """:attr:`entries`, built once per plan (a tuple): the planner checks them, ``fit``
        reserves them, and a memoised plan serves every fit of its setting."""
        private = math.isfinite(self.epsilon)
        out = [e for e in (self.categories, self.filter, self.bounds) if e is not None]
        out += ([] if self.sketch is None else [self.sketch]) + list(self.hessian_sketches)
        for tb in self.trees:
            random = tb.split_selection == "random"
            for level in range(self.max_depth):
                out.append(LedgerEntry(
                    mechanism="uniform" if random else "exponential" if private else "argmax",
                    epsilon=0.0 if random else tb.epsilon_level,
                    sensitivity=0.0 if random else tb.gain_sensitivity,
                    group=tb.group, tree=tb.tree, level=level, n_nodes=2**level,
                    sampling_rate=tb.sampling_rate))
            gaussian = tb.leaf_noise_multiplier > 0
            out.append(LedgerEntry(
                mechanism="gaussian" if gaussian else "laplace" if private else "exact",
                epsilon=tb.epsilon_leaf, sensitivity=tb.leaf_sensitivity,
                group=tb.group, tree=tb.tree, level=self.max_depth, n_nodes=2**self.max_depth,
                noise_multiplier=tb.leaf_noise_multiplier, sampling_rate=tb.sampling_rate,
                filtered=tb.filtered))
        return tuple(out)


def _read_only(array):
    """``array``, no longer writeable: a memoised plan is shared by every fit of its setting."""
    array.flags.writeable = False
    return array


def _layout(budget_allocation, n_estimators, trees_per_ensemble, learning_rate):
    """Groups, positions and record shares of the three allocations (Li et al. 2020, Sec. 3.2, 4)."""
    t = np.arange(n_estimators)
    if budget_allocation == "eoe":
        # Algorithm 2: ensembles of T_e trees on disjoint records, share proportional to the
        # GLC leaf bound eta (1 - eta)^t_e, normalised over a full ensemble.
        positions = np.arange(trees_per_ensemble)
        decay = (1.0 - learning_rate) ** positions
        shares = learning_rate * decay / (1.0 - (1.0 - learning_rate) ** trees_per_ensemble)
        return t // trees_per_ensemble, t % trees_per_ensemble, _read_only(shares)
    if budget_allocation == "parallel":
        # PARA (Zhao et al. 2018): each tree takes half of the still-unused records.
        return np.zeros_like(t), t, _read_only(0.5 ** (t + 1.0))
    # "sequential" (SEQ, Liu et al. 2018): every tree sees every record.
    return t, t, None


@functools.lru_cache(maxsize=256)
def plan_budget(*, epsilon, n_estimators, max_depth, learning_rate, l2_regularization,
                budget_allocation, trees_per_ensemble, leaf_clipping, n_outputs=1, delta=0.0,
                leaf_noise="laplace", hessian_bound=1.0, split_selection="exponential",
                subsample=1.0, sketch_features=0, hessian_sketch_features=0,
                hessian_sketch_rounds=1, bounds_features=0, gradient_bound=GRADIENT_BOUND,
                categories_features=0, sample_weight_bound=None, renyi_filter=None):
    """Plan every mechanism's epsilon, noise and sensitivity.

    Parameters
    ----------
    epsilon : float
        Total budget, in (0, inf]; ``inf`` plans the non-private NP baseline (argmax splits,
        exact leaves, every tree on every record, no clipping).
    n_estimators, max_depth : int
    learning_rate : float
        Shrinkage eta in (0, 1]; also the GLC decay and the EoE share ratio.
    l2_regularization : float
    budget_allocation : {"eoe", "sequential", "parallel"}
        ``"eoe"``: ``ceil(T / T_e)`` ensembles compose sequentially, the trees of one in parallel
        (Algorithm 2); ``"sequential"``: every tree on every record; ``"parallel"``: every tree on
        its own records.
    trees_per_ensemble : int
    leaf_clipping : bool
        Apply GLC, with the tree's position in its ensemble (Laplace leaves only).
    n_outputs : int, default=1
        Number of boosted outputs trained on the same records (one-vs-rest classes), composed
        sequentially; tree ``k * n_estimators + t`` is tree ``t`` of output ``k``.
    delta : float, default=0.0
        ``0``: pure epsilon-DP, split ``eps / 2`` over the levels and ``eps / 2`` to the leaves of
        each tree (Algorithm 1). In (0, 1): (epsilon, delta)-DP by Renyi composition; each tree
        gets the same zCDP budget rho, :data:`SELECTION_SHARE` of it to the levels
        (``eps_level = sqrt(8 rho_level)``, bounded range) and the rest to the leaves (Laplace
        ``eps_leaf = sqrt(2 rho_leaf)``, or Gaussian noise multiplier ``1 / sqrt(2 rho_leaf)``),
        with rho the largest, found by bisection, whose accountant epsilon is within 1e-3 below
        ``epsilon`` (where no rho comes that close, as where the accountant's epsilon jumps
        from 0 past it, the largest within ``epsilon`` to a relative :data:`RHO_PRECISION`).
    leaf_noise : {"laplace", "gaussian", "average"}, default="laplace"
        ``"laplace"``: Laplace on the leaf value (DPBoost). ``"gaussian"``: Gaussian perturbation
        of the leaf's (gradient sum, Hessian sum) with L2 sensitivity ``sqrt(g*^2 + h*^2)``
        (DP-XGB; needs ``delta > 0``). ``"average"``: Laplace perturbation of the leaf's
        (gradient sum, record count) with L1 sensitivity ``g* + 1`` (one record moves the sum by
        at most g* and the count by 1), the noisy average as the leaf.
    hessian_bound : float, default=1.0
        h*, the bound on one record's Hessian (1 for the square loss, 1/4 for the logistic).
    split_selection : {"exponential", "cyclical", "random"}, default="exponential"
        ``"exponential"`` over every candidate (DPBoost); ``"cyclical"``: the same mechanism over
        the candidates of feature ``t mod d`` only (DP-XGB); ``"random"``: a uniform candidate,
        independent of the data, so the whole budget of a tree goes to its leaves (DP-TR random
        boosting, Maddock et al. 2022).
    subsample : float, default=1.0
        Poisson sampling rate gamma in (0, 1] of each tree's records. Pure DP: a tree may spend
        ``log(1 + (e^eps_t - 1) / gamma)`` on its sample to cost ``eps_t`` (amplification by
        subsampling, Balle et al. 2018). Renyi accounting: trees whose releases are all Gaussian
        are accounted as Poisson-sampled Gaussian mechanisms; others are not amplified.
    sketch_features : int, default=0
        Number of features whose split candidates come from the private quantile sketch
        (0: none, the equal-width grid). The sketch gets ``SKETCH_SHARE * epsilon`` as one
        Laplace release of L1 sensitivity ``sketch_features`` (one record adds 1 to one fine bin
        of every feature; Grislain & Gonzalvez 2021), composed sequentially with the trees, which
        share the rest.
    hessian_sketch_features : int, default=0
        Number of features whose split candidates come from the adaptive Hessian sketch (DP-TR,
        Maddock et al. 2022; 0: none). Before ``hessian_sketch_rounds`` evenly spaced trees of
        each output, the Hessian sums of every sketched feature on the fine grid are released:
        one record adds at most h* to one fine bin of each feature, so the L1 sensitivity is
        ``h* n`` (Laplace, pure DP) and the L2 sensitivity ``h* sqrt(n)`` (Gaussian, Renyi
        accounting). The releases share ``SKETCH_SHARE`` of the budget (of epsilon, or of the
        zCDP budget of the sequentially composed trees); the trees share the rest
        (docs/privacy.md, Budget split).
    hessian_sketch_rounds : int, default=1
        Releases per output, at most ``n_estimators``.
    gradient_bound : float, default=GRADIENT_BOUND
        g* > 0, the bound every record's gradient is clipped (or GDF-filtered) to; the gain,
        leaf and GLC bounds scale with it (Li et al. 2020, Lemmas 1-2; DP-XGB).
    bounds_features : int, default=0
        Number of features whose bounds are released privately (``feature_bounds="private"``;
        0: none). One Laplace release of ``BOUNDS_SHARE * epsilon`` and L1 sensitivity
        ``bounds_features`` comes first; everything else is planned with the remaining
        ``(1 - BOUNDS_SHARE) epsilon`` (sequential composition: the total stays within epsilon,
        also by Renyi composition, whose conversion never exceeds the sum).
    categories_features : int, default=0
        Number of categorical columns whose category lists are released privately
        (``categories="private"``; 0: none). One thresholded Gaussian release comes first
        (:func:`categories_release`); its Gaussian part is composed with the trees in the Renyi
        bisection and every composition is converted at ``delta`` minus its threshold delta
        ``CATEGORIES_DELTA_SHARE * delta`` (``_accounting.compose_rdp``). Needs ``delta > 0``.
    sample_weight_bound : float or None, default=None
        W > 0, the public bound on one record's weight with ``sample_weight`` (None: an
        unweighted fit). Every sensitivity a record's (g, h) or count enters is multiplied by
        W (gain, Gaussian and average leaves, both sketches); Laplace leaves use
        :func:`weighted_leaf_sensitivity` (real weight sums break Lemma 2's integer counts).
        The private bounds' counts are unweighted (docs/privacy.md, Sample weights).
    renyi_filter : float in (0, 1] or None, default=None
        Individual Renyi filter (Feldman & Zrnic 2021; docs/privacy.md, Individual Renyi
        filter): every record's budget is the Renyi curve, at :data:`FILTER_ORDERS`, of
        ``k = max(1, round(renyi_filter * n_outputs * n_estimators))`` worst-case tree releases
        (Gaussian leaves of the planned noise multiplier on a Poisson sample of rate
        ``subsample``), and a record takes part in a tree only while its own losses fit in it.
        The planner sizes the noise for ``k`` trees; ``n_outputs * n_estimators`` trees are
        grown. The leaf releases are marked ``filtered`` and one ``"renyi_filter"`` entry
        (:attr:`BudgetPlan.filter`) carries the budget. Needs ``leaf_noise="gaussian"``,
        ``delta > 0``, ``budget_allocation="sequential"``, and random splits when
        ``subsample < 1`` (a sampled tree is accounted as one sampled Gaussian only when its
        splits are data-independent). None: worst-case accounting of every release.

    Returns
    -------
    plan : BudgetPlan
        Memoised (the arguments are public scalars): a search or cross-validation plans each
        setting once. The plan is immutable.

    Raises
    ------
    ValueError
        More than :data:`MAX_TREES` trees; an epsilon too small for ``delta`` (or for private
        category lists); noise scales the samplers cannot draw (:meth:`BudgetPlan.check_scales`);
        a setting the individual Renyi filter or private category lists rule out.
    """
    arguments = {k: v for k, v in locals().items()
                 if k not in ("bounds_features", "categories_features")}
    arguments["categories"] = (None if not categories_features else
                               categories_release(categories_features, epsilon, delta))
    if not bounds_features:
        plan = _plan(**arguments)
    else:
        rest = _plan(**{**arguments, "epsilon": (1.0 - BOUNDS_SHARE) * epsilon})
        entry = LedgerEntry(mechanism="laplace" if math.isfinite(epsilon) else "exact",
                            epsilon=BOUNDS_SHARE * epsilon,
                            sensitivity=bounds_histogram_sensitivity(bounds_features),
                            n_nodes=1, **BOUNDS_SCOPE)
        plan = dataclasses.replace(rest, bounds=entry)
        entries, repeats = _first_tree(plan, len({tb.group for tb in plan.trees}))
        plan = dataclasses.replace(plan, epsilon=compose(entries, delta, repeats))
    return plan.check_scales(sketch_features, hessian_sketch_features, bounds_features)


def _first_tree(plan, n_groups):
    """The ledger of ``plan`` with its first tree only, and the ``repeats`` that compose it as
    the whole plan (``_accounting.compose``).

    Every tree of a plan gets the same budgets and sampling rate, so its ``n_groups`` groups of
    trees (sequentially composed) release the same events and compose as that many copies of
    the first tree's group: bit for bit the epsilon of :attr:`BudgetPlan.entries`, without
    building its ``n_trees (max_depth + 1)`` entries.

    Returns
    -------
    entries : list of LedgerEntry
    repeats : dict
    """
    first = dataclasses.replace(plan, trees=plan.trees[:1])
    return first.entries, {("", plan.trees[0].group): n_groups}


def _plan(*, epsilon, n_estimators, max_depth, learning_rate, l2_regularization,
          budget_allocation, trees_per_ensemble, leaf_clipping, n_outputs, delta, leaf_noise,
          hessian_bound, split_selection, subsample, sketch_features, hessian_sketch_features,
          hessian_sketch_rounds, gradient_bound, sample_weight_bound, renyi_filter,
          categories=None):
    """:func:`plan_budget` without private bounds (``categories``: the entry of the private
    category lists, composed with the rest), its noise scales not yet checked."""
    n_trees = n_outputs * n_estimators
    weight = 1.0 if sample_weight_bound is None else float(sample_weight_bound)

    def laplace_leaf_sensitivity(clip=math.inf):
        if sample_weight_bound is None:
            return leaf_sensitivity(l2_regularization, clip, gradient_bound)
        return weighted_leaf_sensitivity(l2_regularization, clip, gradient_bound, weight)

    gaussian = leaf_noise == "gaussian"
    private = math.isfinite(epsilon)
    filter_trees = (_filter_trees(renyi_filter, n_trees, leaf_noise, delta, budget_allocation,
                                  split_selection, subsample, sample_weight_bound)
                    if renyi_filter is not None and private else 0)
    if n_trees > MAX_TREES:
        raise ValueError(f"n_estimators={n_estimators} with {n_outputs} trees per boosting "
                         f"stage (one per class of the softmax loss) gives {n_trees} trees; at "
                         f"most {MAX_TREES} are planned in a fit (the plan and its ledger hold "
                         "every tree).")
    sketch = None
    if sketch_features:
        sketch = LedgerEntry(mechanism="laplace" if private else "exact",
                             epsilon=SKETCH_SHARE * epsilon,
                             sensitivity=quantile_sketch_sensitivity(sketch_features, weight),
                             n_nodes=1, **SKETCH_SCOPE)
    rounds = min(hessian_sketch_rounds, n_estimators) if hessian_sketch_features else 0
    sketch_trees = tuple(int(t) for t in np.arange(rounds) * n_estimators // max(rounds, 1))
    n_sketches = n_outputs * rounds

    def hessian_sketches(epsilon_each, noise_multiplier):
        mechanism = ("gaussian" if noise_multiplier > 0 else
                     "laplace" if math.isfinite(epsilon_each) else "exact")
        sensitivity = hessian_sketch_sensitivity(hessian_sketch_features, hessian_bound,
                                                 "l2" if noise_multiplier > 0 else "l1", weight)
        return tuple(LedgerEntry(mechanism=mechanism, epsilon=epsilon_each,
                                 sensitivity=sensitivity, group=-2 - i, tree=-1, level=i,
                                 n_nodes=1, noise_multiplier=noise_multiplier)
                     for i in range(n_sketches))

    if not math.isfinite(epsilon):
        trees = tuple(
            TreeBudget(tree=t, group=t, position=t % n_estimators, output=t // n_estimators,
                       epsilon_level=math.inf, epsilon_leaf=math.inf,
                       gain_sensitivity=gain_sensitivity(gradient_bound, weight),
                       leaf_sensitivity=laplace_leaf_sensitivity(),
                       leaf_clip=math.inf, split_selection=split_selection,
                       leaf_noise=leaf_noise, sampling_rate=subsample,
                       gradient_bound=gradient_bound)
            for t in range(n_trees))
        return BudgetPlan(trees=trees, record_shares=None, max_depth=max_depth, epsilon=math.inf,
                          sketch=sketch, hessian_sketch_trees=sketch_trees,
                          hessian_sketches=hessian_sketches(math.inf, 0.0),
                          categories=categories)

    groups, positions, shares = _layout(budget_allocation, n_estimators, trees_per_ensemble,
                                        learning_rate)
    n_groups = int(groups.max()) + 1

    def unpriced(epsilon_level, epsilon_leaf, noise_multiplier, sketch_epsilon=math.inf,
                 sketch_noise_multiplier=0.0, n_built=n_trees):
        """The plan at these budgets with its first ``n_built`` trees, its epsilon not yet
        composed (0)."""
        trees = []
        for tree in range(n_built):
            output, t = divmod(tree, n_estimators)
            if gaussian:
                # A public bound on the released Newton leaf, g* / h*: post-processing.
                clip = gradient_bound / hessian_bound
                sensitivity = gaussian_leaf_sensitivity(hessian_bound, gradient_bound, weight)
            elif leaf_noise == "average":
                # GLC bounds the released average (post-processing), g* (a mean gradient's bound)
                # without it; the sensitivity is that of the (sum, count) pair either way.
                clip = (leaf_clip_bound(int(positions[t]), learning_rate, gradient_bound)
                        if leaf_clipping else gradient_bound)
                sensitivity = average_leaf_sensitivity(gradient_bound, weight)
            else:
                clip = (leaf_clip_bound(int(positions[t]), learning_rate, gradient_bound)
                        if leaf_clipping else math.inf)
                sensitivity = laplace_leaf_sensitivity(clip)
            trees.append(TreeBudget(
                tree=tree, group=output * n_groups + int(groups[t]),
                position=int(positions[t]), output=output, epsilon_level=epsilon_level,
                epsilon_leaf=epsilon_leaf,
                gain_sensitivity=gain_sensitivity(gradient_bound, weight),
                leaf_sensitivity=sensitivity, leaf_clip=clip,
                leaf_noise_multiplier=noise_multiplier, split_selection=split_selection,
                leaf_noise=leaf_noise, sampling_rate=subsample, gradient_bound=gradient_bound,
                filtered=filter_trees > 0))
        budget = None
        if filter_trees:
            budget = LedgerEntry(mechanism="renyi_filter", epsilon=math.inf,
                                 sensitivity=gaussian_leaf_sensitivity(hessian_bound,
                                                                       gradient_bound),
                                 noise_multiplier=noise_multiplier, sampling_rate=subsample,
                                 filter_trees=filter_trees, **FILTER_SCOPE)
        return BudgetPlan(trees=tuple(trees), record_shares=shares, max_depth=max_depth,
                          epsilon=0.0, delta=delta, sketch=sketch,
                          hessian_sketch_trees=sketch_trees,
                          hessian_sketches=hessian_sketches(sketch_epsilon,
                                                            sketch_noise_multiplier),
                          categories=categories, filter=budget)

    def first_tree(*budgets):
        return _first_tree(unpriced(*budgets, n_built=1), n_outputs * n_groups)

    def spent(*budgets):
        entries, repeats = first_tree(*budgets)
        return compose(entries, delta, repeats)

    random = split_selection == "random"
    if delta == 0:
        # Algorithm 1: half of a tree's epsilon to its levels, half to its leaves; random splits
        # cost nothing, so their trees give it all to the leaves.
        selection = 0.0 if random else 0.5
        sketch_total = SKETCH_SHARE * epsilon if sketch or n_sketches else 0.0
        epsilon_tree = (epsilon - sketch_total) / (n_outputs * n_groups)
        for _ in range(_MAX_SHRINKS):
            # A tree on a Poisson sample may spend more on it for the same cost on the data.
            spend = deamplify_pure(epsilon_tree, subsample) if subsample < 1 else epsilon_tree
            tree_budgets = (spend * selection / max_depth, spend * (1.0 - selection), 0.0,
                            sketch_total / max(n_sketches, 1))
            plan_epsilon = spent(*tree_budgets)
            if plan_epsilon <= epsilon:
                return dataclasses.replace(unpriced(*tree_budgets), epsilon=plan_epsilon)
            # Floating-point rounding of eps / N_e / (2 depth) summed back (and of the
            # amplification's round trip) can exceed eps by a few ulps; never overspend. The
            # step doubles, so an error of any size is absorbed in a bounded number of rounds.
            epsilon_tree -= math.ulp(epsilon_tree) * 2.0**_
        raise ValueError(f"epsilon={epsilon} with subsample={subsample} cannot be planned "
                         "within the budget in floating point.")

    selection_share = 0.0 if random else SELECTION_SHARE

    def budgets(rho):
        rho_leaf = (1.0 - selection_share) * rho
        # The Hessian sketch's releases share SKETCH_SHARE of the zCDP budget of the trees that
        # compose sequentially (one per group and output).
        rho_sketch = (SKETCH_SHARE / (1.0 - SKETCH_SHARE) * n_outputs * n_groups * rho
                      / max(n_sketches, 1))
        return (math.sqrt(8.0 * selection_share * rho / max_depth),
                math.inf if gaussian else math.sqrt(2.0 * rho_leaf),
                1.0 / math.sqrt(2.0 * rho_leaf) if gaussian else 0.0,
                math.inf, 1.0 / math.sqrt(2.0 * rho_sketch))

    def settled(rho):
        # Bounds on the plan's epsilon at rho (rdp_bounds, from its first tree), the first
        # pair that settles the bisection's comparisons with the target: the steps are those
        # of the exact epsilon, from fewer Renyi orders where it is far from the target.
        entries, repeats = first_tree(*budgets(rho))
        for lower, upper in rdp_bounds(entries, delta, repeats):
            if lower > epsilon or (upper <= epsilon and (epsilon - lower <= 1e-3
                                                         or epsilon - upper > 1e-3)):
                break
        return lower, upper

    # Bisection in log(rho): the accountant's epsilon increases with rho. The plan's whole
    # ledger is built once, for the plan returned.
    low, high = 1e-12, 1e6
    lower, upper = settled(low)
    if lower > epsilon:
        raise ValueError(f"epsilon={epsilon} is too small to plan with delta={delta}: the "
                         f"least budget planned (rho=1e-12 zCDP per tree) already spends "
                         f"{lower:.3g} or more.")
    best = upper if lower == upper else None
    for _ in range(200):
        mid = math.sqrt(low * high)
        lower, upper = settled(mid)
        if upper <= epsilon:
            low, best = mid, (upper if lower == upper else None)
            if epsilon - lower <= 1e-3:
                break
        else:
            high = mid
        # Where the accountant's epsilon jumps from 0 past the target (at a tiny sampling rate
        # or a delta near 1) or cannot reach it (beyond what the largest rho spends), no rho
        # comes within 1e-3 below it: stop once rho is known to a relative RHO_PRECISION.
        if high / low < 1.0 + RHO_PRECISION:
            break
    if best is None:
        best = spent(*budgets(low))
    return dataclasses.replace(unpriced(*budgets(low)), epsilon=best)


def _filter_trees(renyi_filter, n_trees, leaf_noise, delta, budget_allocation, split_selection,
                  subsample, sample_weight_bound):
    """The worst-case trees ``k`` of an individual filter's budget, after checking that the
    filter applies (docs/privacy.md, Individual Renyi filter).

    Raises
    ------
    ValueError
        Names the parameter that rules the filter out: it needs Gaussian leaves under Renyi
        accounting (``leaf_noise="gaussian"``, ``delta > 0``), every tree on every record
        (``budget_allocation="sequential"``), data-independent splits on a Poisson sample (the
        tree is then one sampled Gaussian release), and ``k`` worst-case trees within the
        integer budgets of :data:`FILTER_TICKS`; not with record weights (a weighted record's
        contribution is ``w (g, h)``, which the filter's costs do not yet read).
    """
    if sample_weight_bound is not None:
        raise ValueError(f"renyi_filter={renyi_filter!r} cannot be combined with sample_weight "
                         "or class_weight (sample_weight_bound is set): the filter charges a "
                         "record for its unweighted (g, h).")
    if leaf_noise != "gaussian" or delta == 0:
        raise ValueError(f"renyi_filter={renyi_filter!r} needs leaf_noise='gaussian' and "
                         f"delta > 0, got leaf_noise={leaf_noise!r}, delta={delta!r}: the "
                         "filter bounds each record's Renyi loss of Gaussian leaf releases.")
    if budget_allocation != "sequential":
        raise ValueError(f"renyi_filter={renyi_filter!r} needs budget_allocation='sequential', "
                         f"got {budget_allocation!r}: the filter decides per tree which records "
                         "take part.")
    if subsample < 1.0 and split_selection != "random":
        raise ValueError(f"renyi_filter={renyi_filter!r} with subsample={subsample!r} < 1 needs "
                         f"split_selection='random', got {split_selection!r}: only a tree whose "
                         "splits are data-independent is accounted as one sampled Gaussian.")
    k = max(1, round(renyi_filter * n_trees))
    if (k + 1) * FILTER_TICKS >= 2**31:
        raise ValueError(f"renyi_filter={renyi_filter!r} with {n_trees} trees gives a budget of "
                         f"{k} worst-case trees; at most {2**31 // FILTER_TICKS - 2} are supported.")
    return k


@dataclass(frozen=True)
class FilterBudget:
    """The individual Renyi filter's arithmetic, from its planned ``"renyi_filter"`` entry.

    A record whose clipped leaf contribution has L2 norm ``c`` (its ``(g, h)``; ``(g, 1)`` for
    the square loss) costs, in a tree it takes part in, the sampled Gaussian's divergence at
    noise multiplier ``s / c`` (:func:`~dpboost._accounting.sampled_gaussian_rdp`; ``s`` the
    noise standard deviation), at every order of :data:`FILTER_ORDERS`. Costs are integer ticks:
    ``c`` is rounded up to the grid ``c* j / FILTER_GRID`` (plus the lattice slack
    :data:`FILTER_SLACK`), and the divergence at grid point ``j`` over that of the worst case
    ``c*`` is rounded up to whole ``1 / FILTER_TICKS``. A worst-case tree costs exactly
    ``FILTER_TICKS`` at every order, the budget is ``filter_trees * FILTER_TICKS``: a record
    whose ticks stay within it has spent at most the planned curve at every order, in exact
    integer arithmetic.

    Attributes
    ----------
    ticks : ndarray of shape (FILTER_GRID + 1, len(FILTER_ORDERS)), dtype=int32
        Cost of grid point ``j`` at each order; row 0 (a record moving nothing) is 0.
    budget : int
        ``filter_trees * FILTER_TICKS``.
    sensitivity : float
        c*, the worst-case norm (``gaussian_leaf_sensitivity``).
    slack : float
        ``FILTER_SLACK * noise_multiplier``, in units of c*.
    """

    ticks: np.ndarray
    budget: int
    sensitivity: float
    slack: float

    @classmethod
    def of(cls, entry):
        """The filter of a planned ``"renyi_filter"`` :class:`LedgerEntry`."""
        return cls(ticks=filter_ticks(entry.noise_multiplier, entry.sampling_rate),
                   budget=entry.filter_trees * FILTER_TICKS, sensitivity=entry.sensitivity,
                   slack=FILTER_SLACK * entry.noise_multiplier)

    def cost(self, norms):
        """Ticks of records whose contributions have L2 norms ``norms`` (each at most c*).

        Parameters
        ----------
        norms : ndarray of shape (n,), dtype=float64

        Returns
        -------
        ticks : ndarray of shape (n, len(FILTER_ORDERS)), dtype=int32
        """
        # (1 + 2^-40) covers the rounding of the norm and of the division.
        scaled = (norms / self.sensitivity * (1.0 + 2.0**-40) + self.slack) * FILTER_GRID
        return self.ticks[np.minimum(np.ceil(scaled), FILTER_GRID).astype(np.intp)]


@functools.lru_cache(maxsize=32)
def filter_ticks(noise_multiplier, sampling_rate):
    """:attr:`FilterBudget.ticks` of a filter (memoised: public scalars; read-only).

    Grid point ``j`` of ``FILTER_GRID`` is a record of norm ``c* j / FILTER_GRID``, whose noise
    multiplier is ``noise_multiplier * FILTER_GRID / j``. Its ticks are
    ``floor(D_j / D_worst * FILTER_TICKS * (1 + 2^-45)) + 1`` (at least the ratio: the floor of a
    value just below an integer is one less, then one is added back), at most ``FILTER_TICKS``;
    the worst case (``j = FILTER_GRID``) is exactly ``FILTER_TICKS``.
    """
    j = np.arange(1, FILTER_GRID + 1, dtype=np.float64)
    rdp = sampled_gaussian_rdp(sampling_rate, noise_multiplier * FILTER_GRID / j, FILTER_ORDERS)
    worst = rdp[-1]
    ticks = np.minimum(np.floor(rdp / worst * FILTER_TICKS * (1.0 + 2.0**-45)) + 1.0,
                       FILTER_TICKS)
    ticks[-1] = FILTER_TICKS
    return _read_only(np.vstack([np.zeros((1, len(FILTER_ORDERS))), ticks]).astype(np.int32))

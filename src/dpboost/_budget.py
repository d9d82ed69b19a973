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
    LedgerEntry,
    compose,
    deamplify_pure,
    rdp_bounds,
    tightest,
)
from ._common import GRADIENT_BOUND, read_only
from ._domain import domain_release
from ._filter import FILTER_SCOPE, filter_tree_count
from ._initial import INITIAL_SHARE, initial_release
from ._mechanisms import noise_scale
from ._noise import SecureNoise
from ._pld import refine
from ._sensitivities import (
    bounds_histogram_sensitivity,
    gain_sensitivity,
    gaussian_leaf_sensitivity,
    hessian_sketch_sensitivity,
    quantile_sketch_sensitivity,
)
from ._thresholds import categories_release, share_release
from ._tree_mechanisms import LEAF_RELEASES, SPLIT_SELECTIONS

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
#: Rounds of the pure-DP planner's shrinking of a tree's epsilon (each doubles the step).
_MAX_SHRINKS = 128
#: The Renyi planner's bisection stops once the accountant's epsilon is within
#: ``min(1, epsilon) * PLAN_TOLERANCE`` below the target (an absolute 1e-3 left 5-8 % of epsilon
#: 0.01 unspent), or once it knows the per-tree rho to a relative ``RHO_PRECISION``.
PLAN_TOLERANCE, RHO_PRECISION = 1e-3, 1e-9
#: Most trees one fit plans (all outputs): the plan and its ledger hold every tree, 30 to 50
#: microseconds each to plan (benchmarks/README.md, "Planning time"), so this many plan in
#: about half a second.
MAX_TREES = 10_000


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
    leaf_hessian_scale : float, default=1.0
        The public ``c`` of a Newton leaf's release ``(G, c H)`` (``_tree_mechanisms``,
        ``hessian_scale``); 1 for the other leaves.
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
    leaf_hessian_scale: float = 1.0
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
        Probability that a record goes to the tree at each position of its group (a categorical
        draw per record; the rest of the mass is unused). ``None``: every tree sees every record.
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
    domain : LedgerEntry or None, default=None
        The domain report's release (``domain_report=True``, ``_domain.domain_release``).
    filter : LedgerEntry or None, default=None
        The individual Renyi filter's per-record budget (``renyi_filter``), a
        ``"renyi_filter"`` entry declared before the trees; None without a filter.
    initial : LedgerEntry or None, default=None
        The private initial score's release (``init="private"``), made after the private
        bounds; None: every output starts from 0.
    validation : tuple of LedgerEntry, default=()
        Early stopping's releases (``_early_stopping.plan_validation``), each after the last
        tree of its stage; marked ``held_out``, so no composition reads them.
    count : LedgerEntry or None, default=None
        The private row count's release (``_row_count``), made first.
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
    domain: object = None
    initial: object = None
    validation: tuple = ()
    count: object = None

    def check_scales(self, sketch_features=0, hessian_sketch_features=0, bounds_features=0,
                     domain_groups=0, initial_statistics=0):
        """Refuse a plan with a noise scale that is not a positive normal float, or that the
        exact samplers cannot draw.

        Called by :func:`plan_budget`, so parameters whose budgets vanish or explode (a tiny
        ``subsample`` or epsilon, an astronomically large epsilon) fail before any data is
        read, not in the middle of a fit.

        Parameters
        ----------
        sketch_features, hessian_sketch_features, bounds_features, domain_groups : int, default=0
            Columns of the quantile sketch's, the Hessian sketch's and the private bounds'
            histograms, groups of the domain report's counts: one record moves one count of
            each, as many coordinates of the
            release's row (``SecureNoise.check``). A leaf moves its whole row (1 value, or 2
            statistics), the categories' counts one value per row.
        initial_statistics : int, default=0
            Coordinates of the initial score's row, all of which one record may move.

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
        checked = sorted(set(firsts.values()))
        # The ledger of the checked trees only: a plan of 10,000 trees holds 10^5 entries.
        entries = dataclasses.replace(self, trees=tuple(self.trees[t] for t in checked)).entries
        for e in entries:
            noise_scale(e)
        moved = [(self.categories, 1), (self.bounds, bounds_features),
                 (self.domain, domain_groups),
                 (self.sketch, sketch_features), (self.initial, initial_statistics)]
        moved += [(e, hessian_sketch_features) for e in self.hessian_sketches]
        moved += [(e, LEAF_RELEASES[self.trees[e.tree].leaf_noise].coordinates)
                  for e in entries if e.tree >= 0]
        for entry, k in moved:
            if entry is not None:
                SecureNoise.check(entry, k)
        return self

    def spent(self, delta):
        """The composed epsilon of :attr:`entries` (``_accounting.compose``), bit for bit,
        from the first tree's group counted once per group (:func:`_first_tree`).

        Returns
        -------
        epsilon : float
        """
        entries, repeats = _first_tree(self, len({tb.group for tb in self.trees}))
        return compose(entries, delta, repeats)

    @property
    def entries(self):
        """The ledger that fitting must produce, as a list of LedgerEntry (a new list)."""
        return list(self._ledger)

    @property
    def ledgers(self):
        """The ledgers the fit may release, one: :attr:`entries` (a private choice of
        interactions, ``_interaction_choice.ChoicePlan``, has three), as tuples."""
        return (self._ledger,)

    @functools.cached_property
    def _ledger(self):
        """:attr:`entries`, built once per plan (a tuple): the planner checks them, ``fit``
        reserves them, and a memoised plan serves every fit of its setting."""
        private = math.isfinite(self.epsilon)
        out = [e for e in (self.count, self.categories, self.domain, self.filter, self.bounds,
                           self.initial) if e is not None]
        out += ([] if self.sketch is None else [self.sketch]) + list(self.hessian_sketches)
        validation = {e.tree: (e,) for e in self.validation}
        for tb in self.trees:
            selection = SPLIT_SELECTIONS[tb.split_selection]
            for level in range(self.max_depth):
                out.append(LedgerEntry(
                    mechanism=selection.ledger_mechanism(private),
                    epsilon=tb.epsilon_level if selection.reads_records else 0.0,
                    sensitivity=tb.gain_sensitivity if selection.reads_records else 0.0,
                    group=tb.group, tree=tb.tree, level=level, n_nodes=2**level,
                    sampling_rate=tb.sampling_rate))
            gaussian = tb.leaf_noise_multiplier > 0
            out.append(LedgerEntry(
                mechanism="gaussian" if gaussian else "laplace" if private else "exact",
                epsilon=tb.epsilon_leaf, sensitivity=tb.leaf_sensitivity,
                group=tb.group, tree=tb.tree, level=self.max_depth, n_nodes=2**self.max_depth,
                noise_multiplier=tb.leaf_noise_multiplier, sampling_rate=tb.sampling_rate,
                filtered=tb.filtered))
            out.extend(validation.get(tb.tree, ()))
        return tuple(out)


def _layout(budget_allocation, n_estimators, trees_per_ensemble, learning_rate):
    """Groups, positions and record shares of the three allocations (Li et al. 2020, Sec. 3.2, 4)."""
    t = np.arange(n_estimators)
    if budget_allocation == "eoe":
        # Algorithm 2: ensembles of T_e trees on disjoint records, share proportional to the
        # GLC leaf bound eta (1 - eta)^t_e, normalised over a full ensemble.
        positions = np.arange(trees_per_ensemble)
        decay = (1.0 - learning_rate) ** positions
        shares = learning_rate * decay / (1.0 - (1.0 - learning_rate) ** trees_per_ensemble)
        return t // trees_per_ensemble, t % trees_per_ensemble, read_only(shares)
    if budget_allocation == "parallel":
        # PARA (Zhao et al. 2018): each tree takes half of the still-unused records.
        return np.zeros_like(t), t, read_only(0.5 ** (t + 1.0))
    # "sequential" (SEQ, Liu et al. 2018): every tree sees every record.
    return t, t, None


@functools.lru_cache(maxsize=256)
def plan_budget(*, epsilon, n_estimators, max_depth, learning_rate, l2_regularization,
                budget_allocation, trees_per_ensemble, leaf_clipping, n_outputs=1, delta=0.0,
                leaf_noise="laplace", hessian_bound=1.0, split_selection="exponential",
                subsample=1.0, sketch_features=0, hessian_sketch_features=0,
                hessian_sketch_rounds=1, bounds_features=0, gradient_bound=GRADIENT_BOUND,
                categories_features=0, sample_weight_bound=None, renyi_filter=None,
                domain_groups=0, bounds_target=False, initial_statistics=0, initial_share=None,
                accounting="rdp"):
    """Plan every mechanism's epsilon, noise and sensitivity.

    Parameters
    ----------
    epsilon : float
        Total budget, in (0, inf]; ``inf`` plans the non-private NP baseline (argmax splits,
        exact leaves, every tree on every record, no clipping).
    n_estimators, max_depth : int
        ``n_estimators = 0``: no tree, the initial score alone (which it needs), a Laplace
        release of what the releases before it leave (:func:`_constant_plan`).
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
        with rho the largest, found by bisection, whose accountant epsilon is within
        ``min(1, epsilon) * PLAN_TOLERANCE`` below ``epsilon`` (where no rho comes that close, as where the accountant's epsilon jumps
        from 0 past it, the largest within ``epsilon`` to a relative :data:`RHO_PRECISION`).
    leaf_noise : {"laplace", "gaussian", "average"}, default="laplace"
        ``"laplace"``: Laplace on the leaf value (DPBoost). ``"gaussian"``: Gaussian perturbation
        of the leaf's (gradient sum, c x Hessian sum) with L2 sensitivity
        ``sqrt(g*^2 + c^2 h*^2)`` (DP-XGB; ``c``: ``_tree_mechanisms.NEWTON_GRADIENT_SHARE``;
        needs ``delta > 0``). ``"average"``: Laplace perturbation of the leaf's
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
        accounting). The releases share ``SKETCH_SHARE`` of epsilon: pure DP, the trees share
        the rest; Renyi accounting, the trees are planned as if the rest were theirs alone and
        the releases get the least noise that keeps the plan within epsilon (docs/privacy.md,
        Budget split).
    hessian_sketch_rounds : int, default=1
        Releases per output, at most ``n_estimators``.
    gradient_bound : float, default=GRADIENT_BOUND
        g* > 0, the bound every record's gradient is clipped (or GDF-filtered) to; the gain,
        leaf and GLC bounds scale with it (Li et al. 2020, Lemmas 1-2; DP-XGB).
    bounds_features : int, default=0
        Number of features whose bounds are released privately (``feature_bounds="private"``;
        0: none), with the target's if ``bounds_target`` (``target_bounds="private"``), the
        columns weighted by ``_sensitivities.bounds_column_weights``. ``delta > 0``: one
        Gaussian release of L2 sensitivity ``bounds_histogram_sensitivity(..., "l2")`` whose
        noise alone costs ``BOUNDS_SHARE * epsilon`` at delta (:func:`_bounds_release`),
        composed with the trees as the private category lists are. ``delta = 0``: one Laplace
        release of ``BOUNDS_SHARE * epsilon`` and the L1 sensitivity comes first; everything
        else is planned with the remaining ``(1 - BOUNDS_SHARE) epsilon`` (sequential
        composition: the total stays within epsilon, also by Renyi composition, whose
        conversion never exceeds the sum).
    bounds_target : bool, default=False
        Whether the target's bounds are released with them (``target_bounds="private"``).
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
    domain_groups : int, default=0
        Groups of the domain report's counts (``domain_report=True``: the columns of X plus
        2; 0: no report). One release (``_domain.domain_release``: Gaussian at ``delta > 0``,
        Laplace at ``delta = 0``, of ``DOMAIN_SHARE`` of epsilon) composed with the trees as
        the private category lists' are.
    initial_statistics : int, default=0
        Coordinates of the private initial score's release (``init="private"``,
        ``_initial.initial_statistics_count``; 0: none, every output starts from 0). One
        release after the private bounds, composed with the trees
        (:func:`~dpboost._initial.initial_release`).
    initial_share : float in (0, 1] or None, default=None
        That share (``FitConfig.initial_share``); None: ``INITIAL_SHARE``.
    accounting : {"rdp", "auto"}, default="rdp"
        ``"auto"`` (the estimators' ``accounting="auto"`` without early stopping), with
        ``delta > 0``: after the Renyi bisection, the zCDP budget raised as far as the PLD
        accountant certifies the plan within epsilon (``_pld.refine``), and the initial score
        a Laplace release from ``_initial.LAPLACE_FROM_SHARE`` of the budget on. ``"rdp"``:
        every share a zCDP share (a private search's trials).

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
                 if k not in ("bounds_features", "categories_features", "domain_groups",
                              "bounds_target", "initial_statistics")}
    arguments["initial_share"] = share = INITIAL_SHARE if initial_share is None else initial_share
    arguments["categories"] = (None if not categories_features else
                               categories_release(categories_features, epsilon, delta))
    arguments["domain"] = (None if not domain_groups else
                           domain_release(domain_groups, epsilon, delta))
    arguments["initial"] = (None if not initial_statistics else
                            initial_release(epsilon, delta, sample_weight_bound, share,
                                            laplace=accounting == "auto" or not n_estimators))
    n_bounds = bounds_features + bounds_target
    if not n_bounds:
        plan = _plan(**arguments)
    elif delta > 0 and math.isfinite(epsilon):
        # Gaussian counts: L2 sensitivity sqrt(d), and tails light enough that a few hundred
        # records stand out of the noise (docs/privacy.md, Private feature bounds).
        plan = _plan(**arguments, bounds=_bounds_release(bounds_features, bounds_target, epsilon,
                                                         delta))
    else:
        rest = _plan(**{**arguments, "epsilon": (1.0 - BOUNDS_SHARE) * epsilon})
        entry = LedgerEntry(mechanism="laplace" if math.isfinite(epsilon) else "exact",
                            epsilon=BOUNDS_SHARE * epsilon,
                            sensitivity=bounds_histogram_sensitivity(bounds_features, "l1",
                                                                     bounds_target),
                            n_nodes=1, **BOUNDS_SCOPE)
        # The bounds' share and the rest's, added back, can pass epsilon by an ulp.
        plan = within_epsilon(lambda bounds: dataclasses.replace(rest, bounds=bounds), entry,
                              epsilon, delta)
        if plan is None:
            raise ValueError(f"epsilon={epsilon} with private bounds cannot be planned within "
                             "the budget in floating point.")
    return plan.check_scales(sketch_features, hessian_sketch_features, n_bounds,
                             domain_groups, initial_statistics)


def within_epsilon(plan_with, entry, epsilon, delta, steps=_MAX_SHRINKS):
    """``plan_with(entry)``, its ``epsilon`` the composed one (:meth:`BudgetPlan.spent`), with
    ``entry``'s epsilon lowered by ulps until that is within ``epsilon``: shares of a budget
    added back in floating point can pass it by a few ulps, and the plan never overspends. The
    step doubles, so an error of any size is absorbed in a bounded number of rounds.

    Returns
    -------
    plan : BudgetPlan or None
        None where ``steps`` rounds do not bring it within ``epsilon``.
    """
    for step in range(steps):
        plan = plan_with(entry)
        spent = plan.spent(delta)
        if spent <= epsilon:
            return dataclasses.replace(plan, epsilon=spent)
        entry = dataclasses.replace(entry, epsilon=entry.epsilon
                                    - math.ulp(entry.epsilon) * 2.0**step)
    return None


def _bounds_release(n_features, target, epsilon, delta):
    """The Gaussian release of the private bounds' histograms of ``n_features`` features and
    the target if ``target`` (``delta > 0``): ``_thresholds.share_release`` at
    ``BOUNDS_SHARE``, which raises ValueError where epsilon and delta are too small for it."""
    return share_release(
        BOUNDS_SHARE, epsilon, delta, bounds_histogram_sensitivity(n_features, "l2", target),
        BOUNDS_SCOPE, f"epsilon={epsilon} with delta={delta} is too small for private bounds: "
        f"their histograms get {BOUNDS_SHARE:g} of epsilon, which no Gaussian noise up to 1e7 "
        "times their sensitivity reaches; pass public bounds.")


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
    if not plan.trees:
        return plan.entries, {}
    first = dataclasses.replace(plan, trees=plan.trees[:1])
    return first.entries, {("", plan.trees[0].group): n_groups}


def _constant_plan(epsilon, delta, max_depth, categories, domain, bounds, initial):
    """The plan of no tree (the regressor's constant regime, ``_auto.constant_model``): the
    initial score's Laplace release with what the releases before it leave of ``epsilon``,
    the largest epsilon whose composition with them (``_accounting.compose``) is within it,
    by bisection (the composition increases with it)."""
    if initial is None or initial.mechanism != "laplace":
        raise ValueError("a plan without trees releases the initial score alone: "
                         "init='private' with a Laplace release")
    plan = BudgetPlan(trees=(), record_shares=None, max_depth=max_depth, epsilon=0.0,
                      delta=delta, categories=categories, domain=domain, bounds=bounds,
                      initial=initial)

    def at(epsilon_initial):
        return dataclasses.replace(plan, initial=dataclasses.replace(
            initial, epsilon=epsilon_initial))

    low, high = 0.0, epsilon
    if at(high).spent(delta) <= epsilon:
        low = high
    for _ in range(64):  # 2^-64 of epsilon: every float between the bounds
        mid = (low + high) / 2.0
        if mid in (low, high):
            break
        if at(mid).spent(delta) <= epsilon:
            low = mid
        else:
            high = mid
    if not low > 0:
        raise ValueError(f"epsilon={epsilon} with delta={delta} leaves nothing for the "
                         "initial score after the releases before it.")
    return dataclasses.replace(at(low), epsilon=at(low).spent(delta))


def _plan(*, epsilon, n_estimators, max_depth, learning_rate, l2_regularization,
          budget_allocation, trees_per_ensemble, leaf_clipping, n_outputs, delta, leaf_noise,
          hessian_bound, split_selection, subsample, sketch_features, hessian_sketch_features,
          hessian_sketch_rounds, gradient_bound, sample_weight_bound, renyi_filter,
          categories=None, domain=None, bounds=None, initial=None,
          initial_share=INITIAL_SHARE, accounting="rdp"):
    """:func:`plan_budget` without the Laplace private bounds (``categories``, ``domain``,
    ``bounds``, ``initial``: the entries of the private category lists, of the domain report,
    of the Gaussian private bounds and of the initial score, composed with the rest), its noise
    scales not yet checked."""
    n_trees = n_outputs * n_estimators
    weight = 1.0 if sample_weight_bound is None else float(sample_weight_bound)
    leaves = LEAF_RELEASES[leaf_noise]
    hessian_scale = leaves.hessian_scale(gradient_bound, hessian_bound)
    gaussian = leaves.gaussian
    private = math.isfinite(epsilon)
    filter_trees = (filter_tree_count(renyi_filter, n_trees, leaf_noise, delta, budget_allocation,
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
                       leaf_sensitivity=LEAF_RELEASES["laplace"].value_sensitivity(
                           math.inf, gradient_bound, l2_regularization, sample_weight_bound),
                       leaf_clip=math.inf, split_selection=split_selection,
                       leaf_noise=leaf_noise, sampling_rate=subsample,
                       gradient_bound=gradient_bound)
            for t in range(n_trees))
        return BudgetPlan(trees=trees, record_shares=None, max_depth=max_depth, epsilon=math.inf,
                          sketch=sketch, hessian_sketch_trees=sketch_trees,
                          hessian_sketches=hessian_sketches(math.inf, 0.0),
                          categories=categories, domain=domain, bounds=bounds,
                          initial=initial)

    if not n_trees:
        return _constant_plan(epsilon, delta, max_depth, categories, domain, bounds, initial)
    groups, positions, shares = _layout(budget_allocation, n_estimators, trees_per_ensemble,
                                        learning_rate)
    n_groups = int(groups.max()) + 1

    # A Gaussian initial score is, as the Hessian sketches are, a one-off release whose noise
    # the plan sets after the trees' (below); a Laplace one has a fixed epsilon.
    initial_once = initial is not None and initial.mechanism != "laplace"

    def unpriced(epsilon_level, epsilon_leaf, noise_multiplier, sketch_epsilon=math.inf,
                 sketch_noise_multiplier=0.0, initial_noise_multiplier=None, n_built=n_trees,
                 once=True):
        """The plan at these budgets with its first ``n_built`` trees, its epsilon not yet
        composed (0); without ``once``, without the Hessian sketches and a Gaussian initial
        score (the trees' own share, planned first)."""
        trees = []
        for tree in range(n_built):
            output, t = divmod(tree, n_estimators)
            clip, sensitivity = leaves.clip_and_sensitivity(
                int(positions[t]), learning_rate=learning_rate, leaf_clipping=leaf_clipping,
                gradient_bound=gradient_bound, hessian_bound=hessian_bound,
                l2_regularization=l2_regularization, weight_bound=sample_weight_bound)
            trees.append(TreeBudget(
                tree=tree, group=output * n_groups + int(groups[t]),
                position=int(positions[t]), output=output, epsilon_level=epsilon_level,
                epsilon_leaf=epsilon_leaf,
                gain_sensitivity=gain_sensitivity(gradient_bound, weight),
                leaf_sensitivity=sensitivity, leaf_clip=clip,
                leaf_noise_multiplier=noise_multiplier,
                leaf_hessian_scale=hessian_scale,
                split_selection=split_selection,
                leaf_noise=leaf_noise, sampling_rate=subsample, gradient_bound=gradient_bound,
                filtered=filter_trees > 0))
        budget = None
        if filter_trees:
            budget = LedgerEntry(mechanism="renyi_filter", epsilon=math.inf,
                                 sensitivity=gaussian_leaf_sensitivity(
                                     hessian_bound, gradient_bound, hessian_scale=hessian_scale),
                                 noise_multiplier=noise_multiplier, sampling_rate=subsample,
                                 filter_trees=filter_trees, **FILTER_SCOPE)
        return BudgetPlan(trees=tuple(trees), record_shares=shares, max_depth=max_depth,
                          epsilon=0.0, delta=delta, sketch=sketch,
                          hessian_sketch_trees=sketch_trees,
                          hessian_sketches=(hessian_sketches(sketch_epsilon,
                                                             sketch_noise_multiplier)
                                            if once else ()),
                          categories=categories, filter=budget, domain=domain,
                          bounds=bounds,
                          initial=(None if initial_once and not once else
                                   initial if initial_noise_multiplier is None else
                                   dataclasses.replace(
                                       initial, noise_multiplier=initial_noise_multiplier)))

    def first_tree(*budgets, once=True):
        return _first_tree(unpriced(*budgets, n_built=1, once=once), n_outputs * n_groups)

    def spent(*budgets):
        entries, repeats = first_tree(*budgets)
        return compose(entries, delta, repeats)

    random = not SPLIT_SELECTIONS[split_selection].reads_records
    if delta == 0:
        # Algorithm 1: half of a tree's epsilon to its levels, half to its leaves; random splits
        # cost nothing, so their trees give it all to the leaves.
        selection = 0.0 if random else 0.5
        sketch_total = SKETCH_SHARE * epsilon if sketch or n_sketches else 0.0
        # The domain report's and the initial score's Laplace releases are composed
        # sequentially with the rest.
        domain_total = 0.0 if domain is None else domain.epsilon
        initial_total = 0.0 if initial is None else initial.epsilon
        epsilon_tree = ((epsilon - sketch_total - domain_total - initial_total)
                        / (n_outputs * n_groups))
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
    # The releases made once (the Hessian sketches, a Gaussian initial score): their shares of
    # epsilon are what the trees give up. The trees are planned as if (1 - share) epsilon were
    # theirs alone, then the one-off releases take the least noise that keeps the whole plan
    # within epsilon, split between them by zCDP in proportion to their shares. A share of the
    # trees' zCDP total instead overpays where the trees are sampled: their amplified cost is a
    # small part of their zCDP, and at a 0.1 sample one Hessian sketch at 10 % of it spent 95 %
    # of epsilon = 0.1 (the leaves' noise multiplier 105 against 31 without it).
    once_total = (SKETCH_SHARE if n_sketches else 0.0) + (initial_share if initial_once else 0.0)

    def budgets(rho, rho_once=None):
        rho_leaf = (1.0 - selection_share) * rho
        sketch_multiplier, initial_multiplier = math.inf, None
        if rho_once is not None:
            if n_sketches:
                sketch_multiplier = 1.0 / math.sqrt(2.0 * rho_once * SKETCH_SHARE
                                                    / (once_total * n_sketches))
            if initial_once:
                initial_multiplier = 1.0 / math.sqrt(2.0 * rho_once * initial_share / once_total)
        return (math.sqrt(8.0 * selection_share * rho / max_depth),
                math.inf if gaussian else math.sqrt(2.0 * rho_leaf),
                1.0 / math.sqrt(2.0 * rho_leaf) if gaussian else 0.0,
                math.inf, sketch_multiplier, initial_multiplier)

    def search(entries_at, target, refined=accounting == "auto", least=1e-12, of="per tree"):
        """The largest zCDP parameter from ``least`` up whose plan ``entries_at`` composes
        within ``target``: bisection in log(rho) (the accountant's epsilon increases with rho),
        then, if ``refined``, the PLD refinement. Returns it and the plan's Renyi epsilon where
        the bisection settled it exactly and the refinement did not raise it (None: to be
        composed). ``of``: what the parameter is the zCDP of, for the error message."""
        tolerance = min(1.0, target) * PLAN_TOLERANCE

        def settled(rho):
            # Bounds on the plan's epsilon at rho (rdp_bounds, from its first tree), the first
            # pair that settles the bisection's comparisons with the target: the steps are those
            # of the exact epsilon, from fewer Renyi orders where it is far from the target.
            entries, repeats = entries_at(rho)
            for lower, upper in rdp_bounds(entries, delta, repeats):
                if lower > target or (upper <= target and (target - lower <= tolerance
                                                           or target - upper > tolerance)):
                    break
            return lower, upper

        low, high = least, 1e6
        lower, upper = settled(low)
        if lower > target:
            raise ValueError(f"epsilon={epsilon} is too small to plan with delta={delta}: the "
                             f"least budget planned (rho={least:g} zCDP {of}) already "
                             f"spends {lower:.3g} or more.")
        best = upper if lower == upper else None
        for _ in range(200):
            mid = math.sqrt(low * high)
            lower, upper = settled(mid)
            if upper <= target:
                low, best = mid, (upper if lower == upper else None)
                if target - lower <= tolerance:
                    break
            else:
                high = mid
            # Where the accountant's epsilon jumps from 0 past the target (at a tiny sampling
            # rate or a delta near 1) or cannot reach it (beyond what the largest rho spends),
            # no rho comes within the tolerance below it: stop once rho is known to
            # RHO_PRECISION.
            if high / low < 1.0 + RHO_PRECISION:
                break
        raised = refine(low, entries_at, target, delta) if refined else low
        return (raised, None) if raised != low else (low, best)

    if once_total:
        # Both by the Renyi bisection, then the PLD refinement raises both together: the
        # trees refined alone to their share would leave the one-off releases nothing the
        # Renyi comparisons of the second search can certify.
        rho, _ = search(lambda r: first_tree(*budgets(r), once=False),
                        (1.0 - once_total) * epsilon, refined=False)
        # Where the trees' share leaves the one-off releases less than the trees' floor, their
        # noise grows until the exact samplers refuse it (``BudgetPlan.check_scales``).
        rho_once, best = search(lambda r: first_tree(*budgets(rho, r)), epsilon, refined=False,
                                least=1e-40, of="for the one-off releases")
        scale = (refine(1.0, lambda k: first_tree(*budgets(k * rho, k * rho_once)), epsilon,
                        delta) if accounting == "auto" else 1.0)
        if scale != 1.0:
            best = None
        final = budgets(scale * rho, scale * rho_once)
    else:
        rho, best = search(lambda r: first_tree(*budgets(r)), epsilon)
        final = budgets(rho)
    # The plan's epsilon is its ledger's (``compose``: the PLD accountant's, discretised at the
    # Renyi epsilon, or the pure composition's where smaller), from the Renyi epsilon the
    # search settled where it did.
    entries, repeats = first_tree(*final)
    best = (compose(entries, delta, repeats) if best is None else
            tightest(entries, delta, best, repeats, scale=best))
    return dataclasses.replace(unpriced(*final), epsilon=best)

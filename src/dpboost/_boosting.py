"""The boosting loop: from binned records and a budget plan to a :class:`~dpboost._predictor.Forest`.

The only caller of the grower. Everything here is independent of scikit-learn: the estimators
(and any other front end) call :func:`train` with validated records and their public inputs.
"""

import functools
import math
import sys
from dataclasses import dataclass, replace

import numpy as np

from ._accounting import PrivacyLedger
from ._budget import plan_budget
from ._candidates import (
    hessian_sketch_candidates,
    initial_binner,
    initial_candidates,
    log_grid_features,
    private_bounds,
    private_categories,
)
from ._common import G_H_DTYPE, float32_at_most
from ._domain import release_domain_report
from ._early_stopping import (
    EarlyStopping,
    draw_held_out,
    first_stages,
    plan_validation,
)
from ._filter import FilterBudget
from ._grower import grow_tree
from ._initial import (
    fold_into_first_stage,
    initial_statistics_count,
    private_initial_scores,
    start_scores,
)
from ._interaction_choice import PARTS, ChoicePlan, keep_part, plan_choice, release_choice
from ._loss import scale_target, weight_statistics
from ._mechanisms import partition_records, poisson_threshold
from ._noise import make_noise
from ._predictor import Forest, add_tree_scores
from ._records import POISSON_STREAM, POSITION_STREAM, TreeState
from ._row_count import choose_plan, rest_epsilon, with_row_count
from ._selection import select_rows


@dataclass(frozen=True)
class FitResult:
    """What :func:`train` releases, and the one source of a fit's fitted attributes.

    Attributes
    ----------
    forest : Forest
        ``previous``'s trees followed by the new ones.
    ledger : PrivacyLedger
        Every release, in the plan's order.
    filtered : ndarray of shape (n_trees,), dtype=float64
        The exact GDF filtered fraction per tree (NOT private: only stored on request).
    charged : list of LedgerEntry
        What the fit is charged: :attr:`ledger`'s entries, or with early stopping the whole
        plan's (a stopping time read from released values is post-processing of the whole
        plan's transcript, not a bound for the releases made; docs/privacy.md, Early stopping).
    choices : tuple of tuples of LedgerEntry, or None
        With a private row count, every distinct plan it could choose (each the whole plan's
        entries, count included, with the fit's identifier), :attr:`charged` among them: the
        fit is charged the choice (``_accountant.compose_fits``); None without a count or where
        every regime has the same plan.
    planned : tuple of tuples of LedgerEntry, or None
        :attr:`choices` as planned (the same ledgers, before their entries got the fit's
        identifier: the memoised plans' own, the same objects for every fit of a setting,
        ``_accountant.choices_epsilon``); None where :attr:`choices` is.
    attributes : dict
        The fitted public inputs: ``classes_`` or ``target_bounds_`` (public, or released with
        ``target_bounds="private"``), ``categories_`` (public lists and those released with
        ``categories="private"``) and ``feature_bounds_`` (the grid's bounds: public, or
        released with ``feature_bounds="private"``), ``interaction_cst_`` (the trees'
        interaction order, ``"auto"`` resolved or chosen), with early stopping
        ``validation_score_`` (the released validation losses), with a private row count
        ``row_count_`` and with a private choice of interactions ``interaction_statistic_``.
    """

    forest: Forest
    ledger: PrivacyLedger
    filtered: np.ndarray
    charged: list
    choices: tuple | None
    planned: tuple | None
    attributes: dict


def plan_fit(config, loss, n_outputs, n_numeric, n_private_categories=0, previous=None):
    """The fit's budget plan, from public inputs only (the fit's configuration, the number of
    outputs from the classes, how many columns are numeric or have private category lists, the
    loss's bounds): made before any record is read, so that an accountant can refuse the fit
    first.

    Parameters
    ----------
    config : FitConfig
    loss : loss object or class of ``_loss``
        Its ``hessian_bound`` and ``hessian_sketch_rounds``.
    n_outputs, n_numeric, n_private_categories : int
    previous : Forest or None, default=None
        ``warm_start``: the fitted forest the new trees are added to. The plan is that of the
        ``n_estimators - previous.n_stages`` new trees, on the previous fit's released grid and
        category lists (no private bounds, category lists or quantile sketch again).

    Raises
    ------
    ValueError
        A setting the planner cannot honour (e.g. private category lists with ``delta = 0``).

    Returns
    -------
    plan : BudgetPlan or ChoicePlan
        A :class:`~dpboost._interaction_choice.ChoicePlan` where ``config`` chooses its
        interactions (one output, and :func:`plan_choice` accepts its plans); otherwise the
        additive plan.

    Notes
    -----
    A fresh fit's plan (``previous`` None) is memoised on its arguments (the loss by its
    class, whose bounds are class attributes; the configuration without the noise's seed and
    the verbosity, which planning never reads): the fits of one setting in a process share one
    immutable plan, and its ledger is built once.
    """
    loss = loss if isinstance(loss, type) else type(loss)
    if previous is None:
        return _fresh_plan(_planned_config(config), loss, n_outputs, n_numeric,
                           n_private_categories)
    return _plan_fit(config, loss, n_outputs, n_numeric, n_private_categories, previous)


def _planned_config(config):
    """``config`` as planning reads it: no seed, no verbosity (also in its choices)."""
    return replace(config, random_state=None, verbose=0, interaction_choice=tuple(
        _planned_config(choice) for choice in config.interaction_choice))


@functools.lru_cache(maxsize=32)
def _fresh_plan(config, loss, n_outputs, n_numeric, n_private_categories):
    """:func:`plan_fit` of a fresh fit (memoised; raises as it does: errors are not kept)."""
    return _plan_fit(config, loss, n_outputs, n_numeric, n_private_categories, None)


def _plan_fit(config, loss, n_outputs, n_numeric, n_private_categories, previous):
    """:func:`plan_fit`, ``loss`` a loss class."""
    if config.interaction_choice:  # never with warm_start (_auto.chooses_interactions)
        def planned(choice):
            return plan_fit(replace(choice, private_row_count=config.private_row_count), loss,
                            n_outputs, n_numeric, n_private_categories)

        additive = planned(config.interaction_choice[0])
        if n_outputs != 1:  # the statistic compares the orders of one output
            return additive
        unrestricted = planned(config.interaction_choice[1])
        try:
            return plan_choice(additive, unrestricted, config.epsilon, config.delta)
        except ValueError:
            # Plans whose releases before the trees differ (an initial score planned with each
            # plan's trees), or a statistic the samplers cannot draw: no choice, the additive
            # plan, a fact of the public inputs.
            return additive
    fresh = previous is None
    counted = fresh and config.private_row_count
    plan = plan_budget(
        epsilon=rest_epsilon(config.epsilon) if counted else config.epsilon,
        n_estimators=config.n_estimators - (0 if fresh else previous.n_stages),
        max_depth=config.max_depth, learning_rate=config.learning_rate,
        l2_regularization=config.l2_regularization,
        budget_allocation=config.budget_allocation,
        trees_per_ensemble=config.trees_per_ensemble, leaf_clipping=config.leaf_clipping,
        n_outputs=n_outputs, delta=config.delta,
        leaf_noise=config.leaf_noise, hessian_bound=loss.hessian_bound,
        split_selection=config.split_selection, subsample=config.subsample,
        sketch_features=n_numeric if config.split_candidates == "sketch" and fresh else 0,
        hessian_sketch_features=n_numeric if config.split_candidates == "hessian" else 0,
        hessian_sketch_rounds=loss.hessian_sketch_rounds,
        gradient_bound=config.gradient_bound,
        sample_weight_bound=config.weight_bound,
        renyi_filter=config.renyi_filter,
        bounds_features=fresh * n_numeric * config.private_feature_bounds,
        bounds_target=fresh and config.private_target_bounds,
        categories_features=fresh * n_private_categories,
        domain_groups=fresh * config.domain_groups,
        initial_statistics=(initial_statistics_count(n_outputs)
                            if fresh and config.init == "private" else 0),
        initial_share=config.initial_share,
        # The held-out records' checks are calibrated against the trees' Renyi curve.
        accounting="rdp" if config.early_stopping else config.accounting)
    if config.early_stopping:
        plan = plan_validation(plan, loss.validation_clip(n_outputs), n_outputs, config.delta)
    return with_row_count(plan, config.epsilon, config.delta) if counted else plan


def train(records, inputs, loss, options, n_outputs, n_threads, fit_id=None, previous=None):
    """Place the split candidates and boost: the whole private fit after its plan.

    Parameters
    ----------
    records : record set (``_records``)
        The records in the data domain (``_public_inputs.fit_inputs``), not yet binned, with their
        labels or targets in [-1, 1] (with ``target_bounds="private"``: the targets, scaled once
        their bounds are released). Its partitions are replaced as the fit goes.
    inputs : PublicInputs
    loss : SquareLoss, LogisticLoss or SoftmaxLoss
    options : list of (FitConfig, BudgetPlan)
        The fit's configuration and its plan (:func:`plan_fit` with ``n_outputs`` outputs and
        ``inputs.numeric.size`` numeric features); with a private row count, one per regime of
        the count, the one of the released count's regime grown
        (:func:`~dpboost._row_count.choose_plan`).
    n_outputs : int
    n_threads : int
        Threads of the kernels run on the sums; the model does not depend on it.
    fit_id : str or None, default=None
        The fit's identifier in the ledger (None: a random one).
    previous : Forest or None, default=None
        ``warm_start``: boosting continues from this released forest's scores (post-processing
        of released values), on its grid; the plan holds the new trees only.

    Returns
    -------
    result : FitResult
    """
    numeric = inputs.numeric
    noise = make_noise(options[0][0].random_state)
    ledger = PrivacyLedger(fit_id)
    bounds, released = inputs.feature_bounds, {}
    # The row count first: what the rest of the fit is planned from (docs/privacy.md, Private
    # row count).
    config, plan, count = choose_plan(records, options, noise, ledger)
    if count is not None:
        released["row_count_"] = count
    choice = plan if isinstance(plan, ChoicePlan) else None
    if choice is not None:
        plan = choice.additive  # its releases before the trees are the choice's
    if previous is not None:
        binner = previous.binner  # the first fit's released grid: never read again
    if plan.domain is not None:
        # The domain report first: its counts were taken at the record boundary.
        released["domain_report_"] = release_domain_report(
            *inputs.domain, plan.domain, noise, ledger, config.delta)
    if plan.categories is not None:
        # Category lists released from the data first (docs/privacy.md, Private category
        # lists); the grid of a column spans its released list.
        lists = private_categories(records, inputs.observed_categories, plan.categories, noise,
                                   ledger)
        bounds = bounds.copy()
        for j, values in lists.items():
            bounds[j] = (-0.5, max(values.size, 1) - 0.5)
        inputs = replace(inputs, categories={**inputs.categories, **lists},
                         observed_categories={})
        released["categories_"] = inputs.categories
    if plan.bounds is not None:
        # Public inputs released from the data first (docs/privacy.md, Private feature bounds).
        private_features = config.private_feature_bounds
        private_target = config.private_target_bounds
        values = private_bounds(records, numeric if private_features else None, private_target,
                                plan.bounds, noise, ledger)
        if private_features:
            bounds = bounds.copy()
            bounds[numeric] = values[:numeric.size]
        if private_target:
            released["target_bounds_"] = tuple(float(v) for v in values[-1])
            records.update(rescale_target, released["target_bounds_"])
    # The initial scores, released after the bounds that scale the targets (docs/privacy.md,
    # Private initial score); None: every output starts from 0.
    scores = (None if plan.initial is None else
              private_initial_scores(records, loss, n_outputs, plan.initial, noise, ledger))
    if previous is None:
        binner = initial_binner(
            records, bounds, numeric, config.max_bins, plan, noise, ledger,
            log_grid_features(bounds, numeric) if config.split_candidates == "log" else None)
    n_features = bounds.shape[0]
    candidates = initial_candidates(binner, n_features, inputs.categories)
    first_stage = 0 if previous is None else previous.n_stages
    records.update(bin_records, binner, n_outputs, loss.has_hessians)
    if scores is not None:
        records.update(start_scores, scores)
    if previous is not None:
        records.update(add_forest, previous)
    records.number_rows()

    grow = {"numeric": numeric, "n_features": n_features, "monotonic_cst": inputs.monotonic_cst}
    stopping = None
    if choice is not None:
        forest, filtered, config, released["interaction_statistic_"] = grow_choice(
            records, choice, config, loss, candidates, binner, scores, noise, ledger,
            n_threads, count if count is not None else config.n_samples, **grow)
    else:
        forest = (Forest.empty(n_outputs, config.n_estimators - first_stage, config.max_depth,
                               binner)
                  if plan.trees else Forest.constant(n_outputs, config.max_depth, binner))
        progress = (progress_bar(len(plan.trees), ledger, config.delta) if config.verbose
                    else None)
        stopping = (EarlyStopping(plan.validation, config.n_iter_no_change, loss,
                                  config.validation_fraction, forest.n_stages)
                    if plan.validation else None)
        filtered = boost(records, plan, loss, candidates, forest, noise, ledger, n_threads,
                         config, first_stage=first_stage, progress=progress, stopping=stopping,
                         **grow)
    if scores is not None:
        fold_into_first_stage(forest, scores)
    charged = ledger.entries
    if stopping is not None:
        released["validation_score_"] = np.array(stopping.scores)
        filtered = first_stages(forest, stopping.n_iter, filtered)
        forest = first_stages(forest, stopping.n_iter)
        charged = [e.of_fit(ledger.fit) for e in plan.entries]
    if previous is not None:
        forest = previous.extended(forest)
    attributes = {**inputs.target, "categories_": inputs.categories, **released,
                  "interaction_cst_": config.interaction_cst,
                  "feature_bounds_": np.column_stack([forest.binner.lower, forest.binner.upper])}
    # A count whose every regime takes the same plan (every "auto" parameter given) chose nothing.
    # The plans' ledgers are told apart before their entries get the fit's identifier (the same
    # distinct ledgers in the same order, without rewriting every entry of every copy).
    planned = _distinct(ledger for _, option in options for ledger in option.ledgers)
    chose = (count is not None or choice is not None) and len(planned) > 1
    planned = planned if chose else None
    choices = None if planned is None else tuple(tuple(e.of_fit(ledger.fit) for e in entries)
                                                 for entries in planned)
    return FitResult(forest, ledger, filtered, charged, choices, planned, attributes)


def _distinct(ledgers):
    """The distinct ``ledgers`` (tuples of LedgerEntry), each at its first place, as
    ``dict.fromkeys`` keeps them, without hashing every entry (20 ms a 2,000-row default fit,
    a tenth of its trees' time): one object is one ledger (a memoised plan's is the same
    object at every fit), and tuples of different lengths differ before an entry is compared.

    Returns
    -------
    distinct : tuple of tuples
    """
    distinct = []
    for ledger in ledgers:
        if not any(ledger is kept or ledger == kept for kept in distinct):
            distinct.append(ledger)
    return tuple(distinct)


def grow_choice(records, choice, config, loss, candidates, binner, scores, noise, ledger,
                n_threads, n_records, **grow):
    """Boost a private choice of interactions (``_interaction_choice``): the additive plan on
    part A, the unrestricted plan on part B (each record's part by its own coin), the
    statistic of part V released, and the plan it favours on part T: the model. Every part's
    releases go to ``ledger``, each marked with its part (``LedgerEntry.part``).

    Parameters
    ----------
    records : record set
        Binned and numbered, with the initial ``scores`` (None: 0).
    choice : ChoicePlan
    config : FitConfig
        Its ``interaction_choice``: the additive and the unrestricted configuration.
    n_records : float
        The row count the statistic's buckets are sized from (released, or a public hint).
    grow : dict
        :func:`boost`'s ``numeric``, ``n_features`` and ``monotonic_cst``.

    Returns
    -------
    forest : Forest
        T's.
    filtered : ndarray
        T's trees' (:func:`boost`).
    config : FitConfig
        The chosen configuration.
    released : float
        The statistic's released value (``_interaction_choice.release_choice``).
    """
    coins = replace(noise.coins(), n_threads=n_threads)
    plans, configs = (choice.additive, choice.unrestricted), config.interaction_choice

    def grown(part, chosen):
        records.update(keep_part, coins, part)
        records.update(start_scores, np.zeros(1) if scores is None else scores)
        plan, config = plans[chosen], configs[chosen]
        forest = Forest.empty(1, config.n_estimators, config.max_depth, binner)
        own = PrivacyLedger(ledger.fit, PARTS[part])
        progress = (progress_bar(len(plan.trees), own, config.delta)
                    if config.verbose and part == 3 else None)
        filtered = boost(records, plan, loss, candidates, forest, noise, own, n_threads, config,
                         progress=progress, **grow)
        ledger.entries += own.entries
        return forest, filtered

    forests = [grown(part, part)[0] for part in (0, 1)]
    released, unrestricted = release_choice(records, coins, *forests, n_records, choice.release,
                                            noise, ledger)
    return (*grown(3, int(unrestricted)), configs[unrestricted], released)


def progress_bar(n_trees, ledger, delta):
    """A progress bar (tqdm, on ``sys.stdout`` as it is when called) of the trees done out of
    ``n_trees`` and the epsilon spent: the ``progress`` callable of :func:`boost`.

    What it prints is fixed by the plan (docs/privacy.md, rule 13): counts of trees and the
    ledger's epsilon, no elapsed time or rate (they track n), and one redraw per update
    (``mininterval=0, miniters=1``), never on a timer, so how often it redraws cannot depend on
    how long a tree takes either. The bar closes (a newline) when the last tree is done.
    """
    # Imported here: only a verbose fit draws a bar, and tqdm costs every start-up otherwise.
    from tqdm import tqdm

    bar = tqdm(total=n_trees, file=sys.stdout, mininterval=0, miniters=1,
               bar_format="[dpboost] {bar} {n}/{total} trees{postfix}")

    def progress(trees_done):
        bar.set_postfix_str(f"epsilon spent {ledger.epsilon(delta):.4g}", refresh=False)
        bar.update(trees_done - bar.n)
        if trees_done == n_trees:
            bar.close()
    return progress


def boost(records, plan, loss, candidates, forest, noise, ledger, n_threads, config, *, numeric,
          n_features, monotonic_cst=None, first_stage=0, progress=None, stopping=None):
    """Grow every tree of ``plan`` into ``forest`` (Li et al. 2020, Algorithms 1 and 2; DP-XGB).

    For each planned tree t of output k, in the plan's order (with a loss that couples the
    outputs, round by round: every round's K trees use the scores after the previous round):

    1. gradients (and Hessians) of every record from the current scores ``F_k``, which start
       at 0 or at the released initial scores (:func:`train`; docs/privacy.md, rule 15); where
       no step before the tree reads them (no GDF, filter or Hessian sketch, a loss that does
       not couple its outputs), of the selected records only, in step 3;
    2. before the trees ``plan.hessian_sketch_trees``, the Hessian sketch's release replaces
       the numeric features' candidates of output k;
    3. record selection, each record by its own coins: its EoE ensemble position (one partition
       per ensemble, drawn at the ensemble's first tree), a Poisson sample at the tree's
       ``sampling_rate``, and GDF (``|g| > g*`` leaves the tree) or gradient clipping; with an
       individual Renyi filter (``plan.filter``), only the records whose own losses still fit
       in their budget (:func:`select_records`);
    4. ``grow_tree`` with the tree's budget, leaves shrunk by ``learning_rate``;
    5. ``F_k += tree(x)`` for every record (:func:`add_tree`).

    Steps 1, 3 and 5 run on the partitions of ``records`` (the functions below); every release
    is made here or in the grower, once, from sums over the partitions.

    Parameters
    ----------
    records : record set (``_records``)
        Binned (:func:`bin_records`).
    plan : BudgetPlan
    loss : loss object of ``_loss``
    candidates : ndarray of dtype=int64 or None
        Initial boundary indices (None: all).
    forest : Forest
        Filled in place.
    noise : NoiseSource
    ledger : PrivacyLedger
        Receives every release; sorted into the plan's order at the end.
    n_threads : int
        Threads of the kernels run on the sums.
    config : FitConfig
        Its ``max_depth``, ``learning_rate``, ``l2_regularization``, ``gradient_filtering``,
        ``min_child_weight``, ``max_bins`` and ``cyclical`` (tree t of each output splits on
        feature ``t mod n_features`` only).
    numeric : ndarray of int
        The numeric features (those the Hessian sketch places).
    n_features : int
    monotonic_cst : ndarray of shape (n_features,), dtype=int8, or None
        Leaf values made monotone per tree (``_grower.monotone_leaves``).
    first_stage : int, default=0
        The boosting stage of the plan's first tree (``warm_start``: the stages fitted before),
        so that cyclical trees continue the cycle of features.
    progress : callable or None
        Called with the number of trees done after the last tree of each composition group.
    stopping : EarlyStopping or None
        Early stopping (``_early_stopping``): its records are held out of every tree, the
        trees grown stage by stage, and the loop ends once it says so (after ``stopping.n_iter``
        stages).

    Returns
    -------
    filtered : ndarray of shape (n_trees,), dtype=float64
        Exact fraction per tree of the sampled records left out by GDF or by the individual
        filter (a non-private diagnostic).
    """
    n_trees, n_stages = len(plan.trees), forest.n_stages
    filtered = np.zeros(n_trees)
    coupled = loss.couples_outputs and forest.n_outputs > 1
    order = (sorted(plan.trees, key=lambda tb: (tb.tree % n_stages, tb.output))
             if coupled or stopping is not None else plan.trees)
    private = math.isfinite(plan.epsilon)
    coins = replace(noise.coins(), n_threads=n_threads)
    drawn = set()  # the outputs whose records have an EoE position
    candidates_of = [candidates] * forest.n_outputs  # per output: the Hessian sketch's
    n_rounds = len(plan.hessian_sketch_trees)
    renyi_filter = None
    if plan.filter is not None:
        # The per-record budget is declared before any release; each record's spending lives
        # in its partition (docs/privacy.md, Individual Renyi filter).
        ledger.declare(plan.filter)
        renyi_filter = FilterBudget.of(plan.filter)
        records.update(open_budgets, renyi_filter)
    if stopping is not None:
        records.update(draw_held_out, coins, stopping.fraction)
    every_gradient_unread = not reads_every_gradient(loss, private and config.gradient_filtering,
                                                     renyi_filter)

    for i, tb in enumerate(order):
        if plan.record_shares is not None and (tb.position == 0 or tb.output not in drawn):
            records.update(draw_positions, coins, tb.output, tb.tree, plan.record_shares)
            drawn.add(tb.output)
        t = tb.tree % n_stages
        # Where the selection reads no gradient, only the selected records' are computed.
        lazy = every_gradient_unread and t not in plan.hessian_sketch_trees
        if not lazy:
            records.update(compute_gradients, loss, tb.output)
        if t in plan.hessian_sketch_trees:
            release = plan.hessian_sketches[tb.output * n_rounds
                                            + plan.hessian_sketch_trees.index(t)]
            candidates_of[tb.output] = hessian_sketch_candidates(
                records, tb.output, numeric, candidates, config.max_bins, release, noise, ledger)
        # The gradients are float32: filter or clip at the largest float32 <= g*.
        bound = float32_at_most(tb.gradient_bound)
        records.update(select_records, coins, tb.output, tb.tree,
                       None if plan.record_shares is None else tb.position, tb.sampling_rate,
                       bound if private else None, private and config.gradient_filtering,
                       renyi_filter, tb.leaf_hessian_scale, loss if lazy else None)
        if private and (config.gradient_filtering or renyi_filter is not None):
            n_sampled, n_kept = records.reduce(filter_counts)
            if n_sampled:
                filtered[tb.tree] = 1.0 - n_kept / n_sampled
        tree = grow_tree(records, budget=tb, n_features=n_features, max_depth=config.max_depth,
                         n_bins=forest.binner.max_bins,
                         l2_regularization=config.l2_regularization, noise=noise,
                         ledger=ledger, n_threads=n_threads,
                         feature=(first_stage + t) % n_features if config.cyclical else None,
                         min_child_weight=config.min_child_weight,
                         candidates=candidates_of[tb.output], monotonic_cst=monotonic_cst)
        forest.set_tree(tb.tree, tree.shrunk(config.learning_rate))
        records.update(add_tree, tb.output, *forest.tree(tb.tree), forest.binner.max_bins)
        if progress is not None and (i + 1 == n_trees or order[i + 1].group != tb.group):
            progress(i + 1)
        if stopping is not None and stopping.check(records, tb.tree, t + 1, noise, ledger):
            break
    # the ledger in the plan's order (tree by tree), whatever the growing order
    ledger.entries.sort(key=lambda e: (e.tree, e.level))
    return filtered


# The partition side of the loop (``_records``): each function returns a new partition.

def rescale_target(partition, target_bounds):
    """The partition with its targets scaled into [-1, 1] by the released ``target_bounds``."""
    return replace(partition, y_rows=scale_target(partition.y_rows[0], target_bounds)[None, :])


def bin_records(partition, binner, n_outputs, has_hessians):
    """The partition binned on the fit's grid (its float records dropped), with scores 0 and
    room for its gradients."""
    n = partition.X.shape[0]
    X_binned = binner.transform(partition.X, order="F", n_threads=partition.n_threads)
    return replace(partition, X=None, X_binned=X_binned,
                   raw=np.zeros((n_outputs, n)),
                   gradients=np.zeros((n_outputs, n), dtype=G_H_DTYPE),
                   hessians=np.zeros((n_outputs, n), dtype=G_H_DTYPE) if has_hessians else None)


def add_forest(partition, forest):
    """The partition with the scores of a released ``forest`` added (``warm_start``)."""
    raw = partition.raw + forest.raw_predict(partition.X_binned, partition.n_threads).T
    return replace(partition, raw=raw)


def draw_positions(partition, coins, output, tree, shares):
    """The partition with every record's EoE position in output ``output``'s ensemble that
    starts at tree ``tree`` (its coin in that stream, ``_mechanisms.partition_records``)."""
    position = partition_records(coins.uniforms((POSITION_STREAM, output, tree),
                                                *partition.rows), shares)
    return replace(partition, positions={**partition.positions, output: position})


def compute_gradients(partition, loss, output):
    """The partition with the loss's gradients (and Hessians) of output ``output`` from its
    current scores (copies: the partition given is not modified)."""
    # A loss that couples the outputs writes all of them at output 0 and none at the others,
    # which read the round's; any other loss writes the output's row, the only one read.
    fresh = np.copy if loss.couples_outputs else np.empty_like
    gradients = fresh(partition.gradients)
    hessians = None if partition.hessians is None else fresh(partition.hessians)
    loss.gradients(partition.raw, partition.y_rows, gradients, hessians, output,
                   partition.n_threads)
    return replace(partition, gradients=gradients, hessians=hessians)


def select_records(partition, coins, output, tree, position, sampling_rate, bound, filtering,
                   renyi_filter=None, hessian_scale=1.0, loss=None):
    """The partition with the records of tree ``tree`` selected, each by its own values:
    its EoE ``position`` (None: every record), its Poisson coin at ``sampling_rate``, and with
    ``filtering`` its gradient (GDF: ``|g| > bound`` leaves the tree); otherwise the gradients
    are clipped to ``bound`` (None: not at all, a non-private fit); then gradients and Hessians
    are multiplied by the records' weights, if any.

    With ``renyi_filter`` (a :class:`~dpboost._filter.FilterBudget`; unweighted fits only), a
    record that passes its position and GDF takes part only if its spent ticks plus this tree's
    cost stay within the budget at every order (Feldman & Zrnic 2021's individual filter); its
    cost is that of its own clipped contribution ``(g, c h)`` (``(g, c)`` without Hessians;
    ``c`` the leaf release's public ``hessian_scale``) to the leaf release, and it is charged
    before its Poisson coin, whether or not the coin then samples it (the cost is the sampled
    mechanism's). Every input of the decision is the
    record's own: its gradient and Hessian from the released model, its spending so far and
    its coin.

    With ``loss`` (a selection that reads no gradient: no GDF, no filter, a loss that does not
    couple its outputs) the partition's gradients are not read: ``loss`` computes those of the
    selected records only, from their current scores (a tenth of the work on a 0.1 sample),
    the same values as :func:`compute_gradients`'s at those records.
    """
    n = partition.y_rows.shape[1]
    if loss is not None and reads_every_gradient(loss, filtering, renyi_filter):
        raise ValueError("a selection with gradient filtering, an individual filter or a loss "
                         "that couples its outputs reads every record's gradient")
    coins = (coins.uniforms((POISSON_STREAM, output, tree), *partition.rows)
             if sampling_rate < 1.0 else np.empty(0))
    gradients = (np.empty(0, dtype=G_H_DTYPE) if loss is not None
                 else partition.gradients[output])
    positions = np.empty(0, dtype=np.int64) if position is None else partition.positions[output]
    hessians = (np.empty(0, dtype=G_H_DTYPE) if partition.hessians is None or loss is not None
                else partition.hessians[output])
    spent, within = partition.spent, np.empty(0, dtype=bool)
    if renyi_filter is not None:
        clipped = np.clip(gradients, -bound, bound).astype(np.float64)
        weight = np.ones(n) if partition.hessians is None else hessians.astype(np.float64)
        cost = renyi_filter.cost(np.hypot(clipped, hessian_scale * weight))
        within = (spent.astype(np.int64) + cost <= renyi_filter.budget).all(axis=1)
        # Charged before the coin: every record at its position, kept by GDF, within budget.
        charged = within & (True if position is None else positions == position)
        if filtering:
            charged &= np.abs(gradients) <= bound
        spent = spent.copy()
        spent[charged] += cost[charged]
    if partition.held_out is not None:  # early stopping's records never enter a tree
        within = ~partition.held_out if within.size == 0 else within & ~partition.held_out
    n_sampled, indices, grads, hessians = select_rows(
        gradients, hessians, positions, -1 if position is None else position, within, coins,
        poisson_threshold(sampling_rate), np.inf if bound is None else bound,
        filtering, partition.n_threads, n_rows=n)
    if loss is not None:
        grads, hessians = _selected_statistics(partition, loss, output, indices, bound)
    if partition.hessians is None:
        hessians = None
    if partition.weights is not None:
        # Weighted after filtering or clipping: GDF reads the record's own gradient, and
        # |w g| <= W g* (docs/privacy.md, Sample weights).
        weights = partition.weights[indices]
        grads = weight_statistics(grads, weights)
        hessians = None if hessians is None else weight_statistics(hessians, weights)
    tree_state = TreeState(selected=indices, gradients=grads, hessians=hessians,
                           indices=indices, grads=grads, hess=hessians,
                           node_start=np.array([0, indices.size], dtype=np.int64),
                           n_sampled=n_sampled)
    return replace(partition, tree=tree_state, spent=spent)


def reads_every_gradient(loss, filtering, renyi_filter):
    """Whether a tree's selection reads every record's gradient (and so needs them all before
    it): gradient filtering, an individual Renyi filter, or a loss that couples its outputs
    (its round's gradients, computed at output 0)."""
    return filtering or renyi_filter is not None or loss.couples_outputs


def _selected_statistics(partition, loss, output, indices, bound):
    """Output ``output``'s gradients at the rows ``indices``, clipped to ``bound`` (None: not
    clipped) as ``_selection``'s gather clips, and their Hessians (None without)."""
    gradients = np.empty((partition.raw.shape[0], indices.shape[0]), dtype=G_H_DTYPE)
    hessians = None if partition.hessians is None else np.empty_like(gradients)
    loss.gradients(partition.raw, partition.y_rows, gradients, hessians, output,
                   partition.n_threads, rows=indices)
    if bound is not None:
        clip = G_H_DTYPE(bound)
        np.clip(gradients[output], -clip, clip, out=gradients[output])
    return gradients[output], None if hessians is None else hessians[output]


def open_budgets(partition, renyi_filter):
    """The partition with every record's individual filter budget untouched (0 ticks spent)."""
    n = partition.y_rows.shape[1]
    return replace(partition, spent=np.zeros((n, renyi_filter.ticks.shape[1]), dtype=np.int32))


def filter_counts(partition):
    """``[records sampled, records kept by GDF and the individual filter]`` of the partition's
    current tree."""
    return np.array([partition.tree.n_sampled, partition.tree.selected.size], dtype=np.float64)


def add_tree(partition, output, split_feature, split_bin, missing_left, leaf_value, missing_code):
    """The partition with the released tree's predictions added to its scores of ``output``.

    The tree's records (its sample) get their leaf's value by the leaf the grower gave them;
    the other records go through prediction
    (``_predictor.add_tree_scores``, parallel over records). Either way a score gets the same
    float addition, to the last bit. A new partition with new scores: the input is left as it
    was."""
    tree = partition.tree
    raw = add_tree_scores(partition.raw, output, partition.X_binned, tree.selected, tree.indices,
                          tree.node_start, split_feature, split_bin, missing_left, missing_code,
                          leaf_value, partition.n_threads, leaf=tree.leaf)
    return replace(partition, raw=raw, tree=None)

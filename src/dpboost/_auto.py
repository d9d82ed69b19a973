"""The ``"auto"`` policy: the values of ``"auto"`` hyper-parameters, resolved from public
inputs only (epsilon, the schema's width, the loss, the row count: a public hint or a released
count), each rule with the benchmark that chose it."""

import bisect
import dataclasses
import functools
import math

from ._budget import MAX_TREES
from ._config import FitConfig
from ._early_stopping import check_early_stopping
from ._public_inputs import resolve_weight_bound
from ._tree_mechanisms import LEAF_RELEASES, SPLIT_SELECTIONS


def resolve_min_child_weight(min_child_weight, leaf_noise, epsilon, hessian_bound,
                             weight_bound=None):
    """``min_child_weight`` with ``"auto"`` resolved for this fit's epsilon.

    ``"auto"``: the released weight of about 200 / epsilon records, i.e. ``200 h* / epsilon``
    with Gaussian leaves (their weight is a Hessian sum) and ``200 / epsilon`` with ``"average"``
    leaves (a count); 0 with Laplace leaves, which release no weight, and without noise. Tuned
    for 100 trees in ``bench_blocks_grid.py --candidates``. With sample weights (``weight_bound``
    W, :func:`resolve_weight_bound`) times W: the weight's noise scales with W.
    """
    if min_child_weight != "auto":
        return float(min_child_weight)
    if not math.isfinite(epsilon):
        return 0.0
    auto = 200.0 * LEAF_RELEASES[leaf_noise].weight_per_record(hessian_bound) / float(epsilon)
    return auto if weight_bound is None else auto * weight_bound


#: The ``"auto"`` learning rate and subsample by epsilon (DPGBClassifier's S-BDT-like preset):
#: below the threshold, a small Poisson sample per tree (amplification) and slow learning; from
#: it on, larger samples and steps. Chosen on ``adult.test`` (benchmarks/README.md, "The privacy-utility frontier"),
#: never on the folds the frontier is scored on.
AUTO_EPSILON_THRESHOLD = 0.5


AUTO_SCHEDULE = {"low": {"learning_rate": 0.1, "subsample": 0.1},
                 "high": {"learning_rate": 0.2, "subsample": 0.3}}


def resolve_schedule(learning_rate, subsample, epsilon, unamplified=False):
    """``learning_rate`` and ``subsample`` with ``"auto"`` resolved from the fit's epsilon (a
    public input), by :data:`AUTO_SCHEDULE`; without noise (``epsilon=inf``) ``"auto"`` is the
    high-epsilon value of the learning rate and a subsample of 1. ``unamplified``: the trees'
    splits read the records under Renyi accounting, which has no amplified form of the
    exponential mechanism (``_accounting.compose_rdp``): a sample would only leave records out,
    so ``"auto"`` is 1 (unrestricted exponential-split trees lost 0.003-0.25 ROC AUC with the
    schedule's samples on the tuning splits of ``bench_capacity.py``).

    Returns
    -------
    learning_rate, subsample : float
    """
    regime = AUTO_SCHEDULE["low" if epsilon < AUTO_EPSILON_THRESHOLD else "high"]
    if learning_rate == "auto":
        learning_rate = regime["learning_rate"]
    if subsample == "auto":
        subsample = regime["subsample"] if math.isfinite(epsilon) and not unamplified else 1.0
    return float(learning_rate), float(subsample)


#: ``n_estimators="auto"`` of the regressor: ``k(epsilon)`` trees per feature,
#: ``k = 25 min(1, epsilon / 2) ** 0.4`` (7.5 at epsilon 0.1, 18.9 at 1, 25 from 2 on), at least
#: :data:`AUTO_MIN_TREES`. With one feature per tree, an additive model needs its shrinkage per
#: feature, ``learning_rate * n_estimators / n_features``, to grow with the features and with
#: epsilon (more trees split the same budget into noisier leaves). Chosen on the inner tuning
#: splits of the shared regression sets (``bench_regression_sweep.py``), never on test folds.
AUTO_TREES_PER_FEATURE, AUTO_TREES_EPSILON, AUTO_MIN_TREES = 25.0, 2.0, 200


#: ``n_estimators="auto"`` of the classifier: :data:`AUTO_FEW_TREES` trees below
#: epsilon :data:`AUTO_FEW_TREES_BELOW`, else :data:`AUTO_MIN_TREES` (fewer, less noisy trees
#: where the budget is smallest: +0.03 ROC AUC at epsilon 0.01 and 0.02 on ``adult.test``,
#: ``bench_small_epsilon.py``; equal within noise at 0.03 and 0.05).
AUTO_FEW_TREES, AUTO_FEW_TREES_BELOW = 50, 0.03
#: ``n_estimators="auto"`` of the classifier's additive trees where its row count (a public hint
#: or the released count) times epsilon reaches :data:`MORE_TREES_N_EPSILON`, and without
#: noise: :data:`AUTO_MORE_TREES`. Where the budget is large against the data, 200 trees of one
#: feature each stop short of what the signal holds; twice as many, each noisier, fit more of
#: it. On the tuning splits of ``bench_capacity.py --trees`` (benchmarks/README.md, "The
#: classifier's trees against the row count times epsilon"; 4 seeds) 400 additive trees gained
#: 0.0077 ROC AUC on average over the 44 cells from 7,000 on (worst -0.0038, 3 below 0), while
#: at 6,000 one set lost 0.016; unrestricted trees (from 8,000 per feature) gained -0.009 to
#: +0.009 from 400, so they keep 200.
AUTO_MORE_TREES, MORE_TREES_N_EPSILON = 400, 7000.0


def resolve_n_estimators(n_estimators, epsilon, n_features, regression, n_samples=None,
                         additive=True):
    """``n_estimators`` with ``"auto"`` resolved from public inputs: for a regressor
    ``max(200, round(25 min(1, epsilon / 2) ** 0.4 n_features))`` (:data:`AUTO_TREES_PER_FEATURE`;
    without noise, ``epsilon=inf``, 25 per feature), for a classifier 50 below epsilon 0.03
    (:data:`AUTO_FEW_TREES`), 400 additive trees where ``n_samples * epsilon`` reaches 7,000
    and without noise (:data:`AUTO_MORE_TREES`), and 200 otherwise.

    Parameters
    ----------
    n_estimators : int or "auto"
    epsilon : float
    n_features : int or None
        Columns of ``X`` (its schema); None when ``X`` has no two-dimensional shape (its
        validation then refuses it before anything is planned): 200.
    regression : bool
    n_samples : float or None, default=None
        The row count the classifier's rule reads (:func:`resolve_config`); None: none.
    additive : bool, default=True
        Whether the classifier's trees split on one feature each (``interaction_cst``
        resolved: ``"no_interactions"``).

    Returns
    -------
    n_estimators : int
    """
    if n_estimators != "auto":
        return int(n_estimators)
    if not regression:
        if epsilon < AUTO_FEW_TREES_BELOW:
            return AUTO_FEW_TREES
        large = reaches(n_samples, epsilon, MORE_TREES_N_EPSILON)
        return AUTO_MORE_TREES if large and additive else AUTO_MIN_TREES
    if n_features is None:
        return AUTO_MIN_TREES
    share = min(1.0, epsilon / AUTO_TREES_EPSILON) ** 0.4
    # At most the planner's cap (above 400 features at epsilon >= 2): "auto" is never refused.
    return min(MAX_TREES, max(AUTO_MIN_TREES, round(AUTO_TREES_PER_FEATURE * share * n_features)))


#: The regressor's small-data regime: where the public row count ``n_samples_hint`` times
#: epsilon is below :data:`SMALL_N_EPSILON`, ``init="auto"`` releases the initial score (the
#: private mean target), ``n_estimators="auto"`` grows :data:`SMALL_TREES` trees with
#: :data:`SMALL_INITIAL_SHARE` of the budget on the mean and ``min_child_weight="auto"``
#: :data:`SMALL_MIN_CHILD_WEIGHT`; with a number of trees given, the mean takes
#: :data:`SMALL_GIVEN_TREES_SHARE` and the weight threshold is the rule's. The rule's ``200 /
#: epsilon`` records (tuned for 100 trees on larger sets) is more than a leaf holds at such an
#: epsilon: every leaf of the regime's trees was 0, the model the mean. On the tuning splits of
#: the five shared regression sets (``bench_tree_count.py --stage small_recipe``,
#: benchmarks/README.md, "The small-data regime's trees"; 8 seeds) the earlier recipe (half of
#: the budget on the mean, 10 trees, the rule) had RMSE 1.000 / 1.020 / 1.032 / 1.037 times
#: this one (geometric mean over the sets) at n x epsilon 250 / 400 / 550 / 700 (abalone up to
#: 1.10; house_16H 0.94 at 250), a share of 0.2 or 0.3 1.000-1.013 and 30 trees 1.012-1.046;
#: the large regime 1.029 at 700, 1.007 at 1,000 and 0.967 at 1,500 (california 0.91 at 1,000:
#: the edge stays). Without a hint the rules are those of a large n x epsilon.
SMALL_N_EPSILON, SMALL_INITIAL_SHARE, SMALL_TREES = 700.0, 0.1, 20
SMALL_MIN_CHILD_WEIGHT = 0.0
#: The mean's share in the small-data regime with ``n_estimators`` given: its trees' leaves keep
#: the rule's weight threshold, under which most are 0 there (``bench_tree_count.py --stage
#: small``: half of the budget and 10 trees, RMSE 0.66-1.00 times 200 trees without the mean).
SMALL_GIVEN_TREES_SHARE = 0.5
#: The regressor's constant regime: below :data:`CONSTANT_N_EPSILON`, with ``init`` and
#: ``n_estimators`` both ``"auto"``, the model is the private mean target alone (the whole
#: budget on the initial score, no tree: :func:`constant_model`). On the tuning splits of the
#: five shared regression sets (``bench_tree_count.py --stage constant``, 20 seeds a cell,
#: benchmarks/README.md, "The constant regime") it beat the small-data regime in every cell
#: with n x epsilon up to 200 (paired RMSE ratio 0.929-0.9997) and was level with it or behind
#: from 248 on (0.9995-1.0019 up to 273, 1.003-1.24 from 372); against the small-data regime's
#: later recipe (``--stage small_recipe``) 0.967 at 150, 1.002 at 250 and 1.030 at 400.
CONSTANT_N_EPSILON = 225.0


def small_data(n_samples, epsilon, regression):
    """Whether a fit is in the regressor's small-data regime (:data:`SMALL_N_EPSILON`), from
    the row count the rules read (:func:`resolve_config`'s ``n_samples``: a public hint, never
    checked against the data, or the released count; None: large)."""
    return regression and n_samples is not None and n_samples * epsilon < SMALL_N_EPSILON


def constant_model(params, n_samples, epsilon, regression):
    """Whether a fit's model is the private mean target alone (:data:`CONSTANT_N_EPSILON`):
    a regressor in that regime with ``init`` and ``n_estimators`` both ``"auto"``."""
    return (regression and n_samples is not None and n_samples * epsilon < CONSTANT_N_EPSILON
            and params["init"] == "auto" and params["n_estimators"] == "auto")


#: The classifier's interaction order (``interaction_cst="auto"``): unrestricted trees, with
#: exponential-mechanism splits (``split_selection="auto"``), where the public row count
#: ``n_samples_hint`` times epsilon per feature is at least this, and without noise; additive
#: trees on random splits (the small-epsilon preset) otherwise. On the tuning splits of
#: ``bench_capacity.py`` (benchmarks/README.md, "Interactions against the row count times
#: epsilon") unrestricted depth-6 trees gained 0.013 ROC AUC on average over the 13 cells from
#: this n x epsilon / p on (worst -0.004, give_me_some_credit at 24,000), while below it they
#: lost up to 0.019 (give_me_some_credit, diabetes) where the signal is near additive.
INTERACTION_N_EPSILON_PER_FEATURE = 8000.0
#: From this ``n_samples * epsilon`` per feature up to :data:`INTERACTION_N_EPSILON_PER_FEATURE`,
#: the classifier's ``"auto"`` interaction order is chosen privately on the data
#: (:func:`chooses_interactions`, ``_interaction_choice``): no rule on n x epsilon and the
#: width tells interactions apart there (on the tuning splits of ``bench_capacity.py``, synth100k
#: at epsilon 1, 4,000 per feature, gained 0.09 ROC AUC from them where give_me_some_credit at
#: 6,000 lost 0.02). Chosen with ``bench_capacity.py --select`` (benchmarks/README.md, "A
#: private choice of interactions").
CHOICE_N_EPSILON_PER_FEATURE = 3000.0


def resolve_interactions(interaction_cst, split_selection, n_samples, epsilon, n_features,
                         regression):
    """``interaction_cst`` and ``split_selection`` with ``"auto"`` resolved: unrestricted
    trees (None) at ``epsilon=inf`` and, for a classifier, where ``n_samples * epsilon /
    n_features`` is at least :data:`INTERACTION_N_EPSILON_PER_FEATURE` (``n_samples``: the
    public hint or a released count; None: never), else ``"no_interactions"``; the split
    selection ``"exponential"`` where the trees are unrestricted (random splits would make them random
    trees), else ``"random"``. A regressor's unrestricted trees lost to its additive ones at
    every finite epsilon on 3 of the 5 shared regression sets' tuning splits, up to 13,670 per
    feature (``bench_tree_count.py --stage interactions``), and won on all five without noise
    (RMSE 0.28-0.92x).

    Returns
    -------
    interaction_cst : str or None
    split_selection : str
    """
    if interaction_cst == "auto":
        unrestricted = reaches(n_samples, epsilon,
                               None if regression else interaction_threshold(n_features))
        interaction_cst = None if unrestricted else "no_interactions"
    if split_selection == "auto":
        split_selection = "exponential" if interaction_cst is None else "random"
    return interaction_cst, split_selection


def chooses_interactions(params, n_samples, epsilon, n_features, regression):
    """Whether a fit chooses its interaction order privately on the data
    (``_interaction_choice``): a classifier with ``interaction_cst`` and ``split_selection``
    ``"auto"`` where ``n_samples * epsilon / n_features`` is in
    ``[CHOICE_N_EPSILON_PER_FEATURE, INTERACTION_N_EPSILON_PER_FEATURE)`` (``n_samples``: a
    public hint or a released count), without ``warm_start``, ``early_stopping``, an individual
    Renyi filter or the Hessian sketch (each reads records across the parts the choice cuts).
    Facts of the public inputs only."""
    return (not regression and n_samples is not None and n_features is not None
            and math.isfinite(epsilon)
            and params["interaction_cst"] == "auto" and params["split_selection"] == "auto"
            and not params.get("warm_start") and not params.get("early_stopping")
            and params.get("renyi_filter") is None and params["split_candidates"] != "hessian"
            and CHOICE_N_EPSILON_PER_FEATURE * n_features <= n_samples * epsilon
            < INTERACTION_N_EPSILON_PER_FEATURE * n_features)


#: The classifier's split candidates (``split_candidates="auto"``): the private quantile sketch
#: (``"sketch"``: DP-XGBoost's, at ``_budget.SKETCH_SHARE`` of epsilon) where the row count
#: times epsilon per feature is at least this, and without noise; the free grid inside the
#: public bounds (``"log"``: equal-width, on ``log1p(x - lower)`` for wide nonnegative features)
#: below. On the ten tuning splits of
#: ``bench_capacity.py --candidates`` (benchmarks/README.md, "Split candidates against the row
#: count times epsilon"; 6 seeds a cell) the sketch gained 0.0039 ROC AUC on average over the 24
#: cells from this n x epsilon / p on (worst -0.0049, give_me_some_credit at 24,000; best
#: +0.018) and lost 0.0027 on average below it (worst -0.021, bank and credit under 60): where
#: the records per unit of epsilon are few, its share and its noisy quantiles cost more than
#: the grid's place.
SKETCH_N_EPSILON_PER_FEATURE = 700.0


def resolve_split_candidates(split_candidates, n_samples, epsilon, n_features, regression):
    """``split_candidates`` with ``"auto"`` resolved: the regressor's ``"hessian"`` (DP-TR's
    adaptive sketch); for a classifier ``"sketch"`` where ``n_samples * epsilon / n_features``
    reaches :data:`SKETCH_N_EPSILON_PER_FEATURE` (``n_samples``: the public hint or a released
    count; None: never) and without noise, else ``"log"``."""
    if split_candidates != "auto":
        return split_candidates
    if regression:
        return "hessian"
    threshold = SKETCH_N_EPSILON_PER_FEATURE * n_features if n_features else None
    return "sketch" if reaches(n_samples, epsilon, threshold) else "log"


#: A released count leaves the constant regime only from :data:`CONSTANT_N_EPSILON` plus this
#: many of its noise scales (:func:`regime`): trees grown at a tiny n x epsilon cost far more
#: than the mean alone costs a little above the threshold. On the tuning splits of the five
#: shared regression sets (``bench_tree_count.py --stage count_margin``, 24 seeds a cell,
#: benchmarks/README.md, "The constant regime"; rerun with the small-data regime's trees):
#: paired RMSE ratio against no margin 0.9905 below n x epsilon 225 and 0.9996 from 225 to 500
#: (geometric means), 0.9955 in all (margin 2: 0.9958, worst cell 1.053 against 1.026).
CONSTANT_COUNT_MARGIN = 1.0


def reaches(n_samples, epsilon, threshold):
    """Whether a large regime's rule holds: without noise always, else where the row count
    (a public hint or a released count) times epsilon reaches ``threshold``; never without a
    count or a threshold (None)."""
    return not math.isfinite(epsilon) or (
        threshold is not None and n_samples is not None and n_samples * epsilon >= threshold)


def interaction_threshold(n_features):
    """The classifier's ``n_samples * epsilon`` from which its ``"auto"`` trees are unrestricted
    (:data:`INTERACTION_N_EPSILON_PER_FEATURE` times ``n_features``; None without a feature
    count)."""
    return INTERACTION_N_EPSILON_PER_FEATURE * n_features if n_features else None


def count_thresholds(regression, n_features):
    """The values of ``n_samples * epsilon`` where a rule reading the row count changes its
    choice, increasing, each with the margin (in noise scales of a released count) by which a
    released count must pass it: the regressor's constant regime (:data:`CONSTANT_N_EPSILON`,
    :data:`CONSTANT_COUNT_MARGIN`) and small-data regime (:data:`SMALL_N_EPSILON`); the
    classifier's split candidates (:data:`SKETCH_N_EPSILON_PER_FEATURE`), number of trees
    (:data:`MORE_TREES_N_EPSILON`), private choice of interactions
    (:data:`CHOICE_N_EPSILON_PER_FEATURE`) and interaction order (:func:`interaction_threshold`;
    those per feature not without a feature count). The regimes between them
    are the configurations a private count chooses among.

    Returns
    -------
    thresholds : tuple of (float, float)
    """
    if regression:
        return ((CONSTANT_N_EPSILON, CONSTANT_COUNT_MARGIN), (SMALL_N_EPSILON, 0.0))
    if not n_features:
        return ((MORE_TREES_N_EPSILON, 0.0),)
    return tuple(sorted({(MORE_TREES_N_EPSILON, 0.0),
                         (SKETCH_N_EPSILON_PER_FEATURE * n_features, 0.0),
                         (CHOICE_N_EPSILON_PER_FEATURE * n_features, 0.0),
                         (interaction_threshold(n_features), 0.0)}))


def regime_counts(epsilon, thresholds):
    """One row count inside each regime of ``thresholds`` (:func:`count_thresholds`) at
    ``epsilon``: 0, the middle of each interval between thresholds, and inf (inf alone without
    a threshold). With a private row count, the fit plans (and reserves) the configuration of
    each before the count is released, and :func:`regime` picks one by the released count.

    Returns
    -------
    counts : list of float
    """
    values = [value for value, _ in thresholds]
    middles = [(low + high) / 2.0 / epsilon for low, high in zip(values, values[1:])]
    return [0.0, *middles, math.inf] if values else [math.inf]


def regime(n_samples, epsilon, count_scale, thresholds):
    """Index into :func:`regime_counts` of the regime of ``n_samples``, a count released with
    Laplace noise of scale ``count_scale`` (records; 0 for a public count): each threshold of
    ``thresholds`` is raised by its margin times that scale, up to the next threshold (a
    decision on the released value alone: post-processing)."""
    values = [value for value, _ in thresholds]
    raised = [min([value + margin * count_scale * epsilon, *values[k + 1:k + 2]])
              for k, (value, margin) in enumerate(thresholds)]
    return bisect.bisect_right(raised, n_samples * epsilon)


def resolve_init(init, small):
    """``init`` with ``"auto"`` resolved: ``"private"`` in the small-data regime
    (:func:`small_data`), else ``"zero"``."""
    if init != "auto":
        return init
    return "private" if small else "zero"


def resolve_configs(params, hessian_bound, regression, sample_weight=None, n_features=None,
                    released_count=None, warm_start=False):
    """The configurations a fit may take (:func:`resolve_config`): one, unless
    ``n_samples_hint="private"`` at a finite epsilon, then one per regime of the row count
    (:func:`regime_counts`), each with ``private_row_count``. ``released_count``: a count an
    earlier fit released (``warm_start``): the one configuration of its regime, no new count.
    ``warm_start``: the fit adds trees to a fitted model, so never takes the constant regime.

    Returns
    -------
    configs : list of FitConfig
    """
    hint = params.get("n_samples_hint")
    resolve = functools.partial(resolve_config, params, hessian_bound, regression,
                                sample_weight, n_features, constant=not warm_start)
    if not _is_private(hint):
        return [resolve(hint)]
    if released_count is not None:
        return [resolve(released_count)]
    epsilon = float(params["epsilon"])
    if not math.isfinite(epsilon):
        return [resolve(None)]  # without noise every rule takes its large regime
    thresholds = count_thresholds(regression, n_features)
    return [dataclasses.replace(resolve(n), private_row_count=True, count_thresholds=thresholds)
            for n in regime_counts(epsilon, thresholds)]


def resolve_config(params, hessian_bound, regression, sample_weight=None, n_features=None,
                   n_samples=None, constant=True):
    """A fit's :class:`~dpboost._config.FitConfig`: an estimator's parameters
    (``get_params(deep=False)``) with every ``"auto"`` resolved from the public inputs
    (:func:`resolve_schedule`, :func:`resolve_min_child_weight` with the loss's Hessian bound
    and the weight bound, :func:`resolve_n_estimators`, :func:`resolve_split_candidates`, and
    the regressor's small-data regime from the row count, :func:`small_data`; the interaction order,
    :func:`resolve_interactions`, or both orders where :func:`chooses_interactions`): what the
    plan and the boosting loop read.

    Parameters
    ----------
    params : dict
    hessian_bound : float
    regression : bool
        A regressor's (``n_estimators="auto"`` has a rule per task).
    sample_weight : array-like or None, default=None
        Only whether it is given is read (:func:`resolve_weight_bound`).
    n_features : int or None, default=None
        Columns of ``X`` (:func:`schema_width`), for ``n_estimators="auto"``.
    n_samples : float or None, default=None
        The row count the rules read: the public ``n_samples_hint`` or a released count;
        None: none (every rule's large regime).
    constant : bool, default=True
        Whether the constant regime may apply (:func:`constant_model`); a warm start's
        configuration never takes it.

    Returns
    -------
    config : FitConfig
    """
    epsilon = float(params["epsilon"])
    if chooses_interactions(params, n_samples, epsilon, n_features, regression):
        additive, unrestricted = (
            resolve_config({**params, "interaction_cst": cst}, hessian_bound, regression,
                           sample_weight, n_features, n_samples, constant)
            for cst in ("no_interactions", None))
        return dataclasses.replace(additive, interaction_choice=(additive, unrestricted))
    interaction_cst, split_selection = resolve_interactions(
        params["interaction_cst"], params["split_selection"], n_samples, epsilon, n_features,
        regression)
    learning_rate, subsample = resolve_schedule(
        params["learning_rate"], params["subsample"], epsilon,
        unamplified=(SPLIT_SELECTIONS[split_selection].reads_records
                     and float(params["delta"]) > 0))
    weight_bound = resolve_weight_bound(sample_weight, params["sample_weight_bound"],
                                        params.get("class_weight"), params.get("classes"))
    small = small_data(n_samples, epsilon, regression)
    # The small regime's own trees (n_estimators "auto"): few, and leaves without a weight
    # threshold. A user's number of trees splits the budget its own way: the threshold holds off
    # its noisier leaves, and the mean takes the larger share.
    own_trees = small and params["n_estimators"] == "auto"
    min_child_weight = resolve_min_child_weight(
        SMALL_MIN_CHILD_WEIGHT if own_trees and params["min_child_weight"] == "auto"
        else params["min_child_weight"], params["leaf_noise"], params["epsilon"],
        hessian_bound, weight_bound)
    renyi_filter = params.get("renyi_filter")
    check_early_stopping(params)
    alone = constant and constant_model(params, n_samples, epsilon, regression)
    return FitConfig(
        epsilon=epsilon, delta=float(params["delta"]),
        n_estimators=(0 if alone else
                      SMALL_TREES if own_trees else
                      resolve_n_estimators(params["n_estimators"], epsilon, n_features,
                                           regression, n_samples,
                                           additive=interaction_cst == "no_interactions")),
        max_depth=params["max_depth"], max_bins=params["max_bins"],
        learning_rate=float(learning_rate),
        l2_regularization=float(params["l2_regularization"]),
        min_child_weight=min_child_weight, subsample=float(subsample),
        gradient_bound=float(params["gradient_bound"]),
        split_selection=split_selection,
        split_candidates=resolve_split_candidates(params["split_candidates"], n_samples,
                                                  epsilon, n_features, regression),
        leaf_noise=params["leaf_noise"], budget_allocation=params["budget_allocation"],
        trees_per_ensemble=params["trees_per_ensemble"],
        interaction_cst=interaction_cst, leaf_clipping=params["leaf_clipping"],
        gradient_filtering=params["gradient_filtering"],
        renyi_filter=None if renyi_filter is None else float(renyi_filter),
        weight_bound=weight_bound,
        private_feature_bounds=_is_private(params["feature_bounds"]),
        private_target_bounds=_is_private(params.get("target_bounds")),
        init=resolve_init(params["init"], small or alone),
        initial_share=(1.0 if alone else SMALL_INITIAL_SHARE if own_trees
                       else SMALL_GIVEN_TREES_SHARE if small else None),
        random_state=params["random_state"], verbose=params["verbose"],
        domain_groups=(n_features + 2 if params.get("domain_report") and n_features is not None
                       else 0),
        n_samples=n_samples, early_stopping=bool(params.get("early_stopping", False)),
        validation_fraction=float(params.get("validation_fraction", 0.1)),
        n_iter_no_change=int(params.get("n_iter_no_change", 20)),
        accounting=params.get("accounting", "auto"))


def _is_private(value):
    """Whether a public-input parameter asks for a private release (``"private"``)."""
    return isinstance(value, str) and value == "private"

"""The estimators' docstrings, written here so that ``_estimators`` holds code only.

Both classes share :data:`PARAMETERS` and :data:`ATTRIBUTES`; ``{extra}`` is where each class's
own target parameters go.
"""

PARAMETERS = """
    Parameters
    ----------
    epsilon : float, default=1.0
        Total privacy budget of ``fit`` under add/remove of one record, in (0, inf]: pure
        epsilon-DP with ``delta=0``, (epsilon, delta)-DP otherwise. ``np.inf`` trains the
        non-private NP baseline through the same code: argmax splits, exact leaves, every tree on
        every record, no gradient filtering or leaf clipping.
    delta : float, default=1e-5
        In [0, 1). ``0``: pure DP, DPBoost's accounting (eps / 2 to the levels, eps / 2 to the
        leaves of each tree). ``> 0``: Renyi-DP accounting (Mironov 2017) with Google's
        dp-accounting, converted to (epsilon, delta): the exponential mechanism counts as
        eps^2/8-zCDP (bounded range, Cesar & Rogers 2021), each tree gets the same zCDP budget,
        70 % to the splits and 30 % to the leaves (DP-XGB), calibrated by bisection so the total
        is within 1e-3 below ``epsilon``. Choose it public and well below 1 / n_samples.
    accounting : {"auto", "rdp"}, default="auto"
        How a fit with ``delta > 0`` certifies its epsilon. ``"auto"``: after the Renyi
        bisection, the trees' zCDP budget is raised as far as Google's privacy-loss-distribution
        (PLD) accountant certifies the plan within ``epsilon`` (8-9 % less noise for the default
        trees at epsilon 0.01-1), wherever it applies (Gaussian and Laplace releases, sampled
        or not, data-independent splits; not with the exponential mechanism, private category
        lists, an individual filter or early stopping), and every spend is the smaller of the
        Renyi and the PLD epsilon. ``"rdp"``: Renyi accounting only (a private search's trials,
        which compose as zCDP). docs/privacy.md, PLD accounting.
    leaf_noise : {"laplace", "gaussian", "average"}, default="gaussian"
        ``"laplace"``: the clipped leaf value with Laplace noise (DPBoost). ``"gaussian"``: the
        leaf's gradient and Hessian sums with Gaussian noise, 90 % of the leaf's budget on the
        gradient sum (S-BDT; L2 sensitivity ``sqrt(g*^2 + c^2 h*^2)`` of ``(G, c H)``), and the
        Newton leaf ``-G~ / max(H~ + lambda, lambda)`` clipped to ``+-g*/h*`` (DP-XGB);
        needs ``delta > 0`` and ``l2_regularization > 0``; GLC does not apply. ``"average"``: the
        leaf's gradient sum and record count with Laplace noise of L1 sensitivity ``g* + 1``, and
        the noisy average ``-G~ / max(n~ + lambda, 1 + lambda)`` (DP-XGBoost's noisy average);
        with ``leaf_clipping`` the released value is clipped to GLC's bound, otherwise to g*.
        Its noise on the leaf value shrinks with the leaf's size, unlike ``"laplace"``'s.
    min_child_weight : float or "auto", default=0.0 (classifier), "auto" (regressor)
        A leaf whose released weight (noisy Hessian sum with ``"gaussian"``, noisy count with
        ``"average"``) is below it gets the value 0. Decided on released values only, so it costs
        nothing more; it never removes a split candidate (docs/privacy.md, rule 2), unlike XGBoost's.
        A number > 0 needs ``leaf_noise`` "gaussian" or "average". ``"auto"``, resolved at each
        ``fit`` from that fit's epsilon (so ``set_params(epsilon=...)`` and searches over epsilon
        stay consistent): the released weight of about 200 / epsilon records (``200 h* /
        epsilon`` with Gaussian leaves, h* the loss's Hessian bound; ``200 / epsilon`` with
        ``"average"``), 0 with Laplace leaves or ``epsilon=inf``, and 0 in the regressor's
        small-data regime with ``n_estimators="auto"`` (``n_samples_hint``: there no leaf
        holds that many records).
    subsample : float or "auto", default="auto" (classifier), 1.0 (regressor)
        Each tree is grown on a Poisson sample of its records, each kept with probability
        ``subsample`` in (0, 1] (XGBoost's name). ``"auto"``, resolved at each ``fit`` from its
        epsilon: 0.1 below epsilon 0.5, 0.3 from it on (1 at ``epsilon=inf``, and with
        ``delta > 0`` when the splits read the records, which get no amplification); with it
        the learning rate's ``"auto"``. Pure DP: the tree may spend
        ``log(1 + (e^eps_t - 1) / subsample)`` on its sample for a cost of eps_t (amplification
        by subsampling, Balle et al. 2018; docs/privacy.md, Accounting). With ``delta > 0`` trees whose releases
        are all Gaussian (``split_selection="random"``, ``leaf_noise="gaussian"``) are accounted
        as Poisson-sampled Gaussian mechanisms; other trees get no amplification.
    split_selection : {"exponential", "cyclical", "random", "auto"}, default="auto"
        ``"exponential"``: each node picks among every (feature, bin, missing side) candidate
        with the exponential mechanism (DPBoost). ``"cyclical"``: the same, among the candidates
        of feature ``t mod n_features`` only, for tree t of each output (DP-XGB). ``"random"``: a
        uniformly random feature, then a uniformly random candidate of it, independent of the
        data, so the whole budget goes to the leaves (DP-TR "random boosting", Maddock et al.
        2022). ``"auto"``: ``"exponential"`` where the trees are unrestricted
        (``interaction_cst`` None, given or ``"auto"``'s), else ``"random"``.
    interaction_cst : {None, "no_interactions", "auto"}, default="auto"
        ``"no_interactions"`` (scikit-learn's name): every tree splits on one feature only, so
        the model is additive in the features; tree t of each output takes feature
        ``t mod n_features`` (in turn, as DP-EBM and S-BDT's cyclical feature interactions) and
        chooses its splits among that feature's candidates by ``split_selection``. A public
        choice: it changes no sensitivity. ``split_selection="cyclical"`` is
        ``"exponential"`` with ``"no_interactions"``. None: every tree may split on any feature.
        ``"auto"`` (``_auto.resolve_interactions``): None at ``epsilon=inf`` and, for the
        classifier, where its row count (``n_samples_hint``) times epsilon is at least 8,000
        per feature, else ``"no_interactions"``: on the tuning splits of
        ``bench_capacity.py`` unrestricted depth-6 trees gained 0.013 ROC AUC on average from
        there on and lost up to 0.019 below it (benchmarks/README.md, "Interactions against the
        row count times epsilon"); the regressor's lost at every finite epsilon on 3 of 5 sets.
        Between 3,000 and 8,000 per feature the classifier (two classes, ``split_selection``
        "auto", no ``warm_start``, ``early_stopping``, ``renyi_filter`` or Hessian sketch)
        chooses on its data (``_interaction_choice``; docs/privacy.md, Private choice of
        interactions): each record falls by its own coin into one of four parts, additive
        trees are boosted on 10 % of the records and unrestricted ones on another 10 %, a
        comparison of their ROC AUCs on a third 10 % is released (sensitivity 1), and
        the favoured trees are boosted on the other 70 %: the model. A record is read by one
        part only, so the fit costs epsilon. On the tuning splits: +0.012 ROC AUC on average in
        that band, +0.07 where interactions matter, at most -0.007 (benchmarks/README.md, "A
        private choice of interactions").
    monotonic_cst : array-like of int of shape (n_features,), dict or None, default=None
        scikit-learn's monotonic constraints: per feature -1 (decreasing), 0 (none) or +1
        (increasing), or a dict by column name or index (others 0). Enforced on the released
        values, as post-processing (free): each tree's leaf values are clipped top-down into
        the intervals LightGBM's "basic" method gives the children of a constrained split, so
        every tree, and the model, is monotone along each constrained feature (NaN is not
        ordered). Regression and two classes (positive class ``classes[1]``) only; never on a
        categorical feature. ``ValueError`` otherwise, before any budget is spent.
    split_candidates : {"auto", "uniform", "log", "sketch", "hessian"}, default="auto" (classifier), "hessian" (regressor)
        Where the ``max_bins - 1`` thresholds of each numeric feature lie. ``"auto"``, resolved
        at each ``fit`` from public inputs: the regressor's ``"hessian"``; for the classifier
        ``"sketch"`` where its row count (``n_samples_hint``) times epsilon reaches 700 per
        feature, and without noise, ``"log"`` otherwise (the sketch's share and noisy
        quantiles cost more than they bring on fewer records per unit of epsilon; chosen on
        tuning splits, ``benchmarks/README.md``, "Split candidates against the row count times
        epsilon" and "A log grid for wide amounts"). ``"uniform"``: the
        equal-width grid inside ``feature_bounds``, free. ``"log"``: the same, except that a
        numeric feature whose bounds are nonnegative and at least 1,000 units apart
        (``_candidates.LOG_GRID_SPAN``: amounts, counts, durations) has its grid on
        ``log1p(x - lower)``, thresholds ``lower + expm1(b / max_bins * log1p(upper -
        lower))``; free (the bounds alone decide). ``"sketch"``: quantiles of a private
        histogram (DP-XGBoost, Grislain & Gonzalvez 2021): the counts of every numeric feature
        on a grid ``8 * max_bins`` fine are released once with Laplace noise of L1 sensitivity
        ``n_numeric_features`` at 10 % of ``epsilon`` (an entry of ``privacy_ledger_`` with
        tree -1), and the thresholds are their quantiles, mixed with 10 % of uniform mass so
        they are strictly increasing; a value many records share (a fine bin heavier than one
        quantile, its neighbours not) gets one threshold on its edge, the rest of the mass the
        others (LightGBM's bin finder). Helps features whose mass is far from uniform inside
        their bounds (skewed amounts, generous bounds, common values). ``"hessian"``: DP-TR's
        adaptive Hessian sketch (Maddock et al. 2022): numeric features are binned on a fine equal-width grid of
        255 bins; before 5 evenly spaced trees of each output (1 for the square loss, whose
        Hessians are constant) the Hessian sums of every numeric feature on that grid are
        released (Gaussian noise of L2 sensitivity ``h* sqrt(n_numeric_features)`` with
        ``delta > 0``, Laplace of L1 sensitivity ``h* n_numeric_features`` otherwise; together
        10 % of the budget, entries of ``privacy_ledger_`` with tree -1), and the next trees
        choose among the ``max_bins - 1`` boundaries of that grid at equal quantiles of the
        released Hessian weight (mixed with 10 % uniform mass; fewer where one fine bin holds
        more than a quantile). Categorical features keep their codes, and with any setting a
        node chooses only among the boundaries between two categories.
    n_estimators : int or "auto", default="auto"
        Number of trees T, >= 1 (per class for one-vs-rest classifiers). ``"auto"``, resolved
        at each ``fit`` from public inputs: for the classifier 50 below epsilon 0.03 (fewer,
        less noisy trees at the smallest budgets; chosen on ``adult.test``,
        ``benchmarks/README.md``, "The privacy-utility frontier"), 400 additive trees where its
        row count (``n_samples_hint``) times epsilon reaches 7,000, and without noise (more
        trees fit more of the signal where the noise is small: "The classifier's trees against
        the row count times epsilon"), and 200 otherwise; for the regressor, from
        epsilon and the number of columns p of ``X``, ``max(200, round(25 min(1, epsilon / 2)
        ** 0.4 p))``: 7.5 trees per feature at epsilon 0.1, 18.9 at 1, 25 from 2 on (with one
        feature per tree the shrinkage per feature must grow with the features and with
        epsilon; chosen on inner tuning splits of the shared regression sets, "Regression
        against DP-EBM"). The number fitted is ``n_estimators_``.
    max_depth : int, default=6 (classifier), 4 (regressor)
        Depth of every tree, in [1, 10]. Trees are complete: every node splits (docs/privacy.md, rule 3).
    learning_rate : float or "auto", default="auto" (classifier), 0.1 (regressor)
        Shrinkage eta in (0, 1]. ``"auto"``, resolved at each ``fit`` from its epsilon: 0.1
        below epsilon 0.5, 0.2 from it on (the classifier's preset, chosen on ``adult.test``:
        benchmarks/README.md, "The privacy-utility frontier"). The regressor's is low because its
        leaf noise goes straight into the RMSE (``bench_blocks_grid.py --candidates``). It is also the ratio of geometric
        leaf clipping and of the EoE record shares (Li et al. 2020, Sec. 3).
    l2_regularization : float, default=10.0 (classifier), 1.0 (regressor)
        lambda >= 0 in the gain (Eq. 3) and the leaf value (Eq. 4; Newton leaves
        ``-G~ / max(H~ + lambda, lambda)``: a large lambda damps leaves whose noisy Hessian sum
        is small, S-BDT's setting).
    max_bins : int, default=32
        Number of equal-width bins per feature inside ``feature_bounds``, in [2, 255]; each node
        chooses among ``n_features * (max_bins - 1)`` candidates (with
        ``split_candidates="hessian"``: among at most ``max_bins - 1`` boundaries per numeric
        feature of the sketch's 255-bin grid).
    trees_per_ensemble : int, default=50
        T_e, the trees of one EoE ensemble (used by ``budget_allocation="eoe"``).
    budget_allocation : {"eoe", "sequential", "parallel"}, default="sequential"
        ``"eoe"``: DPBoost's Ensemble of Ensembles (Algorithm 2): ``ceil(T / T_e)`` ensembles
        composed sequentially with ``epsilon / N_e`` each; the trees of one ensemble see disjoint
        records (each record drawn independently to position t_e with probability
        ``eta (1 - eta)^t_e / (1 - (1 - eta)^T_e)``). ``"sequential"`` (SEQ): every tree sees every
        record with ``epsilon / T``. ``"parallel"`` (PARA, Zhao et al. 2018): tree t sees a disjoint
        ``2^-(t+1)`` share of the records with the whole ``epsilon``.
    gradient_bound : float, default=0.5 (classifier), 1.0 (regressor)
        g* > 0, the bound on one record's gradient (Li et al. 2020's g*). Logistic and softmax
        gradients lie in (-1, 1), square-loss gradients on targets scaled to [-1, 1] in
        [-2, 2]; a tree clips them to ``[-g*, g*]``, or ignores the records beyond with
        ``gradient_filtering``. Every sensitivity scales with it: the gain's ``3 g*^2``
        (Lemma 1), the Laplace leaf's ``g* / (1 + lambda)`` (Lemma 2), the Gaussian leaf
        pair's ``sqrt(g*^2 + c^2 h*^2)`` (DP-XGB). A smaller bound lowers the noise and biases the
        records it clips (S-BDT clips at 0.3-0.5).
    renyi_filter : float in (0, 1] or None, default=None
        Individual privacy accounting with a Renyi filter (Feldman & Zrnic 2021; as S-BDT,
        Peinemann et al. 2024): a record's loss in a tree is that of its own clipped
        ``(g, h)`` in the Gaussian leaf release, not the worst case, so well-fitted records
        spend less. Every record's budget is the Renyi curve of
        ``k = round(renyi_filter * n_estimators)`` (times the outputs) worst-case trees, the
        noise is planned for ``k`` trees, ``n_estimators`` trees are grown, and a record leaves
        a tree once its own losses would exceed its budget at some order. None: worst-case
        accounting. Needs ``leaf_noise="gaussian"``, ``delta > 0``,
        ``budget_allocation="sequential"``, and ``split_selection="random"`` when
        ``subsample < 1``; splits by a mechanism and the sketches stay worst-case
        (docs/privacy.md, Individual Renyi filter).
    gradient_filtering : bool, default=False
        GDF (Sec. 3.1): each tree ignores records with ``|g| > g*``. When False, gradients are
        clipped to ``[-g*, g*]`` instead, which keeps the same sensitivities.
    leaf_clipping : bool, default=True
        GLC (Sec. 3.1): clip leaf values of the tree at ensemble position t_e to
        ``+-g* (1 - eta)^t_e`` before noise, so their sensitivity is ``min(g* / (1 + lambda),
        2 g* (1 - eta)^t_e)`` (Corollary 2). For SEQ and PARA the position is the tree index.
    feature_bounds : array-like of shape (n_features, 2) or (2,), dict, "private" or None, default=None
        Public ``(lower, upper)`` of each feature; values outside are clipped. A dict maps a
        column name (or index) to its pair (as DP-EBM's ``privacy_bounds``); every numeric
        column needs an entry, categorical ones none. ``"private"``:
        released by the fit from the data at 10 % of ``epsilon`` (a Laplace histogram of every
        numeric feature on a public log grid from 1e-6 to 1e12 in magnitude, 8 bins per decade;
        the bounds are the outer edges of its 0.5 % and 99.5 % quantiles after the noise floor;
        an entry of ``privacy_ledger_`` with tree -1, level -1). None: read from the data with a
        :class:`~dpboost.PrivacyLeakWarning` (not private). Rows of categorical features are ignored (set
        to ``(-0.5, n_categories - 0.5)``).
    categorical_features : None, "from_dtype", array-like of int, str or bool, \
default="from_dtype"
        Categorical columns, as scikit-learn's HistGradientBoosting: indices, names, a boolean
        mask, or ``"from_dtype"`` (a DataFrame's ``category``, object and string columns, a
        polars ``String``, ``Categorical`` or ``Enum``, and every column ``categories`` names).
        None: no categorical column (a cell that is not a number is then missing). A value is
        coded by its position in the column's public category list; values not in the list and
        missing values go to the missing-value bin. Split candidates follow the list's order
        ("first k categories vs the rest"), which is public, and go through the same mechanism.
        Dtypes are schema: fix those that pandas infers from the values (``read_csv(dtype=...)``).
    categories : dict, "private" or None, default=None
        Public category list per categorical column (key: name or index), or ``"private"`` (as
        the whole parameter: every categorical column; as a dict value: that column) to release
        the list from the data: the values whose Gaussian-noised count clears a threshold, sorted
        as text, the others missing (``CATEGORIES_SHARE`` = 10 % of epsilon for the noise, half
        of ``delta`` for the threshold; needs ``delta > 0``; docs/privacy.md, Private category
        lists). A column it names must be categorical (ValueError otherwise, except under
        ``"from_dtype"``, where naming it declares it). A column without an entry, a
        ``category`` / ``Categorical`` / ``Enum`` dtype included, has its list read from the
        data with a :class:`~dpboost.PrivacyLeakWarning` naming the column.
    sample_weight_bound : float or None, default=None
        W > 0, the public upper bound on one record's ``sample_weight`` (needed to pass
        ``sample_weight`` to ``fit``). Each weight is clipped into ``[0, W]`` record by record
        (NaN and non-numbers weigh 0); gradients, Hessians and counts are multiplied by it and
        every sensitivity by ``W`` (times the largest ``class_weight``): the guarantee is for
        adding or removing one record of weight at most W (docs/privacy.md, Sample weights).
    init : {"auto", "private", "zero"}, default="zero" (classifier), "auto" (regressor)
        The scores every output starts from (scikit-learn's ``init``). ``"auto"``:
        ``"private"`` where the regressor's row count (``n_samples_hint``) times epsilon is
        below 700 (then
        with half of the budget), else ``"zero"``. ``"private"``: the constant that fits the
        data, released once before the grid and the trees (the class counts, or the target's
        sums, with Laplace noise at ``INITIAL_SHARE`` = 10 % of epsilon when ``delta = 0``,
        else Gaussian noise whose share of epsilon the trees give up; Laplace at any delta
        from half the budget on; sensitivity W; the regressor's mean
        target, the classifier's log-odds of the class shares); stored in the leaves of the
        first boosting stage. ``"zero"``: 0 (DPBoost's ``F0 = 0``), spending nothing; what
        ``"auto"`` is elsewhere, as with the shipped numbers of trees the release did not pay
        for its share (benchmarks/README.md, "Private initial score"). A ``warm_start`` fit
        continues from the fitted scores (docs/privacy.md, Private initial score).
    {extra}
    random_state : int, numpy.random.Generator or None, default=None
        Source of all randomness of ``fit``. None (for every release): OpenDP's exact samplers
        with the operating system's randomness, safe against floating-point attacks (Mironov
        2012). An integer or Generator: numpy floating-point noise, reproducible and therefore
        predictable, for experiments only; ``fit`` emits a :class:`~dpboost.ReproducibleNoiseWarning`
        (filter it to opt in). A ``NoiseSource`` instance (``dpboost._mechanisms``) is used as
        it is.
    verbose : int, default=0
        With ``verbose >= 1``, a progress bar (tqdm, on stdout) redrawn after each composition
        group (ensemble, or tree): trees done out of planned and epsilon spent, both fixed by
        the plan (no elapsed time or rate, which track n).
    diagnostics : bool, default=False
        Store ``filtered_fraction_``, the exact GDF filtered fraction per tree. It is a statistic
        of the private data and is not differentially private: it emits a PrivacyLeakWarning.
    domain_report : bool, default=False
        Release, before anything else, noisy counts of the records each public input treats
        apart, per column: cells missing, not a number (numeric) or not in the column's list
        (categorical), values below or above public bounds; labels not in ``classes`` or
        targets that are not numbers (records left out), targets outside public
        ``target_bounds``; and the number of records. One Gaussian release (``delta > 0``) or
        Laplace release (``delta = 0``) whose noise alone costs 5 % of epsilon
        (``_domain.DOMAIN_SHARE``), composed with the rest; in the ledger (level -3). Stored
        in ``domain_report_``; a UserWarning names each count above 5 % of the released
        records that its noise cannot explain (docs/privacy.md, Domain report). Not with
        ``dpboost.dask`` nor on a ``warm_start`` fit's added trees.
    n_jobs : int or None, default=None
        Threads of the Numba kernels in ``fit`` and ``predict``: None or -1 for all cores (as
        scikit-learn's HistGradientBoosting), -2 for all but one, ... The model does not depend on it.
    accountant : PrivacyAccountant or None, default=None
        A budget shared across fits. ``fit`` reserves its planned spend before reading any
        record (with public ``classes``; otherwise right after reading ``y``) and raises
        :class:`~dpboost.BudgetExceededError` if it does not fit in what remains (nothing fitted,
        nothing spent); a successful fit registers its ledger. ``clone`` (grid searches,
        cross-validation) keeps the same accountant.
    warm_start : bool, default=False
        As scikit-learn's HistGradientBoosting: with a fitted model, raising ``n_estimators``
        and calling ``fit`` again adds the missing stages (an equal ``n_estimators`` adds
        nothing and spends nothing). The new trees spend the new call's ``epsilon``, composed
        sequentially with the earlier fits in ``privacy_ledger_`` (each entry carries its
        fit's identifier), ``privacy_spent_`` and the ``accountant``; they continue from the
        fitted model's scores on its released grid, category lists and classes or target
        bounds, none read from the data again. ``max_depth``, ``max_bins``,
        ``split_candidates``, ``loss``, ``delta`` and the public inputs must not change.
    early_stopping : bool, default=False
        Stop boosting once a private validation score stops improving (as HistGradientBoosting's
        ``early_stopping``; off by default, an opt-in). Each record is held out of every tree
        with probability ``validation_fraction`` by its own secret coin; every 10 stages
        (``VALIDATION_INTERVAL``) the sum of the held-out records' losses, each clipped to a
        public bound, is released with noise calibrated so that these releases cost no more
        than the trees (parallel composition: docs/privacy.md, Early stopping). The fit is
        charged the whole plan's epsilon even when it stops early. Needs
        ``budget_allocation="sequential"``, no ``renyi_filter`` and no ``warm_start``
        (ValueError before any budget is spent); with ``n_estimators < 10`` nothing is held
        out and nothing released.
    validation_fraction : float in (0, 1), default=0.1
        Probability that a record is held out for the validation score (early stopping only).
    n_iter_no_change : int >= 1, default=20
        Stop when the best released validation loss is this many stages old (checked every 10
        stages, so the default stops after two checks without improvement: one noisy check is
        not trusted alone). Early stopping only.
"""

ATTRIBUTES = """
    Attributes
    ----------
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,), dtype=object
        Only when X has string column names.
    feature_bounds_ : ndarray of shape (n_features_in_, 2), dtype=float64
        The bounds used: ``feature_bounds``, or those read from the data.
    categories_ : dict of int -> ndarray of shape (n_categories,), dtype=object
        Category list of each categorical column (empty dict without categorical features).
    privacy_spent_ : float
        Composed epsilon of everything ``fit`` released, pure DP or at ``delta`` (<= ``epsilon``;
        inf for NP; with ``warm_start``, of every fit that made the model).
    privacy_ledger_ : list of LedgerEntry
        One entry per release: split selection of each level and leaf release of each tree.
        With ``early_stopping=True``, the whole plan (charged as planned): the releases made
        are its entries of the first ``n_iter_`` stages and the checks up to them.
    n_estimators_ : int
        Boosting stages fitted: ``n_estimators``, "auto" resolved (``n_iter_`` with early
        stopping).
    n_iter_ : int
        Boosting stages fitted (HistGradientBoosting's name): ``n_estimators_``, fewer when
        early stopping stopped the fit.
    validation_score_ : ndarray of shape (n_checks,), dtype=float64
        Only with ``early_stopping=True``: the released (noisy) validation losses, one per
        check, the sum over the held-out records of their clipped loss.
    filtered_fraction_ : ndarray of shape (n_estimators_,), dtype=float64
        Only with ``diagnostics=True``: fraction of each tree's sampled records removed by GDF
        or by the individual filter (``renyi_filter``).
    domain_report_ : dict
        Only with ``domain_report=True``: ``{column: {kind: released count}}`` (columns by
        name or index, then ``"target"`` and ``"records"``), noisy counts (may be negative).
    row_count_ : float
        Only with a private row count (``n_samples_hint="private"``, finite epsilon): the
        released number of records, floored at 0.
    interaction_cst_ : str or None
        The trees' interaction order: ``interaction_cst`` with ``"auto"`` resolved, or chosen
        on the data.
    interaction_statistic_ : float
        Only where the classifier chose its interactions on the data: the released comparison
        of the two models (the unrestricted trees were taken where it exceeds 0.2 times the root
        of its number of buckets, ``_interaction_choice.release_choice``).
"""

CLASSIFIER = ("""Differentially private gradient-boosted trees for classification.

    The defaults are dpboost's best configuration in its benchmarks (``benchmarks/README.md``,
    "The privacy-utility frontier"), close to S-BDT's (Peinemann et al. 2024):
    (epsilon, delta)-DP by Renyi accounting; a private row count (1 % of epsilon) that the
    ``"auto"`` rules read; 200 trees of depth 6 (50 below epsilon 0.03, 400 where the row count
    times epsilon reaches 7,000 and the trees are additive), each on its own Poisson sample of
    the records (rate 0.1 below epsilon 0.5, 0.3 from it on; amplification by
    subsampling) and splitting on one feature only, the features in turn (an additive model);
    data-independent random splits (DP-TR, Maddock et al. 2022) on the grid (log-spaced for
    wide nonnegative features, ``split_candidates``), so the
    whole budget goes to Gaussian leaf statistics with Newton leaves (DP-XGB); unrestricted
    trees with exponential-mechanism splits instead without noise or where the row count
    times epsilon reaches 8,000 per feature, and a private choice between the two from 3,000
    per feature on (``interaction_cst``); gradients clipped
    to 0.5, lambda 10, learning rate 0.1 below epsilon 0.5 and 0.2 from it on; the logistic
    loss (multinomial for K > 2 classes). :meth:`~dpboost.DPGBClassifier.dpboost_paper` gives DPBoost's setting (Li et
    al. 2020).
    ``fit`` is (``epsilon``, ``delta``)-DP (pure epsilon-DP with ``delta=0``) with respect to
    the training records given public ``feature_bounds``, ``classes``, ``categories`` and
    hyper-parameters. With K > 2 classes, each boosting round adds one tree per class, composed
    sequentially.
""" + PARAMETERS.replace("{extra}", """classes : array-like of shape (n_classes,), default=None
        The public class labels (at least 2). None: read from ``y`` with a PrivacyLeakWarning.
    class_weight : dict or None, default=None
        Public weight per class label (``{label: weight >= 0}``; a label left out weighs 1),
        multiplied into each record's sample weight; the weight bound is
        ``sample_weight_bound`` (1 without ``sample_weight``) times the largest class weight.
        ``"balanced"`` is refused: it reads the class frequencies from the training data, which
        are not public.
    n_samples_hint : int >= 1, "private" or None, default="private"
        The number of training rows that ``n_estimators="auto"`` and
        ``interaction_cst="auto"`` read. An int: a public statement (e.g. a published data set
        size), never checked against the data (a check would depend on the private count).
        ``"private"``: a count released first, with Laplace noise at 1 % of epsilon
        (sensitivity 1; the rest of the fit is planned with 99 %, the configuration of every
        regime planned and reserved; docs/privacy.md, Private row count), stored as
        ``row_count_``. None: no row count; 200 additive trees at every finite epsilon from
        0.03 on.
    loss : {"square", "logistic", "softmax"}, default="softmax"
        ``"square"``: DPBoost's square loss on -1 / +1 labels, ``p = clip((F + 1) / 2)``.
        ``"logistic"``: the log-loss (DP-XGB), ``g = p - y`` in [-1, 1], ``h = p (1 - p)`` <= 1/4,
        ``p = sigma(F)``; gains keep counts in their denominators (sensitivity 3), Laplace leaves
        keep ``-G / (n + lambda)``, Gaussian leaves take the Newton step. With K > 2 classes both
        are one-vs-rest. ``"softmax"``: with K > 2 classes the multinomial log-loss, ``p =
        softmax(F)``, ``g_k = p_k - y_k``, ``h_k = p_k (1 - p_k)`` (same bounds, same budget: K
        trees per round, composed sequentially); with two classes it is ``"logistic"``.""")
        + ATTRIBUTES + """    classes_ : ndarray of shape (n_classes,)
        Sorted class labels; with two, ``classes_[1]`` is the positive class (label +1).

    References
    ----------
    Q. Li, Z. Wu, Z. Wen, B. He. Privacy-Preserving Gradient Boosting Decision Trees. AAAI 2020.
    """)

REGRESSOR = ("""Differentially private gradient-boosted trees for regression.

    Targets are clipped to the public ``target_bounds`` and scaled into [-1, 1] for training with
    the square loss (Li et al. 2020, Sec. 4); predictions are mapped back to target units and
    clipped to ``target_bounds`` (post-processing). The defaults (chosen on inner
    splits of the training parts of the shared regression sets; ``benchmarks/README.md``,
    "Regression against DP-EBM"): ``n_estimators="auto"`` trees (200 or more: 7.5 per feature at
    epsilon 0.1, 25 from epsilon 2 on) of depth 4 on every record, each splitting on one
    feature only, the features in turn (an additive model, as DP-EBM; at ``epsilon=inf``
    unrestricted trees on the best splits), random splits among the
    candidates of DP-TR's adaptive Hessian sketch, Gaussian leaf statistics with Newton leaves,
    gradients clipped to g* = 1 (no GDF, which drops the records of a distant mode for good),
    learning rate 0.1, lambda 1, ``min_child_weight`` 200 / epsilon; :meth:`~dpboost.DPGBClassifier.dpboost_paper`
    gives DPBoost's setting (Li et al. 2020).
""" + PARAMETERS.replace("{extra}", """target_bounds : tuple of float, "private" or None, default=None
        Public ``(lower, upper)`` of the target. ``"private"``: released by the fit as the
        numeric features' with ``feature_bounds="private"`` (in the same release: 10 % of
        ``epsilon``). None: read from ``y`` with a PrivacyLeakWarning.
    n_samples_hint : int >= 1, "private" or None, default="private"
        The number of training rows the ``"auto"`` rules read. An int: a public statement
        (e.g. a published data set size), never checked against the data (a check would depend
        on the private count). ``"private"``: a count released first, with Laplace noise at 1 %
        of epsilon (sensitivity 1; the rest of the fit is planned with 99 %; docs/privacy.md,
        Private row count), stored as ``row_count_``. Where the count times epsilon is below
        700 (``_auto.small_data``: few records per unit of budget) ``init="auto"`` releases
        the mean target, and ``n_estimators="auto"`` is 20 with 10 % of the budget on the mean
        and ``min_child_weight="auto"`` 0 (benchmarks/README.md, "The small-data regime's
        trees"; with ``n_estimators`` given, half of the budget and the usual threshold).
        Below 225
        (``_auto.constant_model``), with ``init`` and ``n_estimators`` both "auto", the model
        is the private mean target alone: the whole budget on it, no tree (``n_estimators_``
        is 1, a tree whose leaves all hold the mean; benchmarks/README.md, "The constant
        regime"). None: no count, the rules of a large data set.""")
        + ATTRIBUTES + """    target_bounds_ : tuple of float
        The target bounds used.

    References
    ----------
    Q. Li, Z. Wu, Z. Wen, B. He. Privacy-Preserving Gradient Boosting Decision Trees. AAAI 2020.
    """)


#: ``to_xgboost_json``'s docstring (the export's contract, ``_export``).
TO_XGBOOST_JSON = """The fitted model in XGBoost's JSON model format, for ``xgboost.Booster`` to serve.

        Each tree is written as it is: complete, in heap order (XGBoost's node ids), with the
        released split features, missing-value sides and leaf values (after shrinkage). A split
        "bin ``<= b`` goes left" becomes XGBoost's ``x < split_condition`` with the smallest
        float32 value that dpboost bins right of ``b``: XGBoost reads inputs as float32, and on
        every float32 input (values exactly at a threshold included) both send a record the same
        way. Missing values (NaN) follow the released side (``default_left``).

        The link is folded into the model so that ``Booster.predict`` returns:

        - a classifier with the logistic or softmax loss and two classes: ``binary:logistic``,
          ``base_score`` 0.5 (a margin of 0); predictions are ``predict_proba(X)[:, 1]``;
        - ``loss="softmax"`` with K > 2 classes: ``multi:softprob``, K trees per round in the
          order of ``classes_``, ``base_score`` 0; predictions are ``predict_proba(X)``;
        - ``loss="square"`` with two classes: ``reg:squarederror`` with ``(F + 1) / 2``
          (leaves halved, ``base_score`` 0.5); ``predict_proba(X)[:, 1]`` is that clipped to
          [0, 1];
        - a regressor: ``reg:squarederror`` in the units of ``y`` (leaves times
          ``(upper - lower) / 2``, ``base_score`` ``(lower + upper) / 2`` of ``target_bounds_``);
          ``predict(X)`` is that clipped to ``target_bounds_``, a step XGBoost has no way to
          store.

        ``output_margin=True`` gives the margins of :meth:`~dpboost.DPGBClassifier.decision_function` (classifiers with
        the logistic or softmax loss), and XGBoost's ``iteration_range`` selects boosting stages
        as dpboost's does.

        Returns
        -------
        text : str
            XGBoost's JSON model (``gbtree``; the fields of XGBoost >= 2.0, with ``base_score``
            as one number so that earlier readers load it too). Load it with
            ``xgboost.Booster().load_model(bytearray(text, "utf-8"))``, or write it to a
            ``.json`` file for ``xgboost.Booster(model_file=path)``. It holds
            ``n_outputs * n_estimators`` trees of ``2**(max_depth + 1) - 1`` nodes,
            ``n_features_in_`` features and their ``feature_names_in_`` (if fitted on a
            DataFrame), and the attributes ``dpboost_estimator``, ``dpboost_version`` and
            ``dpboost_categories`` (the category lists, JSON).

        Raises
        ------
        NotImplementedError
            A classifier with one-vs-rest outputs (``loss="logistic"`` or ``"square"`` with
            K > 2 classes): its probabilities are normalised per-class scores, a link no XGBoost
            objective has.
        ValueError
            A feature bound outside float32's range (XGBoost stores split conditions as
            float32).

        Notes
        -----
        Privacy: the export is post-processing of released values (split choices, leaf values,
        the grid) and public inputs (target bounds, category lists), so it carries the fit's
        guarantee and nothing more. XGBoost's node statistics have no released counterpart and
        are never statistics of the data: ``loss_changes`` and internal ``base_weights`` are 0
        (XGBoost's ``"gain"`` importance is 0), and the cover ``sum_hessian`` is the number of
        leaves below the node, a constant of the tree's shape, not a count of records. SHAP
        values (``pred_contribs=True``) are therefore those of a reference that sends an absent
        feature either way with probability 1/2, not the training distribution.

        Inputs: XGBoost reads ``X`` as float32, dpboost bins float64. On float32-representable
        inputs (``X.astype(np.float32)``) both route every record alike and the predictions
        agree up to float32 rounding of the leaf sums (about 1e-7 relative); a float64 value
        within float32 rounding of a threshold may go the other way. XGBoost refuses infinite
        values, which dpboost clips into the outer bins: replace them by the largest float32,
        ``big = np.finfo(np.float32).max; np.nan_to_num(X, nan=np.nan, posinf=big,
        neginf=-big)``, which both put there. Categorical columns must hold their codes, as dpboost encodes
        them: the position of the value in ``categories_[j]`` (NaN for a value not in the list
        or missing); the exported trees split those codes as numbers, exactly as dpboost does.
        """

#: The parameters of the prediction methods (:func:`predict_doc`).
_X = """
        X : array-like of shape (n_samples, n_features)"""
_ITERATION_RANGE = """
        iteration_range : (int, int) or None, default=None
            Only the boosting stages ``[begin, end)`` (XGBoost's name); None: all."""


def predict_doc(summary, returns, staged=False):
    """Decorator: a prediction method's numpydoc docstring from its ``summary`` and its
    ``returns`` (the lines under Returns, or Yields if ``staged``, continuation lines indented
    by 12) around the parameters every prediction method takes: ``X``, and ``iteration_range``
    unless ``staged``."""
    section = "Yields\n        ------" if staged else "Returns\n        -------"
    parameters = _X if staged else _X + _ITERATION_RANGE

    def apply(method):
        method.__doc__ = (f"{summary}\n\n        Parameters\n        ----------{parameters}\n\n"
                          f"        {section}\n        {returns}\n        ")
        return method
    return apply

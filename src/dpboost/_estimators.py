"""scikit-learn estimators: validation, ``random_state`` to one Generator, the boosting loop."""

import math
import warnings
from contextlib import contextmanager

import numba
import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
    validate_data,
)

from ._accounting import PrivacyLedger
from ._binning import (
    HESSIAN_SKETCH_BINS,
    SKETCH_RESOLUTION,
    BoundsBinner,
    category_boundaries,
    encode_categorical,
    fine_histograms,
    hessian_sketch_boundaries,
    resolve_categorical,
    sketch_thresholds,
)
from ._budget import HESSIAN_SKETCH_ROUNDS, SKETCH_SCOPE, plan_budget
from ._common import G_H_DTYPE, GRADIENT_BOUND, SAMPLE_INDEX_DTYPE
from ._grower import grow_tree
from ._histogram import build_level_histograms
from ._inspection import (
    model_from_json,
    model_to_json,
    privacy_report,
    split_count_importances,
    tree_text,
)
from ._loss import (
    logistic_loss_gradients,
    margin_to_proba,
    scale_target,
    softmax_loss_gradients,
    square_loss_gradients,
    unscale_target,
)
from ._mechanisms import (
    gaussian_mechanism,
    laplace_mechanism,
    make_noise,
    noise_scale,
    partition_records,
    poisson_sample,
)
from ._predictor import predict_binned
from ._validation import (
    PARAMETER_CONSTRAINTS,
    check_classes,
    check_feature_bounds,
    check_mechanisms,
    check_n_jobs,
    check_target_bounds,
    data_dependent,
    float_cells,
    label_codes,
    numeric_cells,
    warn_diagnostics,
    warn_reproducible_noise,
)

_PARAMETERS_DOC = """
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
    leaf_noise : {"laplace", "gaussian", "average"}, default="gaussian"
        ``"laplace"``: the clipped leaf value with Laplace noise (DPBoost). ``"gaussian"``: the
        leaf's gradient and Hessian sums with Gaussian noise of L2 sensitivity ``sqrt(g*^2 + h*^2)``
        and the Newton leaf ``-G~ / max(H~ + lambda, lambda)`` clipped to ``+-g*/h*`` (DP-XGB);
        needs ``delta > 0`` and ``l2_regularization > 0``; GLC does not apply. ``"average"``: the
        leaf's gradient sum and record count with Laplace noise of L1 sensitivity ``g* + 1``, and
        the noisy average ``-G~ / max(n~ + lambda, 1 + lambda)`` (DP-XGBoost's noisy average);
        with ``leaf_clipping`` the released value is clipped to GLC's bound, otherwise to g*.
        Its noise on the leaf value shrinks with the leaf's size, unlike ``"laplace"``'s.
    min_child_weight : float or "auto", default="auto"
        A leaf whose released weight (noisy Hessian sum with ``"gaussian"``, noisy count with
        ``"average"``) is below it gets the value 0. Decided on released values only, so it costs
        nothing more; it never removes a split candidate (docs/privacy.md, rule 2), unlike XGBoost's.
        A number > 0 needs ``leaf_noise`` "gaussian" or "average". ``"auto"``, resolved at each
        ``fit`` from that fit's epsilon (so ``set_params(epsilon=...)`` and searches over epsilon
        stay consistent): the released weight of about 200 / epsilon records (``200 h* /
        epsilon`` with Gaussian leaves, h* the loss's Hessian bound; ``200 / epsilon`` with
        ``"average"``), 0 with Laplace leaves or ``epsilon=inf``.
    subsample : float, default=1.0
        Each tree is grown on a Poisson sample of its records, each kept with probability
        ``subsample`` in (0, 1] (XGBoost's name). Pure DP: the tree may spend
        ``log(1 + (e^eps_t - 1) / subsample)`` on its sample for a cost of eps_t (amplification
        by subsampling, Balle et al. 2018; docs/privacy.md, Accounting). With ``delta > 0`` trees whose releases
        are all Gaussian (``split_selection="random"``, ``leaf_noise="gaussian"``) are accounted
        as Poisson-sampled Gaussian mechanisms; other trees get no amplification.
    split_selection : {"exponential", "cyclical", "random"}, default="random"
        ``"exponential"``: each node picks among every (feature, bin, missing side) candidate
        with the exponential mechanism (DPBoost). ``"cyclical"``: the same, among the candidates
        of feature ``t mod n_features`` only, for tree t of each output (DP-XGB). ``"random"``: a
        uniformly random feature, then a uniformly random candidate of it, independent of the
        data, so the whole budget goes to the leaves (DP-TR "random boosting", Maddock et al.
        2022).
    split_candidates : {"uniform", "sketch", "hessian"}, default="hessian"
        Where the ``max_bins - 1`` thresholds of each numeric feature lie. ``"uniform"``: the
        equal-width grid inside ``feature_bounds``, free. ``"sketch"``: quantiles of a private
        histogram (DP-XGBoost, Grislain & Gonzalvez 2021): the counts of every numeric feature
        on a grid ``8 * max_bins`` fine are released once with Laplace noise of L1 sensitivity
        ``n_numeric_features`` at 10 % of ``epsilon`` (an entry of ``privacy_ledger_`` with
        tree -1), and the thresholds are their quantiles, mixed with 10 % of uniform mass so
        they are strictly increasing. Helps features whose mass is far from uniform inside their
        bounds (skewed amounts, generous bounds). ``"hessian"``: DP-TR's adaptive Hessian
        sketch (Maddock et al. 2022): numeric features are binned on a fine equal-width grid of
        255 bins; before 5 evenly spaced trees of each output (1 for the square loss, whose
        Hessians are constant) the Hessian sums of every numeric feature on that grid are
        released (Gaussian noise of L2 sensitivity ``h* sqrt(n_numeric_features)`` with
        ``delta > 0``, Laplace of L1 sensitivity ``h* n_numeric_features`` otherwise; together
        10 % of the budget, entries of ``privacy_ledger_`` with tree -1), and the next trees
        choose among the ``max_bins - 1`` boundaries of that grid at equal quantiles of the
        released Hessian weight (mixed with 10 % uniform mass; fewer where one fine bin holds
        more than a quantile). Categorical features keep their codes, and with any setting a
        node chooses only among the boundaries between two categories.
    n_estimators : int, default=100
        Number of trees T, >= 1.
    max_depth : int, default=6
        Depth of every tree, in [1, 10]. Trees are complete: every node splits (docs/privacy.md, rule 3).
    learning_rate : float, default=0.3 (classifier), 0.1 (regressor)
        Shrinkage eta in (0, 1]. The regressor's is lower because its leaf noise goes straight
        into the RMSE (``bench_blocks_grid.py --candidates``). It is also the ratio of geometric
        leaf clipping and of the EoE record shares (Li et al. 2020, Sec. 3).
    l2_regularization : float, default=1.0
        lambda >= 0 in the gain (Eq. 3) and the leaf value (Eq. 4).
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
    gradient_filtering : bool, default=True
        GDF (Sec. 3.1): each tree ignores records with ``|g| > 1``. When False, gradients are
        clipped to [-1, 1] instead, which keeps the same sensitivities.
    leaf_clipping : bool, default=True
        GLC (Sec. 3.1): clip leaf values of the tree at ensemble position t_e to
        ``+-(1 - eta)^t_e`` before noise, so their sensitivity is ``min(1 / (1 + lambda),
        2 (1 - eta)^t_e)`` (Corollary 2). For SEQ and PARA the position is the tree index.
    feature_bounds : array-like of shape (n_features, 2) or (2,), default=None
        Public ``(lower, upper)`` of each feature; values outside are clipped. None: read from
        the data with a :class:`PrivacyLeakWarning` (not private). Rows of categorical features
        are ignored (set to ``(-0.5, n_categories - 0.5)``).
    categorical_features : None, "from_dtype", array-like of int, str or bool, default=None
        Categorical columns, as scikit-learn's HistGradientBoosting: indices, names, a boolean
        mask, or ``"from_dtype"`` (a DataFrame's ``category`` and string columns). A value is
        coded by its position in the column's public category list; values not in the list and
        missing values go to the missing-value bin. Split candidates follow the list's order
        ("first k categories vs the rest"), which is public, and go through the same mechanism.
    categories : dict or None, default=None
        Public category list per categorical column (key: name or index). A pandas ``category``
        column without an entry takes its dtype's declared categories; any other column without
        one has its list read from the data, with a :class:`PrivacyLeakWarning`.
    {extra}
    random_state : int, numpy.random.Generator or None, default=None
        Source of all randomness of ``fit``. None (for every release): OpenDP's exact samplers
        with the operating system's randomness, safe against floating-point attacks (Mironov
        2012). An integer or Generator: numpy floating-point noise, reproducible and therefore
        predictable, for experiments only; ``fit`` emits a :class:`ReproducibleNoiseWarning`
        (filter it to opt in). A ``NoiseSource`` instance (``dpboost._mechanisms``) is used as
        it is.
    verbose : int, default=0
        With ``verbose >= 1``, print one line per composition group (ensemble, or tree): trees
        done and epsilon spent, both fixed by the plan (no wall-clock time, which tracks n).
    diagnostics : bool, default=False
        Store ``filtered_fraction_``, the exact GDF filtered fraction per tree. It is a statistic
        of the private data and is not differentially private: it emits a PrivacyLeakWarning.
    n_jobs : int or None, default=None
        Threads of the Numba kernels in ``fit`` and ``predict``: None or -1 for all cores (as
        scikit-learn's HistGradientBoosting), -2 for all but one, ... The model does not depend on it.
"""

_ATTRIBUTES_DOC = """
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
        inf for NP).
    privacy_ledger_ : list of LedgerEntry
        One entry per release: split selection of each level and leaf release of each tree.
    filtered_fraction_ : ndarray of shape (n_estimators,), dtype=float64
        Only with ``diagnostics=True``: fraction of each tree's records removed by GDF.
"""


class _BaseDPGB(BaseEstimator):
    """Shared boosting loop of :class:`DPGBClassifier` and :class:`DPGBRegressor`."""

    _parameter_constraints = dict(PARAMETER_CONSTRAINTS)

    _loss = "square"

    def __init__(self, *, epsilon, delta, n_estimators, max_depth, learning_rate,
                 l2_regularization, max_bins, trees_per_ensemble, budget_allocation,
                 gradient_filtering, leaf_clipping, leaf_noise, min_child_weight, subsample,
                 split_selection, split_candidates, feature_bounds, categorical_features, categories, random_state,
                 verbose, diagnostics, n_jobs):
        self.epsilon = epsilon
        self.delta = delta
        self.leaf_noise = leaf_noise
        self.min_child_weight = min_child_weight
        self.subsample = subsample
        self.split_selection = split_selection
        self.split_candidates = split_candidates
        self.categorical_features = categorical_features
        self.categories = categories
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.learning_rate = learning_rate
        self.l2_regularization = l2_regularization
        self.max_bins = max_bins
        self.trees_per_ensemble = trees_per_ensemble
        self.budget_allocation = budget_allocation
        self.gradient_filtering = gradient_filtering
        self.leaf_clipping = leaf_clipping
        self.feature_bounds = feature_bounds
        self.random_state = random_state
        self.verbose = verbose
        self.diagnostics = diagnostics
        self.n_jobs = n_jobs

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the model with epsilon-differential privacy.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric features. NaN is a missing value (its own bin; every split candidate comes in
            a "missing left" and a "missing right" variant); +-inf are clipped to the bounds.
        y : array-like of shape (n_samples,)
            Labels (classifier) or targets (regressor).

        Returns
        -------
        self : object

        Raises
        ------
        ValueError
            Invalid parameter or combination, bounds of the wrong shape or with
            ``lower >= upper``, a wrong shape of ``X`` or ``y``: facts of the parameters and the
            schema, always before any noise is drawn. Never for a value of a record (README,
            "The data domain"): a label outside ``classes`` or a target that is not a number
            leaves its record out, a cell that is not a number is missing.
        """
        warn_reproducible_noise(self.random_state)
        min_child_weight = self._min_child_weight()
        check_mechanisms(self.leaf_noise, self.delta, self.l2_regularization, min_child_weight)
        lists, from_data = resolve_categorical(X, self.categorical_features, self.categories)
        if from_data:
            data_dependent("categories (of " + ", ".join(from_data) + ")", None)
        # An empty training set is a dataset like any other (its neighbour holds one record):
        # fit releases noise only, never raises for it.
        X = validate_data(self, _cells_as_numbers(X, lists), dtype=np.float64,
                          ensure_all_finite=False, ensure_min_samples=0)
        y = column_or_1d(y, warn=True)
        check_consistent_length(X, y)
        # Records outside the data domain (a label outside the public classes, a missing
        # target) are left out, each by its own value: a per-record decision.
        keep, y_scaled, target_attributes = self._encode_target(y)
        X = X[keep]
        numeric = np.setdiff1d(np.arange(X.shape[1]), list(lists))
        # The whole budget is fixed from public inputs (hyper-parameters, the number of
        # one-vs-rest outputs from the classes, which columns are numeric) before X is binned or
        # any noise is drawn.
        plan = plan_budget(
            epsilon=float(self.epsilon), n_estimators=self.n_estimators,
            max_depth=self.max_depth, learning_rate=float(self.learning_rate),
            l2_regularization=float(self.l2_regularization),
            budget_allocation=self.budget_allocation,
            trees_per_ensemble=self.trees_per_ensemble, leaf_clipping=self.leaf_clipping,
            n_outputs=y_scaled.shape[1], delta=float(self.delta), leaf_noise=self.leaf_noise,
            hessian_bound=self._hessian_bound(),
            split_selection=self.split_selection, subsample=float(self.subsample),
            sketch_features=numeric.size if self.split_candidates == "sketch" else 0,
            hessian_sketch_features=numeric.size if self.split_candidates == "hessian" else 0,
            hessian_sketch_rounds=1 if self._loss == "square" else HESSIAN_SKETCH_ROUNDS)
        if self.feature_bounds is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # an all-missing column
                finite = np.where(np.isfinite(X), X, np.nan)
                lower, upper = np.nanmin(finite, axis=0), np.nanmax(finite, axis=0)
            # A constant column still needs a non-empty interval (and an all-missing one, any).
            lower = np.nan_to_num(lower)
            upper = np.where(upper > lower, upper, lower + np.maximum(1.0, 1e-6 * np.abs(lower)))
            bounds = np.column_stack([lower, upper])
            if numeric.size:
                bounds = data_dependent("feature_bounds", bounds)
            with np.errstate(over="ignore", divide="ignore"):
                width = upper - lower
                wide = np.flatnonzero(~np.isfinite(width) | ~np.isfinite(1.0 / width))
            if wide.size:
                # Read off the data: the message must not quote them.
                raise ValueError(f"feature_bounds read from the data for column {wide[0]} do "
                                 "not span a finite, normal positive width; pass public "
                                 "feature_bounds.")
        else:
            bounds = check_feature_bounds(self.feature_bounds, X.shape[1]).copy()
        for j, values in lists.items():
            if values.size == 0:
                raise ValueError(f"categories of column {j} is empty: a categorical feature needs "
                                 "at least one public category.")
            # One code per category; the grid puts each in its own bin when n <= max_bins.
            bounds[j] = (-0.5, values.size - 0.5)
        bounds = check_feature_bounds(bounds, X.shape[1])
        if self.diagnostics:
            warn_diagnostics()

        n_threads = check_n_jobs(self.n_jobs, numba.config.NUMBA_NUM_THREADS)
        noise = make_noise(self.random_state)
        ledger = PrivacyLedger()
        binner = BoundsBinner(bounds, HESSIAN_SKETCH_BINS if plan.hessian_sketches
                              else self.max_bins)
        with _numba_threads(n_threads):
            if plan.sketch is not None:
                binner = self._sketch_binner(X, bounds, numeric, binner.thresholds(), plan.sketch,
                                             noise, ledger)
            candidates = _initial_candidates(binner, X.shape[1], lists)
            model, filtered = self._boost(binner.transform(X, order="F"), binner.max_bins,
                                          y_scaled, plan, noise, ledger, candidates, numeric,
                                          min_child_weight)

        # Fitted attributes are set only now: a fit that raised leaves nothing half-fitted.
        for name, value in target_attributes.items():
            setattr(self, name, value)
        self.feature_bounds_ = bounds
        self.categories_ = lists
        self._binner = binner
        self._split_feature, self._split_bin, self._missing_left, self._leaf_value = model
        self.privacy_ledger_ = ledger.entries
        self.privacy_spent_ = ledger.epsilon(float(self.delta))
        if self.diagnostics:
            self.filtered_fraction_ = filtered
        return self

    def _sketch_binner(self, X, bounds, numeric, thresholds, release, noise, ledger):
        """The binner whose numeric thresholds are the private sketch's (``plan.sketch``)."""
        lower, upper = bounds[numeric, 0], bounds[numeric, 1]
        counts = fine_histograms(X[:, numeric], lower, upper, SKETCH_RESOLUTION * self.max_bins)
        # One row: a record changes every feature's histogram, hence L1 sensitivity n_numeric.
        released = laplace_mechanism(counts.reshape(1, -1), epsilon=release.epsilon,
                                     sensitivity=release.sensitivity, noise=noise, ledger=ledger,
                                     scope=SKETCH_SCOPE)
        thresholds[numeric] = sketch_thresholds(released.reshape(counts.shape), lower, upper,
                                                self.max_bins)
        return BoundsBinner(bounds, self.max_bins, thresholds)

    def _hessian_sketch(self, X_binned, hessians, numeric, candidates, release, noise, ledger):
        """``candidates`` with the numeric features' boundaries replaced by the adaptive Hessian
        sketch's (``release``: one entry of ``plan.hessian_sketches``)."""
        n_bins = HESSIAN_SKETCH_BINS
        # Every record: the release is composed sequentially with the trees.
        rows = np.arange(X_binned.shape[0], dtype=SAMPLE_INDEX_DTYPE)
        weight = (np.ones(rows.size, dtype=G_H_DTYPE) if hessians is None else hessians)
        hist = np.empty((X_binned.shape[1], 1, n_bins + 1, 2))
        build_level_histograms(X_binned, rows, weight, np.array([0, rows.size], dtype=np.int64),
                               np.empty((X_binned.shape[1], 0, n_bins + 1, 2)),
                               np.empty(0, dtype=np.uint8), numba.get_num_threads(), hist)
        # Hessian sums of the numeric features' grid bins (not the missing-value bin).
        weights = hist[numeric, 0, :n_bins, 0]
        scope = {"group": release.group, "tree": release.tree, "level": release.level}
        if release.mechanism == "gaussian":
            released = gaussian_mechanism(weights.reshape(1, -1),
                                          noise_multiplier=release.noise_multiplier,
                                          sensitivity=release.sensitivity, noise=noise,
                                          ledger=ledger, scope=scope)
        else:
            released = laplace_mechanism(weights.reshape(1, -1), epsilon=release.epsilon,
                                         sensitivity=release.sensitivity, noise=noise,
                                         ledger=ledger, scope=scope)
        # A Laplace variable's standard deviation is sqrt(2) times its scale.
        noise_std = noise_scale(release) * (1.0 if release.mechanism == "gaussian"
                                            else math.sqrt(2.0))
        boundaries = hessian_sketch_boundaries(released.reshape(weights.shape),
                                               self.max_bins - 1, noise_std)
        kept = ([] if candidates is None else
                [candidates[~np.isin(candidates // (n_bins - 1), numeric)]])
        return np.sort(np.concatenate(
            kept + [f * (n_bins - 1) + b for f, b in zip(numeric, boundaries)]))

    def _boost(self, X_binned, n_bins, y_scaled, plan, noise, ledger, candidates, numeric,
               min_child_weight):
        n_samples = X_binned.shape[0]
        n_trees, depth = len(plan.trees), self.max_depth
        split_feature = np.empty((n_trees, 2**depth - 1), dtype=np.int32)
        split_bin = np.empty((n_trees, 2**depth - 1), dtype=np.uint8)
        missing_left = np.empty((n_trees, 2**depth - 1), dtype=np.bool_)
        leaf_value = np.empty((n_trees, 2**depth), dtype=np.float64)
        filtered = np.zeros(n_trees)
        # One row of scores per output; F0 = 0 (docs/privacy.md, rule 15): a data mean would leak.
        raw = np.zeros((y_scaled.shape[1], n_samples))
        y_rows = np.ascontiguousarray(y_scaled.T)
        softmax = self._loss == "softmax" and raw.shape[0] > 1
        # Softmax couples the classes: every round's K trees use the probabilities after the
        # previous round, so trees are grown round by round; otherwise output by output.
        order = (sorted(plan.trees, key=lambda tb: (tb.tree % self.n_estimators, tb.output))
                 if softmax else plan.trees)
        all_gradients = np.empty(raw.shape, dtype=G_H_DTYPE)
        all_hessians = None if self._loss == "square" else np.empty(raw.shape, dtype=G_H_DTYPE)
        private = math.isfinite(plan.epsilon)
        position_of_record = {}  # per output: the EoE partition of its current ensemble
        candidates_of = [candidates] * raw.shape[0]  # per output: the Hessian sketch's
        n_rounds = len(plan.hessian_sketch_trees)

        for i, tb in enumerate(order):
            if plan.record_shares is not None and (tb.position == 0
                                                   or tb.output not in position_of_record):
                position_of_record[tb.output] = partition_records(n_samples, plan.record_shares,
                                                                  noise)
            if softmax:
                if tb.output == 0:
                    softmax_loss_gradients(raw, y_rows, all_gradients, all_hessians)
            elif all_hessians is None:
                square_loss_gradients(raw[tb.output], y_rows[tb.output], all_gradients[tb.output])
            else:
                logistic_loss_gradients(raw[tb.output], y_rows[tb.output],
                                        all_gradients[tb.output], all_hessians[tb.output])
            gradients = all_gradients[tb.output]
            hessians = None if all_hessians is None else all_hessians[tb.output]
            t = tb.tree % self.n_estimators
            if t in plan.hessian_sketch_trees:
                release = plan.hessian_sketches[tb.output * n_rounds
                                                + plan.hessian_sketch_trees.index(t)]
                candidates_of[tb.output] = self._hessian_sketch(
                    X_binned, hessians, numeric, candidates, release, noise, ledger)
            selected = (np.ones(n_samples, dtype=bool) if plan.record_shares is None
                        else position_of_record[tb.output] == tb.position)
            if tb.sampling_rate < 1.0:
                selected &= poisson_sample(n_samples, tb.sampling_rate, noise)
            if private and self.gradient_filtering:
                keep = np.abs(gradients) <= GRADIENT_BOUND
                n_selected = np.count_nonzero(selected)
                selected &= keep
                if n_selected:
                    filtered[tb.tree] = 1.0 - np.count_nonzero(selected) / n_selected
            elif private:
                np.clip(gradients, -GRADIENT_BOUND, GRADIENT_BOUND, out=gradients)
            indices = np.flatnonzero(selected).astype(SAMPLE_INDEX_DTYPE)
            f, b, m, v = grow_tree(X_binned, indices, gradients[indices], budget=tb,
                                max_depth=depth, n_bins=n_bins,
                                l2_regularization=float(self.l2_regularization), noise=noise,
                                ledger=ledger,
                                hessians=None if hessians is None else hessians[indices],
                                feature=t % X_binned.shape[1]
                                if self.split_selection == "cyclical" else None,
                                min_child_weight=min_child_weight,
                                candidates=candidates_of[tb.output])
            split_feature[tb.tree], split_bin[tb.tree], missing_left[tb.tree] = f, b, m
            leaf_value[tb.tree] = v * self.learning_rate
            one = slice(tb.tree, tb.tree + 1)
            predict_binned(X_binned, split_feature[one], split_bin[one], missing_left[one],
                           n_bins, leaf_value[one], raw[tb.output])
            last_of_group = i + 1 == n_trees or order[i + 1].group != tb.group
            if self.verbose and last_of_group:
                # Counts and the planned spend only: wall-clock time would track n.
                print(f"[dpboost] {tb.tree + 1}/{n_trees} trees, epsilon spent "
                      f"{ledger.epsilon(float(self.delta)):.4g}")
        # the ledger in the plan's order (tree by tree), whatever the growing order
        ledger.entries.sort(key=lambda e: (e.tree, e.level))
        return (split_feature, split_bin, missing_left, leaf_value), filtered

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    @property
    def feature_importances_(self):
        """ndarray of shape (n_features_in_,): fraction of split nodes using each feature.

        Computed from the released split choices only (never exact gains or covers).
        """
        check_is_fitted(self)
        return split_count_importances(self._split_feature, self.n_features_in_)

    def privacy_report(self):
        """Text account of the fit: composed epsilon and the ledger by mechanism.

        Returns
        -------
        report : str
            Includes the GDF filtered fractions only if ``diagnostics=True`` (not private).
        """
        check_is_fitted(self)
        return privacy_report(self.privacy_ledger_, self.privacy_spent_,
                              getattr(self, "filtered_fraction_", None), float(self.delta))

    def export_text(self, tree=0):
        """Text of one tree: thresholds (up to rounding) or category sets, the side of missing
        values, and released leaf values.

        Parameters
        ----------
        tree : int, default=0
            Index of the tree, in ``[0, n_outputs * n_estimators)``; with K > 2 classes, tree
            ``k * n_estimators + t`` is tree ``t`` of class ``classes_[k]``.

        Returns
        -------
        text : str
        """
        check_is_fitted(self)
        names = (list(self.feature_names_in_) if hasattr(self, "feature_names_in_")
                 else [f"x{j}" for j in range(self.n_features_in_)])
        return tree_text(self._split_feature[tree], self._split_bin[tree],
                         self._missing_left[tree], self._leaf_value[tree],
                         self._binner, names, self.categories_)

    def to_json(self):
        """The fitted model as versioned JSON holding only public and released values.

        Returns
        -------
        text : str
            Load it back with :meth:`from_json`.
        """
        check_is_fitted(self)
        return model_to_json(self)

    @classmethod
    def from_json(cls, text):
        """Rebuild a fitted estimator from :meth:`to_json` output (same predictions).

        Raises
        ------
        ValueError
            Not a dpboost model of this class and format version.
        """
        return model_from_json(cls, text)

    @classmethod
    def dpboost_paper(cls, *, epsilon=1.0, **params):
        """DPBoost's setting (Li et al., AAAI 2020), as the paper specifies it.

        Pure epsilon-DP (``delta=0``), the square loss, gradient-based data filtering and
        geometric leaf clipping, the Ensemble of Ensembles (50 trees per ensemble), splits by
        the exponential mechanism over every candidate of a 32-bin equal-width grid, Laplace
        leaves, 50 trees of depth 6, learning rate 0.1, lambda 0.1. It is the setting of the
        paper's experiments (``benchmarks/``), not the best one: on Adult at epsilon 1 its test
        error is about 0.36, worse than the majority class's 0.236; the default constructor
        (0.15) is dpboost's best configuration.

        Parameters
        ----------
        epsilon : float, default=1.0
        **params
            Any other parameter (``feature_bounds``, ``classes`` / ``target_bounds``, ...), or
            an override of the setting's.

        Returns
        -------
        estimator : unfitted instance of this class
        """
        setting = {"delta": 0.0, "n_estimators": 50, "max_depth": 6, "learning_rate": 0.1,
                   "l2_regularization": 0.1, "max_bins": 32, "trees_per_ensemble": 50,
                   "budget_allocation": "eoe", "gradient_filtering": True,
                   "leaf_clipping": True, "leaf_noise": "laplace", "min_child_weight": 0.0,
                   "subsample": 1.0, "split_selection": "exponential",
                   "split_candidates": "uniform"}
        if "loss" in cls._parameter_constraints:
            setting["loss"] = "square"
        return cls(**{**setting, "epsilon": epsilon, **params})

    def _hessian_bound(self):
        """h*, the bound on one record's Hessian: 1 for the square loss, 1/4 for the others."""
        return 1.0 if self._loss == "square" else 0.25

    def _min_child_weight(self):
        """``min_child_weight`` with ``"auto"`` resolved for this fit's epsilon.

        ``"auto"``: the released weight of about 200 / epsilon records, i.e. ``200 h* /
        epsilon`` with Gaussian leaves (their weight is a Hessian sum) and ``200 / epsilon``
        with ``"average"`` leaves (a count); 0 with Laplace leaves, which release no weight,
        and without noise. Tuned for 100 trees in ``bench_blocks_grid.py --candidates``.
        """
        if self.min_child_weight != "auto":
            return float(self.min_child_weight)
        if self.leaf_noise == "laplace" or not math.isfinite(self.epsilon):
            return 0.0
        per_record = self._hessian_bound() if self.leaf_noise == "gaussian" else 1.0
        return 200.0 * per_record / float(self.epsilon)

    def _prediction_inputs(self, X):
        """Binned ``X`` and a zero score buffer of shape (n_outputs, n_samples)."""
        check_is_fitted(self)
        X = validate_data(self, _cells_as_numbers(X, self.categories_), dtype=np.float64,
                          ensure_all_finite=False, reset=False)
        X_binned = self._binner.transform(X, order="C")
        n_outputs = self._split_feature.shape[0] // self.n_estimators
        return X_binned, np.zeros((n_outputs, X_binned.shape[0]))

    def _add_trees(self, X_binned, stages, out):
        """Add boosting stages ``stages`` (a slice) of every output to ``out`` (n_outputs, n)."""
        with _numba_threads(check_n_jobs(self.n_jobs, numba.config.NUMBA_NUM_THREADS)):
            for k in range(out.shape[0]):
                trees = np.arange(self.n_estimators)[stages] + k * self.n_estimators
                predict_binned(X_binned, self._split_feature[trees], self._split_bin[trees],
                               self._missing_left[trees], self._binner.max_bins,
                               self._leaf_value[trees], out[k])

    def _raw_predict(self, X):
        """Scores of every output, shape (n_samples, n_outputs)."""
        X_binned, out = self._prediction_inputs(X)
        self._add_trees(X_binned, slice(None), out)
        return out.T

    def _staged_raw_predict(self, X):
        """Scores after each boosting stage, shape (n_samples, n_outputs) each (copies)."""
        X_binned, out = self._prediction_inputs(X)
        for t in range(self.n_estimators):
            self._add_trees(X_binned, slice(t, t + 1), out)
            yield out.T.copy()


def _cells_as_numbers(X, lists):
    """``X`` with categorical cells as their codes in the public ``lists`` and every other cell
    as a number or missing: the same per-cell treatment for ``fit`` and ``predict``."""
    return numeric_cells(encode_categorical(X, lists), lists)


def _initial_candidates(binner, n_features, lists):
    """The boundaries every tree may choose from before any sketch: all of them (None) without
    categorical features; otherwise, for a categorical feature of two or more categories, only
    those between two categories (public: the lists' lengths and the grid)."""
    if not lists:
        return None
    n_boundaries = binner.max_bins - 1
    per_feature = [category_boundaries(binner, f, lists[f].size)
                   if f in lists and lists[f].size > 1 else np.arange(n_boundaries)
                   for f in range(n_features)]
    return np.concatenate([f * n_boundaries + b for f, b in enumerate(per_feature)])


@contextmanager
def _numba_threads(n_threads):
    """Run the enclosed kernels on ``n_threads`` (Numba's setting is per calling thread)."""
    previous = numba.get_num_threads()
    numba.set_num_threads(n_threads)
    try:
        yield
    finally:
        numba.set_num_threads(previous)


class DPGBClassifier(ClassifierMixin, _BaseDPGB):
    __doc__ = ("""Differentially private gradient-boosted trees for classification.

    The defaults are dpboost's best configuration in its benchmarks (``benchmarks/README.md``):
    (epsilon, delta)-DP by Renyi accounting, every tree on every record, data-independent random
    splits (DP-TR, Maddock et al. 2022) among the candidates of DP-TR's adaptive Hessian sketch
    (10 % of the budget), Gaussian leaf statistics with Newton leaves (DP-XGB), 100 trees of
    depth 6, the logistic loss (multinomial for K > 2 classes), learning rate 0.3, lambda 1 and
    ``min_child_weight="auto"``. :meth:`dpboost_paper` gives DPBoost's setting (Li et al. 2020).
    ``fit`` is (``epsilon``, ``delta``)-DP (pure epsilon-DP with ``delta=0``) with respect to
    the training records given public ``feature_bounds``, ``classes``, ``categories`` and
    hyper-parameters. With K > 2 classes, each boosting round adds one tree per class, composed
    sequentially.
""" + _PARAMETERS_DOC.replace("{extra}", """classes : array-like of shape (n_classes,), default=None
        The public class labels (at least 2). None: read from ``y`` with a PrivacyLeakWarning.
    loss : {"square", "logistic", "softmax"}, default="softmax"
        ``"square"``: DPBoost's square loss on -1 / +1 labels, ``p = clip((F + 1) / 2)``.
        ``"logistic"``: the log-loss (DP-XGB), ``g = p - y`` in [-1, 1], ``h = p (1 - p)`` <= 1/4,
        ``p = sigma(F)``; gains keep counts in their denominators (sensitivity 3), Laplace leaves
        keep ``-G / (n + lambda)``, Gaussian leaves take the Newton step. With K > 2 classes both
        are one-vs-rest. ``"softmax"``: with K > 2 classes the multinomial log-loss, ``p =
        softmax(F)``, ``g_k = p_k - y_k``, ``h_k = p_k (1 - p_k)`` (same bounds, same budget: K
        trees per round, composed sequentially); with two classes it is ``"logistic"``.""")
        + _ATTRIBUTES_DOC + """    classes_ : ndarray of shape (n_classes,)
        Sorted class labels; with two, ``classes_[1]`` is the positive class (label +1).

    References
    ----------
    Q. Li, Z. Wu, Z. Wen, B. He. Privacy-Preserving Gradient Boosting Decision Trees. AAAI 2020.
    """)

    _parameter_constraints = {**_BaseDPGB._parameter_constraints, "classes": ["array-like", None],
                              "loss": [StrOptions({"square", "logistic", "softmax"})]}

    def __init__(self, *, epsilon=1.0, delta=1e-5, loss="softmax", n_estimators=100,
                 max_depth=6, learning_rate=0.3, l2_regularization=1.0, max_bins=32,
                 trees_per_ensemble=50, budget_allocation="sequential", gradient_filtering=True,
                 leaf_clipping=True, leaf_noise="gaussian", min_child_weight="auto",
                 subsample=1.0, split_selection="random", split_candidates="hessian",
                 feature_bounds=None,
                 categorical_features=None, categories=None, classes=None, random_state=None,
                 verbose=0, diagnostics=False, n_jobs=None):
        super().__init__(
            epsilon=epsilon, delta=delta, n_estimators=n_estimators, max_depth=max_depth,
            learning_rate=learning_rate, l2_regularization=l2_regularization, max_bins=max_bins,
            trees_per_ensemble=trees_per_ensemble, budget_allocation=budget_allocation,
            gradient_filtering=gradient_filtering, leaf_clipping=leaf_clipping,
            leaf_noise=leaf_noise, min_child_weight=min_child_weight, subsample=subsample,
            split_selection=split_selection, split_candidates=split_candidates,
            feature_bounds=feature_bounds, categorical_features=categorical_features,
            categories=categories, random_state=random_state, verbose=verbose,
            diagnostics=diagnostics, n_jobs=n_jobs)
        self.classes = classes
        self.loss = loss

    @property
    def _loss(self):
        return self.loss

    def _encode_target(self, y):
        """Which records train, their labels as -1 / +1 per output, and ``classes_``.

        Two classes: one output, +1 for ``classes_[1]``. K > 2 classes: one-vs-rest (or the
        softmax's one-hot), output k is +1 for ``classes_[k]``. With public ``classes`` a
        record whose label is not one of them (NaN included) is left out.

        Returns
        -------
        keep : ndarray of shape (n_samples,), dtype=bool
        y_scaled : ndarray of shape (n_kept, n_outputs), dtype=float64
        attributes : dict
            ``classes_``, set once ``fit`` succeeds.
        """
        if self.classes is None:
            check_classification_targets(y)
            classes = np.unique(y)
            if classes.size < 2:
                raise ValueError("y has only one class; DPGBClassifier needs two classes "
                                 "(pass the public classes=[...] to train anyway).")
            classes = data_dependent("classes", classes)
        else:
            classes = check_classes(self.classes)
        code = label_codes(y, classes)
        keep = code >= 0
        positive = np.arange(1, 2) if classes.size == 2 else np.arange(classes.size)
        y_scaled = np.where(code[keep, None] == positive[None, :], 1.0, -1.0)
        return keep, y_scaled, {"classes_": classes}

    def decision_function(self, X):
        """Raw margins: square-loss estimates of ``E[label | x]`` with labels -1 / +1.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        margin : ndarray of shape (n_samples,) for two classes (positive class ``classes_[1]``),
            or (n_samples, n_classes) for one-vs-rest, dtype=float64
        """
        margin = self._raw_predict(X)
        return margin[:, 0] if self.classes_.size == 2 else margin

    def predict_proba(self, X):
        """Class probabilities.

        Two classes: ``[1 - p, p]`` with ``p = clip((F + 1) / 2, 0, 1)``. One-vs-rest: each
        class's ``clip((F_k + 1) / 2, 0, 1)``, normalised to sum to 1 (uniform where all are 0).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes), dtype=float64
        """
        return margin_to_proba(self._raw_predict(X), self.loss)

    def predict(self, X):
        """Predicted labels: the class of largest margin (two classes: ``classes_[1]`` if F > 0).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        return self._labels(self._raw_predict(X))

    def _labels(self, margin):
        if self.classes_.size == 2:
            return self.classes_[(margin[:, 0] > 0).astype(int)]
        return self.classes_[np.argmax(margin, axis=1)]

    def staged_predict(self, X):
        """Predicted labels after each boosting stage (as scikit-learn's gradient boosting).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Yields
        ------
        y_pred : ndarray of shape (n_samples,)
            After stages 1, ..., ``n_estimators`` (each stage adds one tree per output).
        """
        for margin in self._staged_raw_predict(X):
            yield self._labels(margin)

    def staged_predict_proba(self, X):
        """Class probabilities after each boosting stage (see :meth:`predict_proba`).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Yields
        ------
        proba : ndarray of shape (n_samples, n_classes), dtype=float64
        """
        for margin in self._staged_raw_predict(X):
            yield margin_to_proba(margin, self.loss)


class DPGBRegressor(RegressorMixin, _BaseDPGB):
    __doc__ = ("""Differentially private gradient-boosted trees for regression.

    Targets are clipped to the public ``target_bounds`` and scaled into [-1, 1] for training with
    the square loss (Li et al. 2020, Sec. 4); predictions are mapped back to target units and
    clipped to ``target_bounds`` (post-processing). The defaults are dpboost's best
    configuration, as the classifier's with learning rate 0.1; :meth:`dpboost_paper` gives
    DPBoost's setting (Li et al. 2020).
""" + _PARAMETERS_DOC.replace("{extra}", """target_bounds : tuple of float, default=None
        Public ``(lower, upper)`` of the target. None: read from ``y`` with a PrivacyLeakWarning.""")
        + _ATTRIBUTES_DOC + """    target_bounds_ : tuple of float
        The target bounds used.

    References
    ----------
    Q. Li, Z. Wu, Z. Wen, B. He. Privacy-Preserving Gradient Boosting Decision Trees. AAAI 2020.
    """)

    _parameter_constraints = {**_BaseDPGB._parameter_constraints,
                              "target_bounds": ["array-like", None]}

    def __init__(self, *, epsilon=1.0, delta=1e-5, n_estimators=100, max_depth=6,
                 learning_rate=0.1, l2_regularization=1.0, max_bins=32, trees_per_ensemble=50,
                 budget_allocation="sequential", gradient_filtering=True, leaf_clipping=True,
                 leaf_noise="gaussian", min_child_weight="auto", subsample=1.0,
                 split_selection="random", split_candidates="hessian", feature_bounds=None,
                 categorical_features=None, categories=None, target_bounds=None, random_state=None,
                 verbose=0, diagnostics=False, n_jobs=None):
        super().__init__(
            epsilon=epsilon, delta=delta, n_estimators=n_estimators, max_depth=max_depth,
            learning_rate=learning_rate, l2_regularization=l2_regularization, max_bins=max_bins,
            trees_per_ensemble=trees_per_ensemble, budget_allocation=budget_allocation,
            gradient_filtering=gradient_filtering, leaf_clipping=leaf_clipping,
            leaf_noise=leaf_noise, min_child_weight=min_child_weight, subsample=subsample,
            split_selection=split_selection, split_candidates=split_candidates,
            feature_bounds=feature_bounds, categorical_features=categorical_features,
            categories=categories, random_state=random_state, verbose=verbose,
            diagnostics=diagnostics, n_jobs=n_jobs)
        self.target_bounds = target_bounds

    def _encode_target(self, y):
        """Which records train, their targets clipped and scaled into [-1, 1], and
        ``target_bounds_``.

        A target that is not a number (NaN, None, a string) leaves its record out; +-inf and
        values outside ``target_bounds`` are clipped to it.

        Returns
        -------
        keep : ndarray of shape (n_samples,), dtype=bool
        y_scaled : ndarray of shape (n_kept, 1), dtype=float64
        attributes : dict
            ``target_bounds_``, set once ``fit`` succeeds.
        """
        y = float_cells(y)
        keep = ~np.isnan(y)
        y = y[keep]
        if self.target_bounds is None:
            finite = y[np.isfinite(y)]
            lower, upper = ((float(finite.min()), float(finite.max())) if finite.size
                            else (0.0, 1.0))
            bounds = data_dependent("target_bounds",
                                    (lower, upper if upper > lower else lower + 1.0))
        else:
            bounds = check_target_bounds(self.target_bounds)
        return keep, scale_target(y, bounds)[:, None], {"target_bounds_": bounds}

    def predict(self, X):
        """Predicted targets in the units of ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,), dtype=float64
        """
        return unscale_target(np.clip(self._raw_predict(X)[:, 0], -1.0, 1.0),
                              self.target_bounds_)

    def staged_predict(self, X):
        """Predictions after each boosting stage (as scikit-learn's gradient boosting).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Yields
        ------
        y_pred : ndarray of shape (n_samples,), dtype=float64
            After stages 1, ..., ``n_estimators``.
        """
        for margin in self._staged_raw_predict(X):
            yield unscale_target(np.clip(margin[:, 0], -1.0, 1.0), self.target_bounds_)

"""Private hyper-parameter search: :class:`PrivateSearchCV` (Papernot & Steinke, ICLR 2022).

Repeat-and-select with a random number of trials: K is drawn from a public distribution, each
trial trains one random configuration on the private records and scores it with a noisy sum of
per-record scores (on the training records, or on a validation part), and only the best
(configuration, model, noisy score) is released. Papernot & Steinke bound the Renyi DP of the whole search by that of one trial and the
distribution of K (their Theorems 2 and 6); dp-accounting's ``RepeatAndSelectDpEvent`` computes
it. Every trial is planned as rho-zCDP (Gaussian and exponential releases only), so one rho
bounds every configuration the search may draw (docs/privacy.md, Private hyper-parameter search).
"""

import contextlib
import logging
import math
import warnings

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import column_or_1d

from ._accountant import PrivacyAccountant, Reservation
from ._accounting import PrivacyLedger, rdp_epsilon, zcdp_rho
from ._boosting import plan_fit
from ._cells import check_same_length, float_cells, label_codes, pandas_frame
from ._loss import make_loss
from ._mechanisms import gaussian_mechanism, public_uniform
from ._noise import make_noise
from ._public_inputs import planned_shape, public_categories, schema_width
from ._records import VALIDATION_STREAM
from ._row_count import plan_regimes
from ._warnings import data_dependent, warn_reproducible_noise

#: Parameters a search may not draw: they set the privacy of a trial, which the search fixes.
_FIXED = ("epsilon", "delta", "accounting", "leaf_noise", "subsample", "split_candidates",
          "accountant",
          "random_state", "classes", "target_bounds", "feature_bounds", "categories",
          "categorical_features", "diagnostics", "verbose")

#: Shapes of dp-accounting's ``RepeatAndSelectDpEvent`` for each distribution of K.
_SHAPES = {"logarithmic": 0.0, "geometric": 1.0, "poisson": math.inf}


def search_event(rho_trial, rho_size, n_trials, n_trials_distribution):
    """The dp-accounting event of a search: repeat-and-select over trials of
    ``rho_trial``-zCDP with ``n_trials`` expected trials, and one ``rho_size``-zCDP release.

    Papernot & Steinke (2022), Theorems 2 (truncated negative binomial: shape 0 logarithmic,
    shape 1 geometric) and 6 (Poisson), through dp-accounting's ``RepeatAndSelectDpEvent``.
    """
    import dp_accounting

    return dp_accounting.ComposedDpEvent([
        dp_accounting.dp_event.RepeatAndSelectDpEvent(
            dp_accounting.ZCDpEvent(rho_trial), float(n_trials), _SHAPES[n_trials_distribution]),
        dp_accounting.ZCDpEvent(rho_size)])


def search_epsilon(rho_trial, rho_size, n_trials, n_trials_distribution, delta):
    """(epsilon, delta)-DP epsilon of :func:`search_event`."""
    return rdp_epsilon(search_event(rho_trial, rho_size, n_trials, n_trials_distribution), delta)


def zcdp_epsilon(rho, delta):
    """epsilon of a rho-zCDP mechanism at delta, as dp-accounting converts it."""
    import dp_accounting

    return rdp_epsilon(dp_accounting.ZCDpEvent(rho), delta)


def _public(value, missing_ok=False):
    """Whether a public-input parameter is given as values (not ``"private"``, not None unless
    ``missing_ok``)."""
    return not isinstance(value, str) and (missing_ok or value is not None)


def _private_lists(categories):
    """Whether ``categories`` asks for a private release of any category list."""
    values = categories.values() if isinstance(categories, dict) else [categories]
    return any(isinstance(v, str) and v == "private" for v in values)


def _largest_rho(epsilon_of, epsilon):
    """The largest rho with ``epsilon_of(rho) <= epsilon`` (increasing), by bisection in log
    space to a relative 1e-9."""
    low, high = 1e-12, 1e3
    if epsilon_of(low) > epsilon:
        raise ValueError(f"epsilon={epsilon!r} is too small for this search.")
    for _ in range(200):
        middle = math.sqrt(low * high)
        low, high = (middle, high) if epsilon_of(middle) <= epsilon else (low, middle)
        if high / low < 1 + 1e-9:
            break
    return low


def _invert(u, k, p, ratio):
    """The smallest K >= k whose cumulative probability exceeds the uniform ``u``, from
    ``P(K = k) = p`` and ``P(K = j + 1) / P(K = j) = ratio(j)`` (inversion, summed in order)."""
    cumulative = p
    while u >= cumulative and p > 0:
        p *= ratio(k)
        k += 1
        cumulative += p
    return k


def _logarithmic_parameter(mean):
    """g in (0, 1) of the logarithmic distribution with the given mean (> 1), by bisection."""
    low, high = 1e-300, 1.0
    for _ in range(200):
        g = 0.5 * (low + high)
        if -(1.0 - g) / (g * math.log(g)) > mean:
            low = g
        else:
            high = g
    return 0.5 * (low + high)


@contextlib.contextmanager
def _silent():
    """Run a trial without a word: every warning it emits is dropped, and so is every record
    of the ``"dpboost"`` logger (the one-time compilation notice).

    How many trials ran and what the losing ones did must stay hidden (Papernot & Steinke's
    guarantee releases the best trial only): a line or a warning per trial would show K, and
    one that depends on a trial's setting or data would show more. What depends on public
    inputs alone is said once, before the trials (:meth:`PrivateSearchCV._warn_public`).
    """
    logger = logging.getLogger("dpboost")
    level = logger.level
    logger.setLevel(logging.CRITICAL + 1)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logger.setLevel(level)


class PrivateSearchCV(MetaEstimatorMixin, BaseEstimator):
    """Differentially private random search over hyper-parameters (Papernot & Steinke 2022).

    The number of trials K is drawn from ``n_trials_distribution`` with mean ``n_trials``; each
    trial draws a configuration from ``param_distributions`` (scikit-learn's
    ``ParameterSampler``, independently for every trial), fits a clone of ``estimator`` as a
    rho-zCDP release, and scores it: the sum over the scoring records of a per-record score in
    [0, 1] (classifier: one minus the record's Brier score, ``1 - sum_k (p_k - [y = k])^2 / 2``;
    regressor: ``1 - |y - y_hat| / W``, W the width of ``target_bounds``), released with
    Gaussian noise of sensitivity 1. Only the best trial is released. Once, before the trials,
    the number of scoring records is released the same way, to turn the best sum into a mean.

    The scoring records: with ``validation_fraction=0`` (the default) the training records
    themselves. The score's sensitivity is 1 whatever trained the model, and a trial composes its
    fit and its score sequentially in either case; a differentially private model's training
    score is an honest estimate of its test score (DP bounds the generalisation gap). With
    ``validation_fraction > 0`` each record goes, by its own coin, to a validation part that
    only scores (the trials train on the rest).

    The whole search is (``epsilon``, ``delta``)-DP under add/remove of one record; the budget
    of one trial is derived from it (``trial_epsilon_``). On Adult at a total epsilon of 2 the
    defaults give each trial epsilon 1.28 (``benchmarks/bench_private_search.py``).

    Parameters
    ----------
    estimator : DPGBClassifier or DPGBRegressor
        The template. Its releases must be zero-concentrated DP: ``delta > 0``,
        ``leaf_noise="gaussian"``, ``subsample=1`` (``"auto"``: the trials run with 1),
        ``split_candidates`` "uniform", "log", "hessian" or "auto" (a classifier's trials run
        with "log"; the regressor's "auto" is its "hessian"); ``classes`` or ``target_bounds``
        must be public. The trials run silent (``verbose=0``, ``diagnostics=False``): K and the
        losing trials stay hidden. The warnings a fit of the template gives about its public inputs
        (bounds or category lists read from the data) are given once, before the trials; with
        ``verbose >= 1`` the search prints one line as it starts and one as it ends.
    param_distributions : dict or list of dict
        As scikit-learn's ``RandomizedSearchCV``: lists are sampled uniformly, distributions
        (``scipy.stats``) by their ``rvs``. Parameters that set a trial's privacy (``epsilon``,
        ``delta``, ``leaf_noise``, ``subsample``, ``split_candidates``, ``random_state``, the
        public inputs, ...) cannot be searched.
    epsilon : float
        Total budget of the search, > 0 and finite.
    delta : float, default=1e-5
        In (0, 1).
    n_trials : float, default=3
        Expected number of trials, >= 1.
    n_trials_distribution : {"logarithmic", "geometric", "poisson"}, default="logarithmic"
        Distribution of K, as Papernot & Steinke's truncated negative binomial family: shape 0
        (logarithmic on {1, 2, ...}: the smallest privacy cost for a given mean among those that
        always train a model), shape 1 (geometric on {1, 2, ...}), or Poisson (K = 0 releases no
        model).
    validation_fraction : float, default=0.0
        Probability that a record only scores, in [0, 1); 0 scores on the training records.
    score_share : float, default=0.05
        Share of a trial's rho spent on its score (and the same rho on the validation size).
    random_state : None, int or numpy.random.Generator, default=None
        None: secure noise (OpenDP, the operating system's randomness). A seed: reproducible
        numpy noise with a :class:`ReproducibleNoiseWarning`, for experiments only.
    accountant : PrivacyAccountant or None, default=None
        A budget shared with other fits (its ``delta > 0``): the whole search is reserved as one
        repeat-and-select event before any record is read (:class:`BudgetExceededError` if it
        does not fit), registered when it succeeds. The template's own ``accountant`` must be
        None: the trials are parts of the search's event.

    Attributes
    ----------
    best_params_ : dict or None
        The released configuration (None if K = 0).
    best_estimator_ : estimator or None
        The released model, fitted on the training part with ``trial_epsilon_``.
    best_score_ : float
        Its released score, the noisy mean of the per-record scores: one minus the Brier score
        (classifier) or minus the mean absolute error in target units (regressor).
    cv_results_ : dict of lists
        The released trial only: ``params``, ``mean_test_score``, ``rank_test_score``.
    trial_epsilon_ : float
        The ``epsilon`` each trial's fit was planned with (at the estimator's ``delta``).
    trial_rho_ : float
        zCDP rho of one trial: its fit (at most ``trial_rho_ - score_rho_``) and its score.
    score_rho_ : float
        zCDP rho of each score release (and of the validation size's).
    privacy_spent_ : float
        Epsilon of the whole search at ``delta`` (<= ``epsilon``).

    References
    ----------
    N. Papernot, T. Steinke. Hyperparameter Tuning with Renyi Differential Privacy. ICLR 2022.
    """

    def __init__(self, estimator, param_distributions, *, epsilon, delta=1e-5, n_trials=3,
                 n_trials_distribution="logarithmic", validation_fraction=0.0,
                 score_share=0.05, random_state=None, accountant=None):
        self.estimator = estimator
        self.param_distributions = param_distributions
        self.epsilon = epsilon
        self.delta = delta
        self.n_trials = n_trials
        self.n_trials_distribution = n_trials_distribution
        self.validation_fraction = validation_fraction
        self.score_share = score_share
        self.random_state = random_state
        self.accountant = accountant

    def _check(self):
        """Every rule on the parameters, before any record is read."""
        if not 0 < self.epsilon < math.inf:
            raise ValueError(f"epsilon={self.epsilon!r} must be in (0, inf).")
        if not 0 < self.delta < 1:
            raise ValueError(f"delta={self.delta!r} must be in (0, 1).")
        if not self.n_trials >= 1:
            raise ValueError(f"n_trials={self.n_trials!r} must be >= 1.")
        if self.n_trials_distribution not in _SHAPES:
            raise ValueError(f"n_trials_distribution={self.n_trials_distribution!r} must be "
                             f"one of {sorted(_SHAPES)}.")
        if not 0 <= self.validation_fraction < 1:
            raise ValueError(f"validation_fraction={self.validation_fraction!r} must be in "
                             "[0, 1).")
        if not 0 < self.score_share < 1:
            raise ValueError(f"score_share={self.score_share!r} must be in (0, 1).")
        if not (self.accountant is None or isinstance(self.accountant, PrivacyAccountant)):
            raise ValueError(f"accountant={self.accountant!r} must be a PrivacyAccountant or "
                             "None.")
        grids = (self.param_distributions if isinstance(self.param_distributions, list)
                 else [self.param_distributions])
        for grid in grids:
            fixed = sorted(set(grid) & set(_FIXED))
            if fixed:
                raise ValueError(f"param_distributions may not search {fixed}: they set the "
                                 "privacy of a trial, which the search fixes.")
        p = self.estimator.get_params(deep=False)
        rules = {"delta > 0": p["delta"] > 0, "leaf_noise='gaussian'": p["leaf_noise"] == "gaussian",
                 "subsample=1 (or 'auto')": p["subsample"] in (1, "auto"),
                 "split_candidates 'uniform', 'log', 'hessian' or 'auto'":
                     p["split_candidates"] in ("uniform", "log", "hessian", "auto"),
                 "public classes or target_bounds":
                     _public(p.get("classes", p.get("target_bounds"))),
                 "feature_bounds not 'private'": _public(p["feature_bounds"], missing_ok=True),
                 # A thresholded release adds a delta outside the Renyi curve that
                 # RepeatAndSelect composes, so a search cannot account for it.
                 "no 'private' categories": not _private_lists(p["categories"]),
                 "accountant=None (give it to the search)": p["accountant"] is None}
        broken = [rule for rule, holds in rules.items() if not holds]
        if broken:
            raise ValueError(f"estimator must have {', '.join(broken)}: a trial must be a "
                             "zero-concentrated DP release with public classes or bounds.")

    def _budget(self):
        """(rho of a trial's fit, rho of each score release, trial epsilon at the estimator's
        delta)."""
        def total(rho_trial):
            return search_epsilon(rho_trial, self.score_share * rho_trial, self.n_trials,
                                  self.n_trials_distribution, self.delta)

        rho_trial = _largest_rho(total, float(self.epsilon))
        rho_score = self.score_share * rho_trial
        rho_fit = rho_trial - rho_score
        return rho_fit, rho_score, zcdp_epsilon(rho_fit, self.estimator.delta)

    def fit(self, X: ArrayLike, y: ArrayLike) -> "PrivateSearchCV":
        """Run the search.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self : PrivateSearchCV
            With ``best_params_``, ``best_estimator_`` and the search's ``privacy_spent_``.

        Raises
        ------
        ValueError
            A parameter breaks a rule (see the parameters), before any record is read; ``X``
            and ``y`` of different numbers of records (the message quotes neither).
        """
        self._check()
        rho_fit, rho_score, trial_epsilon = self._budget()
        event = search_event(rho_fit + rho_score, rho_score, self.n_trials,
                             self.n_trials_distribution)
        spend = Reservation(self.accountant, f"PrivateSearchCV(epsilon={self.epsilon:g}, "
                                             f"delta={self.delta:g})")
        # verbose: one line as the search starts and one as it ends, both fixed by the
        # parameters; a line (or a progress bar) per trial would show how many trials ran.
        verbose = self.estimator.verbose
        with spend:
            spend.reserve(event=event)
            if verbose:
                print("[dpboost] PrivateSearchCV: running its trials (how many stays private)",
                      flush=True)
            self._search(X, y, rho_fit, rho_score, trial_epsilon)
        spend.commit()
        self.privacy_spent_ = rdp_epsilon(event, self.delta)
        if verbose:
            print(f"[dpboost] PrivateSearchCV: done, epsilon spent {self.privacy_spent_:.4g}",
                  flush=True)
        return self

    def _search(self, X, y, rho_fit, rho_score, trial_epsilon):
        """The trials, and the released attributes but ``privacy_spent_``."""
        # Imported here: sklearn.model_selection (and sklearn.metrics under it) would add about
        # 0.15 s to every ``import dpboost``, and only a search uses it.
        from sklearn.model_selection import ParameterSampler

        warn_reproducible_noise(self.random_state)
        noise = make_noise(self.random_state)
        ledger = PrivacyLedger()
        y = column_or_1d(y, warn=True)
        check_same_length(X, y)
        if len(getattr(X, "shape", ())) != 2:
            X = np.asarray(X, dtype=object)  # a shape to plan each trial from (the schema)
        self._warn_public(X)
        # What every trial fixes. subsample="auto" trials run on every record: a trial must be
        # a zCDP release, and a Poisson-sampled Gaussian is not one; for the same reason its
        # plan is the Renyi one (PLD accounting would spend more zCDP). A classifier's
        # split_candidates="auto" trials keep its free grid ("log"): its "auto" may take the
        # quantile sketch, a Laplace release outside the trials' Renyi plan (the regressor's is
        # the Hessian sketch, which a trial may release). The trials run silent.
        fixed = {"epsilon": trial_epsilon, "random_state": noise, "verbose": 0,
                 "diagnostics": False, "accounting": "rdp",
                 **({"subsample": 1.0} if self.estimator.subsample == "auto" else {}),
                 **({"split_candidates": "log"} if is_classifier(self.estimator)
                    and self.estimator.split_candidates == "auto" else {})}
        sigma = 1.0 / math.sqrt(2.0 * rho_score)  # noise multiplier of a sensitivity-1 release
        # Each record's part by its own coin: a per-record decision.
        coins = noise.coins().uniforms((VALIDATION_STREAM, 0, 0), 0, len(y))
        validation = coins < self.validation_fraction
        if self.validation_fraction == 0:
            # Scored on the training records: the score's sensitivity is 1 whatever trained the
            # model, and fit and score compose sequentially either way.
            validation[:] = True
            X_train, y_train = X, y
        else:
            X_train, y_train = _safe_indexing(X, ~validation), y[~validation]
        X_val, y_val = _safe_indexing(X, validation), y[validation]
        size = gaussian_mechanism(np.array([[float(validation.sum())]]), noise_multiplier=sigma,
                                  sensitivity=1.0, noise=noise, ledger=ledger,
                                  scope={"group": -1, "tree": -1, "level": 0})[0, 0]
        best = None
        for trial in range(self._draw_n_trials(noise, ledger)):
            with _silent():
                # Each trial draws its configuration independently (with replacement): the
                # trials are independent runs of one randomised algorithm, as the theorem needs.
                seed = int(public_uniform(1, noise=noise, ledger=ledger,
                                          scope={"group": trial, "tree": trial, "level": 0})[0]
                           * 2**31)
                params = next(iter(ParameterSampler(self.param_distributions, 1,
                                                    random_state=seed)))
                model = clone(self.estimator).set_params(**params, **fixed)
                self._check_trial(model, X, rho_fit)
                model.fit(X_train, y_train)
                total = gaussian_mechanism(
                    np.array([[self._score_sum(model, X_val, y_val)]]), noise_multiplier=sigma,
                    sensitivity=1.0, noise=noise, ledger=ledger,
                    scope={"group": trial, "tree": trial, "level": 1})[0, 0]
            if best is None or total > best[0]:
                best = (total, params, model)
        # Only the best trial is released (nor K, nor the other trials' scores or settings).
        self.trial_epsilon_ = trial_epsilon
        self.trial_rho_, self.score_rho_ = rho_fit + rho_score, rho_score
        if best is None:
            self.best_params_ = self.best_estimator_ = None
            self.best_score_ = math.nan
            self.cv_results_ = {"params": [], "mean_test_score": [], "rank_test_score": []}
            return
        mean = best[0] / max(size, 1.0)
        self.best_params_, self.best_estimator_ = best[1], best[2]
        if is_classifier(self.estimator):
            self.best_score_ = mean
        else:
            lower, upper = self.best_estimator_.target_bounds_
            self.best_score_ = -(1.0 - mean) * (upper - lower)
        self.cv_results_ = {"params": [self.best_params_],
                            "mean_test_score": [self.best_score_], "rank_test_score": [1]}

    def _warn_public(self, X):
        """Warn, once for the whole search, as a fit of the template would about its public
        inputs: the feature bounds or category lists it reads from the data
        (:class:`PrivacyLeakWarning`). From the template's parameters and the schema of ``X``
        only (no record is read), so the warnings are the same whatever the trials."""
        template = self.estimator
        schema = pandas_frame(X, schema_only=True)[:0]
        public_categories(schema, template.categorical_features, template.categories,
                          template.feature_bounds)
        if template.feature_bounds is None and planned_shape(template, schema)[1] > 0:
            data_dependent("feature_bounds", None)

    def _draw_n_trials(self, noise, ledger):
        """K from the public distribution, by inversion of one uniform draw."""
        u = public_uniform(1, noise=noise, ledger=ledger,
                           scope={"group": -1, "tree": -1, "level": 1})[0]
        if self.n_trials_distribution == "logarithmic":
            # P(K = k) = -(1 - g)^k / (k log g), k >= 1, with mean -(1 - g) / (g log g).
            if self.n_trials == 1:
                return 1
            g = _logarithmic_parameter(self.n_trials)
            return _invert(u, 1, -(1.0 - g) / math.log(g), lambda k: (1.0 - g) * k / (k + 1))
        if self.n_trials_distribution == "geometric":
            # P(K = k) = g (1 - g)^(k - 1), g = 1 / mean.
            g = 1.0 / self.n_trials
            return 1 if g == 1.0 else 1 + int(math.log1p(-u) / math.log1p(-g))
        return _invert(u, 0, math.exp(-self.n_trials), lambda k: self.n_trials / (k + 1))

    def _check_trial(self, model, X, rho_fit):
        """Refuse, before it reads any record, a trial whose plan is not within rho_fit."""
        model._validate_params()  # a drawn value breaking a rule is named before it is planned
        shape = planned_shape(model, X)
        for config, plan in plan_regimes(model._configs(n_features=schema_width(X)), lambda c:
                                         plan_fit(c, make_loss(model._loss_name, shape[0]),
                                                  *shape)):
            # A choice of interactions reads each record by one of its ledgers: the largest.
            rho = max(zcdp_rho(ledger) for ledger in plan.ledgers)
            if not rho <= rho_fit * (1 + 1e-6):
                raise ValueError(f"a trial with {config} plans rho {rho:.6g} > the search's "
                                 f"{rho_fit:.6g} per trial: it is not zero-concentrated DP.")

    def _score_sum(self, model, X_val, y_val):
        """Sum over validation records of a score in [0, 1] (sensitivity 1), each from its
        own record: a label outside the classes or a target that is not a number scores 0."""
        if len(y_val) == 0:
            return 0.0
        if is_classifier(model):
            # 1 - the Brier score of the record: 1 - sum_k (p_k - [y = k])^2 / 2, in [0, 1]
            # (a label outside the classes: 0).
            codes = label_codes(np.asarray(y_val), model.classes_)
            proba = model.predict_proba(X_val)
            truth = (codes[:, None] == np.arange(proba.shape[1])[None, :])
            per_record = 1.0 - 0.5 * np.sum((proba - truth) ** 2, axis=1)
            return float(np.sum(np.where(codes >= 0, np.clip(per_record, 0.0, 1.0), 0.0)))
        predicted = model.predict(X_val)
        lower, upper = model.target_bounds_
        target = np.clip(float_cells(y_val), lower, upper)
        per_record = 1.0 - np.abs(predicted - target) / (upper - lower)
        return float(np.sum(np.nan_to_num(np.clip(per_record, 0.0, 1.0), nan=0.0)))

    def predict(self, X: ArrayLike) -> NDArray:
        """The best model's predictions."""
        return self.best_estimator_.predict(X)

    def predict_proba(self, X: ArrayLike) -> NDArray:
        """The best model's class probabilities (classifiers)."""
        return self.best_estimator_.predict_proba(X)

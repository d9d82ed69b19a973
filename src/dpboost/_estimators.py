"""scikit-learn estimators: a facade over validation, boosting and the forest.

``fit`` walks one way (docs/architecture.md): ``_validation.fit_inputs`` (parameters, public
inputs, the data domain) -> ``_boosting.train`` (plan, candidates, trees) -> the fitted
attributes. Prediction bins ``X`` on the fitted grid and sums the forest's trees.
"""

import json

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ._boosting import plan_fit, train
from ._docstrings import CLASSIFIER, REGRESSOR
from ._export import forest_to_xgboost, model_attributes
from ._grower import denominator_floor
from ._inspection import (
    privacy_report,
    released_importances,
    split_count_importances,
    tree_text,
)
from ._loss import LOSSES, make_loss, unscale_target
from ._persistence import model_from_json, model_to_json
from ._records import InMemoryRecords, Partition
from ._validation import (
    DPBOOST_PAPER,
    PARAMETER_CONSTRAINTS,
    cells_as_numbers,
    check_iteration_range,
    check_mechanisms,
    fit_inputs,
    n_threads,
    planned_shape,
    resolve_min_child_weight,
    resolve_schedule,
)


class _BaseDPGB(BaseEstimator):
    """Shared boosting loop of :class:`DPGBClassifier` and :class:`DPGBRegressor`."""

    _parameter_constraints = dict(PARAMETER_CONSTRAINTS)

    #: The ``loss`` of an estimator without that parameter.
    _loss_name = "square"

    def _store_parameters(self, parameters):
        """Store each ``__init__`` argument under its own name, unchanged (scikit-learn's
        convention: the subclasses' signatures are the parameter list; ``fit`` validates)."""
        for name, value in parameters.items():
            if name != "self":
                setattr(self, name, value)

    def _resolved_params(self):
        """``get_params()`` with every ``"auto"`` resolved from the public inputs (epsilon, the
        loss's Hessian bound): what the plan and the boosting loop read."""
        learning_rate, subsample = resolve_schedule(self.learning_rate, self.subsample,
                                                    float(self.epsilon))
        min_child_weight = resolve_min_child_weight(
            self.min_child_weight, self.leaf_noise, self.epsilon,
            LOSSES[self._loss_name].hessian_bound)
        return dict(self.get_params(deep=False), min_child_weight=min_child_weight,
                    learning_rate=learning_rate, subsample=subsample)

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
        params = self._resolved_params()
        check_mechanisms(self.leaf_noise, self.delta, self.l2_regularization,
                         params["min_child_weight"])
        # With public classes the plan, hence the spend, is known before any record is read.
        shape = planned_shape(self, self._schema(X))
        plan = None if shape is None else plan_fit(params, make_loss(self._loss_name, shape[0]),
                                                   *shape)
        fit_id = None if plan is None else self._reserve(plan)
        try:
            records, n_outputs, inputs = self._records(X, y)
            loss = make_loss(self._loss_name, n_outputs)
            if plan is None:
                plan = plan_fit(params, loss, n_outputs, inputs.numeric.size)
                fit_id = self._reserve(plan)
            forest, ledger, filtered, released = train(records, inputs, loss, params, plan,
                                                       n_outputs, n_threads(self.n_jobs), fit_id)
        except BaseException:
            if fit_id is not None:  # reserved with the accountant
                self.accountant.release(fit_id)
            raise
        if self.accountant is not None:
            self.accountant.commit(fit_id, ledger.entries)
        # Fitted attributes are set only now: a fit that raised leaves nothing half-fitted.
        for name, value in {**inputs.target, **released}.items():
            setattr(self, name, value)
        # The grid's bounds: the public ones, or those released with feature_bounds="private".
        self.feature_bounds_ = np.column_stack([forest.binner.lower, forest.binner.upper])
        self.categories_ = inputs.categories
        self._forest = forest
        self.privacy_ledger_ = ledger.entries
        self.privacy_spent_ = ledger.epsilon(float(self.delta))
        if self.diagnostics:
            self.filtered_fraction_ = filtered
        return self

    def _schema(self, X):
        """What the plan reads of ``X`` before any record: its shape and column types."""
        return X

    def _records(self, X, y):
        """The training records in the data domain as a record set (``_records``), with the
        number of outputs and the public inputs (``_validation.fit_inputs``): here one
        partition in this process."""
        X, y_scaled, inputs = fit_inputs(self, X, y)
        partition = Partition.of(X, y_scaled, n_threads=n_threads(self.n_jobs))
        return InMemoryRecords(partition), y_scaled.shape[1], inputs

    def _reserve(self, plan):
        """The fit's identifier, reserved with the accountant if there is one (or raises
        :class:`BudgetExceededError`)."""
        if self.accountant is None:
            return None
        return self.accountant.reserve(plan.entries, f"{type(self).__name__}(epsilon="
                                                     f"{self.epsilon:g}, delta={self.delta:g})")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    @property
    def feature_importances_(self):
        """ndarray of shape (n_features_in_,): :meth:`feature_importance` of the released gain,
        or of the split counts when the leaves released no statistics (Laplace leaves)."""
        check_is_fitted(self)
        released = np.isfinite(self._forest.leaf_statistics).all()
        return self.feature_importance("gain" if released else "split")

    def feature_importance(self, importance_type="gain"):
        """Feature importances from released values only (never exact gains or covers).

        Parameters
        ----------
        importance_type : {"gain", "cover", "split"}, default="gain"
            ``"split"``: the fraction of split nodes using each feature (released split
            choices; about uniform with random splits, whatever the data). ``"gain"`` and
            ``"cover"``: each feature's share of the split gain, or of the released weight
            (noisy Hessian sum or count) of the nodes it splits, recomputed from the released
            leaf statistics (``_inspection.released_importances``: XGBoost's gain, Chen &
            Guestrin 2016, Eq. 7, on noisy sums).

        Returns
        -------
        importances : ndarray of shape (n_features_in_,), dtype=float64
            Non-negative, summing to 1 (all 0 if no split has a positive value).

        Raises
        ------
        ValueError
            An unknown ``importance_type``, or ``"gain"`` / ``"cover"`` for a model whose
            leaves released only their values (``leaf_noise="laplace"``).
        """
        check_is_fitted(self)
        forest = self._forest
        if importance_type == "split":
            return split_count_importances(forest.split_feature, self.n_features_in_)
        if importance_type not in ("gain", "cover"):
            raise ValueError(f"importance_type={importance_type!r}; expected 'gain', 'cover' "
                             "or 'split'.")
        if not np.isfinite(forest.leaf_statistics).all():
            raise ValueError(f"importance_type={importance_type!r} needs the leaves' released "
                             "statistics; Laplace leaves (leaf_noise='laplace') release only "
                             "their values: use importance_type='split'.")
        l2 = float(self.l2_regularization)
        return released_importances(forest, l2, denominator_floor(self.leaf_noise, l2),
                                    self.n_features_in_, importance_type)

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
        return tree_text(self._forest, tree, names, self.categories_)

    def to_json(self):
        """The fitted model as versioned JSON holding only public and released values.

        Returns
        -------
        text : str
            Load it back with :meth:`from_json`.
        """
        check_is_fitted(self)
        fitted = {name: getattr(self, name) for name in (
            "n_features_in_", "feature_bounds_", "categories_", "privacy_spent_",
            "feature_names_in_", "classes_", "target_bounds_") if hasattr(self, name)}
        return model_to_json(type(self).__name__, self.get_params(deep=False), fitted,
                             self._forest, self.privacy_ledger_)

    def to_xgboost_json(self):
        """The fitted model in XGBoost's JSON model format, for ``xgboost.Booster`` to serve.

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

        ``output_margin=True`` gives the margins of :meth:`decision_function` (classifiers with
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
        from . import __version__

        check_is_fitted(self)
        objective, base_score, leaf_scale = self._xgboost_link()
        model = forest_to_xgboost(
            self._forest, objective, self.n_features_in_, base_score=base_score,
            leaf_scale=leaf_scale, feature_names=getattr(self, "feature_names_in_", None),
            attributes=model_attributes(type(self).__name__, self.categories_, __version__))
        return json.dumps(model)

    @classmethod
    def from_json(cls, text):
        """Rebuild a fitted estimator from :meth:`to_json` output (same predictions).

        Raises
        ------
        ValueError
            Not a dpboost model of this class and format version.
        """
        params, fitted, forest = model_from_json(text, cls.__name__)
        estimator = cls(**params)
        for name, value in fitted.items():
            setattr(estimator, name, value)
        estimator._forest = forest
        return estimator

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
        setting = dict(DPBOOST_PAPER, **({"loss": "square"} if "loss" in cls._parameter_constraints
                                         else {}))
        return cls(**{**setting, "epsilon": epsilon, **params})

    def _binned(self, X):
        """``X`` checked against the fit and binned on its grid (row-major)."""
        check_is_fitted(self)
        X = validate_data(self, cells_as_numbers(X, self.categories_), dtype=np.float64,
                          ensure_all_finite=False, reset=False)
        return self._forest.binner.transform(X, order="C")

    def _raw_predict(self, X, iteration_range=None):
        """Scores of every output, shape (n_samples, n_outputs)."""
        X_binned = self._binned(X)
        stages = check_iteration_range(iteration_range, self._forest.n_stages)
        return self._forest.raw_predict(X_binned, n_threads(self.n_jobs), stages)

    def _staged_raw_predict(self, X):
        """Scores after each boosting stage, shape (n_samples, n_outputs) each (copies)."""
        X_binned = self._binned(X)
        yield from self._forest.staged_raw_predict(X_binned, n_threads(self.n_jobs))


class DPGBClassifier(ClassifierMixin, _BaseDPGB):
    __doc__ = CLASSIFIER

    _parameter_constraints = {**_BaseDPGB._parameter_constraints, "classes": ["array-like", None],
                              "loss": [StrOptions({"square", "logistic", "softmax"})]}

    def __init__(self, *, epsilon=1.0, delta=1e-5, loss="softmax", n_estimators=200,
                 max_depth=6, learning_rate="auto", l2_regularization=10.0, max_bins=32,
                 trees_per_ensemble=50, budget_allocation="sequential", gradient_bound=0.5,
                 gradient_filtering=False, leaf_clipping=True, leaf_noise="gaussian",
                 min_child_weight=0.0, subsample="auto", split_selection="random",
                 split_candidates="uniform", interaction_cst="no_interactions",
                 monotonic_cst=None, feature_bounds=None,
                 categorical_features=None, categories=None, classes=None, random_state=None,
                 verbose=0, diagnostics=False, n_jobs=None, accountant=None):
        self._store_parameters(locals())

    @property
    def _loss_name(self):
        return self.loss

    def decision_function(self, X, iteration_range=None):
        """Raw margins: square-loss estimates of ``E[label | x]`` with labels -1 / +1.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        iteration_range : (int, int) or None, default=None
            Only the boosting stages ``[begin, end)`` (XGBoost's name); None: all.

        Returns
        -------
        margin : ndarray of shape (n_samples,) for two classes (positive class ``classes_[1]``),
            or (n_samples, n_classes) for one-vs-rest, dtype=float64
        """
        margin = self._raw_predict(X, iteration_range)
        return margin[:, 0] if self.classes_.size == 2 else margin

    def predict_proba(self, X, iteration_range=None):
        """Class probabilities through the loss's link (``_loss``).

        ``"softmax"``: ``softmax(F)`` (two classes: ``[1 - p, p]``, ``p = sigma(F)``).
        ``"logistic"``: ``sigma(F_k)``; ``"square"``: ``clip((F_k + 1) / 2, 0, 1)``; with K > 2
        classes one-vs-rest, normalised to sum to 1 (uniform where all are 0).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        iteration_range : (int, int) or None, default=None
            Only the boosting stages ``[begin, end)`` (XGBoost's name); None: all.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes), dtype=float64
        """
        return self._proba(self._raw_predict(X, iteration_range))

    def _xgboost_link(self):
        """(objective, base_score, leaf scale) of :meth:`to_xgboost_json`."""
        n_outputs = self._forest.n_outputs
        if n_outputs == 1:
            if self.loss == "square":
                return "reg:squarederror", 0.5, 0.5
            return "binary:logistic", 0.5, 1.0
        if self.loss == "softmax":
            return "multi:softprob", 0.0, 1.0
        raise NotImplementedError(
            f"loss={self.loss!r} with {n_outputs} classes has one-vs-rest probabilities "
            "(normalised per-class scores), which no XGBoost objective computes; "
            "loss='softmax' exports as multi:softprob")

    def _proba(self, margin):
        return make_loss(self.loss, margin.shape[1]).proba(margin)

    def predict(self, X, iteration_range=None):
        """Predicted labels: the class of largest margin (two classes: ``classes_[1]`` if F > 0).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        iteration_range : (int, int) or None, default=None
            Only the boosting stages ``[begin, end)`` (XGBoost's name); None: all.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        return self._labels(self._raw_predict(X, iteration_range))

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
            yield self._proba(margin)


class DPGBRegressor(RegressorMixin, _BaseDPGB):
    __doc__ = REGRESSOR

    _parameter_constraints = {**_BaseDPGB._parameter_constraints,
                              "target_bounds": ["array-like", StrOptions({"private"}), None]}

    def __init__(self, *, epsilon=1.0, delta=1e-5, n_estimators=100, max_depth=6,
                 learning_rate=0.1, l2_regularization=1.0, max_bins=32, trees_per_ensemble=50,
                 budget_allocation="sequential", gradient_bound=1.0, gradient_filtering=True,
                 leaf_clipping=True,
                 leaf_noise="gaussian", min_child_weight="auto", subsample=1.0,
                 split_selection="random", split_candidates="hessian", interaction_cst=None,
                 monotonic_cst=None, feature_bounds=None, categorical_features=None, categories=None,
                 target_bounds=None, random_state=None,
                 verbose=0, diagnostics=False, n_jobs=None, accountant=None):
        self._store_parameters(locals())

    def predict(self, X, iteration_range=None):
        """Predicted targets in the units of ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        iteration_range : (int, int) or None, default=None
            Only the boosting stages ``[begin, end)`` (XGBoost's name); None: all.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,), dtype=float64
        """
        return unscale_target(np.clip(self._raw_predict(X, iteration_range)[:, 0], -1.0, 1.0),
                              self.target_bounds_)

    def _xgboost_link(self):
        """(objective, base_score, leaf scale) of :meth:`to_xgboost_json`: the unscaling of
        the targets folded into the trees."""
        lower, upper = self.target_bounds_
        return "reg:squarederror", (lower + upper) / 2.0, (upper - lower) / 2.0

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

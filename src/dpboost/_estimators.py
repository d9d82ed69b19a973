"""scikit-learn estimators: a facade over validation, boosting and the forest.

``fit`` walks one way (docs/architecture.md): ``_public_inputs.fit_inputs`` (parameters, public
inputs, the data domain) -> ``_boosting.train`` (plan, candidates, trees) -> the fitted
attributes. Prediction bins ``X`` on the fitted grid and sums the forest's trees.
"""

import os
from collections.abc import Iterator
from numbers import Integral
from pathlib import Path
from typing import TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ._accountant import Reservation, choices_epsilon, fit_epsilon
from ._auto import resolve_configs
from ._boosting import plan_fit, train
from ._categories import released_category_columns
from ._cells import cells_as_numbers, check_columns, encode_classes, encode_targets
from ._docstrings import CLASSIFIER, REGRESSOR, TO_XGBOOST_JSON, predict_doc
from ._export import estimator_to_xgboost, xgboost_link
from ._inspection import feature_importance, privacy_report, tree_text
from ._loss import LOSSES, make_loss, predicted_target
from ._parameters import (
    DPBOOST_PAPER,
    PARAMETER_CONSTRAINTS,
    check_classes,
    check_iteration_range,
    check_mechanisms,
    n_threads,
)
from ._persistence import FITTED, model_from_json, model_to_json, read_source
from ._public_inputs import fit_inputs, planned_shape, schema_width
from ._records import InMemoryRecords
from ._row_count import plan_regimes
from ._warm_start import warm_start_inputs, warm_start_params

#: The estimator's own class in annotations (``fit`` returns ``self``).
_Self = TypeVar("_Self", bound="_BaseDPGB")


class _BaseDPGB(BaseEstimator):
    """Shared boosting loop of :class:`DPGBClassifier` and :class:`DPGBRegressor`."""

    _parameter_constraints = dict(PARAMETER_CONSTRAINTS)

    #: The ``loss`` of an estimator without that parameter.
    _loss_name = "square"
    #: The plans the first fit's private row count chose among (``FitResult.choices``), which
    #: ``privacy_spent_`` composes; None without a count (and for models pickled before it was
    #: kept, whose ``privacy_spent_`` is then the composition of their ledger).
    _privacy_choices = None

    def _store_parameters(self, parameters):
        """Store each ``__init__`` argument unchanged (scikit-learn: ``fit`` validates)."""
        for name, value in parameters.items():
            if name != "self":
                setattr(self, name, value)

    def _configs(self, sample_weight=None, n_features=None, previous=None):
        """The fit's :class:`~dpboost._config.FitConfig`: the parameters, "auto" resolved, with
        the weight bound; one per regime of a private row count (``_auto.resolve_configs``; a
        warm start reads the count its first fit released)."""
        return resolve_configs(self.get_params(deep=False),
                               LOSSES[self._loss_name].hessian_bound,
                               isinstance(self, RegressorMixin), sample_weight, n_features,
                               None if previous is None else getattr(self, "row_count_", None),
                               warm_start=previous is not None)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self: _Self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
            ) -> _Self:
        """Fit the model with epsilon-differential privacy.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric features. NaN is a missing value (its own bin; every split candidate comes in
            a "missing left" and a "missing right" variant); +-inf are clipped to the bounds.
        y : array-like of shape (n_samples,)
            Labels (classifier) or targets (regressor).
        sample_weight : array-like of shape (n_samples,), default=None
            Clipped into ``[0, sample_weight_bound]`` (needed with it), NaN or a non-number 0;
            every sensitivity scales with the bound (docs/privacy.md, Sample weights).

        Returns
        -------
        self : object
            The fitted estimator.

        Raises
        ------
        ValueError
            Invalid parameter or combination, bounds of the wrong shape or with
            ``lower >= upper``, a wrong shape of ``X`` or ``y``: facts of the parameters and the
            schema, always before any noise is drawn. Never for a value of a record (README,
            "The data domain"): a label outside ``classes`` or a target that is not a number
            leaves its record out, a cell that is not a number is missing.
        """
        previous, fitted_inputs = warm_start_inputs(self) or (None, None)
        configs = self._configs(sample_weight, schema_width(self._schema(X))
                                if previous is None else self.n_features_in_, previous)
        config = configs[0]
        if previous is not None and config.n_estimators == previous.n_stages:
            return self  # warm_start with no tree to add (as HistGradientBoosting): no spend
        check_mechanisms(self.leaf_noise, self.delta, self.l2_regularization,
                         config.min_child_weight)
        # With public classes the plans, hence the spend, are known before any record is read:
        # every plan a private row count may choose is made and reserved.
        shape = (planned_shape(self, self._schema(X)) if previous is None
                 else (previous.n_outputs, fitted_inputs.numeric.size, 0))
        options = None if shape is None else plan_regimes(configs, lambda c: plan_fit(
            c, make_loss(self._loss_name, shape[0]), *shape, previous))
        spend = Reservation(self.accountant,
                            f"{type(self).__name__}(epsilon={self.epsilon:g}, delta={self.delta:g})")
        with spend:
            if options is not None:
                spend.reserve_plans(plan for _, plan in options)
            records, n_outputs, inputs = self._records(X, y, sample_weight,
                                                       config.weight_bound, fitted_inputs)
            loss = make_loss(self._loss_name, n_outputs)
            if options is None:
                options = plan_regimes(configs, lambda c: plan_fit(
                    c, loss, n_outputs, inputs.numeric.size, len(inputs.observed_categories)))
                spend.reserve_plans(plan for _, plan in options)
            result = train(records, inputs, loss, options, n_outputs,
                           n_threads(self.n_jobs), spend.fit_id, previous)
        spend.commit(result.charged, result.choices)
        # Fitted attributes are set only now, all from the fit's result: a fit that raised
        # leaves nothing half-fitted.
        self.__dict__.update(result.attributes)
        self._forest = result.forest
        # warm_start: the fits compose sequentially (each entry carries its fit's identifier)
        self.privacy_ledger_ = (([] if previous is None else self.privacy_ledger_)
                                + result.charged)
        if previous is None:
            self._privacy_choices = result.choices
        self.privacy_spent_ = (
            choices_epsilon(result.planned, float(self.delta), self.epsilon)
            if previous is None and result.planned is not None
            else fit_epsilon(self.privacy_ledger_, self._privacy_choices, float(self.delta),
                             self.epsilon))
        self._warm_start_params = warm_start_params(self)
        if self.diagnostics:
            prior = [] if previous is None else getattr(self, "filtered_fraction_", [])
            self.filtered_fraction_ = np.concatenate([prior, result.filtered])
        return self

    def _schema(self, X):
        """What the plan reads of ``X`` before any record: its shape and column types."""
        return X

    def _records(self, X, y, sample_weight=None, weight_bound=None, previous=None):
        """The records as a record set (``_records``; here one partition), the number of
        outputs and the public inputs (``fit_inputs``)."""
        X, y_scaled, inputs, weights = fit_inputs(self, X, y, sample_weight, weight_bound,
                                                  previous)
        return (InMemoryRecords.of(X, y_scaled, n_threads(self.n_jobs), weights),
                y_scaled.shape[1], inputs)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    @property
    def n_estimators_(self) -> int:
        """int: boosting stages fitted (``n_estimators`` with "auto" resolved)."""
        check_is_fitted(self)
        return self._forest.n_stages

    @property
    def n_iter_(self) -> int:
        """int: boosting stages fitted, HistGradientBoosting's name (fewer than
        ``n_estimators`` when early stopping stopped the fit)."""
        return self.n_estimators_

    @property
    def feature_importances_(self) -> NDArray:
        """ndarray of shape (n_features_in_,): :meth:`feature_importance` ``("contribution")``,
        the spread of each feature's contribution to the margin (what the model does with it),
        from released values only."""
        check_is_fitted(self)
        return self.feature_importance("contribution")

    def feature_importance(self, importance_type: str = "contribution") -> NDArray:
        """Feature importances from released values only (never exact gains or covers).

        Parameters
        ----------
        importance_type : {"contribution", "gain", "cover", "split"}, default="contribution"
            ``"contribution"``: the spread (weighted variance) of each feature's contribution
            to the margin, the sum of the trees that split on it, over its public grid
            weighted by the released leaf covers (``_inspection.contribution_importances``;
            on Laplace leaves, which release no covers, each grid code weighs the same).
            ``"split"``: the fraction of split nodes using each feature (released split
            choices; about uniform with random splits, whatever the data). ``"gain"`` and
            ``"cover"``: each feature's share of the split gain, or of the released weight
            (noisy Hessian sum or count) of the nodes it splits, recomputed from the released
            leaf statistics (``_inspection.released_importances``: XGBoost's gain, Chen &
            Guestrin 2016, Eq. 7, on noisy sums; the noise makes the gain a poor ranking).

        Returns
        -------
        importances : ndarray of shape (n_features_in_,), dtype=float64
            Non-negative, summing to 1 (all 0 if no feature has a positive value).

        Raises
        ------
        ValueError
            An unknown ``importance_type``, or ``"gain"`` / ``"cover"`` for a model whose
            leaves released only their values (``leaf_noise="laplace"``).
        """
        check_is_fitted(self)
        return feature_importance(self._forest, importance_type, self.l2_regularization,
                                  self.leaf_noise, self.n_features_in_)

    def privacy_report(self) -> str:
        """Text account of the fit: composed epsilon and the ledger by mechanism.

        Returns
        -------
        report : str
            Includes the GDF filtered fractions only if ``diagnostics=True`` (not private).
        """
        check_is_fitted(self)
        return privacy_report(self.privacy_ledger_, self.privacy_spent_,
                              getattr(self, "filtered_fraction_", None), float(self.delta),
                              0 if self._privacy_choices is None else len(self._privacy_choices))

    def export_text(self, tree: int = 0) -> str:
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
        return tree_text(self._forest, tree, getattr(self, "feature_names_in_", None),
                         self.categories_)

    def to_json(self) -> str:
        """The fitted model as versioned JSON holding only public and released values.

        Returns
        -------
        text : str
            Load it back with :meth:`from_json`.
        """
        check_is_fitted(self)
        fitted = {name: getattr(self, name) for name in FITTED if hasattr(self, name)}
        return model_to_json(type(self).__name__, self.get_params(deep=False), fitted,
                             self._forest, self.privacy_ledger_, self._privacy_choices)

    def to_xgboost_json(self) -> str:
        check_is_fitted(self)
        return estimator_to_xgboost(
            type(self).__name__, self._forest, self._xgboost_link(), self.n_features_in_,
            getattr(self, "feature_names_in_", None), self.categories_)

    to_xgboost_json.__doc__ = TO_XGBOOST_JSON

    def to_xgboost(self) -> "xgboost.Booster":  # noqa: F821 (imported on call)
        """The fitted model as an ``xgboost.Booster`` (:meth:`to_xgboost_json` loaded), for
        XGBoost's ``predict`` or ``shap.TreeExplainer``; feed it :meth:`encode` ``(X)``.

        Returns
        -------
        booster : xgboost.Booster

        Raises
        ------
        ImportError
            XGBoost is not installed.
        """
        try:
            import xgboost
        except ImportError as error:
            raise ImportError("to_xgboost needs XGBoost: pip install xgboost (or "
                              "xgboost-cpu)") from error
        booster = xgboost.Booster()
        booster.load_model(bytearray(self.to_xgboost_json(), "utf-8"))
        return booster

    def encode(self, X: ArrayLike) -> NDArray:
        """``X`` as the exported trees (:meth:`to_xgboost`) read it: each categorical cell
        replaced by its code, its position in the public list ``categories_[j]`` (NaN when the
        value is missing or not in the list), every other cell as a number; float32, as XGBoost
        reads its inputs. The codes come from the public lists alone (the same per-cell
        conversion as ``predict``), so no record decides how another is coded.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features_in_)

        Returns
        -------
        X_encoded : ndarray or DataFrame of shape (n_samples, n_features_in_), dtype=float32
            A pandas DataFrame with the columns ``feature_names_in_`` when the model was fitted
            on named columns (the booster checks them, SHAP's plots show them).

        Raises
        ------
        ValueError
            ``X`` does not match the fit (number or names of columns).
        """
        encoded = self._numbers(X).astype(np.float32)
        if not hasattr(self, "feature_names_in_"):
            return encoded
        import pandas as pd  # a model fitted on named columns was fitted on a frame

        return pd.DataFrame(encoded, columns=self.feature_names_in_, index=getattr(X, "index", None))

    def save_model(self, path: str | os.PathLike) -> None:
        """Write :meth:`to_json` to the file ``path`` (UTF-8), as XGBoost's ``save_model``.

        Parameters
        ----------
        path : str or os.PathLike
            Load it back with :meth:`load_model` or :meth:`from_json`.
        """
        text = self.to_json()
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)

    def load_model(self: _Self, path: str | os.PathLike) -> _Self:
        """Replace this estimator's parameters and fitted model with those of a saved model, as
        XGBoost's ``load_model``.

        Parameters
        ----------
        path : str or os.PathLike
            A file written by :meth:`save_model` (or :meth:`to_json`).

        Returns
        -------
        self

        Raises
        ------
        ValueError
            As :meth:`from_json`: a truncated or foreign file, a newer format.
        """
        loaded = self.from_json(Path(path))  # from_json reads a str as JSON text
        self.__dict__.clear()
        self.__dict__.update(loaded.__dict__)
        return self

    @classmethod
    def from_json(cls: type[_Self], source: str | os.PathLike | dict) -> _Self:
        """Rebuild a fitted estimator from :meth:`to_json` output (same predictions).

        Parameters
        ----------
        source : str, os.PathLike or dict
            The JSON text (a ``str``), the path of a file holding it (``pathlib.Path``; or
            :meth:`load_model`, which takes a ``str`` path too) or the parsed document.

        Raises
        ------
        ValueError
            "model file: " and what is wrong, naming the field, its value and the rule: a file
            that is not UTF-8 JSON (truncated), not a dpboost model of this class, a newer or
            unknown format version, a missing field, or a field of the wrong type, shape or
            range (a model file is untrusted input: every index and shape the prediction kernel
            reads is checked on load).
        OSError
            The path cannot be read.

        Warns
        -----
        UserWarning
            The file's ``dpboost_version`` is newer than this library.
        """
        params, fitted, forest = model_from_json(read_source(source), cls.__name__)
        estimator = cls(**params)
        estimator.__dict__.update(fitted, _forest=forest)
        estimator._warm_start_params = warm_start_params(estimator)
        return estimator

    @classmethod
    def dpboost_paper(cls: type[_Self], *, epsilon: float = 1.0, **params) -> _Self:
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
        # The paper's setting reads no row count: n_estimators is given, init is "zero".
        setting = dict(DPBOOST_PAPER, n_samples_hint=None,
                       **({"loss": "square"} if "loss" in cls._parameter_constraints else {}))
        return cls(**{**setting, "epsilon": epsilon, **params})

    def _numbers(self, X):
        """``X`` checked against the fit, categorical cells as their public codes (float64)."""
        check_is_fitted(self)
        X = check_columns(self, X)
        typed = released_category_columns(
            self.categories, self.categories_,
            lambda: getattr(self, "feature_names_in_", range(self.n_features_in_)))
        return validate_data(self, cells_as_numbers(X, self.categories_, typed),
                             dtype=np.float64, ensure_all_finite=False, reset=False)

    def _binned(self, X):
        """``X`` checked against the fit and binned on its grid (row-major)."""
        X = self._numbers(X)  # first: it raises NotFittedError before _forest is read
        return self._forest.binner.transform(X, order="C", n_threads=n_threads(self.n_jobs))

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
                              "loss": [StrOptions({"square", "logistic", "softmax"})],
                              "class_weight": [dict, StrOptions({"balanced"}), None],
                              "n_samples_hint": [Interval(Integral, 1, None, closed="left"),
                                                 StrOptions({"private"}), None]}

    def __init__(self, *, epsilon=1.0, delta=1e-5, accounting="auto", loss="softmax",
                 n_estimators="auto", max_depth=6,
                 learning_rate="auto", l2_regularization=10.0, max_bins=32, trees_per_ensemble=50,
                 budget_allocation="sequential", gradient_bound=0.5, gradient_filtering=False,
                 renyi_filter=None, leaf_clipping=True, leaf_noise="gaussian", min_child_weight=0.0,
                 subsample="auto", split_selection="auto", split_candidates="auto",
                 interaction_cst="auto", monotonic_cst=None, feature_bounds=None,
                 categorical_features="from_dtype", categories=None, classes=None,
                 class_weight=None, sample_weight_bound=None, init="zero", n_samples_hint="private",
                 warm_start=False,
                 early_stopping=False, validation_fraction=0.1, n_iter_no_change=20,
                 random_state=None, verbose=0, diagnostics=False, domain_report=False,
                 n_jobs=None, accountant=None):
        self._store_parameters(locals())

    @property
    def _loss_name(self):
        return self.loss

    def _encode_y(self, y, fitted_target):
        """Which records train (a label outside the public classes leaves its record out), their
        labels as -1 / +1 per output, the classes and what was read from ``y``
        (``_cells.encode_classes``); ``fitted_target``: a warm start's ``{"classes_": ...}``."""
        return encode_classes(y, fitted_target.get("classes_", self.classes))

    def _planned_outputs(self):
        """Trees per boosting stage from the public classes (1 for two, K for K > 2); None when
        the classes are read from the data (the plan then follows validation)."""
        if self.classes is None:
            return None
        n_classes = check_classes(self.classes).size
        return 1 if n_classes == 2 else n_classes

    @predict_doc("Raw margins ``F(x)``, the sum of the trees' leaf values: the log-odds of "
                 "``classes_[1]`` (``\"logistic\"``), the softmax's logits (``\"softmax\"``) or "
                 "square-loss estimates of ``E[label | x]`` with labels -1 / +1 (``\"square\"``).",
                 "margin : ndarray of shape (n_samples,) for two classes (positive class "
                 "``classes_[1]``),\n            or (n_samples, n_classes) for one-vs-rest, "
                 "dtype=float64")
    def decision_function(self, X: ArrayLike, iteration_range=None) -> NDArray:
        margin = self._raw_predict(X, iteration_range)
        return margin[:, 0] if self.classes_.size == 2 else margin

    @predict_doc("""Class probabilities through the loss's link (``_loss``).

        ``"softmax"``: ``softmax(F)`` (two classes: ``[1 - p, p]``, ``p = sigma(F)``).
        ``"logistic"``: ``sigma(F_k)``; ``"square"``: ``clip((F_k + 1) / 2, 0, 1)``; with K > 2
        classes one-vs-rest, normalised to sum to 1 (uniform where all are 0).""",
                 "proba : ndarray of shape (n_samples, n_classes), dtype=float64")
    def predict_proba(self, X: ArrayLike, iteration_range=None) -> NDArray:
        return self._proba(self._raw_predict(X, iteration_range))

    def _xgboost_link(self):
        return xgboost_link(self.loss, self._forest.n_outputs)

    def _proba(self, margin):
        return make_loss(self.loss, margin.shape[1]).proba(margin)

    @predict_doc("Predicted labels: the class of largest margin (two classes: ``classes_[1]`` "
                 "if F > 0).", "y_pred : ndarray of shape (n_samples,)")
    def predict(self, X: ArrayLike, iteration_range=None) -> NDArray:
        return self._labels(self._raw_predict(X, iteration_range))

    def _labels(self, margin):
        if self.classes_.size == 2:
            return self.classes_[(margin[:, 0] > 0).astype(int)]
        return self.classes_[np.argmax(margin, axis=1)]

    @predict_doc("Predicted labels after each boosting stage (as scikit-learn's gradient "
                 "boosting).", "y_pred : ndarray of shape (n_samples,)\n            After stages "
                 "1, ..., ``n_estimators`` (each stage adds one tree per output).", staged=True)
    def staged_predict(self, X: ArrayLike) -> Iterator[NDArray]:
        for margin in self._staged_raw_predict(X):
            yield self._labels(margin)

    @predict_doc("Class probabilities after each boosting stage (see :meth:`predict_proba`).",
                 "proba : ndarray of shape (n_samples, n_classes), dtype=float64", staged=True)
    def staged_predict_proba(self, X: ArrayLike) -> Iterator[NDArray]:
        for margin in self._staged_raw_predict(X):
            yield self._proba(margin)


class DPGBRegressor(RegressorMixin, _BaseDPGB):
    __doc__ = REGRESSOR

    _parameter_constraints = {**_BaseDPGB._parameter_constraints,
                              "target_bounds": ["array-like", StrOptions({"private"}), None],
                              "n_samples_hint": [Interval(Integral, 1, None, closed="left"),
                                                 StrOptions({"private"}), None]}

    def __init__(self, *, epsilon=1.0, delta=1e-5, accounting="auto", n_estimators="auto",
                 max_depth=4, learning_rate=0.1,
                 l2_regularization=1.0, max_bins=32, trees_per_ensemble=50,
                 budget_allocation="sequential", gradient_bound=1.0, gradient_filtering=False,
                 renyi_filter=None, leaf_clipping=True, leaf_noise="gaussian",
                 min_child_weight="auto", subsample=1.0, split_selection="auto",
                 split_candidates="hessian", interaction_cst="auto", monotonic_cst=None,
                 feature_bounds=None, categorical_features="from_dtype", categories=None,
                 target_bounds=None, sample_weight_bound=None, init="auto",
                 n_samples_hint="private",
                 warm_start=False, early_stopping=False, validation_fraction=0.1,
                 n_iter_no_change=20, random_state=None, verbose=0, diagnostics=False,
                 domain_report=False, n_jobs=None,
                 accountant=None):
        self._store_parameters(locals())

    def _encode_y(self, y, fitted_target):
        """Which records train (a target that is not a number leaves its record out), the
        targets scaled into [-1, 1] by the public bounds, and what was read from ``y``
        (``_cells.encode_targets``); ``fitted_target``: a warm start's
        ``{"target_bounds_": ...}``."""
        return encode_targets(y, fitted_target.get("target_bounds_", self.target_bounds))

    def _planned_outputs(self):
        """One tree per boosting stage."""
        return 1

    @predict_doc("Predicted targets in the units of ``y``, within ``target_bounds_``.",
                 "y_pred : ndarray of shape (n_samples,), dtype=float64")
    def predict(self, X: ArrayLike, iteration_range=None) -> NDArray:
        return predicted_target(self._raw_predict(X, iteration_range)[:, 0], self.target_bounds_)

    def _xgboost_link(self):
        return xgboost_link("square", 1, self.target_bounds_)

    @predict_doc("Predictions after each boosting stage (as scikit-learn's gradient boosting).",
                 "y_pred : ndarray of shape (n_samples,), dtype=float64\n            After "
                 "stages 1, ..., ``n_estimators``.", staged=True)
    def staged_predict(self, X: ArrayLike) -> Iterator[NDArray]:
        for margin in self._staged_raw_predict(X):
            yield predicted_target(margin[:, 0], self.target_bounds_)

"""The number of trees against the row count times epsilon (``n_samples_hint``), on tuning
splits only.

Stages (``--stage``):

- ``regression``: the five shared regression sets, ``bench_regression.tuning_split`` (an inner
  75 / 25 split of fold 0's training part, at most 20,000 fitting rows: no test fold is read),
  delta 1e-5, ``n_estimators`` in :data:`TREES` (``"auto"``: the rule without a hint, the
  previous default) x epsilon in :data:`REGRESSION_EPSILONS` x ``random_state`` 0 and 1;
  ``n_eps`` = fitting rows x epsilon: results/tree_count_regression.csv.
- ``classification``: Adult (adult.data, rows without missing values, S-BDT's protocol) on an
  inner 80 / 20 split (``random_state=0``) of the training part of fold 0 of
  ``KFold(5, shuffle=True, random_state=0)``: the folds S-BDT's goals are scored on are never
  the validation rows; delta 5e-8, ``n_estimators`` in :data:`TREES` x epsilon in
  :data:`ADULT_EPSILONS` x ``random_state`` 0 and 1: results/tree_count_classification.csv.
- ``small``: the regression stage's splits at small n x epsilon, delta 5e-8: the shipped
  default (``n_estimators="auto"``, ``init="zero"``) against ``init="private"`` with half or
  most of the budget on the initial score (``_budget.INITIAL_SHARE`` patched, 0.5 and 0.8) and
  10 or 50 trees, epsilon in :data:`SMALL_EPSILONS`, ``random_state`` 0 and 1:
  results/tree_count_small.csv.
- ``constant``: the regression stage's splits at small n x epsilon, delta 5e-8, the public row
  count (``n_samples_hint`` = the fitting rows), the default regressor forced into the
  small-data regime (``_auto.CONSTANT_N_EPSILON`` patched to 0) and into the constant regime
  (patched to inf: the private mean target alone), epsilon in :data:`CONSTANT_EPSILONS`,
  ``random_state`` 0-19, two processes: results/tree_count_constant.csv.
- ``threshold``: the regression stage's splits, delta 5e-8, the public row count, the default
  regressor forced into its small-data regime (``_auto.SMALL_N_EPSILON`` patched to inf) and
  into its large regime (patched to 0) at the epsilon that puts n x epsilon at each of
  :data:`THRESHOLD_N_EPSILONS`, ``random_state`` 0-11, two processes:
  results/tree_count_threshold.csv.
- ``small_recipe``: the regression stage's splits, delta 5e-8, the public row count, the
  default regressor forced into its small-data regime (``_auto.CONSTANT_N_EPSILON`` patched to
  0, ``SMALL_N_EPSILON`` to inf) as shipped and as before (``SMALL_INITIAL_SHARE`` 0.5,
  ``SMALL_TREES`` 10, ``SMALL_MIN_CHILD_WEIGHT`` "auto": the rule of larger fits), with
  ``SMALL_INITIAL_SHARE`` 0.2 and 0.3 and with 30 trees, into the constant regime and into
  the large regime, at the epsilon that puts n x epsilon at each of
  :data:`SMALL_RECIPE_N_EPSILONS`, ``random_state`` 0-7, two processes:
  results/tree_count_small_recipe.csv.
- ``small_sbdt``: the ``small_recipe`` stage's splits and public row count, the default
  regressor forced into its small-data regime as shipped against S-BDT's Abalone trees there
  (50 trees of depth 2 on a 0.1 Poisson sample, lambda 15, gradients clipped at 0.5 of the
  target's half-range: ``_auto.SMALL_TREES`` patched to 50, the rest as parameters) and that
  recipe with one part changed at a time (:data:`SMALL_SBDT_SETTINGS`), and the large regime, at
  the epsilon that puts n x epsilon at each of :data:`SMALL_SBDT_N_EPSILONS`, ``random_state``
  0-5, two processes: results/tree_count_small_sbdt.csv.
- ``init_large``: the ``threshold`` stage's cells in the large regime, ``init="zero"`` (its
  default) against ``init="private"`` at ``_budget.INITIAL_SHARE`` 0.1 and 0.25 (patched),
  ``random_state`` 0-9: results/tree_count_init_large.csv.
- ``count_share``: the regression stage's splits, delta 5e-8, the default regressor with its
  private count at ``_row_count.ROW_COUNT_SHARE`` in :data:`COUNT_SHARES` (patched), epsilon in
  :data:`COUNT_SHARE_EPSILONS`, ``random_state`` 0-9, two processes:
  results/tree_count_count_share.csv.
- ``count_margin``: the regression stage's splits, delta 5e-8, the default regressor with its
  private count, the constant regime's margin ``_auto.CONSTANT_COUNT_MARGIN`` in
  :data:`COUNT_MARGINS` (patched), at the epsilon that puts n x epsilon at each of
  :data:`COUNT_MARGIN_N_EPSILONS`, ``random_state`` 0-23 (the same seeds, so the same noise,
  for every margin), two processes: results/tree_count_count_margin.csv.
- ``gradient_bound``: the regression stage's splits, delta 5e-8, the public row count, the
  default regressor with the settings of :data:`GRADIENT_BOUND_SETTINGS` (S-BDT's tighter
  gradient clip, 0.3 of the target's half-range, and a private initial score), epsilon in
  :data:`GRADIENT_BOUND_EPSILONS`, ``random_state`` 0-3, two processes:
  results/tree_count_gradient_bound.csv.
- ``clip_oracle``: the regression stage's splits, delta 5e-8, the public row count, the
  default regressor against itself with its gradient bound set to a quantile (each of
  :data:`CLIP_QUANTILES`) of ``|y - mean(y)|`` over the fitting rows, the target scaled into
  [-1, 1] by its public bounds (:func:`_oracle_bound`): read from the data without noise, a
  ceiling on what a private quantile of the residuals could gain; epsilon in
  :data:`REGRESSION_EPSILONS`, ``random_state`` 0-3, two processes:
  results/tree_count_clip_oracle.csv.
- ``interactions``: the regression stage's splits, delta 5e-8, the public row count, the
  default regressor against unrestricted exponential-split trees of depth 4 and 6
  (:data:`INTERACTION_SETTINGS`), epsilon in :data:`INTERACTION_EPSILONS`, ``random_state``
  0-2, two processes: results/tree_count_interactions.csv.
- ``count``: the regression stage's splits, delta 5e-8, the default regressor without a row
  count, with the public one (``n_samples_hint`` = the fitting rows) and with a private count
  (``n_samples_hint="private"``), epsilon in :data:`REGRESSION_EPSILONS`, ``random_state`` 0 and
  1: results/tree_count_count.csv.
- ``accounting``: the classification stage's Adult split, the default classifier with
  ``accounting="rdp"`` and ``"auto"`` (the PLD refinement), epsilon in
  :data:`ACCOUNTING_EPSILONS`, ``random_state`` 0-5 (the same seeds for both):
  results/tree_count_accounting.csv.
- ``goals``: the rule chosen (``n_samples_hint`` = the training rows: Abalone's size is
  published) scored against the goals, S-BDT's protocol (bench_initial_score.py: Abalone 5-fold
  CV, fold split by seed, delta 5e-8), without a count, with the hint and with a private count,
  seeds 0 and 1, epsilon in
  :data:`GOAL_EPSILONS`: results/tree_count_goals.csv. Test folds: reporting only, nothing
  was chosen on them.

Run: ``NUMBA_NUM_THREADS=1 python benchmarks/bench_tree_count.py --stage regression`` (and
``--stage classification``); ``--report`` prints the mean validation score per cell from the
CSV. Seeded numpy noise; 2 shared cores, so fit times are not comparable across runs.
"""

import argparse
import importlib
import itertools
import math
import warnings
from collections import defaultdict

import _harness
import _loaders
import numpy as np
from bench_regression import DATASETS, dpboost, tuning_split
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import KFold, train_test_split

import dpboost._auto as _auto
import dpboost._budget as budget
from dpboost import DPGBClassifier, DPGBRegressor
from dpboost._loss import scale_target

TREES = (25, 50, 100, 200, "auto")
REGRESSION_EPSILONS = (0.03, 0.1, 0.3, 1.0, 4.0)
ADULT_EPSILONS = (0.01, 0.03, 0.1, 0.5)
SEEDS = (0, 1)
SMALL_EPSILONS = (0.03, 0.1, 0.3)
GOAL_EPSILONS = (0.01, 0.05, 0.1, 0.2, 0.5, 1.0)
CONSTANT_EPSILONS = (0.01, 0.02, 0.03, 0.05, 0.1)
COUNT_SHARES = (0.01, 0.02, 0.05)
THRESHOLD_N_EPSILONS = (600, 1000, 1500, 2500, 4000)
#: label -> ``_auto.SMALL_N_EPSILON`` of the ``threshold`` stage.
THRESHOLD_SETTINGS = {"small-data regime": math.inf, "large regime": 0.0}
SMALL_RECIPE_N_EPSILONS = (150, 250, 400, 550, 700, 1000, 1500)
#: The ``_auto`` values the ``small_recipe`` stage patches, as shipped (read before any patch).
_SHIPPED_REGIMES = {name: getattr(_auto, name) for name in (
    "CONSTANT_N_EPSILON", "SMALL_N_EPSILON", "SMALL_INITIAL_SHARE", "SMALL_TREES",
    "SMALL_MIN_CHILD_WEIGHT")}
#: The shipped values with every fit forced into the small-data regime.
_FORCED_SMALL = {**_SHIPPED_REGIMES, "CONSTANT_N_EPSILON": 0.0, "SMALL_N_EPSILON": math.inf}
#: The shipped values with every fit in the large regime.
_LARGE_REGIME = {**_SHIPPED_REGIMES, "CONSTANT_N_EPSILON": 0.0, "SMALL_N_EPSILON": 0.0}
#: label -> ``_auto`` values of the ``small_recipe`` stage (each sets all of them: joblib's
#: workers keep a patch from one cell to the next).
SMALL_RECIPE_SETTINGS = {
    "small-data regime": _FORCED_SMALL,
    "small-data regime before": {**_FORCED_SMALL, "SMALL_INITIAL_SHARE": 0.5, "SMALL_TREES": 10,
                                 "SMALL_MIN_CHILD_WEIGHT": "auto"},
    **{f"initial share {share:g}": {**_FORCED_SMALL, "SMALL_INITIAL_SHARE": share}
       for share in (0.2, 0.3)},
    "30 trees": {**_FORCED_SMALL, "SMALL_TREES": 30},
    "constant": {**_SHIPPED_REGIMES, "CONSTANT_N_EPSILON": math.inf},
    "large regime": _LARGE_REGIME}
SMALL_SBDT_N_EPSILONS = (250, 400, 550, 700, 1000)
#: S-BDT's Abalone trees (kirschte/sbdt, its best published setting) as the regressor's
#: parameters; with ``SMALL_TREES`` 50 in the small-data regime.
_SBDT_TREES = {"max_depth": 2, "subsample": 0.1, "l2_regularization": 15.0,
               "gradient_bound": 0.5}
_SBDT_REGIME = {**_FORCED_SMALL, "SMALL_TREES": 50}
#: label -> (``_auto`` values, regressor parameters) of the ``small_sbdt`` stage.
SMALL_SBDT_SETTINGS = {
    "small-data regime": (_FORCED_SMALL, {}),
    "S-BDT trees": (_SBDT_REGIME, _SBDT_TREES),
    **{f"gb {bound:g}": (_SBDT_REGIME, {**_SBDT_TREES, "gradient_bound": bound})
       for bound in (0.3, 0.7, 1.0)},
    "subsample 1": (_SBDT_REGIME, {**_SBDT_TREES, "subsample": 1.0}),
    "lambda 5": (_SBDT_REGIME, {**_SBDT_TREES, "l2_regularization": 5.0}),
    "depth 3": (_SBDT_REGIME, {**_SBDT_TREES, "max_depth": 3}),
    "100 trees": ({**_SBDT_REGIME, "SMALL_TREES": 100}, _SBDT_TREES),
    "large regime": (_LARGE_REGIME, {})}
#: label -> (init, ``_budget.INITIAL_SHARE``) of the ``init_large`` stage.
INIT_LARGE_SETTINGS = {"init zero": ("zero", 0.1), "init private 0.1": ("private", 0.1),
                       "init private 0.25": ("private", 0.25)}
COUNT_SHARE_EPSILONS = (0.01, 0.02, 0.03, 0.05, 0.1, 0.3, 1.0)
COUNT_MARGINS = (0.0, 1.0, 2.0)
GRADIENT_BOUND_EPSILONS = (0.1, 0.3, 1.0, 4.0)
INTERACTION_EPSILONS = (1.0, 4.0, 16.0, math.inf)
#: label -> parameters over the default regressor of the ``interactions`` stage.
INTERACTION_SETTINGS = {"default": {}, **{
    f"exp d{depth}": {"split_selection": "exponential", "interaction_cst": None,
                      "max_depth": depth, "subsample": 1.0} for depth in (4, 6)}}
#: label -> parameters over the default regressor of the ``gradient_bound`` stage.
GRADIENT_BOUND_SETTINGS = {
    "default": {}, "init private": {"init": "private"}, "gb 0.3": {"gradient_bound": 0.3},
    **{f"init private, gb {bound:g}": {"init": "private", "gradient_bound": bound}
       for bound in (0.5, 0.3, 0.2)}}
#: Quantiles of the fitting rows' ``|y - mean(y)|`` taken as the gradient bound by the
#: ``clip_oracle`` stage, and its settings (label -> quantile, None: the default bound).
CLIP_QUANTILES = (0.8, 0.9, 0.95, 0.99)
CLIP_SETTINGS = {"default": None, **{f"oracle q{q:g}": q for q in CLIP_QUANTILES}}
COUNT_MARGIN_N_EPSILONS = (25, 50, 100, 150, 200, 250, 300, 400, 500, 700, 1000)
#: label -> ``_auto.CONSTANT_N_EPSILON`` of the ``constant`` stage.
CONSTANT_SETTINGS = {"small-data regime": 0.0, "constant": math.inf}
#: (label, initial share or None for init="zero", n_estimators) of the ``small`` stage.
SMALL_SETTINGS = (("default", None, "auto"), ("private 0.5, 10 trees", 0.5, 10),
                  ("private 0.5, 50 trees", 0.5, 50), ("private 0.8, 10 trees", 0.8, 10))


def _rmse(y, prediction):
    return math.sqrt(float(np.mean((prediction - y) ** 2)))


def regression_stage():
    rows = []
    for name in _loaders.available(DATASETS):
        data = _loaders.load(name)
        X_fit, y_fit, X_val, y_val = tuning_split(data)
        for epsilon, trees, seed in itertools.product(REGRESSION_EPSILONS, TREES, SEEDS):
            model = dpboost(data, epsilon, seed, n_jobs=1, n_estimators=trees)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.fit(X_fit, y_fit)
            rmse = _rmse(y_val, model.predict(X_val))
            rows.append({"dataset": name, "n_fit": len(y_fit), "n_features": X_fit.shape[1],
                         "epsilon": epsilon, "n_eps": len(y_fit) * epsilon,
                         "trees": trees, "n_estimators_": model.n_estimators_, "seed": seed,
                         "rmse": rmse,
                         "mean_rmse": _rmse(y_val, np.full(y_val.size, y_fit.mean()))})
        print(name, "done", flush=True)
    return rows


def small_stage():
    rows = []
    shipped = budget.INITIAL_SHARE
    for name in _loaders.available(DATASETS):
        data = _loaders.load(name)
        X_fit, y_fit, X_val, y_val = tuning_split(data)
        for epsilon, (label, share, trees), seed in itertools.product(
                SMALL_EPSILONS, SMALL_SETTINGS, SEEDS):
            budget.INITIAL_SHARE = shipped if share is None else share
            budget.plan_budget.cache_clear()
            model = DPGBRegressor(epsilon=epsilon, delta=5e-8, feature_bounds=data["bounds"],
                                  target_bounds=data["target_bounds"], random_state=seed,
                                  n_jobs=1, n_estimators=trees,
                                  init="zero" if share is None else "private")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.fit(X_fit, y_fit)
            rows.append({"dataset": name, "n_fit": len(y_fit), "n_features": X_fit.shape[1],
                         "epsilon": epsilon, "n_eps": len(y_fit) * epsilon, "trees": label,
                         "seed": seed, "rmse": _rmse(y_val, model.predict(X_val)),
                         "mean_rmse": _rmse(y_val, np.full(y_val.size, y_fit.mean()))})
        print(name, "done", flush=True)
    budget.INITIAL_SHARE = shipped
    budget.plan_budget.cache_clear()
    return rows


def _tuning_row(name, label, seed, patch, *, n_eps=None, epsilon=None, public_count=False,
                **params):
    """One default regressor fitted on ``name``'s tuning split (delta 5e-8, ``random_state``
    ``seed``, at ``epsilon`` or at the one that puts n x epsilon at ``n_eps``; with
    ``public_count``, ``n_samples_hint`` the fitting rows) after ``patch()`` (each call:
    joblib's workers live on), scored on its validation rows."""
    data = _loaders.load(name)
    X_fit, y_fit, X_val, y_val = tuning_split(data)
    patch()
    epsilon = n_eps / len(y_fit) if epsilon is None else epsilon
    if public_count:
        params["n_samples_hint"] = len(y_fit)
    model = DPGBRegressor(epsilon=epsilon, delta=5e-8, feature_bounds=data["bounds"],
                          target_bounds=data["target_bounds"], random_state=seed, n_jobs=1,
                          **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X_fit, y_fit)
    return {"dataset": name, "n_fit": len(y_fit), "epsilon": epsilon,
            "n_eps": len(y_fit) * epsilon, "trees": label, "seed": seed,
            "n_estimators_": model.n_estimators_, "rmse": _rmse(y_val, model.predict(X_val)),
            "mean_rmse": _rmse(y_val, np.full(y_val.size, y_fit.mean()))}


def _patched(module, **values):
    """``patch`` for :func:`_tuning_row`: set ``values`` on the ``dpboost`` submodule
    ``module`` (its plans forgotten)."""
    def patch():
        target = importlib.import_module(f"dpboost.{module}")
        for name, value in values.items():
            setattr(target, name, value)
        budget.plan_budget.cache_clear()
    return patch


def _in_parallel(cells, row):
    from joblib import Parallel, delayed

    return Parallel(n_jobs=2, batch_size=4)(delayed(row)(*cell) for cell in cells)


def constant_stage():
    return _in_parallel(
        itertools.product(_loaders.available(DATASETS), CONSTANT_EPSILONS, CONSTANT_SETTINGS,
                          range(20)),
        lambda name, epsilon, label, seed: _tuning_row(
            name, label, seed, _patched("_auto", CONSTANT_N_EPSILON=CONSTANT_SETTINGS[label]),
            epsilon=epsilon, public_count=True))


def threshold_stage():
    return _in_parallel(
        itertools.product(_loaders.available(DATASETS), THRESHOLD_N_EPSILONS,
                          THRESHOLD_SETTINGS, range(12)),
        lambda name, n_eps, label, seed: _tuning_row(
            name, label, seed, _patched("_auto", SMALL_N_EPSILON=THRESHOLD_SETTINGS[label]),
            n_eps=n_eps, public_count=True))


def small_recipe_stage():
    return _in_parallel(
        itertools.product(_loaders.available(DATASETS), SMALL_RECIPE_N_EPSILONS,
                          SMALL_RECIPE_SETTINGS, range(8)),
        lambda name, n_eps, label, seed: _tuning_row(
            name, label, seed, _patched("_auto", **SMALL_RECIPE_SETTINGS[label]), n_eps=n_eps,
            public_count=True))


def small_sbdt_stage():
    return _in_parallel(
        itertools.product(_loaders.available(DATASETS), SMALL_SBDT_N_EPSILONS,
                          SMALL_SBDT_SETTINGS, range(6)),
        lambda name, n_eps, label, seed: _tuning_row(
            name, label, seed, _patched("_auto", **SMALL_SBDT_SETTINGS[label][0]), n_eps=n_eps,
            public_count=True, **SMALL_SBDT_SETTINGS[label][1]))


def _ratio_table(rows, base, labels, group, heading, fmt):
    """A README table (markdown): per group of rows (``group(row)``, printed by ``fmt``), each
    setting of ``labels`` other than ``base``, its RMSE over ``base``'s (per set, the ratio of
    the means over the seeds): its geometric mean over the sets, and its smallest and largest."""
    means = defaultdict(list)
    for r in rows:
        means[(group(r), r["dataset"], r["trees"])].append(float(r["rmse"]))
    others = [label for label in labels if label != base]
    lines = [f"| {heading} | " + " | ".join(others) + " |", "|---" * (len(others) + 1) + "|"]
    for value in sorted({key[0] for key in means}):
        cells = []
        for label in others:
            ratios = {name: np.mean(means[(value, name, label)])
                      / np.mean(means[(value, name, base)])
                      for (v, name, lab) in means if v == value and lab == label}
            values = list(ratios.values())
            cells.append(f"{math.exp(np.mean(np.log(values))):.3f} "
                         f"({min(values):.2f}-{max(values):.2f})")
        lines.append(f"| {fmt(value)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _small_regime_table(rows, labels):
    """Per n x epsilon, each setting of ``labels`` against the shipped small-data regime
    (:func:`_ratio_table`)."""
    return _ratio_table(rows, "small-data regime", labels,
                        lambda r: round(float(r["n_eps"])), "n x eps", "{:,}".format)


def small_recipe_table(rows):
    """The README table of the ``small_recipe`` stage (:func:`_small_regime_table`)."""
    return _small_regime_table(rows, SMALL_RECIPE_SETTINGS)


def small_sbdt_table(rows):
    """The README table of the ``small_sbdt`` stage (:func:`_small_regime_table`)."""
    return _small_regime_table(rows, SMALL_SBDT_SETTINGS)


def clip_oracle_table(rows):
    """The README table of the ``clip_oracle`` stage: per epsilon, each oracle bound against
    the default (:func:`_ratio_table`)."""
    return _ratio_table(rows, "default", CLIP_SETTINGS, lambda r: float(r["epsilon"]),
                        "epsilon", "{:g}".format)


def count_margin_table(rows, base="margin 0"):
    """The README table of the ``count_margin`` stage (markdown): per n x epsilon and set, each
    other margin's RMSE over ``base``'s, the mean over seeds of the paired ratio with its
    standard error (none where every seed's fit is the same), and a last row of geometric
    means over the cells below 225, from 225 to 500 and in all."""
    rmse = defaultdict(dict)
    for r in rows:
        rmse[(round(float(r["n_eps"])), r["dataset"], r["trees"])][r["seed"]] = float(r["rmse"])
    labels = sorted({key[2] for key in rmse} - {base})
    names = sorted({key[1] for key in rmse})
    lines = ["| margin: n x epsilon | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    means = defaultdict(list)
    for label in labels:
        for n_eps in sorted({key[0] for key in rmse}):
            cells = []
            for name in names:
                new, old = rmse[(n_eps, name, label)], rmse[(n_eps, name, base)]
                ratios = np.array([new[seed] / old[seed] for seed in new])
                means[(label, "below" if n_eps < 225 else "to 500" if n_eps <= 500 else "above")
                      ].append(ratios.mean())
                error = ratios.std(ddof=1) / math.sqrt(ratios.size)
                cells.append(f"{ratios.mean():.4f}" + (f" ± {error:.4f}" if error > 5e-5 else ""))
            lines.append(f"| {label}: {n_eps:,} | " + " | ".join(cells) + " |")
    for label in labels:
        parts = {band: math.exp(np.mean(np.log(values))) for (lab, band), values in means.items()
                 if lab == label}
        every = [v for (lab, _), values in means.items() if lab == label for v in values]
        lines.append(f"| {label}: geometric mean | below 225: {parts['below']:.4f} | 225-500: "
                     f"{parts['to 500']:.4f} | all: {math.exp(np.mean(np.log(every))):.4f} | "
                     f"worst cell: {max(every):.4f} | |")
    return "\n".join(lines)


def init_large_stage():
    return _in_parallel(
        itertools.product(_loaders.available(DATASETS), THRESHOLD_N_EPSILONS[:4],
                          INIT_LARGE_SETTINGS, range(10)),
        lambda name, n_eps, label, seed: _tuning_row(
            name, label, seed, _large_with_share(INIT_LARGE_SETTINGS[label][1]), n_eps=n_eps,
            public_count=True, init=INIT_LARGE_SETTINGS[label][0]))


def count_share_stage():
    return _in_parallel(
        itertools.product(_loaders.available(DATASETS), COUNT_SHARE_EPSILONS, COUNT_SHARES,
                          range(10)),
        lambda name, epsilon, share, seed: _tuning_row(
            name, f"count share {share:g}", seed, _patched("_row_count", ROW_COUNT_SHARE=share),
            epsilon=epsilon))


def count_margin_stage():
    return _in_parallel(
        itertools.product(_loaders.available(DATASETS), COUNT_MARGIN_N_EPSILONS, COUNT_MARGINS,
                          range(24)),
        lambda name, n_eps, margin, seed: _tuning_row(
            name, f"margin {margin:g}", seed,
            _patched("_auto", CONSTANT_COUNT_MARGIN=margin), n_eps=n_eps))


def _settings_stage(epsilons, settings, seeds):
    """The default regressor with each of ``settings`` (label -> parameters over it) on every
    tuning split at each of ``epsilons``, the public row count, ``random_state`` 0 to
    ``seeds - 1``."""
    return _in_parallel(
        itertools.product(_loaders.available(DATASETS), epsilons, settings, range(seeds)),
        lambda name, epsilon, label, seed: _tuning_row(
            name, label, seed, lambda: None, epsilon=epsilon, public_count=True,
            **settings[label]))


def gradient_bound_stage():
    return _settings_stage(GRADIENT_BOUND_EPSILONS, GRADIENT_BOUND_SETTINGS, 4)


def _oracle_bound(name, quantile):
    """The ``quantile`` of ``|y - mean(y)|`` over ``name``'s fitting rows, the target scaled into
    [-1, 1] by its public bounds, at most the default bound 1 (non-private: a diagnostic)."""
    data = _loaders.load(name)
    y = scale_target(tuning_split(data)[1], data["target_bounds"])
    return min(1.0, float(np.quantile(np.abs(y - y.mean()), quantile)))


def clip_oracle_stage():
    return _in_parallel(
        itertools.product(_loaders.available(DATASETS), REGRESSION_EPSILONS, CLIP_SETTINGS,
                          range(4)),
        lambda name, epsilon, label, seed: _tuning_row(
            name, label, seed, lambda: None, epsilon=epsilon, public_count=True,
            **({} if CLIP_SETTINGS[label] is None
               else {"gradient_bound": _oracle_bound(name, CLIP_SETTINGS[label])})))


def interactions_stage():
    return _settings_stage(INTERACTION_EPSILONS, INTERACTION_SETTINGS, 3)


def _large_with_share(share):
    """The large regime (``_auto.SMALL_N_EPSILON`` 0) with the initial score at ``share``."""
    large, initial = _patched("_auto", SMALL_N_EPSILON=0.0), _patched("_budget", INITIAL_SHARE=share)
    return lambda: (large(), initial())


def goals_stage():
    from bench_initial_score import _abalone

    X, y, public = _abalone()
    rows = []
    for seed in SEEDS:
        for fold, (train, test) in enumerate(KFold(5, shuffle=True, random_state=seed).split(X)):
            rows.append({"dataset": "abalone", "trees": "mean (non-private)", "epsilon": math.inf,
                         "seed": seed, "fold": fold,
                         "rmse": _rmse(y[test], np.full(test.size, y[train].mean()))})
            for epsilon, hint in itertools.product(GOAL_EPSILONS, (None, train.size, "private")):
                model = DPGBRegressor(epsilon=epsilon, delta=5e-8, n_samples_hint=hint,
                                      random_state=100 * seed + fold, n_jobs=1, **public)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model.fit(X[train], y[train])
                rows.append({"dataset": "abalone", "trees": HINT_LABELS.get(hint, "n_samples_hint"),
                             "epsilon": epsilon, "seed": seed, "fold": fold,
                             "rmse": _rmse(y[test], model.predict(X[test]))})
        print("seed", seed, "done", flush=True)
    return rows


#: How the ``count`` and ``goals`` stages name the values of ``n_samples_hint``.
HINT_LABELS = {None: "no hint", "private": "private count"}


def count_stage():
    rows = []
    for name in _loaders.available(DATASETS):
        data = _loaders.load(name)
        X_fit, y_fit, X_val, y_val = tuning_split(data)
        for epsilon, hint, seed in itertools.product(REGRESSION_EPSILONS,
                                                     (None, len(y_fit), "private"), SEEDS):
            model = DPGBRegressor(epsilon=epsilon, delta=5e-8, feature_bounds=data["bounds"],
                                  target_bounds=data["target_bounds"], random_state=seed,
                                  n_jobs=1, n_samples_hint=hint)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.fit(X_fit, y_fit)
            rows.append({"dataset": name, "n_fit": len(y_fit), "n_features": X_fit.shape[1],
                         "epsilon": epsilon, "n_eps": len(y_fit) * epsilon,
                         "trees": HINT_LABELS.get(hint, "n_samples_hint"), "seed": seed,
                         "n_estimators_": model.n_estimators_,
                         "rmse": _rmse(y_val, model.predict(X_val)),
                         "mean_rmse": _rmse(y_val, np.full(y_val.size, y_fit.mean()))})
        print(name, "done", flush=True)
    return rows


def adult_tuning_split():
    data = _loaders.load("adult")
    complete = ~np.isnan(data["X"]).any(axis=1)
    X, y = data["X"][complete], data["y"][complete]
    train, _ = next(KFold(5, shuffle=True, random_state=0).split(X))
    fit, val = train_test_split(train, test_size=0.2, random_state=0)
    return X[fit], y[fit], X[val], y[val], data["bounds"]


def _adult_row(split, epsilon, seed, label, **params):
    """The default classifier (delta 5e-8, ``params`` over it) fitted on the Adult tuning split
    (:func:`adult_tuning_split`) and its validation ROC AUC, as a results row."""
    X_fit, y_fit, X_val, y_val, bounds = split
    model = DPGBClassifier(epsilon=epsilon, delta=5e-8, feature_bounds=bounds, classes=[0, 1],
                           random_state=seed, n_jobs=1, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X_fit, y_fit)
    row = {"dataset": "adult", "n_fit": len(y_fit), "n_features": X_fit.shape[1],
           "epsilon": epsilon, "n_eps": len(y_fit) * epsilon, "trees": label,
           "n_estimators_": model.n_estimators_, "seed": seed,
           "noise_multiplier": model.privacy_ledger_[-1].noise_multiplier,
           "privacy_spent": model.privacy_spent_,
           "auc": roc_auc_score(y_val, model.predict_proba(X_val)[:, 1])}
    print(epsilon, label, seed, round(row["auc"], 4), flush=True)
    return row


def classification_stage():
    split = adult_tuning_split()
    return [_adult_row(split, epsilon, seed, trees, n_estimators=trees)
            for epsilon, trees, seed in itertools.product(ADULT_EPSILONS, TREES, SEEDS)]


ACCOUNTING_EPSILONS = (0.01, 0.03, 0.1, 0.5, 1.0)


def accounting_stage():
    split = adult_tuning_split()
    return [_adult_row(split, epsilon, seed, accounting, accounting=accounting)
            for epsilon, accounting, seed in itertools.product(ACCOUNTING_EPSILONS,
                                                               ("rdp", "auto"), range(6))]


def report(rows, metric):
    cells = defaultdict(list)
    for r in rows:
        cells[(r["dataset"], float(r["epsilon"]), str(r["trees"]))].append(float(r[metric]))
    for (dataset, epsilon, trees), values in sorted(cells.items()):
        print(f"{dataset:12s} eps={epsilon:<5g} trees={trees:>5s} {metric} "
              f"{sum(values) / len(values):.4g} (n={len(values)})")


#: stage -> its README table (the other stages print :func:`report`).
STAGE_TABLES = {"small_recipe": small_recipe_table, "count_margin": count_margin_table,
                "clip_oracle": clip_oracle_table, "small_sbdt": small_sbdt_table}


def main():
    stages = {"regression": regression_stage, "classification": classification_stage,
              "small": small_stage, "constant": constant_stage, "goals": goals_stage,
              "count": count_stage, "count_share": count_share_stage,
              "count_margin": count_margin_stage, "gradient_bound": gradient_bound_stage,
              "clip_oracle": clip_oracle_stage,
              "interactions": interactions_stage,
              "threshold": threshold_stage, "small_recipe": small_recipe_stage,
              "small_sbdt": small_sbdt_stage,
              "init_large": init_large_stage, "accounting": accounting_stage}
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stage", choices=tuple(stages), required=True)
    parser.add_argument("--report", action="store_true", help="print the table from the CSV")
    args = parser.parse_args()
    name = f"tree_count_{args.stage}"
    metric = "auc" if args.stage in ("classification", "accounting") else "rmse"
    if not args.report:
        _harness.warm_up()
        _harness.write_results(name, stages[args.stage]())
    rows = _harness.read_results(name)
    if args.stage in STAGE_TABLES:
        print(STAGE_TABLES[args.stage](rows))
    else:
        report(rows, metric)


if __name__ == "__main__":
    main()

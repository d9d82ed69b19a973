"""Interactions against the row count times epsilon: the additive default against unrestricted
exponential-split trees, on tuning splits only.

The question: can the default classifier choose its interaction order from ``n * epsilon`` (``n``:
the fitting rows, a public input once released as a noisy count or a hint)? Each cell fits

- ``default``: ``DPGBClassifier(interaction_cst="no_interactions", n_samples_hint=None)``, the
  default as shipped when these runs were made (random splits, one feature per tree: an
  additive model; no row count);
- ``exp dD``: ``split_selection="exponential", interaction_cst=None, max_depth=D,
  subsample=1.0`` (unrestricted trees of depth D, splits chosen by the exponential mechanism on
  every row), every other parameter as shipped (``n_estimators`` and ``learning_rate`` "auto"),
  D in :data:`DEPTHS`; D = 2 is the "pairs" variant (at most two features per path);
- ``exp d4 sub auto``: ``exp d4`` with the shipped ``subsample="auto"`` (0.1 below epsilon 0.5,
  else 0.3): a Poisson sample per tree starves the exponential mechanism (a probe on adult, bank,
  give_me_some_credit and synth30k at epsilon 1 and 4 lost 0.005-0.04 AUC to ``subsample=1``).

Data (validation rows are never a test file or a test fold):

- ``synth100k`` / ``synth30k``: ``make_classification(n, 20 features, 10 informative,
  random_state=0)``, 80 / 20 split (``random_state=0``): nothing else is held out of a generated
  set. ``synth100k`` is also fitted on the first 20,000 and 5,000 of its fitting rows
  (``synth100k@20000``, ...; same validation rows), to separate n from epsilon;
- the shared sets (``_loaders``): the official training file (adult, cod_rna) or the training part
  of fold 0 of ``KFold(5, shuffle=True, random_state=0)``, split 75 / 25 (``random_state=0``);
  fitting rows capped at :data:`MAX_FIT` (fixed seed), the cap recorded as ``n_fit``.

Delta 1e-6, epsilon in :data:`EPSILONS` (and inf on the synthetic sets, as a reference),
``random_state`` in :data:`SEEDS`, ``n_jobs=1``. Seeded numpy noise. One row per fit:
``n_fit``, ``n_eps`` (= n_fit x epsilon), validation ROC AUC, fit seconds (2 shared cores: not
comparable across runs): results/capacity.csv.

Run: ``NUMBA_NUM_THREADS=1 python benchmarks/bench_capacity.py`` (``--quick``: synth30k and
adult, epsilon 1, one seed: results/capacity_quick.csv; ``--datasets``: results/capacity_subset.csv);
``--high``: :data:`HIGH_SETS` at :data:`HIGH_EPSILONS`, :data:`HIGH_CONFIGS`, seeds 0 and 1
(results/capacity_high.csv); ``--trees``: the additive default with ``n_estimators`` in
:data:`TREE_COUNTS` on every set at :data:`TREE_EPSILONS`, seeds :data:`TREE_SEEDS` (the
question: should the number of trees grow with n x epsilon?), and ``exp d6`` with 200 and 400
trees where n x epsilon / p reaches the interaction rule's 8,000 (results/capacity_trees.csv);
``--select``: simulated private choices between the two on disjoint parts of the fitting rows
(:func:`select_cell`) at the cells of :data:`SELECT_CELLS`, seeds :data:`SELECT_SEEDS`, beside
both fitted on all of them (results/capacity_select.csv; ``--parts A B V``, other fractions of
the parts: results/capacity_select_A_B_V.csv); ``--margins``: the library's statistic and both
models fitted on T for each cut, to score margins of the choice offline (:func:`margin_cell`,
seeds :data:`MARGIN_SEEDS`: results/capacity_margins.csv); ``--choice``: the library's default
(its private choice included) against ``additive`` and ``exp d6`` on all the fitting rows
(:data:`CHOICE_CONFIGS`, seeds :data:`CHOICE_SEEDS`: results/capacity_choice.csv);
``--bounds``: the library's default on the public bounds against the same with
``feature_bounds="private"`` (the grid on bounds released from the data: does the grid's place
limit the random splits?) on every set at :data:`BOUNDS_EPSILONS`, seeds :data:`BOUNDS_SEEDS`
(results/capacity_bounds.csv); ``--candidates``: the library's default on the equal-width grid
(``split_candidates="uniform"``) against the quantile sketch (``"sketch"``) on every set at
:data:`CANDIDATES_EPSILONS`, seeds :data:`CANDIDATES_SEEDS` (results/capacity_candidates.csv;
where the sketch pays: ``_auto.SKETCH_N_EPSILON_PER_FEATURE``), ``--candidates-check``: the grid
against the default as shipped (its ``"auto"`` rule), fresh seeds
:data:`CANDIDATES_CHECK_SEEDS` (results/capacity_candidates_check.csv); ``--log-grid``: the
default on the equal-width grid (``split_candidates="uniform"``) against the log grid
(``"log"``) on the sets with a feature it spaces, at :data:`CANDIDATES_EPSILONS`, seeds
:data:`LOG_GRID_SEEDS` (results/capacity_log_grid.csv); ``--log-grid-sketch``: the quantile
sketch (``"sketch"``) against the log grid on those sets from 700 per feature, seeds
:data:`LOG_GRID_SKETCH_SEEDS` (results/capacity_log_grid_sketch.csv); ``--atoms``: the sketch's
thresholds, a value many records share in a bin of its own, against plain quantiles (``--atoms
--before`` with ``PYTHONPATH`` on a checkout before that rule first; results/capacity_atoms.csv
and capacity_atoms_before.csv); ``--adult-sweep``: the default on Adult's tuning split at
epsilon 1 with one parameter changed at a time (:data:`ADULT_SWEEP`, seeds
:data:`ADULT_SWEEP_SEEDS`: results/capacity_adult_sweep.csv); ``--report`` prints the table
from the CSV.
"""

import itertools
import math
import time
import warnings
from collections import defaultdict

import _harness
import _loaders
import numpy as np
from sklearn.datasets import make_classification
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split

from dpboost import DPGBClassifier
from dpboost._auto import SKETCH_N_EPSILON_PER_FEATURE, interaction_threshold, reaches
from dpboost._candidates import log_grid_features
from dpboost._interaction_choice import (
    PART_FRACTIONS,
    SLOTS_PER_BUCKET,
    n_slots,
    pairs_statistic,
    slot_of,
    slot_sums,
    statistic_release,
)
from dpboost._row_count import row_count_release
from dpboost._sensitivities import choice_statistic_sensitivity

EPSILONS = (0.3, 1.0, 4.0)
SEEDS = (0, 1, 2)
DEPTHS = (2, 3, 4, 5, 6)
DELTA = 1e-6
#: Fitting rows kept at most (give_me_some_credit's 90,000 would dominate the run time).
MAX_FIT = 60_000
#: Fitting-row counts of synth100k besides all 80,000.
SYNTH_SUBSETS = (20_000, 5_000)
SHARED = ("adult", "cod_rna", "electricity", "bank", "credit", "magic", "give_me_some_credit",
          "diabetes")
SETS = ("synth100k", "synth30k") + SHARED
CONFIGS = ("default",) + tuple(f"exp d{d}" for d in DEPTHS) + ("exp d4 sub auto",)
#: ``--high``: the shared sets where ``exp d4`` does not beat the default at epsilon 4, at
#: larger n x epsilon (the same fitting rows).
HIGH_SETS = ("adult", "bank", "credit", "give_me_some_credit", "diabetes")
HIGH_EPSILONS = (8.0, 16.0)
HIGH_CONFIGS = ("default", "exp d4", "exp d5", "exp d6")
#: ``--trees``: the number of trees of the additive default against n x epsilon.
TREE_COUNTS = (200, 400, 800)
TREE_EPSILONS = (0.1, 0.3, 1.0, 4.0, 16.0)
TREE_SEEDS = (10, 11, 12, 13)
#: ``--select``: (set, epsilon): where n x epsilon / p is 3,000-8,000 (below the interaction
#: rule, where the capacity table's cells gain or lose by interactions), then cells below and
#: above that band; seeds; and the fractions of the fitting rows in the parts A, B and V (the
#: rest is T).
SELECT_CELLS = (("synth100k", 1.0), ("give_me_some_credit", 1.0), ("cod_rna", 1.0),
                ("magic", 4.0), ("diabetes", 4.0), ("bank", 4.0), ("synth30k", 4.0),
                ("adult", 4.0), ("credit", 4.0),
                ("adult", 1.0), ("bank", 1.0), ("magic", 1.0), ("electricity", 1.0),
                ("synth100k", 0.3), ("synth30k", 1.0),
                ("electricity", 4.0), ("give_me_some_credit", 4.0))
SELECT_SEEDS = (20, 21, 22)
#: ``--choice``: the library's choice (``auto``) against ``additive`` and ``exp d6`` at the
#: cells of :data:`SELECT_CELLS`, fresh seeds.
CHOICE_SEEDS = (30, 31, 32, 33, 34, 35)
#: ``--margins``: seeds, and the margins of the choice scored (``_interaction_choice``'s
#: ``CHOICE_MARGIN`` is one).
MARGIN_SEEDS = (20, 21, 22, 23, 24, 25)
MARGINS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5)
CHOICE_CONFIGS = ("additive", "auto", "exp d6")
#: ``--bounds``: the library's default on the public bounds and on released ones.
BOUNDS_CONFIGS = ("auto", "auto private bounds")
BOUNDS_EPSILONS = (0.1, 1.0, 4.0)
BOUNDS_SEEDS = (40, 41)
#: ``--candidates``: the library's default on the equal-width grid and on the quantile sketch
#: (the tuning run of ``_auto.SKETCH_N_EPSILON_PER_FEATURE``); ``--candidates-check``: on the
#: grid and as shipped (the rule), fresh seeds.
CANDIDATES_CONFIGS = ("auto grid", "auto sketch")
CANDIDATES_CHECK_CONFIGS = ("auto grid", "auto")
CANDIDATES_EPSILONS = (0.03, 0.1, 0.3, 1.0, 4.0)
CANDIDATES_SEEDS = (50, 51, 52, 53, 54, 55)
CANDIDATES_CHECK_SEEDS = (60, 61, 62, 63)
#: ``--log-grid``: the default on the equal-width grid and on the log grid
#: (``_candidates.LOG_GRID_SPAN``), on the sets with a feature the log grid changes, at
#: :data:`CANDIDATES_EPSILONS`.
LOG_GRID_CONFIGS = ("auto grid", "auto log grid")
LOG_GRID_SEEDS = (80, 81, 82, 83)
#: ``--log-grid-sketch``: the quantile sketch against the log grid on the same sets, in the
#: cells of :data:`LOG_GRID_SKETCH_EPSILONS` from 700 per feature (the sketch's regime), fresh
#: seeds.
LOG_GRID_SKETCH_CONFIGS = ("auto sketch", "auto log grid")
LOG_GRID_SKETCH_EPSILONS = (0.3, 1.0, 4.0)
LOG_GRID_SKETCH_SEEDS = (90, 91, 92, 93, 94, 95)
#: ``--atoms``: the sketch's thresholds with a value many records share given one bin
#: (``_candidates.sketch_thresholds``) against plain quantiles (``--atoms --before``, run on the
#: library before that rule): the sketch at :data:`CANDIDATES_EPSILONS` and seeds
#: :data:`CANDIDATES_SEEDS`, and the default without noise at these seeds.
ATOMS_INF_SEEDS = (0, 1)
#: label -> parameters over the library's default of the ``--adult-sweep`` stage: one change at
#: a time around the trees the default grows on Adult's tuning split at epsilon 1 (additive
#: random splits: 24,420 fitting rows x 1 / 14 features is 1,744, below the interaction
#: choice's band)
ADULT_SWEEP = {
    "auto": {}, "exponential splits": {"split_selection": "exponential"},
    "depth 4": {"max_depth": 4}, "depth 8": {"max_depth": 8},
    "learning rate 0.5": {"learning_rate": 0.5}, "600 trees": {"n_estimators": 600},
    "64 bins": {"max_bins": 64}, "subsample 0.5": {"subsample": 0.5},
    "lambda 5": {"l2_regularization": 5.0}, "lambda 20": {"l2_regularization": 20.0},
    "gradient bound 0.3": {"gradient_bound": 0.3}, "gradient bound 1": {"gradient_bound": 1.0},
    **{f"unrestricted random d{depth}": {"interaction_cst": None, "split_selection": "random",
                                         "max_depth": depth} for depth in (3, 6)},
    **{f"unrestricted exponential d{depth}": {"interaction_cst": None,
                                              "split_selection": "exponential",
                                              "max_depth": depth, "subsample": 1.0}
       for depth in (4, 6)}}
ADULT_SWEEP_EPSILON = 1.0
ADULT_SWEEP_SEEDS = (0, 1, 2, 3)
SELECT_PARTS = PART_FRACTIONS
SELECT_CRITERIA = ("brier", "pairs", "buckets")


def _synthetic(n_samples):
    X, y = make_classification(n_samples=n_samples, n_features=20, n_informative=10,
                               random_state=0)
    X_fit, X_val, y_fit, y_val = train_test_split(X, y, test_size=0.2, random_state=0)
    # standard-normal mixtures: +-8 is a public, generous box (as _loaders.synthetic)
    return X_fit, y_fit, X_val, y_val, np.tile([-8.0, 8.0], (20, 1))


def _shared(name):
    data = _loaders.load(name)
    _, X_train, y_train, _, _ = next(_loaders.splits(data, 1))
    X_fit, X_val, y_fit, y_val = train_test_split(X_train, y_train, test_size=0.25,
                                                  random_state=0)
    if len(y_fit) > MAX_FIT:
        keep = np.sort(np.random.default_rng(0).choice(len(y_fit), MAX_FIT, replace=False))
        X_fit, y_fit = X_fit[keep], y_fit[keep]
    return X_fit, y_fit, X_val, y_val, data["bounds"]


def tuning_splits(names):
    """Yield ``(label, X_fit, y_fit, X_val, y_val, bounds, synthetic)``."""
    for name in names:
        if name.startswith("synth"):
            split = _synthetic(1000 * int(name[5:-1]))
            yield (name, *split, True)
            if name == "synth100k":
                X_fit, y_fit, X_val, y_val, bounds = split
                for rows in SYNTH_SUBSETS:
                    yield (f"{name}@{rows}", X_fit[:rows], y_fit[:rows], X_val, y_val, bounds,
                           True)
        elif _loaders.available([name]):
            yield (name, *_shared(name), False)


def model(config, epsilon, seed, bounds):
    """``config``: "default", "exp dD" or "exp dD sub S" (module docstring), each optionally
    followed by " N trees" (``n_estimators=N``; else "auto"); or "auto" (the default
    classifier, its private choice of interactions included) or "additive" (the same with
    ``interaction_cst="no_interactions"``: the default below 8,000 per feature before the
    choice) or "auto private bounds" ("auto" with ``feature_bounds="private"``) or "auto
    sketch" / "auto grid" / "auto log grid" ("auto" with ``split_candidates`` "sketch" /
    "uniform" / "log") or a label of :data:`ADULT_SWEEP` (the library's default with its
    parameters)."""
    variants = {"auto": {}, "additive": {"interaction_cst": "no_interactions"},
                "auto private bounds": {"feature_bounds": "private"},
                "auto sketch": {"split_candidates": "sketch"},
                "auto grid": {"split_candidates": "uniform"},
                "auto log grid": {"split_candidates": "log"}, **ADULT_SWEEP}
    if config in variants:
        # The library's default, and today's rule below 8,000 per feature (additive trees)
        variant = variants[config]
        return DPGBClassifier(**{"epsilon": epsilon, "delta": DELTA, "feature_bounds": bounds,
                                 "classes": [0, 1], "random_state": seed, "n_jobs": 1,
                                 **variant})
    params = dict(_harness.ADDITIVE)  # "default": the additive default these runs measured
    if config.endswith(" trees"):
        config, _, count = config.removesuffix(" trees").rpartition(" ")
        params["n_estimators"] = int(count)
    elif config == "default" and math.isinf(epsilon):
        params["n_estimators"] = 200  # its "auto" then; additive trees now get 400 without noise
    if config != "default":
        depth, _, subsample = config.removeprefix("exp d").partition(" sub ")
        params.update({"split_selection": "exponential", "interaction_cst": None,
                       "max_depth": int(depth), "subsample": subsample or 1.0})
    return DPGBClassifier(epsilon=epsilon, delta=DELTA, feature_bounds=bounds, classes=[0, 1],
                          random_state=seed, n_jobs=1, **params)


def run(names, epsilons, seeds, configs=CONFIGS):
    rows = []
    for name, X_fit, y_fit, X_val, y_val, bounds, synthetic in tuning_splits(names):
        split = (X_fit, y_fit, X_val, y_val, bounds)
        for epsilon in epsilons + ((math.inf,) if synthetic else ()):
            rows += [_fit_cell(name, split, epsilon, config, seed)
                     for config, seed in itertools.product(configs, seeds)]
            print(name, epsilon, " ".join(
                f"{r['config']}:{r['auc']:.4f}" for r in rows[-len(configs) * len(seeds):]),
                flush=True)
    return rows


def _fit_cell(name, split, epsilon, config, seed):
    """One fit of :func:`model` on a tuning split ``(X_fit, y_fit, X_val, y_val, bounds)``, as a
    results row (validation ROC AUC; fit seconds, not comparable across runs)."""
    X_fit, y_fit, X_val, y_val, bounds = split
    estimator = model(config, epsilon, seed, bounds)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimator.fit(X_fit, y_fit)
    fit_s = time.perf_counter() - start
    return {"dataset": name, "n_fit": len(y_fit), "n_val": len(y_val),
            "n_features": X_fit.shape[1], "epsilon": epsilon, "n_eps": len(y_fit) * epsilon,
            "config": config, "seed": seed, "n_estimators_": estimator.n_estimators_,
            "interactions": estimator.interaction_cst_ is None,
            "auc": roc_auc_score(y_val, estimator.predict_proba(X_val)[:, 1]),
            "fit_s": round(fit_s, 3)}


def _fit_cells(cells):
    """:func:`_fit_cell` of every cell (its arguments), two fits at a time."""
    from joblib import Parallel, delayed

    return Parallel(n_jobs=2, batch_size=2)(delayed(_fit_cell)(*cell) for cell in cells)


def run_trees(names):
    """``--trees``: every tuning split at :data:`TREE_EPSILONS` with the additive default at
    each of :data:`TREE_COUNTS` trees, and ``exp d6`` at 200 and 400 trees where n x epsilon /
    p reaches the interaction rule's 8,000 (``_auto.interaction_threshold``, the classifier's own
    test); two fits at a time."""
    cells = []
    for name, X_fit, y_fit, X_val, y_val, bounds, _ in tuning_splits(names):
        split = (X_fit, y_fit, X_val, y_val, bounds)
        for epsilon in TREE_EPSILONS:
            configs = [f"default {count} trees" for count in TREE_COUNTS]
            if reaches(len(y_fit), epsilon, interaction_threshold(X_fit.shape[1])):
                configs += ["exp d6 200 trees", "exp d6 400 trees"]
            cells += [(name, split, epsilon, config, seed)
                      for config, seed in itertools.product(configs, TREE_SEEDS)]
    return _fit_cells(cells)


def select_cell(name, split, epsilon, seed, parts=SELECT_PARTS):
    """``--select``: simulated private choices between ``default`` and ``exp d6``.

    The fitting rows are cut by a seeded coin each into parts A, B, V (fractions ``parts``,
    :data:`SELECT_PARTS` by default) and T. ``default`` is fitted on A and ``exp d6`` on B,
    each at ``epsilon``; a statistic of V comparing them is released with Laplace noise of
    scale 2 / epsilon (``buckets``: 1 / epsilon, its sensitivity), and the configuration it
    favours (its released value above 0) is fitted on T at ``epsilon``. Three statistics
    (:data:`SELECT_CRITERIA`): ``brier``, the sum of
    the differences of the records' Brier scores; ``pairs``, V's records paired by their coins
    (consecutive in coin order), each pair of two labels scoring +1 where ``exp d6`` alone
    orders it as its labels do, -1 where ``default`` alone does, and each record half of its
    pair's score (its expectation is the difference of the two ROC AUCs times the pairs of two
    labels; an added record shifts every later pair, so it has no bounded sensitivity);
    ``buckets``, the library's ``_interaction_choice.pairs_statistic`` (without its margin;
    only with the library's fractions, by which it slots V's coins).
    One record is in one part: by parallel composition the four releases cost
    epsilon (and the count's share, not simulated here); the question is what the choice is
    worth, not its implementation. Returns the results rows of each criterion's chosen model
    (config "select CRITERION") and of ``default`` and ``exp d6`` on all the fitting rows."""
    X_fit, y_fit, X_val, y_val, bounds = split
    rng, coin, part, fitted = _cut(split, epsilon, seed, parts)
    held = np.flatnonzero(part == 2)
    held = held[np.argsort(coin[held])]
    held = held[:held.size - held.size % 2]
    y_held = y_fit[held]
    scores = {config: m.predict_proba(X_fit[held])[:, 1] for config, m in fitted.items()}
    first, second = slice(0, None, 2), slice(1, None, 2)

    def ordered(p):  # +1 / -1 / 0 per pair: ordered as its labels, reversed, or a tie of labels
        return np.sign(p[second] - p[first]) * np.sign(y_held[second] - y_held[first])

    statistics = {
        "brier": -float(np.sum((scores["exp d6"] - y_held) ** 2
                               - (scores["default"] - y_held) ** 2)),
        "pairs": float(np.sum((ordered(scores["exp d6"]) == 1).astype(float)
                              - (ordered(scores["default"]) == 1))),
    }
    # The library's statistic slots V's coins as its own parts cut them: with its fractions only.
    if parts == PART_FRACTIONS:
        statistics["buckets"] = _buckets(split, coin, part, fitted)[0]
    rows = []
    for criterion in statistics:
        sensitivity = choice_statistic_sensitivity() if criterion == "buckets" else 2.0
        released = statistics[criterion] + rng.laplace(scale=sensitivity / epsilon)
        chosen = "exp d6" if released > 0 else "default"
        row = _fit_cell(name, (X_fit[part == 3], y_fit[part == 3], X_val, y_val, bounds),
                        epsilon, chosen, seed)
        row.update(config=f"select {criterion}", chosen=chosen,
                   statistic=statistics[criterion], n_fit=len(y_fit),
                   n_eps=len(y_fit) * epsilon)
        rows.append(row)
    rows += [_fit_cell(name, split, epsilon, config, seed) for config in ("default", "exp d6")]
    return rows


def _cut(split, epsilon, seed, parts):
    """The fitting rows of ``split`` cut by a coin each (a generator seeded with ``seed``) into
    parts A, B, V (fractions ``parts``) and T, with ``default`` fitted on A and ``exp d6`` on B.

    Returns
    -------
    rng : numpy.random.Generator
        After the coins (the Laplace noise of :func:`select_cell` follows).
    coin, part : ndarray
        Each row's coin and part (0: A, 1: B, 2: V, 3: T).
    fitted : dict
        ``{"default": model on A, "exp d6": model on B}``.
    """
    X_fit, y_fit, _, _, bounds = split
    rng = np.random.default_rng(seed)
    coin = rng.random(len(y_fit))
    part = np.searchsorted(np.cumsum(parts), coin, side="right")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = {config: model(config, epsilon, seed, bounds).fit(X_fit[part == k],
                                                                   y_fit[part == k])
                  for k, config in enumerate(("default", "exp d6"))}
    return rng, coin, part, fitted


def _buckets(split, coin, part, fitted):
    """The library's statistic (``_interaction_choice.pairs_statistic``) of V's rows of
    ``split`` under the models ``fitted`` (:func:`_cut`), and its number of buckets."""
    X_fit, y_fit = split[:2]
    in_v, slots = np.flatnonzero(part == 2), n_slots(len(y_fit))
    statistic = pairs_statistic(slot_sums(
        slot_of(coin[in_v], slots), y_fit[in_v],
        *(fitted[c].decision_function(X_fit[in_v]) for c in ("default", "exp d6")), slots))
    return statistic, slots // SLOTS_PER_BUCKET


def _select_splits():
    """Yield ``(name, split, epsilon)`` for every cell of :data:`SELECT_CELLS` (``split``:
    :func:`_fit_cell`'s), the sets loaded once each."""
    names = sorted({name for name, _ in SELECT_CELLS})
    for name, X_fit, y_fit, X_val, y_val, bounds, _ in tuning_splits(names):
        split = (X_fit, y_fit, X_val, y_val, bounds)
        yield from ((name, split, epsilon) for cell, epsilon in SELECT_CELLS if cell == name)


def run_select(parts=SELECT_PARTS):
    """``--select``: :func:`select_cell` at every cell of :data:`SELECT_CELLS` and seed of
    :data:`SELECT_SEEDS` with the parts' fractions ``parts``, two at a time."""
    from joblib import Parallel, delayed

    cells = [(name, split, epsilon, seed, parts) for name, split, epsilon in _select_splits()
             for seed in SELECT_SEEDS]
    return [row for rows in Parallel(n_jobs=2)(delayed(select_cell)(*cell) for cell in cells)
            for row in rows]


def margin_cell(name, split, epsilon, seed):
    """``--margins``: the library's statistic (:func:`select_cell`'s ``buckets``) on one cut of
    the fitting rows, and both ``default`` and ``exp d6`` fitted on T, so that any margin of
    the choice can be scored offline (:func:`margin_table`): rows "T default" and "T exp d6"
    with the statistic before noise and the number of buckets."""
    X_fit, y_fit, X_val, y_val, bounds = split
    _, coin, part, fitted = _cut(split, epsilon, seed, SELECT_PARTS)
    statistic, buckets = _buckets(split, coin, part, fitted)
    rows = []
    for config in ("default", "exp d6"):
        row = _fit_cell(name, (X_fit[part == 3], y_fit[part == 3], X_val, y_val, bounds),
                        epsilon, config, seed)
        row.update(config=f"T {config}", statistic=statistic, buckets=buckets,
                   n_fit=len(y_fit), n_eps=len(y_fit) * epsilon)
        rows.append(row)
    return rows


def run_margins():
    """``--margins``: :func:`margin_cell` at every cell of :data:`SELECT_CELLS` and seed of
    :data:`MARGIN_SEEDS`, two at a time."""
    from joblib import Parallel, delayed

    cells = [(name, split, epsilon, seed) for name, split, epsilon in _select_splits()
             for seed in MARGIN_SEEDS]
    return [row for rows in Parallel(n_jobs=2)(delayed(margin_cell)(*cell) for cell in cells)
            for row in rows]


def margin_table(rows):
    """The README table of ``--margins`` (markdown): per margin ``c`` of
    :data:`MARGINS`, the expected gain of the choice over ``default`` on T (the chosen model's
    validation ROC AUC averaged over the noise of the library's release after its row count
    (``_interaction_choice.statistic_release``, a Gaussian at DELTA): ``exp d6`` where
    statistic + noise > c sqrt(buckets)), its mean over the cells in the band (3,000 to 8,000
    per feature) and below it, and the worst cell of each."""
    from scipy.stats import norm

    def noise_sd(epsilon):  # the library's release after the row count (the rows' DELTA)
        release = statistic_release((row_count_release(epsilon),), epsilon, DELTA)
        return release.noise_multiplier * release.sensitivity

    cells = defaultdict(dict)
    for r in rows:
        key = (r["dataset"], float(r["epsilon"]), r["seed"])
        cells[key][r["config"]] = float(r["auc"])
        cells[key]["facts"] = (float(r["statistic"]), int(r["buckets"]),
                               float(r["n_eps"]) / int(r["n_features"]))
    lines = ["| margin c | band: mean gain | band: worst cell | below: mean gain | "
             "below: worst cell |", "|---" * 5 + "|"]
    for c in MARGINS:
        gains = defaultdict(list)
        for (name, epsilon, _), v in cells.items():
            statistic, buckets, per_feature = v["facts"]
            taken = norm.sf(c * math.sqrt(buckets) - statistic, scale=noise_sd(epsilon))
            gains[name, epsilon, per_feature].append(taken * (v["T exp d6"] - v["T default"]))
        band = {k: np.mean(g) for k, g in gains.items() if 3000 <= k[2] < 8000}
        below = {k: np.mean(g) for k, g in gains.items() if k[2] < 3000}
        lines.append(f"| {c:g} | {np.mean(list(band.values())):+.4f} | "
                     f"{min(band.values()):+.4f} | {np.mean(list(below.values())):+.4f} | "
                     f"{min(below.values()):+.4f} |")
    return "\n".join(lines)


def run_choice():
    """``--choice``: :data:`CHOICE_CONFIGS` at every cell of :data:`SELECT_CELLS` and seed of
    :data:`CHOICE_SEEDS`, two fits at a time."""
    cells = [(name, split, epsilon, config, seed) for name, split, epsilon in _select_splits()
             for config in CHOICE_CONFIGS for seed in CHOICE_SEEDS]
    return _fit_cells(cells)


def _variant_cells(configs, epsilons, seeds, keep=lambda split, epsilon: True):
    """Fits of the library's default and a variant (``configs``) on every set's tuning split
    (not synth100k's subsets) at ``epsilons`` and ``seeds``, two at a time: the cells
    ``keep(split, epsilon)`` accepts, ``split`` ``(X_fit, y_fit, X_val, y_val, bounds)``."""
    cells = [(name, split, epsilon, config, seed)
             for name, *split, _ in tuning_splits(SETS) if "@" not in name
             for epsilon in epsilons if keep(split, epsilon)
             for config in configs for seed in seeds]
    return _fit_cells(cells)


def _has_wide_feature(bounds):
    """Whether a set's public bounds give a feature the log grid."""
    bounds = np.asarray(bounds, dtype=np.float64)
    return log_grid_features(bounds, np.arange(bounds.shape[0])).size > 0


def run_log_grid():
    """``--log-grid``: :data:`LOG_GRID_CONFIGS` at :data:`CANDIDATES_EPSILONS`, seeds
    :data:`LOG_GRID_SEEDS`, on the sets with a numeric feature the log grid spaces (the others'
    fits are the same bit for bit)."""
    return _variant_cells(LOG_GRID_CONFIGS, CANDIDATES_EPSILONS, LOG_GRID_SEEDS,
                          keep=lambda split, epsilon: _has_wide_feature(split[4]))


def run_log_grid_sketch():
    """``--log-grid-sketch``: :data:`LOG_GRID_SKETCH_CONFIGS` on the same sets, at the cells of
    :data:`LOG_GRID_SKETCH_EPSILONS` from ``_auto.SKETCH_N_EPSILON_PER_FEATURE`` on, seeds
    :data:`LOG_GRID_SKETCH_SEEDS`."""
    def sketch_regime(split, epsilon):
        X_fit, y_fit, *_, bounds = split
        return (_has_wide_feature(bounds) and len(y_fit) * epsilon
                >= SKETCH_N_EPSILON_PER_FEATURE * X_fit.shape[1])

    return _variant_cells(LOG_GRID_SKETCH_CONFIGS, LOG_GRID_SKETCH_EPSILONS,
                          LOG_GRID_SKETCH_SEEDS, keep=sketch_regime)


def run_bounds():
    """``--bounds``: :data:`BOUNDS_CONFIGS` at :data:`BOUNDS_EPSILONS`, seeds
    :data:`BOUNDS_SEEDS`."""
    return _variant_cells(BOUNDS_CONFIGS, BOUNDS_EPSILONS, BOUNDS_SEEDS)


def run_candidates():
    """``--candidates``: :data:`CANDIDATES_CONFIGS` at :data:`CANDIDATES_EPSILONS`, seeds
    :data:`CANDIDATES_SEEDS`."""
    return _variant_cells(CANDIDATES_CONFIGS, CANDIDATES_EPSILONS, CANDIDATES_SEEDS)


def run_candidates_check():
    """``--candidates-check``: :data:`CANDIDATES_CHECK_CONFIGS` at :data:`CANDIDATES_EPSILONS`,
    seeds :data:`CANDIDATES_CHECK_SEEDS`."""
    return _variant_cells(CANDIDATES_CHECK_CONFIGS, CANDIDATES_EPSILONS, CANDIDATES_CHECK_SEEDS)


def run_atoms():
    """``--atoms``: the sketch (``"auto sketch"``) at :data:`CANDIDATES_EPSILONS`, seeds
    :data:`CANDIDATES_SEEDS`, and the default (``"auto"``: the sketch's exact quantiles) without
    noise, seeds :data:`ATOMS_INF_SEEDS`."""
    return (_variant_cells(("auto sketch",), CANDIDATES_EPSILONS, CANDIDATES_SEEDS)
            + _variant_cells(("auto",), (math.inf,), ATOMS_INF_SEEDS))


def run_adult_sweep():
    """``--adult-sweep``: :data:`ADULT_SWEEP` on Adult's tuning split at
    :data:`ADULT_SWEEP_EPSILON`, seeds :data:`ADULT_SWEEP_SEEDS`."""
    cells = [(name, split, ADULT_SWEEP_EPSILON, config, seed)
             for name, *split, _ in tuning_splits(("adult",))
             for config in ADULT_SWEEP for seed in ADULT_SWEEP_SEEDS]
    return _fit_cells(cells)


def adult_sweep_table(rows):
    """The README table of ``--adult-sweep`` (markdown): per change, the mean validation ROC AUC
    and its paired difference from the default (``"auto"``) with the standard error."""
    auc = defaultdict(dict)
    for r in rows:
        auc[r["config"]][r["seed"]] = float(r["auc"])
    lines = ["| change (Adult's tuning split, epsilon 1) | ROC AUC | - default |", "|---|---|---|"]
    lines += [f"| {'default' if config == 'auto' else config} | "
              f"{np.mean(list(auc[config].values())):.4f} | "
              f"{'' if config == 'auto' else _paired(auc[config], auc['auto'])} |"
              for config in ADULT_SWEEP if config in auc]
    return "\n".join(lines)


def atoms_table(rows):
    """The README table of ``--atoms`` (markdown): the library's thresholds (``rows``) minus
    plain quantiles (results/capacity_atoms_before.csv, ``--atoms --before``), validation ROC AUC
    paired by set, epsilon and seed: per band of n x epsilon per feature (as the candidates'
    table) and without noise, the cells' mean, the worst and best cell, and the cells gaining."""
    before = {(r["dataset"], float(r["epsilon"]), r["seed"]): float(r["auc"])
              for r in _harness.read_results("capacity_atoms_before")}
    cells, facts = defaultdict(list), {}
    for r in rows:
        key = (r["dataset"], float(r["epsilon"]))
        cells[key].append(float(r["auc"]) - before[key + (r["seed"],)])
        facts[key] = float(r["n_eps"]) / int(r["n_features"])

    def band(key):  # by n x epsilon per feature; the cells without noise apart
        if math.isinf(key[1]):
            return "without noise"
        return ("below 700" if facts[key] < 700 else "700-3,000" if facts[key] < 3000
                else "from 3,000")

    def where(key):  # the set, and the epsilon where there is noise
        return f"{key[0]}, {key[1]:g}" if math.isfinite(key[1]) else key[0]

    lines = ["| n x epsilon / p | cells | mean | worst | best | cells gaining |",
             "|---|---|---|---|---|---|"]
    for label in ("below 700", "700-3,000", "from 3,000", "without noise"):
        means = {key: np.mean(d) for key, d in cells.items() if band(key) == label}
        worst, best = min(means, key=means.get), max(means, key=means.get)
        lines.append(f"| {label} | {len(means)} | {np.mean(list(means.values())):+.4f} | "
                     f"{means[worst]:+.4f} ({where(worst)}) | {means[best]:+.4f} ({where(best)}) "
                     f"| {sum(m > 0 for m in means.values())} |")
    return "\n".join(lines)


def _variant_table(rows, configs, labels):
    """The README table of a variant stage (markdown): per set and epsilon, n x epsilon / p,
    the mean validation ROC AUC of the default and of the variant (``configs``, named
    ``labels`` in the header), and their paired difference."""
    auc, facts = defaultdict(dict), {}
    for r in rows:
        key = (r["dataset"], float(r["epsilon"]))
        auc[key + (r["config"],)][r["seed"]] = float(r["auc"])
        facts[key] = (int(r["n_fit"]), int(r["n_features"]), float(r["n_eps"]))
    lines = [f"| set | n | p | eps | n x eps / p | {labels[0]} | {labels[1]} | "
             f"{labels[1]} - {labels[0]} |", "|---" * 8 + "|"]
    for key, (n_fit, n_features, n_eps) in facts.items():
        default, variant = (auc[key + (c,)] for c in configs)
        lines.append(f"| {key[0]} | {n_fit:,} | {n_features} | {key[1]:g} | "
                     f"{n_eps / n_features:,.0f} | {np.mean(list(default.values())):.4f} | "
                     f"{np.mean(list(variant.values())):.4f} | {_paired(variant, default)} |")
    return "\n".join(lines)


def bounds_table(rows):
    """The README table of ``--bounds``: public against released bounds."""
    return _variant_table(rows, BOUNDS_CONFIGS, ("public bounds", "released bounds"))


def candidates_table(rows):
    """The README table of ``--candidates``: the equal-width grid against the sketch."""
    return _variant_table(rows, CANDIDATES_CONFIGS, ("grid", "sketch"))


def candidates_check_table(rows):
    """The README table of ``--candidates-check``: the equal-width grid against the rule."""
    return _variant_table(rows, CANDIDATES_CHECK_CONFIGS, ("grid", "as shipped"))


def log_grid_table(rows):
    """The README table of ``--log-grid``: the equal-width grid against the log grid."""
    return _variant_table(rows, LOG_GRID_CONFIGS, ("grid", "log grid"))


def log_grid_sketch_table(rows):
    """The README table of ``--log-grid-sketch``: the sketch against the log grid."""
    return _variant_table(rows, LOG_GRID_SKETCH_CONFIGS, ("sketch", "log grid"))


def choice_table(rows):
    """The README table of ``--choice`` (markdown): per cell, n x epsilon / p, the mean
    validation ROC AUC of ``additive`` and ``exp d6``, how many of the seeds ``auto`` took
    the interactions in, and its paired mean difference from each with its standard error."""
    auc, taken, facts = defaultdict(dict), defaultdict(int), {}
    for r in rows:
        key = (r["dataset"], float(r["epsilon"]))
        auc[key + (r["config"],)][r["seed"]] = float(r["auc"])
        facts[key] = (int(r["n_fit"]), int(r["n_features"]), float(r["n_eps"]))
        if r["config"] == "auto":
            taken[key] += str(r["interactions"]) == "True"
    lines = ["| set | n | p | eps | n x eps / p | additive | exp d6 | auto: interactions | "
             "auto - additive | auto - exp d6 |", "|---" * 10 + "|"]
    for key, (n_fit, n_features, n_eps) in sorted(facts.items(),
                                                  key=lambda item: item[1][2] / item[1][1]):
        means = {c: np.mean(list(auc[key + (c,)].values())) for c in ("additive", "exp d6")}
        lines.append(f"| {key[0]} | {n_fit:,} | {n_features} | {key[1]:g} | "
                     f"{n_eps / n_features:,.0f} | {means['additive']:.4f} | "
                     f"{means['exp d6']:.4f} | {taken[key]} of {len(auc[key + ('auto',)])} | "
                     f"{_paired(auc[key + ('auto',)], auc[key + ('additive',)])} | "
                     f"{_paired(auc[key + ('auto',)], auc[key + ('exp d6',)])} |")
    return "\n".join(lines)


def _paired(a, b):
    """The mean of ``a[seed] - b[seed]`` over the seeds of both (dicts seed -> score) with its
    standard error, as table text ("" for no seed in common)."""
    paired = [a[s] - b[s] for s in a if s in b]
    if not paired:
        return ""
    error = np.std(paired, ddof=1) / math.sqrt(len(paired)) if len(paired) > 1 else 0.0
    return f"{np.mean(paired):+.4f} ±{error:.4f}"


def select_table(rows):
    """The README table of ``--select`` (markdown): per cell, the mean validation ROC AUC of
    ``default`` and ``exp d6`` on all the fitting rows, and per criterion its choices and the
    paired mean difference of the chosen model on T from ``default`` with its standard error."""
    auc, chosen, facts = defaultdict(dict), defaultdict(list), {}
    for r in rows:
        key = (r["dataset"], float(r["epsilon"]))
        auc[key + (r["config"],)][r["seed"]] = float(r["auc"])
        facts[key] = (int(r["n_fit"]), int(r["n_features"]), float(r["n_eps"]))
        if r["config"].startswith("select"):
            chosen[key + (r["config"],)].append("exp" if r["chosen"] == "exp d6" else "add")
    selects = [f"select {criterion}" for criterion in SELECT_CRITERIA]
    lines = ["| set | n | p | eps | n x eps / p | default | exp d6 | "
             + " | ".join(f"{c}: chosen | {c} - default" for c in selects) + " |",
             "|---" * (7 + 2 * len(selects)) + "|"]
    for key, (n_fit, n_features, n_eps) in facts.items():
        cells = []
        for config in selects:
            cells += [" ".join(chosen[key + (config,)]),
                      _paired(auc[key + (config,)], auc[key + ("default",)])]
        means = {c: np.mean(list(auc[key + (c,)].values())) for c in ("default", "exp d6")}
        lines.append(f"| {key[0]} | {n_fit:,} | {n_features} | {key[1]:g} | "
                     f"{n_eps / n_features:,.0f} | {means['default']:.4f} | "
                     f"{means['exp d6']:.4f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def trees_table(rows):
    """The README table of ``--trees`` (markdown): per set and epsilon, n x epsilon and the mean
    validation ROC AUC of 200 trees over the seeds, the paired mean difference of 400 and 800
    trees from it with its standard error, and likewise for ``exp d6`` where it ran."""
    auc = defaultdict(dict)
    facts = {}
    for r in rows:
        key = (r["dataset"], float(r["epsilon"]))
        auc[key + (r["config"],)][r["seed"]] = float(r["auc"])
        facts[key] = (int(r["n_fit"]), int(r["n_features"]), float(r["n_eps"]))

    def mean(key, config):
        values = auc.get(key + (config,), {})
        return f"{np.mean(list(values.values())):.4f}" if values else ""

    def difference(key, config, base):
        return _paired(auc.get(key + (config,), {}), auc.get(key + (base,), {}))

    lines = ["| set | n | p | eps | n x eps | 200 trees | 400 - 200 | 800 - 200 | exp d6 200 | "
             "exp d6 400 - 200 |", "|---" * 10 + "|"]
    for key, (n_fit, n_features, n_eps) in facts.items():
        lines.append(
            f"| {key[0]} | {n_fit:,} | {n_features} | {key[1]:g} | {n_eps:,.0f} | "
            f"{mean(key, 'default 200 trees')} | "
            f"{difference(key, 'default 400 trees', 'default 200 trees')} | "
            f"{difference(key, 'default 800 trees', 'default 200 trees')} | "
            f"{mean(key, 'exp d6 200 trees')} | "
            f"{difference(key, 'exp d6 400 trees', 'exp d6 200 trees')} |")
    return "\n".join(lines)


def report(rows):
    """The README table: one line per set x epsilon (in run order) with the fitting rows, n x
    epsilon and, per configuration, the mean validation ROC AUC and the half-range over seeds."""
    cells = defaultdict(list)
    facts = {}
    for r in rows:
        key = (r["dataset"], float(r["epsilon"]))
        cells[key + (r["config"],)].append(float(r["auc"]))
        facts[key] = (int(r["n_fit"]), float(r["n_eps"]))
    configs = [c for c in CONFIGS if any(key[2] == c for key in cells)]
    print("| set | n | eps | n x eps | " + " | ".join(configs) + " |")
    print("|---" * (4 + len(configs)) + "|")
    for key, (n_fit, n_eps) in facts.items():
        parts = []
        for config in configs:
            values = cells.get(key + (config,), [])
            parts.append(f"{np.mean(values):.4f} ±{(max(values) - min(values)) / 2:.4f}"
                         if values else "")
        eps = "inf" if math.isinf(key[1]) else f"{key[1]:g}"
        scaled = "inf" if math.isinf(n_eps) else f"{n_eps:,.0f}"
        print(f"| {key[0]} | {n_fit:,} | {eps} | {scaled} | " + " | ".join(parts) + " |")


#: The stages of one results file and one table: flag -> (help, results stem, run, table).
STAGES = {
    "choice": ("the library's private choice against both", "capacity_choice", run_choice,
               choice_table),
    "margins": ("the library's statistic and both models on T, to score margins of the choice",
                "capacity_margins", run_margins, margin_table),
    "bounds": ("the default on public and on released feature bounds", "capacity_bounds",
               run_bounds, bounds_table),
    "candidates": ("the default on its equal-width grid and on the quantile sketch",
                   "capacity_candidates", run_candidates, candidates_table),
    "candidates_check": ("the default on the grid and as shipped, fresh seeds",
                         "capacity_candidates_check", run_candidates_check,
                         candidates_check_table),
    "log_grid": ("the default on the equal-width grid and on the log grid, the sets it "
                 "changes", "capacity_log_grid", run_log_grid, log_grid_table),
    "log_grid_sketch": ("the sketch against the log grid from 700 per feature, the sets it "
                        "changes", "capacity_log_grid_sketch", run_log_grid_sketch,
                        log_grid_sketch_table),
    "adult_sweep": ("the default on Adult at epsilon 1 with one parameter changed at a time",
                    "capacity_adult_sweep", run_adult_sweep, adult_sweep_table),
    "atoms": ("the sketch's thresholds against plain quantiles (with --before: the library "
              "before the rule, results/capacity_atoms_before.csv)", "capacity_atoms",
              run_atoms, atoms_table),
}


def main():
    parser = _harness.parser(__doc__, SETS)
    parser.add_argument("--high", action="store_true",
                        help="HIGH_SETS at HIGH_EPSILONS, seeds 0 and 1 (results/capacity_high.csv)")
    parser.add_argument("--trees", action="store_true",
                        help="the number of trees against n x epsilon (results/capacity_trees.csv)")
    parser.add_argument("--select", action="store_true",
                        help="a private choice between the two on disjoint parts "
                             "(results/capacity_select.csv)")
    for flag, (text, stem, _, _) in STAGES.items():
        parser.add_argument(f"--{flag.replace('_', '-')}", action="store_true",
                            help=f"{text} (results/{stem}.csv)")
    parser.add_argument("--parts", type=float, nargs=3, default=SELECT_PARTS,
                        metavar=("A", "B", "V"), help="--select: the parts' fractions "
                        "(others than the default: results/capacity_select_A_B_V.csv)")
    parser.add_argument("--before", action="store_true",
                        help="--atoms on a checkout before the rule (PYTHONPATH=<it>/src): "
                             "results/capacity_atoms_before.csv")
    parser.add_argument("--report", action="store_true", help="print the table from the CSV")
    args = parser.parse_args()
    if args.before and not args.atoms:
        parser.error("--before goes with --atoms")
    parts = tuple(args.parts)
    select = "capacity_select" + ("" if parts == SELECT_PARTS else
                                  "_" + "_".join(f"{f:g}" for f in parts))
    for flag, (_, stem, run_it, table) in STAGES.items():
        if getattr(args, flag):
            name = _harness.result_name(stem + ("_before" if args.before else ""), args)
            if not args.report:
                _harness.warm_up()
                _harness.write_results(name, run_it())
            if not args.before:
                print(table(_harness.read_results(name)))
            return
    name = _harness.result_name("capacity_high" if args.high else
                                "capacity_trees" if args.trees else
                                select if args.select else "capacity", args)
    if args.select:
        if not args.report:
            _harness.warm_up()
            _harness.write_results(name, run_select(parts))
        print(select_table(_harness.read_results(name)))
        return
    if args.trees:
        if not args.report:
            _harness.warm_up()
            _harness.write_results(name, run_trees(args.datasets or SETS))
        print(trees_table(_harness.read_results(name)))
        return
    if not args.report:
        _harness.warm_up()
        if args.high:
            rows = run(args.datasets or HIGH_SETS, HIGH_EPSILONS, SEEDS[:2], HIGH_CONFIGS)
        elif args.quick:
            rows = run(args.datasets or ("synth30k", "adult"), (1.0,), (0,))
        else:
            rows = run(args.datasets or SETS, EPSILONS, SEEDS)
        _harness.write_results(name, rows)
    report(_harness.read_results(name))


if __name__ == "__main__":
    main()

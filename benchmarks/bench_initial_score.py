"""The private initial score (``init="private"``) against ``F0 = 0`` (``init="zero"``, the
previous default), same seeds, delta 5e-8.

Stages (``--stage``):

- ``share``: Abalone on tuning splits only (an inner 80 / 20 split, ``random_state=fold``, of
  the training part of each fold of ``KFold(5, shuffle=True, random_state=0)``: no test fold
  is read), the share of the budget on the initial score (``_budget.INITIAL_SHARE``, patched)
  x trees (20, 50, 200) x epsilon (0.01 0.03 0.1 0.3 1), ``random_state=fold``:
  results/initial_score_share.csv.
- ``frontier``: S-BDT's protocol (bench_frontier.py: adult.data without missing rows, Abalone;
  5-fold CV, the fold split changing with the seed) for both values of ``init`` with every
  other parameter the default, ``random_state = 100 seed + fold``: Abalone 5 folds x
  ``--seeds`` (default 4) seeds at every epsilon; Adult the same at epsilon <= 0.03 and 5 folds
  x 1 seed above; the training mean's RMSE is recorded per fold as ``mean (non-private)``:
  results/initial_score.csv.
- ``sampled``: the one-off releases (a Gaussian initial score, the regressor's Hessian sketch)
  next to Poisson-sampled trees: S-BDT's Abalone recipe (50 additive trees of depth 2 on random
  splits, ``subsample=0.1``, lambda 15, gradients clipped at 0.3 of the target's half-range,
  ``min_child_weight=0``) with ``init`` zero / private x ``split_candidates`` uniform / hessian,
  epsilon 0.1 / 0.3 / 1, on the ``share`` stage's tuning splits, 4 seeds a fold; the RMSE and
  the planned noise multipliers (the leaves', the one-off releases'):
  results/initial_score_sampled_<label>.csv (``--label``: the checkout measured).

Abalone's public inputs: rings in [1, 29]; the sex code's bounds from ``_loaders``, each
measurement in [0, 3]. Run: ``python benchmarks/bench_initial_score.py --stage share`` and
``--stage frontier``; NUMBA_NUM_THREADS=1, n_jobs=1 (2 cores shared with other jobs: the
fit times are not comparable across runs). A seeded ``random_state`` (numpy noise, the same
law as the secure samplers') makes both values of ``init`` draw from the same seeds.
"""

import argparse
import itertools
import math
import time
import warnings

import _harness
import _loaders
import numpy as np
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import KFold, train_test_split

import dpboost._budget as budget
from dpboost import DPGBClassifier, DPGBRegressor

DELTA = 5e-8
ABALONE_EPSILONS = (0.01, 0.05, 0.1, 0.2, 0.5, 1.0)
ADULT_EPSILONS = (0.01, 0.02, 0.03, 0.1, 0.5)
#: Adult's cells with every seed (20 fits at 4 seeds); the others use the first seed only.
ADULT_ALL_SEEDS = 0.03


def _abalone():
    data = _loaders.load("abalone")
    bounds = [tuple(data["bounds"][0])] + [(0.0, 3.0)] * (data["X"].shape[1] - 1)
    return data["X"], data["y"], {"feature_bounds": bounds, "target_bounds": (1.0, 29.0)}


def _adult():
    data = _loaders.load("adult")
    complete = ~np.isnan(data["X"]).any(axis=1)
    return (data["X"][complete], data["y"][complete],
            {"feature_bounds": data["bounds"], "classes": [0, 1]})


def _fit(estimator, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return estimator.fit(X, y)


def _rmse(y, prediction):
    return math.sqrt(float(np.mean((prediction - y) ** 2)))


def share_stage():
    X, y, public = _abalone()
    rows = []
    folds = list(KFold(5, shuffle=True, random_state=0).split(X))
    for share, n_estimators, epsilon in itertools.product((0.1, 0.3, 0.6), (20, 50, 200),
                                                          (0.01, 0.03, 0.1, 0.3, 1.0)):
        budget.INITIAL_SHARE = share
        budget.plan_budget.cache_clear()
        for fold, (train, _) in enumerate(folds):
            fit, val = train_test_split(train, test_size=0.2, random_state=fold)
            model = _fit(DPGBRegressor(epsilon=epsilon, delta=DELTA, n_estimators=n_estimators,
                                       init="private",
                                       random_state=fold, n_jobs=1, **public), X[fit], y[fit])
            rows.append({"share": share, "n_estimators": n_estimators, "epsilon": epsilon,
                         "fold": fold, "rmse": _rmse(y[val], model.predict(X[val])),
                         "mean_rmse": _rmse(y[val], np.full(val.size, y[fit].mean()))})
        print(share, n_estimators, epsilon, flush=True)
    return rows


#: S-BDT's Abalone recipe (bench_sbdt_reference.py) in dpboost's terms.
SAMPLED_RECIPE = {"n_estimators": 50, "max_depth": 2, "subsample": 0.1, "learning_rate": 0.1,
                  "l2_regularization": 15.0, "gradient_bound": 0.3, "min_child_weight": 0.0,
                  "interaction_cst": "no_interactions", "split_selection": "random",
                  "n_samples_hint": None}


def sampled_stage():
    X, y, public = _abalone()
    rows = []
    folds = list(KFold(5, shuffle=True, random_state=0).split(X))
    for epsilon, init, candidates in itertools.product((0.1, 0.3, 1.0), ("zero", "private"),
                                                       ("uniform", "hessian")):
        for (fold, (train, _)), seed in itertools.product(enumerate(folds), range(4)):
            fit, val = train_test_split(train, test_size=0.2, random_state=fold)
            model = _fit(DPGBRegressor(epsilon=epsilon, delta=DELTA, init=init,
                                       split_candidates=candidates, n_jobs=1,
                                       random_state=10 * fold + seed, **SAMPLED_RECIPE,
                                       **public), X[fit], y[fit])
            ledger = model.privacy_ledger_
            once = [e.noise_multiplier for e in ledger if e.tree == -1 and e.noise_multiplier]
            rows.append({"epsilon": epsilon, "init": init, "split_candidates": candidates,
                         "fold": fold, "seed": seed, "rmse": _rmse(y[val], model.predict(X[val])),
                         "leaf_noise_multiplier": ledger[-1].noise_multiplier,
                         "once_noise_multiplier": min(once) if once else math.nan,
                         "spent": float(model.privacy_spent_)})
        print(epsilon, init, candidates, flush=True)
    return rows


def frontier_stage(seeds):
    rows = []
    for name, load in (("abalone", _abalone), ("adult", _adult)):
        X, y, public = load()
        regression = name == "abalone"
        epsilons = ABALONE_EPSILONS if regression else ADULT_EPSILONS
        for seed in range(seeds):
            split = KFold(5, shuffle=True, random_state=seed).split(X)
            for fold, (train, test) in enumerate(split):
                if regression:
                    rows.append({"dataset": name, "method": "mean (non-private)",
                                 "epsilon": math.inf, "seed": seed, "fold": fold,
                                 "rmse": _rmse(y[test], np.full(test.size, y[train].mean()))})
                for epsilon, init in itertools.product(epsilons, ("zero", "private")):
                    if not regression and seed and epsilon > ADULT_ALL_SEEDS:
                        continue
                    params = {"epsilon": epsilon, "delta": DELTA, "init": init, "n_jobs": 1,
                              "random_state": 100 * seed + fold, **public}
                    start = time.perf_counter()
                    model = _fit((DPGBRegressor if regression else DPGBClassifier)(**params),
                                 X[train], y[train])
                    row = {"dataset": name, "method": f"init={init}", "epsilon": epsilon,
                           "seed": seed, "fold": fold, "fit_s": time.perf_counter() - start}
                    if regression:
                        row["rmse"] = _rmse(y[test], model.predict(X[test]))
                    else:
                        row["auc"] = roc_auc_score(y[test], model.predict_proba(X[test])[:, 1])
                    rows.append(row)
            print(f"{name}: seed {seed} done", flush=True)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stage", choices=("share", "frontier", "sampled"), required=True)
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--label", default="after")
    args = parser.parse_args()
    _harness.warm_up()
    start = time.perf_counter()
    if args.stage == "share":
        rows, name = share_stage(), "initial_score_share"
        keys, metric = ["share", "n_estimators", "epsilon"], "rmse"
    elif args.stage == "sampled":
        rows, name = sampled_stage(), f"initial_score_sampled_{args.label}"
        keys, metric = ["epsilon", "init", "split_candidates"], "rmse"
    else:
        rows, name = frontier_stage(args.seeds), "initial_score"
        keys, metric = ["dataset", "method", "epsilon"], None
    _harness.write_results(name, rows)
    print(f"{name}: {time.perf_counter() - start:.0f} s")
    for dataset in ({r.get("dataset") for r in rows} if metric is None else {None}):
        mine = [r for r in rows if r.get("dataset") == dataset]
        column = metric or ("rmse" if dataset == "abalone" else "auc")
        for s in _harness.group_stats(mine, keys, column):
            print(s)


if __name__ == "__main__":
    main()

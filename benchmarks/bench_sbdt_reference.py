"""S-BDT's own code on this repository's Abalone and Adult protocols: are its published numbers a
property of its recipe, or of its evaluation?

S-BDT (Kirsch et al.) publishes Abalone RMSE 2.920 / 2.754 / 2.664 / 2.582 at epsilon 0.05 / 0.1
/ 0.2 / 0.5, tuned on its test folds; its code is kirschte/sbdt (C++ with a Cython wrapper,
``sbdt.S_BDT``). This script fits that wrapper with the published best hyperparameters of each
epsilon (``code/cpp_gbdt/results/abalone/abalone_rerun_results.csv`` of that repository: depth
2-3, 50-150 trees, a 0.1 Poisson sample, lambda 15, gradients clipped at 0.1-0.3 of the scaled
target, 10 % of the budget on the initial score, cyclical features, random splits among 32
candidates on ``[0, border]``) on the folds of ``bench_frontier.py`` (5-fold CV, ``KFold(5,
shuffle=True, random_state=seed)``, the sex code as 0 / 1 / 2, delta 5e-8 compiled in), with
its split grid on its tuned ``[0, 0.5]`` and on ``[0, 1]`` and ``[0, 3]``. RMSE in rings per
fold: results/sbdt_reference.csv.

S-BDT is not a dependency: build it first (needs ``g++``, ``libfmt-dev``, ``libspdlog-dev``,
``cython``, ``py``)::

    git clone https://github.com/kirschte/sbdt && cd sbdt/code/cpp_gbdt
    make libsbdt.a CFLAGS="-c -std=gnu++11 -O3 -pthread -fPIC" \\
        LINKFLAG="-Wl,--no-as-needed -pthread -lfmt -shared"
    cd .. && CFLAGS="-O3 -fPIC" python setup.py build_ext -i

then run ``cd <sbdt>/code && PYTHONPATH=. python <dpboost>/benchmarks/bench_sbdt_reference.py
[--seeds N]`` (the extension loads ``./cpp_gbdt/libsbdt.a``; default 4 fold splits, about a
minute). Without ``sbdt`` importable it says so and exits. S-BDT seeds its noise from the clock
(``srand(time(NULL))``): two runs differ by their noise.

``--dataset adult``: the same for Adult under the frontier's protocol (``adult.data`` without the
rows that miss a value, 30,162 rows; the same folds; ROC AUC per fold), with S-BDT's published
best setting of each epsilon (``code/cpp_gbdt/results/adult/adult_rerun_results.csv``, the row of
the highest mean test AUC: 50-400 trees of depth 5-6, Newton leaves with 4 % of the leaf budget
on the Hessian sum, gradients clipped at 0.3-0.8 and Hessians at 0.1, a 0.01 Poisson sample up
to epsilon 0.03 and none above, lambda 10 (5 at 0.5), cyclical features, random splits among 32
candidates on its tuned ``[0, 100]`` for every numeric column, one category against the rest on
the eight categorical ones). Results/sbdt_reference_adult.csv; ``--jobs`` fits at a time (about
six minutes on two).
"""

import argparse
import math
import sys

import _harness
import _loaders
import numpy as np
from sklearn.model_selection import KFold

#: epsilon -> S-BDT's published best setting on Abalone (its rerun results).
BEST = {0.05: {"nb_trees": 100, "max_depth": 2, "l2_threshold": 0.1, "init_share": 0.1,
               "init_threshold": 0.5},
        0.1: {"nb_trees": 50, "max_depth": 2, "l2_threshold": 0.3, "init_share": 0.1,
              "init_threshold": 0.5},
        0.2: {"nb_trees": 50, "max_depth": 3, "l2_threshold": 0.3, "init_share": 0.1,
              "init_threshold": 0.5},
        0.5: {"nb_trees": 150, "max_depth": 2, "l2_threshold": 0.3, "init_share": 0.0,
              "init_threshold": 0.0}}
#: Upper ends of S-BDT's split grid ``[0, border]`` (0.5: its tuned value).
BORDERS = (0.5, 1.0, 3.0)
#: epsilon -> S-BDT's published best setting on Adult (its rerun results; ``sample``: its
#: Poisson sampling rate Q).
ADULT_BEST = {0.01: {"nb_trees": 50, "max_depth": 5, "l2_threshold": 0.5, "sample": 0.01,
                     "l2_lambda": 10.0, "init_threshold": 0.5},
              0.02: {"nb_trees": 100, "max_depth": 6, "l2_threshold": 0.5, "sample": 0.01,
                     "l2_lambda": 10.0, "init_threshold": 1.0},
              0.03: {"nb_trees": 400, "max_depth": 6, "l2_threshold": 0.3, "sample": 0.01,
                     "l2_lambda": 10.0, "init_threshold": 0.0},
              0.1: {"nb_trees": 400, "max_depth": 6, "l2_threshold": 0.3, "sample": 1.0,
                    "l2_lambda": 10.0, "init_threshold": 1.0},
              0.5: {"nb_trees": 200, "max_depth": 6, "l2_threshold": 0.8, "sample": 1.0,
                    "l2_lambda": 5.0, "init_threshold": 0.0}}
#: Adult's categorical columns (S-BDT's ``get_adult``); the others are numeric.
ADULT_CATEGORICAL = (1, 3, 5, 6, 7, 8, 9, 13)


#: S-BDT's arguments that its rerun script fixes for every dataset and epsilon.
RERUN_FIXED = {
    "learning_rate": 0.1, "balance_partition": False, "lambda_reg_mode": 1, "reg_delta": 2.0,
    "min_samples_split": 0, "ignore_split_constraints": True, "max_features": 0,
    "max_feature_values": 0, "reuse_attr": True, "use_dp": True, "privacy_budget_gain_ratio": 0.0,
    "numeric_feature_weight": 1.0, "leaf_noise": 1, "use_privacy_filter": False,
    "approximate_privacy_filter": False, "pf_additional_nb_trees": 0,
    "pf_subsampling_ratio_factor": 1.0, "additional_nb_trees": 0, "refine_splits_rounds": 0,
    "num_split_candidates": 32, "gradient_filtering": False, "leaf_clipping": False,
    "cyclical_feature_interactions": True, "refine_splits": False,
    "random_splits_from_candidates": True, "refine_splits_subsample": 1.0,
    "cut_off_leaf_denom": True, "custom_noise_scale": -1.0, "verbosity": 4,
    "continuous_learning": False, "scale_y": True}


def _sbdt_model(sbdt, l2_threshold, hess_l2_threshold, **settings):
    """``sbdt.S_BDT`` with :data:`RERUN_FIXED`, the clips (the privacy filter's the same) and
    the dataset's ``settings``."""
    return sbdt.S_BDT(**RERUN_FIXED, l2_threshold=l2_threshold,
                      hess_l2_threshold=hess_l2_threshold, pf_l2_threshold=l2_threshold,
                      pf_hess_l2_threshold=hess_l2_threshold, **settings)


def model(sbdt, epsilon, border):
    """S-BDT's regressor at ``epsilon`` with its published setting and its grid on
    ``[0, border]`` (the rerun script's fixed values for the rest)."""
    best = BEST[epsilon]
    return _sbdt_model(
        sbdt, best["l2_threshold"], 1.0, nb_trees=best["nb_trees"], subsampling_ratio=0.1,
        max_depth=best["max_depth"], newton_boosting=False, l2_lambda=15, criterion=0,
        privacy_budget=epsilon, privacy_budget_init_score_ratio=best["init_share"],
        leaf_denom_noise_weight=0.3, init_score_threshold=best["init_threshold"],
        task=b"Regression", feature_val_border=(0.0, border), cat_idx=[0],
        num_idx=list(range(1, 8)), cat_values=[[0.0, 1.0, 2.0], [], [], [], [], [], [], []])


def adult_model(sbdt, epsilon, n_categories):
    """S-BDT's classifier at ``epsilon`` with its published Adult setting (the rerun script's
    fixed values for the rest); ``n_categories[c]``: the public list size of column ``c``."""
    best = ADULT_BEST[epsilon]
    n_columns = len(n_categories)
    return _sbdt_model(
        sbdt, best["l2_threshold"], 0.1, nb_trees=best["nb_trees"],
        subsampling_ratio=best["sample"], max_depth=best["max_depth"], newton_boosting=True,
        l2_lambda=best["l2_lambda"], criterion=1, privacy_budget=epsilon,
        privacy_budget_init_score_ratio=0.0, leaf_denom_noise_weight=0.04,
        init_score_threshold=best["init_threshold"], task=b"BinaryClassification",
        feature_val_border=(0.0, 100.0), cat_idx=list(ADULT_CATEGORICAL),
        num_idx=[c for c in range(n_columns) if c not in ADULT_CATEGORICAL],
        cat_values=[[float(v) for v in range(n_categories[c])] if c in ADULT_CATEGORICAL else []
                    for c in range(n_columns)])


def _adult_fold(epsilon, seed, fold, train, test):
    """One S-BDT fit of :func:`run_adult` (in a worker: joblib's processes import sbdt anew)."""
    import sbdt
    from sklearn.metrics import roc_auc_score

    data = _adult_data()
    X, y = data["X"], data["y"]
    n_categories = [int(round(high + 0.5)) for _, high in data["bounds"]]
    fitted = adult_model(sbdt, epsilon, n_categories)
    fitted.train(np.ascontiguousarray(X[train]), np.ascontiguousarray(y[train]), b"adult")
    score = np.asarray(fitted.predict(np.ascontiguousarray(X[test])))
    return {"dataset": "adult", "method": "S-BDT, published setting", "epsilon": epsilon,
            "seed": seed, "fold": fold, "auc": float(roc_auc_score(y[test], score))}


def _adult_data():
    """The frontier's Adult: ``adult.data`` without the rows that miss a value, float64 codes."""
    data = _loaders.load("adult")
    complete = ~np.isnan(data["X"]).any(axis=1)
    return {**data, "X": data["X"][complete].astype(float),
            "y": data["y"][complete].astype(float)}


def run_adult(seeds, jobs):
    from joblib import Parallel, delayed

    X = _adult_data()["X"]
    cells = [(epsilon, seed, fold, train, test) for seed in range(seeds)
             for fold, (train, test) in enumerate(KFold(5, shuffle=True, random_state=seed).split(X))
             for epsilon in ADULT_BEST]
    return Parallel(n_jobs=jobs)(delayed(_adult_fold)(*cell) for cell in cells)


def run_abalone(sbdt, seeds):
    data = _loaders.load("abalone")
    X, y = data["X"].astype(float), data["y"].astype(float)
    X[:, 0] = np.unique(X[:, 0], return_inverse=True)[1]  # S-BDT's categorical codes 0, 1, 2
    rows = []
    for seed in range(seeds):
        for fold, (train, test) in enumerate(KFold(5, shuffle=True, random_state=seed).split(X)):
            X_train, y_train = np.ascontiguousarray(X[train]), np.ascontiguousarray(y[train])
            for epsilon in BEST:
                for border in BORDERS:
                    fitted = model(sbdt, epsilon, border)
                    fitted.train(X_train, y_train, b"abalone")
                    prediction = np.asarray(fitted.predict(np.ascontiguousarray(X[test])))
                    rows.append({"dataset": "abalone", "method": f"S-BDT, grid [0, {border:g}]",
                                 "epsilon": epsilon, "seed": seed, "fold": fold,
                                 "rmse": math.sqrt(float(np.mean((prediction - y[test]) ** 2)))})
        print(f"seed {seed} done", flush=True)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=4, help="fold splits (5 folds each)")
    parser.add_argument("--dataset", choices=("abalone", "adult"), default="abalone")
    parser.add_argument("--jobs", type=int, default=2, help="Adult's fits at a time")
    parser.add_argument("--report", action="store_true", help="print the table from the CSV")
    args = parser.parse_args()
    name, metric = (("sbdt_reference", "rmse") if args.dataset == "abalone"
                    else ("sbdt_reference_adult", "auc"))
    if not args.report:
        try:
            import sbdt
        except ImportError:
            sys.exit("sbdt is not importable: build kirschte/sbdt's Cython wrapper first "
                     "(this module's docstring) and put its code/ on PYTHONPATH")
        if not _loaders.available([args.dataset]):
            sys.exit(f"skipping: {args.dataset} is not in ../shared/datasets")
        rows = (run_abalone(sbdt, args.seeds) if args.dataset == "abalone"
                else run_adult(args.seeds, args.jobs))
        _harness.write_results(name, rows)
    _harness.print_table(_harness.summarise(_harness.read_results(name),
                                            ["method", "epsilon"], {metric: metric}))


if __name__ == "__main__":
    main()

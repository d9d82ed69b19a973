"""Grid over dpboost's DP-XGB building blocks at (epsilon, 1e-5)-DP (issue 6), to choose a preset.

Every configuration uses Renyi accounting with delta = 1e-5 and Gaussian leaf statistics (the
logistic loss for classifiers); the grid crosses split selection (exponential / cyclical / random),
budget allocation (sequential / EoE) and the tree shape (50 trees of depth 6 at learning rate 0.1,
or 20 trees of depth 4 at 0.3). The DPBoost paper setting (pure DP) is the reference. Scores: test
ROC AUC (classification) or RMSE; each configuration's mean rank over datasets and epsilons says
which one is robust. Writes results/blocks_grid.csv.

Run: ``python benchmarks/bench_blocks_grid.py [--quick]``. ``--quick``: adult, cod_rna, abalone,
epsilon 1, one fold.
"""

import itertools
from collections import defaultdict

import _datasets
import _paper
import numpy as np
from _common import paper_parser, print_table, result_name, write_results

DATASETS = ("adult", "cod_rna", "covtype15k", "higgs7500", "bank", "credit", "abalone",
            "california", "house_16H")
SHAPES = {"50x6 lr0.1": {"n_estimators": 50, "max_depth": 6, "learning_rate": 0.1},
          "20x4 lr0.3": {"n_estimators": 20, "max_depth": 4, "learning_rate": 0.3}}


def configurations():
    """name -> (method of _paper.make_model, extra parameters)."""
    configs = {"DPBoost paper (pure DP)": ("DPBoost", {})}
    for selection, allocation, shape in itertools.product(
            ("exponential", "cyclical", "random"), ("sequential", "eoe"), SHAPES):
        configs[f"{selection} / {allocation} / {shape}"] = (
            "DP-XGB", {"split_selection": selection, "budget_allocation": allocation,
                       **SHAPES[shape]})
    return configs


def run(names, epsilons, n_folds):
    rows = []
    for name in _datasets.available(names):
        data = _datasets.load(name)
        for fold, X, y, X_test, y_test in _datasets.splits(data, n_folds):
            for epsilon in epsilons:
                for config, (method, params) in configurations().items():
                    model = _paper.make_model(data, method, epsilon, seed=fold, **params)
                    seconds = _paper.fit_timed(model, X, y)
                    rows.append({"dataset": name, "config": config, "epsilon": epsilon,
                                 "fold": fold, **_paper.score(data, model, X_test, y_test),
                                 "fit_s": seconds})
        print(f"{name} done", flush=True)
    return rows


def rank_table(rows):
    """Mean rank of every configuration over (dataset, epsilon) cells (1 = best)."""
    cells = defaultdict(lambda: defaultdict(list))
    for r in rows:
        higher_is_better = "auc" in r
        score = r["auc"] if higher_is_better else -r["rmse"]
        cells[(r["dataset"], r["epsilon"])][r["config"]].append(score)
    ranks = defaultdict(list)
    for scores in cells.values():
        means = {c: np.mean(v) for c, v in scores.items()}
        for position, config in enumerate(sorted(means, key=means.get, reverse=True), start=1):
            ranks[config].append(position)
    return sorted(({"config": c, "mean_rank": float(np.mean(r)), "worst_rank": int(max(r)),
                    "cells": len(r)} for c, r in ranks.items()), key=lambda t: t["mean_rank"])


def main():
    args = paper_parser(__doc__, _datasets.DATASETS).parse_args()
    quick = args.quick
    names = ("adult", "cod_rna", "abalone") if quick else DATASETS
    rows = run(args.datasets or names, (1.0,) if quick else (0.5, 1.0, 4.0), 1 if quick else 3)
    write_results(result_name("blocks_grid", args), rows)
    print_table(rank_table(rows))


if __name__ == "__main__":
    main()

"""Grid over dpboost's DP-XGB building blocks at (epsilon, 1e-5)-DP, to choose a preset.

Every configuration uses Renyi accounting with delta = 1e-5 and Gaussian leaf statistics (the
logistic loss for classifiers); the grid crosses split selection (exponential / cyclical / random),
budget allocation (sequential / EoE) and the tree shape (50 trees of depth 6 at learning rate 0.1,
or 20 trees of depth 4 at 0.3). The DPBoost paper setting (pure DP) is the reference. Scores: test
ROC AUC (classification) or RMSE; each configuration's mean rank over datasets and epsilons says
which one is robust. Writes results/blocks_grid.csv.

``--candidates``: the same datasets, epsilons and folds for the preset candidates instead
(:func:`candidates`), after the blocks that landed since the grid ran: ``min_child_weight`` (a leaf
whose released Hessian sum is below it gets 0; in Hessian units, so the same number means about 4x
more records for the logistic loss, whose Hessians are <= 1/4, than for the square loss), the
private quantile sketch of split thresholds (``split_candidates="sketch"``, 10 % of epsilon) and
DP-XGB's learning rate 0.3 with lambda 1. Writes results/blocks_grid_candidates.csv, the mean
ranks overall and per task, and the mean scores per cell (results/blocks_grid_candidates.md).
``--candidates --table1 NAME ...``: those candidates on bench_table1.py's five datasets and
protocol (epsilon 1, 3 splits x 5 seeds, ROC AUC), results/blocks_grid_candidates_table1.csv.

Every model: n_jobs=1, numpy noise seeded by the fold.

Run: ``python benchmarks/bench_blocks_grid.py [--quick] [--candidates [--table1 NAME ...]]``.
``--quick``: adult, cod_rna, abalone, epsilon 1, one fold.
"""

import itertools
import logging
from collections import defaultdict

import _harness
import _loaders
import _paper
import numpy as np

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


def candidates():
    """name -> (method, parameters): the preset candidates of ``--candidates``.

    "preset" is ``recommended()`` as of commit 82409a2 (exponential / sequential / 50x6, lr 0.1,
    lambda 0.1). The others override it; "lr0.3 l1" is DP-XGB's learning rate 0.3 with lambda 1,
    "mcw" min_child_weight (Hessian units).
    """
    def variant(selection, trees, lr, l2, mcw, **extra):
        return ("DP-XGB", {"split_selection": selection, "n_estimators": trees, "max_depth": 6,
                           "learning_rate": lr, "l2_regularization": l2,
                           "min_child_weight": mcw, **extra})

    def per_epsilon(c):
        return lambda epsilon: c / epsilon

    configs = {"preset (exponential 50x6 lr0.1 l0.1)": ("DP-XGB", {})}
    configs["random 100x6 lr0.3 l1 mcw20"] = variant("random", 100, 0.3, 1.0, 20)
    configs["random 100x6 lr0.3 l1 mcw20 sketch"] = variant("random", 100, 0.3, 1.0, 20,
                                                             split_candidates="sketch")
    configs["cyclical 50x6 lr0.3 l1 mcw20"] = variant("cyclical", 50, 0.3, 1.0, 20)
    configs["exponential 50x6 lr0.1 l0.1 mcw20"] = variant("exponential", 50, 0.1, 0.1, 20)
    configs["exponential 50x6 lr0.3 l1 mcw20"] = variant("exponential", 50, 0.3, 1.0, 20)
    for mcw in (0, 5, 50, 100):
        configs[f"random 100x6 lr0.3 l1 mcw{mcw}"] = variant("random", 100, 0.3, 1.0, mcw)
    # learning rate 0.3 blew up the regression RMSE in a one-fold look (abalone: 6.2 vs 3.0)
    for mcw in (20, 100):
        configs[f"random 100x6 lr0.1 l1 mcw{mcw}"] = variant("random", 100, 0.1, 1.0, mcw)
    configs["exponential 50x6 lr0.1 l0.1 mcw100"] = variant("exponential", 50, 0.1, 0.1, 100)
    # Second round, after the first 13: the released Hessian sum's noise std is about 42 / eps
    # (classifier) and 57 / eps (regressor) at random 100x6, delta 1e-5, so a threshold in
    # noise units is c / epsilon; the regressor preferred lr 0.1 and a larger threshold.
    configs["random 100x6 lr0.3 l1 mcw50/eps"] = variant("random", 100, 0.3, 1.0, per_epsilon(50))
    configs["random 100x6 lr0.3 l1 mcw100/eps"] = variant("random", 100, 0.3, 1.0,
                                                          per_epsilon(100))
    configs["random 100x6 lr0.1 l1 mcw200"] = variant("random", 100, 0.1, 1.0, 200)
    for c in (100, 200):
        configs[f"random 100x6 lr0.1 l1 mcw{c}/eps"] = variant("random", 100, 0.1, 1.0,
                                                               per_epsilon(c))
    # Third round: today's preset (mcw50/eps is 200 h*/eps for the classifier, mcw200/eps for
    # the regressor) with the adaptive Hessian sketch.
    configs["random 100x6 lr0.3 l1 mcw50/eps hessian"] = variant(
        "random", 100, 0.3, 1.0, per_epsilon(50), split_candidates="hessian")
    configs["random 100x6 lr0.1 l1 mcw200/eps hessian"] = variant(
        "random", 100, 0.1, 1.0, per_epsilon(200), split_candidates="hessian")
    return configs


def resolve(params, epsilon):
    """``params`` with callables of epsilon (``min_child_weight`` c / epsilon) evaluated."""
    return {k: float(v(epsilon)) if callable(v) else v for k, v in params.items()}


def run(names, epsilons, n_folds, configs):
    """Every configuration at every epsilon, n_jobs=1, seeded by the fold."""
    def at_fold(data, fold):
        for epsilon in epsilons:
            for config, (method, params) in configs.items():
                yield ({"config": config, "epsilon": epsilon},
                       _paper.make_model(data, method, epsilon, seed=fold.fold, n_jobs=1,
                                         **resolve(params, epsilon)))
    return _harness.run_grid(names, at_fold, n_folds)


def metric_of(row):
    """``("auc", value)`` for a classification row, ``("rmse", value)`` for a regression one
    (rows as run or as read from the CSV, where the other metric is blank)."""
    return (("auc", float(row["auc"])) if row.get("auc") not in (None, "")
            else ("rmse", float(row["rmse"])))


def rank_table(rows, task=None):
    """Mean rank of every configuration over (dataset, epsilon) cells (1 = best).

    ``task``: "classification" or "regression" ranks over those datasets' cells only.
    """
    cells = defaultdict(lambda: defaultdict(list))
    for r in rows:
        metric, value = metric_of(r)
        if task is not None and (metric == "auc") != (task == "classification"):
            continue
        score = value if metric == "auc" else -value
        cells[(r["dataset"], r["epsilon"])][r["config"]].append(score)
    ranks = defaultdict(list)
    for scores in cells.values():
        means = {c: np.mean(v) for c, v in scores.items()}
        for position, config in enumerate(sorted(means, key=means.get, reverse=True), start=1):
            ranks[config].append(position)
    return sorted(({"config": c, "mean_rank": float(np.mean(r)), "worst_rank": int(max(r)),
                    "cells": len(r)} for c, r in ranks.items()), key=lambda t: t["mean_rank"])


def score_table(rows, k_digits=1):
    """Mean score over folds per (dataset, configuration), "eps 0.5 / 1 / 4" in one cell; an RMSE
    from 1000 in thousands ("k") with ``k_digits`` decimals."""
    means = defaultdict(list)
    for r in rows:
        metric, value = metric_of(r)
        means[(r["dataset"], metric, r["config"], r["epsilon"])].append(value)
    table = defaultdict(dict)
    for (name, metric, config, epsilon), scores in means.items():
        value = np.mean(scores)
        text = f"{value:.3f}" if metric == "auc" else (
            f"{value / 1000:.{k_digits}f}k" if value >= 1000 else f"{value:.2f}")
        previous = table[(name, metric)].get(config)
        table[(name, metric)][config] = text if previous is None else f"{previous} / {text}"
    return table


def markdown(rows):
    """Mean ranks (all cells, classification, regression) and per-dataset scores, as markdown."""
    ranks = {task: {t["config"]: t for t in rank_table(rows, task)}
             for task in (None, "classification", "regression")}
    n_configs = len(ranks[None])
    lines = [f"| candidate | mean rank (of {n_configs}) | worst rank | classification | "
             "regression |", "|---|---|---|---|---|"]
    for config, t in ranks[None].items():
        lines.append(f"| {config} | {t['mean_rank']:.2f} | {t['worst_rank']} | "
                     f"{ranks['classification'][config]['mean_rank']:.2f} | "
                     f"{ranks['regression'][config]['mean_rank']:.2f} |")
    table = score_table(rows)
    configs = list(ranks[None])
    lines += ["", "| dataset (metric) at eps 0.5 / 1 / 4 | " + " | ".join(configs) + " |",
              "|---|" + "---|" * len(configs)]
    for (name, metric), cells in table.items():
        lines.append(f"| {name} ({metric.upper()}) | " + " | ".join(cells[c] for c in configs)
                     + " |")
    return "\n".join(lines) + "\n"


def check_table1(names, quick):
    """Candidates ``names`` on bench_table1.py's datasets and protocol (epsilon 1)."""
    import bench_table1

    configs = {name: (candidates()[name][0], resolve(candidates()[name][1], bench_table1.EPSILON))
               for name in names}
    datasets = ("adult", "magic") if quick else bench_table1.DATASETS
    rows = bench_table1.run(datasets, 1 if quick else bench_table1.N_SPLITS,
                            1 if quick else bench_table1.N_SEEDS, configs)
    return [r for r in rows if not r["config"].startswith("HGB")], bench_table1.summary(rows)


def main():
    parser = _harness.parser(__doc__, _loaders.DATASETS)
    parser.add_argument("--candidates", action="store_true",
                        help="the preset candidates instead of the block grid")
    parser.add_argument("--table1", nargs="+", metavar="NAME",
                        help="with --candidates: these candidates on bench_table1's datasets")
    parser.add_argument("--configs", nargs="+", metavar="TEXT",
                        help="only the configurations whose name contains one of these "
                             "(results get the suffix _configs)")
    args = parser.parse_args()
    # dp-accounting logs one warning per fractional Renyi order it drops (subsample < 1)
    logging.getLogger("absl").setLevel(logging.ERROR)
    quick = args.quick
    base = "blocks_grid_candidates" if args.candidates else "blocks_grid"
    if args.candidates and args.table1:
        rows, table = check_table1(args.table1, quick)
        _harness.write_results(_harness.result_name(base + "_table1", args), rows)
        _harness.print_table(table)
        return
    names = ("adult", "cod_rna", "abalone") if quick else DATASETS
    configs = candidates() if args.candidates else configurations()
    configs = {k: v for k, v in configs.items()
               if not args.configs or any(text in k for text in args.configs)}
    name = _harness.result_name(base, args) + ("_configs" if args.configs else "")
    rows = run(args.datasets or names, (1.0,) if quick else (0.5, 1.0, 4.0), 1 if quick else 3,
               configs)
    _harness.write_results(name, rows)
    if args.candidates:
        (_harness.RESULTS / f"{name}.md").write_text(markdown(rows))
    _harness.print_table(rank_table(rows))


if __name__ == "__main__":
    main()

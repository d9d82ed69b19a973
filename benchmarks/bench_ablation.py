"""DPBoost paper, Appendix B: GDF's filtered fraction (Table 3) and RMSE with and without GLC (Fig. 4).

DPBoost (one ensemble of 50 trees, depth 6) on every dataset: the fraction of each tree's records
removed by gradient-based data filtering (``diagnostics=True``: an exact statistic, not private, for
this study only), averaged over trees and folds. On the regression sets: RMSE of DPBoost, of
DPBoost without geometric leaf clipping, and without GDF (gradients clipped to [-1, 1] instead).
Where the error comes from (a diagnostic, not private): DPBoost with exact splits (the exponential
mechanism replaced by argmax, leaves noised as planned) and with exact leaves (splits noised as
planned, leaves released without noise), everything else (data partition, GDF, GLC) unchanged.
Writes results/ablation.csv and results/ablation.png.

Run: ``python benchmarks/bench_ablation.py [--quick]``. ``--quick``: adult and three regression
sets, epsilon 1/4/10, two folds, at most 20,000 training rows.
"""

import contextlib
import dataclasses
import math
import warnings
from unittest import mock

import _loaders
import _paper
import numpy as np
from _common import (
    RESULTS,
    label_panel,
    paper_parser,
    print_table,
    result_name,
    save_figure,
    write_results,
)

import dpboost._estimators
from dpboost import PrivacyLeakWarning
from dpboost._budget import plan_budget

VARIANTS = {"DPBoost": {}, "no GLC": {"leaf_clipping": False},
            "no GDF": {"gradient_filtering": False}}
EXACT = {"exact splits": "epsilon_level", "exact leaves": "epsilon_leaf"}


def _exact(field):
    """Plan as usual, then make one kind of release exact (epsilon = inf) in every tree."""
    if field is None:
        return contextlib.nullcontext()

    def plan(**kwargs):
        planned = plan_budget(**kwargs)
        trees = tuple(dataclasses.replace(t, **{field: math.inf}) for t in planned.trees)
        return dataclasses.replace(planned, trees=trees)

    return mock.patch.object(dpboost._estimators, "plan_budget", plan)


def run(names, epsilons, n_folds, max_rows):
    rows = []
    for name in _loaders.available(names):
        data = _loaders.load(name)
        metric = _paper.metric_name(data)
        variants = list(VARIANTS if data["task"] == "regression" else ["DPBoost"]) + list(EXACT)
        for fold, X, y, X_test, y_test in _loaders.splits(data, n_folds, max_train=max_rows,
                                                           max_test=max_rows):
            for epsilon in epsilons:
                for variant in variants:
                    model = _paper.make_model(data, "DPBoost", epsilon, seed=fold,
                                              diagnostics=True, **VARIANTS.get(variant, {}))
                    with _exact(EXACT.get(variant)):
                        _paper.fit_timed(model, X, y)
                    rows.append({"dataset": name, "variant": variant, "epsilon": epsilon,
                                 "fold": fold, "metric": metric,
                                 "value": _paper.score(data, model, X_test, y_test)[metric],
                                 "filtered_fraction": float(np.mean(model.filtered_fraction_))})
        print(f"{name} done", flush=True)
    return rows


def summarise(rows):
    keys = list(dict.fromkeys((r["dataset"], r["variant"], r["epsilon"]) for r in rows))
    table = []
    for key in keys:
        sel = [r for r in rows if (r["dataset"], r["variant"], r["epsilon"]) == key]
        table.append({"dataset": key[0], "variant": key[1], "epsilon": key[2],
                      "metric": sel[0]["metric"],
                      "mean": float(np.mean([r["value"] for r in sel])),
                      "std": float(np.std([r["value"] for r in sel])),
                      "filtered_fraction": float(np.mean([r["filtered_fraction"] for r in sel]))})
    return table


def plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from dpboost.plotting import plot_privacy_utility

    datasets = list(dict.fromkeys(r["dataset"] for r in rows if r["metric"] == "rmse"))
    if not datasets:
        return
    fig, axes = plt.subplots(1, len(datasets), figsize=(3.4 * len(datasets), 2.8), squeeze=False)
    for ax, dataset in zip(axes.flat, datasets):
        plot_privacy_utility([r for r in rows if r["dataset"] == dataset], y="value",
                             hue="variant", ax=ax)
        label_panel(ax, dataset, "epsilon", "RMSE")
    save_figure(fig, axes, len(datasets), path)


def main():
    args = paper_parser(__doc__, _loaders.DATASETS).parse_args()
    quick = args.quick
    names = ("adult", "abalone", "california", "house_16H") if quick else tuple(_loaders.DATASETS)
    epsilons = (1.0, 4.0, 10.0) if quick else (1.0, 2.0, 4.0, 6.0, 8.0, 10.0)
    rows = run(args.datasets or names, epsilons, 2 if quick else 5, 20_000 if quick else None)
    name = result_name("ablation", args)
    write_results(name, rows)
    table = summarise(rows)
    print_table(table)
    plot(rows, RESULTS / f"{name}.png")


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)  # diagnostics=True, on purpose
        main()

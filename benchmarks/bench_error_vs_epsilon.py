"""DPBoost paper, Fig. 2: test error / RMSE against epsilon for DPBoost, SEQ, PARA and NP.

50 trees in one ensemble, depth 6, lambda 0.1, square loss, 5-fold CV (Adult and cod-rna: their
official split, five model seeds). Writes results/error_vs_epsilon.csv (one row per dataset x method
x epsilon x fold) and results/error_vs_epsilon.png.

Run: ``python benchmarks/bench_error_vs_epsilon.py [--quick]``. ``--quick``: five datasets,
epsilon 1/4/10, two folds, at most 20,000 training rows (a few minutes on 2 cores).
"""

import math

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

EPSILONS = (1.0, 2.0, 4.0, 6.0, 8.0, 10.0)
QUICK_DATASETS = ("adult", "cod_rna", "covtype15k", "abalone", "california")


def run(names, epsilons, n_folds, max_rows):
    rows = []
    for name in _loaders.available(names):
        data = _loaders.load(name)
        metric = _paper.metric_name(data)
        for fold, X, y, X_test, y_test in _loaders.splits(data, n_folds, max_train=max_rows,
                                                           max_test=max_rows):
            runs = [("NP", math.inf)] + [(m, e) for m in _paper.METHODS for e in epsilons]
            for method, epsilon in runs:
                model = _paper.make_model(data, method, epsilon, seed=fold)
                seconds = _paper.fit_timed(model, X, y)
                rows.append({"dataset": name, "method": method, "epsilon": epsilon, "fold": fold,
                             "metric": metric, **_paper.score(data, model, X_test, y_test),
                             "fit_s": seconds})
            print(f"{name} fold {fold} done", flush=True)
    return rows


def summarise(rows):
    """Mean and std over folds of the main metric, per dataset x method x epsilon."""
    keys = sorted({(r["dataset"], r["method"], r["epsilon"]) for r in rows},
                  key=lambda k: (k[0], list(_paper.METHODS).index(k[1])
                                 if k[1] in _paper.METHODS else -1, k[2]))
    table = []
    for dataset, method, epsilon in keys:
        values = [r[r["metric"]] for r in rows
                  if (r["dataset"], r["method"], r["epsilon"]) == (dataset, method, epsilon)]
        metric = next(r["metric"] for r in rows if r["dataset"] == dataset)
        table.append({"dataset": dataset, "method": method, "epsilon": epsilon, "metric": metric,
                      "mean": float(np.mean(values)), "std": float(np.std(values)),
                      "folds": len(values)})
    return table


def plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from dpboost.plotting import plot_privacy_utility

    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    n_cols = min(5, len(datasets))
    n_rows = math.ceil(len(datasets) / n_cols)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(3.2 * n_cols, 2.8 * n_rows), squeeze=False)
    for ax, dataset in zip(axes.flat, datasets):
        points = [r for r in rows if r["dataset"] == dataset]
        metric = points[0]["metric"]
        plot_privacy_utility(points, y=metric, hue="method", ax=ax)
        label_panel(ax, dataset, "epsilon", metric)
        if metric == "rmse":
            ax.set_yscale("log")  # SEQ's RMSE is orders of magnitude above the others
    save_figure(fig, axes, len(datasets), path)


def main():
    args = paper_parser(__doc__, _loaders.DATASETS).parse_args()
    quick = args.quick
    names = QUICK_DATASETS if quick else tuple(_loaders.DATASETS)
    rows = run(args.datasets or names,
               (1.0, 4.0, 10.0) if quick else EPSILONS, 2 if quick else 5,
               20_000 if quick else None)
    name = result_name("error_vs_epsilon", args)
    write_results(name, rows)
    table = summarise(rows)
    print_table(table)
    plot(rows, RESULTS / f"{name}.png")


if __name__ == "__main__":
    main()

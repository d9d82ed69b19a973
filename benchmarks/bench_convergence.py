"""DPBoost paper, Fig. 3: test error after every 50 trees, up to 20 ensembles x 50 trees = 1000.

DPBoost gets epsilon 5 per ensemble (100 in total); SEQ and PARA get the same total of 100; NP has
no noise. Adult and cod-rna on their official split, covtype15k (class 2 against the rest) on its
first fold of 5-fold CV. Writes results/convergence.csv and results/convergence.png.

Run: ``python benchmarks/bench_convergence.py [--quick]``. ``--quick``: 4 ensembles (200 trees,
epsilon 20 in total), at most 20,000 training rows.
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

EPSILON_PER_ENSEMBLE = 5.0
TREES_PER_ENSEMBLE = 50


def run(names, n_ensembles, max_rows):
    n_trees = n_ensembles * TREES_PER_ENSEMBLE
    epsilon = EPSILON_PER_ENSEMBLE * n_ensembles
    rows = []
    for name in _loaders.available(names):
        data = _loaders.load(name)
        _, X, y, X_test, y_test = next(_loaders.splits(data, 1, max_train=max_rows,
                                                        max_test=max_rows))
        for method in ["DPBoost", "SEQ", "PARA", "NP"]:
            model = _paper.make_model(data, method, epsilon, seed=0, n_estimators=n_trees)
            seconds = _paper.fit_timed(model, X, y)
            for t, proba in enumerate(model.staged_predict_proba(X_test), start=1):
                if t % TREES_PER_ENSEMBLE == 0:
                    rows.append({"dataset": name, "method": method,
                                 "epsilon": math.inf if method == "NP" else epsilon,
                                 "trees": t, "error": float(np.mean((proba[:, 1] >= 0.5)
                                                                    != (y_test == 1))),
                                 "fit_s": seconds})
        print(f"{name} done", flush=True)
    return rows


def plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from dpboost.plotting import plot_privacy_utility

    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    fig, axes = plt.subplots(1, len(datasets), figsize=(3.6 * len(datasets), 3), squeeze=False)
    for ax, dataset in zip(axes.flat, datasets):
        # NP is a curve here (its error after t trees), not a reference line: x is trees.
        plot_privacy_utility([r for r in rows if r["dataset"] == dataset], x="trees", y="error",
                             hue="method", xscale="linear", ax=ax)
        label_panel(ax, dataset, "trees", "test error")
    save_figure(fig, axes, len(datasets), path)


def main():
    args = paper_parser(__doc__, _loaders.DATASETS).parse_args()
    quick = args.quick
    rows = run(args.datasets or ("adult", "cod_rna", "covtype15k"), 4 if quick else 20,
               20_000 if quick else None)
    name = result_name("convergence", args)
    write_results(name, rows)
    print_table([r for r in rows if r["trees"] % 200 == 0 or r["trees"] == 50])
    plot(rows, RESULTS / f"{name}.png")


if __name__ == "__main__":
    main()

"""DPBoost paper, Fig. 3: test error after every 50 trees, up to 20 ensembles x 50 trees = 1000.

DPBoost gets epsilon 5 per ensemble (100 in total); SEQ and PARA get the same total of 100; NP has
no noise. Adult and cod-rna on their official split, covtype15k (class 2 against the rest) on its
first fold of 5-fold CV. Writes results/convergence.csv and results/convergence.png.

Run: ``python benchmarks/bench_convergence.py [--quick]``. ``--quick``: 4 ensembles (200 trees,
epsilon 20 in total), at most 20,000 training rows.
"""

import math

import _harness
import _loaders
import _paper
import numpy as np

EPSILON_PER_ENSEMBLE = 5.0
TREES_PER_ENSEMBLE = 50


def cells(n_ensembles):
    """Every method with ``n_ensembles`` ensembles' trees and budget, seed 0."""
    n_trees = n_ensembles * TREES_PER_ENSEMBLE
    epsilon = EPSILON_PER_ENSEMBLE * n_ensembles
    return lambda data, fold: [
        ({"method": method, "epsilon": math.inf if method == "NP" else epsilon},
         _paper.make_model(data, method, epsilon, seed=0, n_estimators=n_trees))
        for method in ["DPBoost", "SEQ", "PARA", "NP"]]


def staged_errors(data, model, fold):
    """Test error after every ensemble's trees: one row each."""
    return [{"trees": t, "error": float(np.mean((proba[:, 1] >= 0.5) != (fold.y_test == 1)))}
            for t, proba in enumerate(model.staged_predict_proba(fold.X_test), start=1)
            if t % TREES_PER_ENSEMBLE == 0]


def main():
    args = _harness.parser(__doc__, _loaders.DATASETS).parse_args()
    quick = args.quick
    rows = _harness.run_grid(args.datasets or ("adult", "cod_rna", "covtype15k"),
                             cells(4 if quick else 20), 1, max_rows=20_000 if quick else None,
                             describe=staged_errors)
    name = _harness.result_name("convergence", args)
    _harness.write_results(name, rows)
    _harness.print_table([r for r in rows if r["trees"] % 200 == 0 or r["trees"] == 50])
    # NP is a curve here (its error after t trees), not a reference line: x is trees.
    _harness.plot_panels(rows, _harness.RESULTS / f"{name}.png", x="trees", xlabel="trees",
                         y="error", ylabel="test error", hue="method", xscale="linear")


if __name__ == "__main__":
    main()

"""DPBoost paper, Fig. 2: test error / RMSE against epsilon for DPBoost, SEQ, PARA and NP.

50 trees in one ensemble, depth 6, lambda 0.1, square loss, 5-fold CV (Adult and cod-rna: their
official split, five model seeds). Writes results/error_vs_epsilon.csv (one row per dataset x method
x epsilon x fold) and results/error_vs_epsilon.png.

Run: ``python benchmarks/bench_error_vs_epsilon.py [--quick]``. ``--quick``: five datasets,
epsilon 1/4/10, two folds, at most 20,000 training rows (a few minutes on 2 cores).
"""

import math

import _harness
import _loaders
import _paper

EPSILONS = (1.0, 2.0, 4.0, 6.0, 8.0, 10.0)
QUICK_DATASETS = ("adult", "cod_rna", "covtype15k", "abalone", "california")


def cells(epsilons):
    """NP, then every paper method at every epsilon, seeded by the fold."""
    runs = [("NP", math.inf)] + [(m, e) for m in _paper.METHODS for e in epsilons]
    return lambda data, fold: [({"method": m, "epsilon": e},
                                _paper.make_model(data, m, e, seed=fold.fold)) for m, e in runs]


def main():
    args = _harness.parser(__doc__, _loaders.DATASETS).parse_args()
    quick = args.quick
    names = QUICK_DATASETS if quick else tuple(_loaders.DATASETS)
    rows = _harness.run_grid(args.datasets or names,
                             cells((1.0, 4.0, 10.0) if quick else EPSILONS), 2 if quick else 5,
                             max_rows=20_000 if quick else None)
    name = _harness.result_name("error_vs_epsilon", args)
    _harness.write_results(name, rows)
    _harness.print_table(_harness.group_stats(rows, ["dataset", "method", "epsilon", "metric"],
                                              _harness.main_metric))
    _harness.plot_panels(rows, _harness.RESULTS / f"{name}.png", y=None, hue="method",
                         log_y=("rmse",))  # SEQ's RMSE is orders of magnitude above the others


if __name__ == "__main__":
    main()

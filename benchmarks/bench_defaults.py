"""Choice of the ``max_bins`` default: Adult test error and ROC AUC against the number of bins.

DPBoost's paper inherits LightGBM's 255 bins. Each node's exponential mechanism chooses among
``n_features * (max_bins - 1)`` candidates, so fewer bins concentrate its probability mass; too few
lose resolution. Official Adult split, DPBoost's setting (50 trees, depth 6, EoE), 5 seeds.

Run: ``python benchmarks/bench_defaults.py [--quick]``; writes results/defaults_max_bins.csv (one
row per bins x epsilon: mean and std over the seeds). ``--quick``: 2 seeds.
"""

import _harness
import _paper

BINS = (8, 16, 32, 64, 255)
EPSILONS = (0.5, 1.0, 2.0, 4.0, float("inf"))


def cells(data, fold):
    """Every number of bins at every epsilon, seeded by the fold (a repetition of the split)."""
    return [({"max_bins": bins, "epsilon": epsilon},
             _paper.make_model(data, "DPBoost", epsilon, seed=fold.fold, max_bins=bins))
            for bins in BINS for epsilon in EPSILONS]


def main():
    args = _harness.parser(__doc__).parse_args()
    rows = _harness.run_grid(["adult"], cells, 2 if args.quick else 5)
    table = _harness.summarise(rows, ["max_bins", "epsilon"],
                               {"test_error": "error", "roc_auc": "auc", "fit_s": "fit_s"},
                               count="seeds")
    _harness.print_table(table)
    _harness.write_results(_harness.result_name("defaults_max_bins", args), table)


if __name__ == "__main__":
    main()

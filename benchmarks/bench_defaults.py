"""Choice of the ``max_bins`` default: Adult test error and ROC AUC against the number of bins.

DPBoost's paper inherits LightGBM's 255 bins. Each node's exponential mechanism chooses among
``n_features * (max_bins - 1)`` candidates, so fewer bins concentrate its probability mass; too few
lose resolution. Official Adult split, 50 trees, depth 6, EoE, 5 seeds.

Run: ``python benchmarks/bench_defaults.py [--quick]``; writes results/defaults_max_bins.csv.
"""

import argparse

import numpy as np
from _common import SHARED, print_table, require_shared, write_results
from sklearn.metrics import roc_auc_score

from dpboost import DPGBClassifier
from dpboost.datasets import load_encoded


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 seeds instead of 5")
    args = parser.parse_args()
    require_shared("adult")
    X, y, X_test, y_test, bounds, _ = load_encoded("adult", SHARED)
    seeds = range(2 if args.quick else 5)
    rows = []
    for bins in [8, 16, 32, 64, 255]:
        for eps in [0.5, 1.0, 2.0, 4.0, np.inf]:
            err, auc = [], []
            for seed in seeds:
                clf = DPGBClassifier.dpboost_paper(epsilon=eps, max_bins=bins,
                                                   feature_bounds=bounds, classes=[0, 1],
                                                   random_state=seed).fit(X, y)
                err.append(1.0 - clf.score(X_test, y_test))
                auc.append(roc_auc_score(y_test, clf.predict_proba(X_test)[:, 1]))
            rows.append({"max_bins": bins, "epsilon": eps, "seeds": len(seeds),
                         "test_error_mean": float(np.mean(err)), "test_error_std": float(np.std(err)),
                         "roc_auc_mean": float(np.mean(auc)), "roc_auc_std": float(np.std(auc))})
    print_table(rows)
    write_results("defaults_max_bins", rows)


if __name__ == "__main__":
    main()

"""Feature importances against the model's own permutation importance, at epsilon 1.

On every shared regression and classification set (``_loaders``: public or stand-in bounds, a
fixed subsample of at most 20,000 training and 5,000 test rows; covtype15k as class 2 against the
rest), the default estimator is fitted
at epsilon 1 with 3 seeds; each kind of ``feature_importance`` ("contribution", the default
``feature_importances_``, then "gain", "cover" and "split") is compared with scikit-learn's
``permutation_importance`` of the same model on the held-out rows (5 repeats; the drop in ROC
AUC for the classifiers, in R^2 for the regressors) by Spearman's rank correlation. ROC AUC rather
than accuracy: on the imbalanced sets (diabetes, credit) the model often predicts the majority
class for every row, so that no permutation changes the accuracy and nothing is ranked. The goal: the default's correlation,
averaged over the datasets, at least 0.6. A kind that is constant on a fit (split counts under
random splits) has no rank correlation: a blank cell, left out of the means.

Run: ``python benchmarks/bench_importances.py [--quick] [--datasets ...]``; writes
results/importances.csv (one row per dataset x seed x kind) and prints the means per dataset
and kind. ``--quick``: 1 seed, 5,000 training rows.
"""

import warnings

import _harness
import _loaders
import numpy as np
from scipy.stats import spearmanr
from sklearn.inspection import permutation_importance

from dpboost import DPGBClassifier, DPGBRegressor

DATASETS = list(_loaders.DATASETS)  # every shared regression and classification set
KINDS = ["contribution", "gain", "cover", "split"]


def model(data, seed):
    """The default estimator at epsilon 1 with the dataset's bounds (and classes)."""
    if data["task"] == "regression":
        return DPGBRegressor(epsilon=1.0, feature_bounds=data["bounds"],
                             target_bounds=data["target_bounds"], random_state=seed)
    return DPGBClassifier(epsilon=1.0, feature_bounds=data["bounds"],
                          classes=np.unique(data["y"]), random_state=seed)


def main():
    args = _harness.parser(__doc__, DATASETS).parse_args()
    _harness.warm_up()
    seeds = range(1 if args.quick else 3)
    rows = []
    for name in _loaders.available(args.datasets or DATASETS):
        data = _loaders.load(name)
        _, X, y, X_test, y_test = next(_loaders.splits(
            data, 1, max_train=5_000 if args.quick else 20_000, max_test=5_000))
        for seed in seeds:
            est = model(data, seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(X, y)
            scoring = None if data["task"] == "regression" else "roc_auc"
            permuted = permutation_importance(est, X_test, y_test, n_repeats=5, scoring=scoring,
                                              random_state=seed).importances_mean
            for kind in KINDS:
                try:
                    importances = est.feature_importance(kind)
                except ValueError:  # gain / cover of Laplace leaves: not released
                    continue
                constant = np.ptp(importances) == 0 or np.ptp(permuted) == 0
                rho = "" if constant else float(spearmanr(importances, permuted)[0])
                rows.append({"dataset": name, "task": data["task"], "seed": seed, "kind": kind,
                             "scoring": scoring or "r2", "spearman": rho})
        print(f"{name} done", flush=True)
    table = _harness.summarise(rows, ["dataset", "kind"], {"spearman": "spearman"}, count="fits")
    _harness.print_table(table)
    for kind in KINDS:
        for task in ("regression", "binary", None):
            means = [t["spearman_mean"] for t in table if t["kind"] == kind
                     and task in (None, _loaders.DATASETS[t["dataset"]][1])]
            print(f"{kind}, {task or 'all'}: mean over {len(means)} datasets "
                  f"{np.mean(means):.3f}")
    _harness.write_results(_harness.result_name("importances", args), rows)


if __name__ == "__main__":
    main()

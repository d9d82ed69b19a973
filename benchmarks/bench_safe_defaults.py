"""The default estimator against issue "Safe by default"'s bar, as a new user gets it.

Adult (official split) read with ``pd.read_csv`` and the public schema of ``dpboost.datasets``;
``DPGBClassifier(epsilon=...)`` with nothing else set, secure noise (``random_state=None``,
OpenDP's samplers), 5 fits per epsilon; DPBoost's setting (``dpboost_paper``) beside it. The bar:
at epsilon 1, ROC AUC >= 0.89 and test error <= 0.16; at epsilon 0.5, below the majority class's
error.

Run: ``python benchmarks/bench_safe_defaults.py [--quick]``; writes results/safe_defaults.csv.
"""

import argparse
import time

import numpy as np
from _common import SHARED, print_table, require_shared, write_results
from sklearn.metrics import roc_auc_score

from dpboost import DPGBClassifier
from dpboost.datasets import estimator_params, load


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 fits per cell instead of 5")
    args = parser.parse_args()
    require_shared("adult")
    X, y, X_test, y_test = load("adult", SHARED, random_state=0)
    public = estimator_params("adult", X.columns)
    majority = min(np.mean(y_test), 1 - np.mean(y_test))
    settings = {"default": DPGBClassifier, "dpboost_paper": DPGBClassifier.dpboost_paper}
    rows = []
    for name, make in settings.items():
        for epsilon in [0.5, 1.0, 2.0]:
            errors, aucs, seconds = [], [], []
            for _ in range(2 if args.quick else 5):
                start = time.perf_counter()
                clf = make(epsilon=epsilon, **public).fit(X, y)
                seconds.append(time.perf_counter() - start)
                errors.append(1.0 - clf.score(X_test, y_test))
                aucs.append(roc_auc_score(y_test, clf.predict_proba(X_test)[:, 1]))
            rows.append({"setting": name, "epsilon": epsilon, "runs": len(errors),
                         "error_mean": float(np.mean(errors)), "error_std": float(np.std(errors)),
                         "auc_mean": float(np.mean(aucs)), "auc_std": float(np.std(aucs)),
                         "majority_error": float(majority), "fit_s_mean": float(np.mean(seconds))})
    print_table(rows)
    write_results("safe_defaults" + ("_quick" if args.quick else ""), rows)


if __name__ == "__main__":
    main()

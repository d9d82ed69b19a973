"""The individual Renyi filter on the tuning set: Adult's ``adult.test`` (the official
test file, complete rows, 15,060), 5-fold cross-validation, delta 5e-8, ROC AUC; never the
S-BDT folds of ``adult.data`` that bench_frontier.py scores.

Two grids of settings, each a function of public inputs. ``more_trees``: the default classifier;
the default with ``renyi_filter`` = 1/2 and 1/4 and 2x / 4x the trees (the noise is planned for
the same 200 worst-case trees, the filter lets well-fitted records join more); at 1/4 with GDF
(``gradient_filtering=True``: records with ``|g| > g*`` leave each tree) and without GLC
(``leaf_clipping=False``: Newton leaves unclipped). ``same_trees``: 200 trees as the default, the
noise planned for 200 (``renyi_filter=1``: nobody is ever dropped; only the filter's Renyi orders
differ from the default's), 150, 100 and 50 worst-case trees. With ``diagnostics=True`` the mean
fraction of the sampled records the filter (or GDF) left out is recorded (exact, non-private: a
benchmark diagnostic only).

Run: ``python benchmarks/bench_filter.py --grid more_trees|same_trees [--quick]`` (quick: 2
folds); writes results/filter_<grid>.csv.
"""

import time
import warnings

import _harness
import _loaders
import numpy as np
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import KFold

from dpboost import DPGBClassifier

EPSILONS = (0.01, 0.03, 0.1, 0.5)
DELTA = 5e-8
GRIDS = {
    "more_trees": {
        "default": {},
        "filter 1/2, 400 trees": {"renyi_filter": 0.5, "n_estimators": 400},
        "filter 1/4, 800 trees": {"renyi_filter": 0.25, "n_estimators": 800},
        "filter 1/4, 800 trees, GDF": {"renyi_filter": 0.25, "n_estimators": 800,
                                       "gradient_filtering": True},
        "filter 1/4, 800 trees, no GLC": {"renyi_filter": 0.25, "n_estimators": 800,
                                          "leaf_clipping": False},
    },
    "same_trees": {
        "filter 1": {"renyi_filter": 1.0},
        "filter 3/4": {"renyi_filter": 0.75},
        "filter 1/2": {"renyi_filter": 0.5},
        "filter 1/4": {"renyi_filter": 0.25},
    },
}


def main():
    parser = _harness.parser(__doc__)
    parser.add_argument("--grid", choices=list(GRIDS), required=True)
    args = parser.parse_args()
    data = _loaders.load("adult")
    X, y = data["X_test"], data["y_test"]
    complete = ~np.isnan(X).any(axis=1)
    X, y = X[complete], y[complete]
    folds = list(KFold(5, shuffle=True, random_state=0).split(X))[:2 if args.quick else 5]
    rows = []
    for fold, (train, test) in enumerate(folds):
        for epsilon in EPSILONS:
            for name, setting in GRIDS[args.grid].items():
                model = DPGBClassifier(epsilon=epsilon, delta=DELTA, feature_bounds=data["bounds"],
                                       classes=[0, 1], random_state=fold, diagnostics=True,
                                       **setting)
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model.fit(X[train], y[train])
                rows.append({"dataset": "adult.test", "n_samples": train.size,
                             "method": name, "epsilon": epsilon, "fold": fold,
                             "auc": roc_auc_score(y[test], model.predict_proba(X[test])[:, 1]),
                             "left_out": float(model.filtered_fraction_.mean()),
                             "fit_s": time.perf_counter() - start})
        print(f"fold {fold} done", flush=True)
    name = _harness.result_name(f"filter_{args.grid}", args)
    _harness.write_results(name, rows)
    _harness.print_table(_harness.summarise(rows, ["method", "epsilon"],
                                            {"auc": "auc", "left_out": "left_out"}))


if __name__ == "__main__":
    main()

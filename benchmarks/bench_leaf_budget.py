"""The gradient sum's share of a Newton leaf's budget (``_tree_mechanisms.NEWTON_GRADIENT_SHARE``),
on tuning splits only.

A Gaussian (Newton) leaf releases ``(G, c H)`` with one noise multiplier and divides the second
coordinate by ``c``: the fraction ``s`` of the leaf's zCDP budget on G sets ``c``
(``_sensitivities.newton_hessian_scale``). The joint release of ``(G, H)`` as they are (``c = 1``,
the previous default) is the share :data:`JOINT`: ``g*^2 / (g*^2 + h*^2)``, 0.8 for the
classifier (g* = 0.5, h* = 0.25), 0.5 for the regressor (g* = h* = 1).

- ``adult``: S-BDT's protocol (adult.data, complete rows, delta 5e-8) on the inner 80 / 20 split
  of fold 0's training part (``bench_tree_count.adult_tuning_split``), validation AUC, epsilon
  in :data:`ADULT_EPSILONS`.
- ``abalone``: ``bench_regression.tuning_split`` (inner 75 / 25 split of fold 0's training
  part), the shipped regressor (``bench_regression.dpboost``), validation RMSE, epsilon in
  :data:`ABALONE_EPSILONS`.

Shares :data:`SHARES`, seeds :data:`SMALL_SEEDS` at epsilon <= 0.03 (one fit varies by 0.04 to
0.06 AUC there), :data:`SEEDS` above. Every share of a (dataset, epsilon, seed) cell draws the
same seeded noise stream. Results: results/leaf_budget_<dataset>.csv.

Run: ``NUMBA_NUM_THREADS=1 python benchmarks/bench_leaf_budget.py --dataset adult`` (and
``--dataset abalone``, in a second process); ``--report`` prints mean and standard deviation
per cell from the CSV.
"""

import argparse
import itertools
import math
import warnings
from collections import defaultdict

import _harness
import _loaders
import numpy as np
from bench_regression import dpboost, tuning_split
from bench_tree_count import adult_tuning_split
from sklearn.metrics import roc_auc_score

import dpboost._budget as budget
import dpboost._tree_mechanisms as tree_mechanisms
from dpboost import DPGBClassifier

SHARES = (0.5, 0.75, 0.8, 0.9, 0.96)
#: The share of the joint release (c = 1) per dataset: the paired differences' baseline.
JOINT = {"adult": 0.8, "abalone": 0.5}
ADULT_EPSILONS = (0.01, 0.03, 0.1, 0.5, 1.0)
ABALONE_EPSILONS = (0.05, 0.1, 0.5, 1.0)
SEEDS = tuple(range(8))
SMALL_SEEDS = tuple(range(16))


def _seeds(epsilon):
    return SMALL_SEEDS if epsilon <= 0.03 else SEEDS


def _with_share(share, fit):
    shipped = tree_mechanisms.NEWTON_GRADIENT_SHARE
    tree_mechanisms.NEWTON_GRADIENT_SHARE = share
    budget.plan_budget.cache_clear()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fit()
    finally:
        tree_mechanisms.NEWTON_GRADIENT_SHARE = shipped
        budget.plan_budget.cache_clear()


def adult_rows():
    X_fit, y_fit, X_val, y_val, bounds = adult_tuning_split()
    rows = []
    for epsilon in ADULT_EPSILONS:
        for seed, share in itertools.product(_seeds(epsilon), SHARES):
            model = DPGBClassifier(epsilon=epsilon, delta=5e-8, feature_bounds=bounds,
                                   classes=[0, 1], random_state=seed, n_jobs=1)
            _with_share(share, lambda: model.fit(X_fit, y_fit))
            rows.append({"dataset": "adult", "epsilon": epsilon, "share": share,
                         "seed": seed,
                         "auc": roc_auc_score(y_val, model.predict_proba(X_val)[:, 1])})
            print(epsilon, share, seed, round(rows[-1]["auc"], 4), flush=True)
    return rows


def abalone_rows():
    data = _loaders.load("abalone")
    X_fit, y_fit, X_val, y_val = tuning_split(data)
    rows = []
    for epsilon in ABALONE_EPSILONS:
        for seed, share in itertools.product(_seeds(epsilon), SHARES):
            model = dpboost(data, epsilon, seed, n_jobs=1)
            _with_share(share, lambda: model.fit(X_fit, y_fit))
            rmse = math.sqrt(float(np.mean((model.predict(X_val) - y_val) ** 2)))
            rows.append({"dataset": "abalone", "epsilon": epsilon, "share": share,
                         "seed": seed, "rmse": rmse})
            print(epsilon, share, seed, round(rmse, 4), flush=True)
    return rows


def report(rows, metric, joint):
    """Mean and standard deviation per cell, and the mean paired difference (same seed) from the
    joint release (share ``joint``) with its standard error."""
    cells = defaultdict(dict)
    for r in rows:
        cells[(float(r["epsilon"]), float(r["share"]))][int(r["seed"])] = float(r[metric])
    for (epsilon, share), by_seed in sorted(cells.items()):
        values = np.array(list(by_seed.values()))
        base = cells[(epsilon, joint)]
        diff = np.array([by_seed[s] - base[s] for s in by_seed])
        print(f"eps={epsilon:<5g} share={share:<4g} {metric} {values.mean():.4f} "
              f"sd {values.std(ddof=1):.4f} (n={values.size}); minus joint {diff.mean():+.4f} "
              f"se {diff.std(ddof=1) / math.sqrt(diff.size):.4f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", choices=("adult", "abalone"), required=True)
    parser.add_argument("--report", action="store_true", help="print the table from the CSV")
    args = parser.parse_args()
    name = f"leaf_budget_{args.dataset}"
    if not args.report:
        _harness.warm_up()
        rows = {"adult": adult_rows, "abalone": abalone_rows}[args.dataset]()
        _harness.write_results(name, rows)
    report(_harness.read_results(name), "auc" if args.dataset == "adult" else "rmse",
           JOINT[args.dataset])


if __name__ == "__main__":
    main()
